"""The official `openai` Python SDK against a Bedrock-backed model.

Usage: python openai_bedrock.py BASE_URL API_KEY
The model `claude` is served by a scripted Bedrock (tests/bedrock.rs) that
answers "Hello from Bedrock" and, for `tool`, a `get_weather` call. Exits
non-zero (with the failing check) when the gateway and the SDK disagree.
"""
import json
import sys

import openai

base_url, key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0)

completion = client.chat.completions.create(
    model="claude", messages=[{"role": "user", "content": "hello"}]
)
assert completion.choices[0].message.content == "Hello from Bedrock", completion
assert completion.choices[0].finish_reason == "stop"
assert completion.usage.prompt_tokens == 12 and completion.usage.completion_tokens == 7

chunks = list(
    client.chat.completions.create(
        model="claude", stream=True, messages=[{"role": "user", "content": "hello"}]
    )
)
text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
assert text == "Hello from Bedrock", text
assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 7

tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
completion = client.chat.completions.create(
    model="tool", tools=tools, messages=[{"role": "user", "content": "weather?"}]
)
call = completion.choices[0].message.tool_calls[0]
assert call.function.name == "get_weather", call
assert json.loads(call.function.arguments) == {"city": "Paris"}
streamed = list(
    client.chat.completions.create(
        model="tool", tools=tools, stream=True, messages=[{"role": "user", "content": "weather?"}]
    )
)
arguments = "".join(
    c.choices[0].delta.tool_calls[0].function.arguments or ""
    for c in streamed
    if c.choices and c.choices[0].delta.tool_calls
)
assert json.loads(arguments) == {"city": "Paris"}, arguments

# A request Bedrock refuses (ValidationException) is a 400 in OpenAI's shape.
try:
    client.chat.completions.create(model="invalid", messages=[{"role": "user", "content": "x"}])
    raise AssertionError("a ValidationException must be an error")
except openai.BadRequestError as e:
    assert e.status_code == 400, e
print("ok")
