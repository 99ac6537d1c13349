// A real OpenID provider (node-oidc-provider) for tests/sso.rs.
//
// Prints `listening <port>` once it serves on 127.0.0.1. Two clients,
// `tollgate` (ID tokens signed RS256) and `tollgate-es` (ES256), secret
// `test-secret`, redirect URI from REDIRECT_URI. Logins need no form: the
// interaction signs in the user last set with POST /__test/user and grants
// what was asked. POST /__test/tamper re-signs the next ID tokens with
// changed claims (`aud`, `iss`, `nonce`, `expOffset` seconds from now) or
// with a key published only from then on (`key: "late"`), so the refusals
// the gateway must make come from a provider whose signatures are genuine.
// An empty body (`{}`) stops tampering.
import http from 'node:http';
import crypto from 'node:crypto';
import Provider from 'oidc-provider';
import * as jose from 'jose';

function keyPair(type, options, kid, alg) {
  const { privateKey } = crypto.generateKeyPairSync(type, options);
  const jwk = privateKey.export({ format: 'jwk' });
  return { ...jwk, kid, alg, use: 'sig' };
}
const publicPart = (jwk) => {
  const { d, p, q, dp, dq, qi, ...pub } = jwk;
  return pub;
};

const rsa = keyPair('rsa', { modulusLength: 2048 }, 'rsa-1', 'RS256');
const ec = keyPair('ec', { namedCurve: 'P-256' }, 'ec-1', 'ES256');
const late = keyPair('rsa', { modulusLength: 2048 }, 'rsa-late', 'RS256');

let user = { sub: 'ada', email: 'ada@example.com', email_verified: true, groups: ['tollgate-admins'] };
let tamper = null;
let latePublished = false;

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = server.address().port;
const issuer = `http://127.0.0.1:${port}`;
const redirect = process.env.REDIRECT_URI;

const provider = new Provider(issuer, {
  clients: [
    { client_id: 'tollgate', client_secret: 'test-secret', redirect_uris: [redirect], id_token_signed_response_alg: 'RS256' },
    { client_id: 'tollgate-es', client_secret: 'test-secret', redirect_uris: [redirect], id_token_signed_response_alg: 'ES256' },
  ],
  jwks: { keys: [rsa, ec] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
  scopes: ['openid', 'email', 'profile', 'groups'],
  // Scope claims in the ID token itself (the gateway reads no userinfo).
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: false } },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: async (ctx, sub) => ({
    accountId: sub,
    claims: async () => ({ ...user, sub }),
  }),
});
provider.proxy = false;

async function body(ctx) {
  let text = '';
  for await (const chunk of ctx.req) text += chunk;
  return text ? JSON.parse(text) : {};
}

provider.use(async (ctx, next) => {
  if (ctx.path === '/__test/user' && ctx.method === 'POST') {
    user = await body(ctx);
    ctx.status = 204;
    return;
  }
  if (ctx.path === '/__test/tamper' && ctx.method === 'POST') {
    tamper = await body(ctx);
    if (tamper.key === 'late') latePublished = true;
    ctx.status = 204;
    return;
  }
  if (ctx.path.startsWith('/interaction/')) {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (details.prompt.name === 'login') {
      await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: user.sub } }, { mergeWithLastSubmission: false });
    } else {
      const grant = new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
      grant.addOIDCScope(details.params.scope);
      const grantId = await grant.save();
      await provider.interactionFinished(ctx.req, ctx.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    }
    ctx.respond = false;
    return;
  }
  await next();
  if (ctx.path === '/jwks' && latePublished && ctx.body && ctx.body.keys) {
    ctx.body = { keys: [...ctx.body.keys, publicPart(late)] };
  }
  if (ctx.path === '/token' && tamper && ctx.body && ctx.body.id_token) {
    const claims = jose.decodeJwt(ctx.body.id_token);
    if (tamper.aud) claims.aud = tamper.aud;
    if (tamper.iss) claims.iss = tamper.iss;
    if (tamper.nonce) claims.nonce = tamper.nonce;
    if (tamper.expOffset !== undefined) {
      claims.iat = Math.floor(Date.now() / 1000) + tamper.expOffset - 300;
      claims.exp = Math.floor(Date.now() / 1000) + tamper.expOffset;
    }
    const signer = tamper.key === 'late' ? late : rsa;
    const key = await jose.importJWK(signer, 'RS256');
    ctx.body = {
      ...ctx.body,
      id_token: await new jose.SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: signer.kid }).sign(key),
    };
  }
});

server.on('request', provider.callback());
process.stdout.write(`listening ${port}\n`);
