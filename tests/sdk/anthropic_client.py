"""The official `anthropic` Python SDK against a running Tollgate's
`/v1/messages` passthrough (a scripted Anthropic upstream behind it).

Usage: python anthropic_client.py BASE_URL API_KEY AUTH_HEADER
AUTH_HEADER is the header this SDK version must send the key in:
`authorization` (2.x, `Authorization: Bearer`) or `x-api-key` (before 2).
Exits non-zero (with the failing check) when the gateway and the SDK
disagree. Run by tests/sdk.rs, once per SDK version.
"""
import sys

import anthropic

base_url, key, auth_header = sys.argv[1], sys.argv[2], sys.argv[3]
client = anthropic.Anthropic(base_url=base_url, api_key=key, max_retries=0)
print("anthropic", anthropic.__version__)
ask = [{"role": "user", "content": "hello sdk"}]

# A plain message, with the native usage the gateway billed from.
raw = client.messages.with_raw_response.create(model="claude-ok", max_tokens=64, messages=ask)
message = raw.parse()
assert message.content[0].text == "hello from claude", message
assert message.stop_reason == "end_turn", message
assert message.usage.input_tokens == 12 and message.usage.output_tokens == 7, message.usage
assert message.usage.cache_read_input_tokens == 3, message.usage

# The key went in the header this SDK version uses.
headers = raw.http_request.headers
if auth_header == "authorization":
    assert headers.get("authorization") == f"Bearer {key}", dict(headers)
    assert "x-api-key" not in headers, dict(headers)
else:
    assert headers.get("x-api-key") == key, dict(headers)
    assert "authorization" not in headers, dict(headers)
assert headers.get("anthropic-version"), dict(headers)

# A streamed message, through the SDK's stream helper.
with client.messages.stream(model="claude-ok", max_tokens=64, messages=ask) as stream:
    text = "".join(stream.text_stream)
    final = stream.get_final_message()
assert text == "hello from claude", text
assert final.usage.output_tokens == 7, final.usage

# The raw events, in order.
events = list(client.messages.create(model="claude-ok", max_tokens=64, messages=ask, stream=True))
types = [e.type for e in events]
assert types[0] == "message_start" and types[-1] == "message_stop", types
assert "message_delta" in types, types

# Our own errors, in the Anthropic shape the SDK reads.
try:
    client.messages.create(model="claude-nope", max_tokens=64, messages=ask)
    raise AssertionError("an unknown model was served")
except anthropic.NotFoundError as e:
    assert e.body["type"] == "error", e.body
    assert e.body["error"]["type"] == "model_not_found", e.body
# A model of another provider kind is served by translation
# (anthropic_translated.py covers it in depth).
other = client.messages.create(model="mock-chat", max_tokens=64, messages=ask)
assert other.content[0].text == "echo: hello sdk", other
bad = anthropic.Anthropic(base_url=base_url, api_key="kp_live_not-a-key", max_retries=0)
try:
    bad.messages.create(model="claude-ok", max_tokens=64, messages=ask)
    raise AssertionError("an unknown key was served")
except anthropic.AuthenticationError as e:
    assert e.body["error"]["type"] == "invalid_api_key", e.body
print("ok")
