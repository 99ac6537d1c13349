"""The official `openai` Python SDK's embeddings against a running Tollgate
on its demo configuration (the mock provider's `mock-embedding`).

Usage: python openai_embeddings.py BASE_URL API_KEY
Exits non-zero (with the failing check) when the gateway and the SDK
disagree. Run by tests/sdk.rs against a real server.
"""
import base64
import json
import struct
import sys

import openai

base_url, key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0)

# Floats, asked for: one vector per input, in order, 16 long.
floats = client.embeddings.create(
    model="mock-embedding", input=["alpha", "beta"], encoding_format="float", dimensions=16
)
assert [d.index for d in floats.data] == [0, 1], floats
assert all(len(d.embedding) == 16 for d in floats.data), floats
assert floats.data[0].embedding != floats.data[1].embedding
assert floats.model == "mock-embedding", floats.model
assert floats.usage.prompt_tokens > 0, floats.usage

# The SDK's default: it asks for base64 and decodes it into floats.
default = client.embeddings.create(model="mock-embedding", input=["alpha", "beta"], dimensions=16)
for got, want in zip(default.data, floats.data):
    assert len(got.embedding) == 16, got
    assert all(abs(a - b) < 1e-6 for a, b in zip(got.embedding, want.embedding)), (got, want)

# base64 asked for explicitly: the string, little-endian f32s.
raw = client.embeddings.with_raw_response.create(
    model="mock-embedding", input="alpha", encoding_format="base64", dimensions=16
)
encoded = raw.parse().data[0].embedding
assert isinstance(encoded, str), encoded
decoded = struct.unpack("<16f", base64.b64decode(encoded))
assert all(abs(a - b) < 1e-6 for a, b in zip(decoded, floats.data[0].embedding)), decoded
extensions = json.loads(raw.text)
assert "billing" in extensions and "risk_classification" in extensions, extensions

# Embeddings on a chat model, chat on an embedding model: our 400.
try:
    client.embeddings.create(model="mock-chat", input="x")
    raise AssertionError("expected BadRequestError")
except openai.BadRequestError as error:
    assert error.code == "wrong_model_kind", error.body
try:
    client.chat.completions.create(model="mock-embedding", messages=[{"role": "user", "content": "x"}])
    raise AssertionError("expected BadRequestError")
except openai.BadRequestError as error:
    assert error.code == "wrong_model_kind", error.body

print("ok")
