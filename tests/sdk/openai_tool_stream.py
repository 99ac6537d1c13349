"""The official openai SDK streams a tool call through the gateway.

Usage: openai_tool_stream.py BASE_URL API_KEY MODEL
"""
import json
import sys

from openai import OpenAI

base_url, key, model = sys.argv[1], sys.argv[2], sys.argv[3]
client = OpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0)
tools = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}]
stream = client.chat.completions.create(
    model=model,
    messages=[{"role": "user", "content": "Weather in Paris?"}],
    tools=tools,
    stream=True,
)
calls = {}
finish = None
usage = None
for chunk in stream:
    if chunk.usage is not None:
        usage = chunk.usage
    for choice in chunk.choices:
        if choice.finish_reason:
            finish = choice.finish_reason
        for call in choice.delta.tool_calls or []:
            entry = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
            if call.id:
                entry["id"] = call.id
            if call.function and call.function.name:
                entry["name"] += call.function.name
            if call.function and call.function.arguments:
                entry["arguments"] += call.function.arguments
assert finish == "tool_calls", finish
assert len(calls) == 1, calls
call = calls[0]
assert call["id"], call
assert call["name"] == "get_weather", call
assert json.loads(call["arguments"]) == {"city": "Paris"}, call
assert usage is not None and usage.completion_tokens > 0, usage
print("ok", model)
