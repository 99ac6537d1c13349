"""The official `openai` Python SDK against a running Tollgate.

Usage: python openai_client.py BASE_URL API_KEY
Exits non-zero (with the failing check) when the gateway and the SDK
disagree. Run by tests/sdk.rs against a real server.
"""
import json
import sys

import openai

base_url, key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0)

# A plain answer, with our extensions readable from the raw response.
raw = client.chat.completions.with_raw_response.create(
    model="mock-chat", messages=[{"role": "user", "content": "hello sdk"}]
)
completion = raw.parse()
assert completion.choices[0].message.content == "echo: hello sdk", completion
assert completion.model == "mock-chat"
assert completion.usage.total_tokens > 0
extensions = json.loads(raw.text)
assert "billing" in extensions and "risk_classification" in extensions, extensions

# A streamed answer, with usage in the last chunk.
chunks = list(
    client.chat.completions.create(
        model="mock-chat", stream=True, messages=[{"role": "user", "content": "stream me"}]
    )
)
text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
assert text == "echo: stream me", text
assert all(c.model == "mock-chat" for c in chunks)
assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0

# A tool call, plain and streamed.
tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
completion = client.chat.completions.create(
    model="mock-tool", tools=tools, messages=[{"role": "user", "content": "find it"}]
)
call = completion.choices[0].message.tool_calls[0]
assert call.function.name == "lookup", call
assert json.loads(call.function.arguments) == {"input": "find it"}
streamed = client.chat.completions.create(
    model="mock-tool", tools=tools, stream=True, messages=[{"role": "user", "content": "find it"}]
)
arguments = "".join(
    c.choices[0].delta.tool_calls[0].function.arguments or ""
    for c in streamed
    if c.choices and c.choices[0].delta.tool_calls
)
assert json.loads(arguments) == {"input": "find it"}, arguments

# Our error bodies, read by the SDK's own error classes.
try:
    client.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "x"}])
    raise AssertionError("expected NotFoundError")
except openai.NotFoundError as error:
    assert error.code == "model_not_found", error.body
try:
    openai.OpenAI(base_url=f"{base_url}/v1", api_key="kp_live_" + "A" * 32, max_retries=0).models.list()
    raise AssertionError("expected AuthenticationError")
except openai.AuthenticationError as error:
    assert error.code == "invalid_api_key", error.body
try:
    client.chat.completions.create(model="mock-chat", messages=[])
    raise AssertionError("expected BadRequestError")
except openai.BadRequestError as error:
    assert error.code == "invalid_request" and error.param == "messages", error.body
try:
    client.chat.completions.create(model="mock-down", messages=[{"role": "user", "content": "x"}])
    raise AssertionError("expected a 502")
except openai.InternalServerError as error:
    assert error.status_code == 502 and error.code == "all_providers_failed", error.body

# The catalogue, whole and one model.
assert "mock-chat" in [m.id for m in client.models.list()]
model = client.models.retrieve("mock-chat")
assert model.id == "mock-chat" and model.object == "model" and model.owned_by == "mock", model
try:
    client.models.retrieve("no-such-model")
    raise AssertionError("expected NotFoundError")
except openai.NotFoundError as error:
    assert error.code == "model_not_found", error.body

# Legacy completions, plain and streamed (with usage in the last chunk).
legacy = client.completions.create(model="mock-chat", prompt="complete me", max_tokens=16)
assert legacy.object == "text_completion", legacy
assert legacy.choices[0].text == "echo: complete me", legacy
assert legacy.usage.total_tokens > 0
pieces = list(
    client.completions.create(
        model="mock-chat", prompt="stream me", stream=True, stream_options={"include_usage": True}
    )
)
text = "".join(p.choices[0].text for p in pieces if p.choices)
assert text == "echo: stream me", text
assert pieces[-1].usage is not None and pieces[-1].usage.completion_tokens > 0
print("openai sdk: all checks passed")
