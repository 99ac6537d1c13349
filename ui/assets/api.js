// The dashboard's only way to the server: `/api/v1` calls with the session
// token, errors turned into ApiError with the server's code and message.
//
// The token lives in sessionStorage (this tab only, gone when it closes),
// never in a cookie. A 401 from any call means the session ended: the token
// is dropped and the app is told, so it can show the sign-in form with a
// clear message.

const TOKEN_KEY = 'tollgate.session';

export class ApiError extends Error {
  /** `param`: the request field the server refused, when it names one. */
  constructor(status, code, message, param = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.param = param;
  }
}

let onExpired = () => {};

/** Sets what happens when the server says the session is over. */
export function whenExpired(handler) {
  onExpired = handler;
}

export function hasSession() {
  return Boolean(sessionStorage.getItem(TOKEN_KEY));
}

function dropSession() {
  sessionStorage.removeItem(TOKEN_KEY);
}

async function errorFrom(response) {
  let code = `http_${response.status}`;
  let message = `The server answered ${response.status} ${response.statusText}.`;
  let param = null;
  try {
    const body = await response.json();
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
      param = body.error.param || null;
    }
  } catch {
    // Not JSON: keep the status line.
  }
  if (response.status === 404 && code === 'not_found') {
    message = `${message} (This server may not have this part of the API yet.)`;
  }
  return new ApiError(response.status, code, message, param);
}

async function send(method, path, body) {
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'network', 'The server could not be reached. Check your connection and try again.');
  }
  if (response.status === 401 && token) {
    dropSession();
    onExpired();
    throw new ApiError(401, 'session_expired', 'Your session expired. Sign in again.');
  }
  return response;
}

/** A JSON call; resolves to the body (null for 204), rejects with ApiError. */
export async function api(method, path, body) {
  const response = await send(method, path, body);
  if (!response.ok) throw await errorFrom(response);
  if (response.status === 204) return null;
  return response.json();
}

export const get = (path) => api('GET', path);

export async function signIn(email, password) {
  const response = await fetch('/api/v1/auth/login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (!response.ok) throw await errorFrom(response);
  const { token } = await response.json();
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** Which ways in this gateway offers: `{password, sso, ssoRefusals}`. */
export async function signInMethods() {
  try {
    const response = await fetch('/api/v1/auth/methods');
    if (response.ok) return await response.json();
  } catch {
    // An older server or no network: the password form alone.
  }
  return { password: true, sso: false, ssoRefusals: {} };
}

/**
 * Redeems the one-time code single sign-on handed the page (in the URL
 * fragment, never a token) for a session.
 */
export async function redeemSsoCode(code) {
  const response = await fetch('/api/v1/auth/oidc/exchange', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  if (!response.ok) throw await errorFrom(response);
  const { token } = await response.json();
  sessionStorage.setItem(TOKEN_KEY, token);
}

export async function signOut() {
  try {
    await api('POST', '/api/v1/auth/logout');
  } catch {
    // Signed out either way: the token is forgotten below.
  }
  dropSession();
}

/**
 * POSTs a streaming chat body and calls onEvent with each `data:` event's
 * JSON; resolves when the stream ends. A JSON (non-streamed) answer is
 * passed to onEvent whole.
 */
export async function streamChat(path, body, onEvent, onHeaders) {
  const response = await send('POST', path, body);
  if (onHeaders) onHeaders(response.headers);
  if (!response.ok) throw await errorFrom(response);
  const type = response.headers.get('content-type') || '';
  if (!type.includes('text/event-stream')) {
    onEvent(await response.json());
    return;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of block.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') return;
        let event;
        try {
          event = JSON.parse(data);
        } catch {
          continue; // A line that is not JSON carries nothing to show.
        }
        onEvent(event);
      }
    }
  }
}
