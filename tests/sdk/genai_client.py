"""The official `google-genai` Python SDK against a running Tollgate's
generate-content passthrough (a scripted Gemini upstream behind it).

Usage: python genai_client.py BASE_URL API_KEY
Runs on the SDK's default API version (`/v1`) and on `v1beta`. Exits
non-zero (with the failing check) when the gateway and the SDK disagree.
Run by tests/sdk.rs.
"""
import sys

from google import genai
from google.genai import errors, types

base_url, key = sys.argv[1], sys.argv[2]
print("google-genai", genai.__version__)

for version in [None, "v1beta"]:
    options = types.HttpOptions(base_url=base_url)
    if version:
        options = types.HttpOptions(base_url=base_url, api_version=version)
    # Kept in a variable: a temporary client is closed mid-stream.
    client = genai.Client(api_key=key, http_options=options)

    response = client.models.generate_content(model="gemini-ok", contents="hello sdk")
    assert response.text == "hello from gemini", response
    assert response.usage_metadata.prompt_token_count == 11, response.usage_metadata
    assert response.usage_metadata.candidates_token_count == 6, response.usage_metadata

    chunks = list(client.models.generate_content_stream(model="gemini-ok", contents="stream me"))
    text = "".join(c.text or "" for c in chunks)
    assert text == "hello from gemini", text
    assert chunks[-1].usage_metadata.candidates_token_count == 6, chunks[-1]

    # Our own errors, in the Google shape the SDK reads.
    try:
        client.models.generate_content(model="gemini-nope", contents="x")
        raise AssertionError("an unknown model was served")
    except errors.ClientError as e:
        assert e.code == 404, e
        assert e.status == "NOT_FOUND", e

bad = genai.Client(api_key="kp_live_not-a-key", http_options=types.HttpOptions(base_url=base_url))
try:
    bad.models.generate_content(model="gemini-ok", contents="x")
    raise AssertionError("an unknown key was served")
except errors.ClientError as e:
    assert e.code == 401, e
print("ok")
