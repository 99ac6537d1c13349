"""The official `anthropic` Python SDK against a running Tollgate's
`/v1/messages` on models no Anthropic provider serves: an OpenAI model
and a Gemini model behind scripted upstreams, and the built-in mock's
tool model. Messages, streams through the SDK's helper, a tool_use round
trip, count_tokens, and our errors in the shape the SDK reads.

Usage: python anthropic_translated.py BASE_URL API_KEY
Exits non-zero (with the failing check) when the gateway and the SDK
disagree. Run by tests/sdk.rs.
"""
import sys

import anthropic

base_url, key = sys.argv[1], sys.argv[2]
client = anthropic.Anthropic(base_url=base_url, api_key=key, max_retries=0)
print("anthropic", anthropic.__version__)
ask = [{"role": "user", "content": "hello sdk"}]

# A plain message on an OpenAI model and on a Gemini model.
message = client.messages.create(model="gpt-ok", max_tokens=64, system="Be brief.", messages=ask)
assert message.type == "message" and message.role == "assistant", message
assert message.content[0].text == "hello from upstream", message
assert message.stop_reason == "end_turn", message
assert message.usage.input_tokens == 10 and message.usage.output_tokens == 5, message.usage
message = client.messages.create(model="gemini-ok", max_tokens=64, messages=ask)
assert message.content[0].text == "hello from gemini", message
assert message.usage.output_tokens == 8, message.usage

# A stream through the SDK's helper: text as it comes, then the final
# message with the usage of message_delta.
with client.messages.stream(model="gpt-ok", max_tokens=64, messages=ask) as stream:
    text = "".join(stream.text_stream)
    final = stream.get_final_message()
assert text == "hello from upstream", text
assert final.stop_reason == "end_turn", final
assert final.usage.output_tokens == 5 and final.usage.input_tokens == 10, final.usage

# The raw events, in the documented order.
events = list(client.messages.create(model="gemini-ok", max_tokens=64, messages=ask, stream=True))
types = [e.type for e in events]
assert types[0] == "message_start" and types[-1] == "message_stop", types
assert "content_block_delta" in types and "message_delta" in types, types

# A tool_use round trip on the mock's tool model, streamed and plain.
tools = [{"name": "lookup", "description": "Looks a word up",
          "input_schema": {"type": "object", "properties": {"input": {"type": "string"}}}}]
with client.messages.stream(model="mock-tool", max_tokens=64, tools=tools, messages=ask) as stream:
    final = stream.get_final_message()
assert final.stop_reason == "tool_use", final
call = final.content[-1]
assert call.type == "tool_use" and call.name == "lookup", call
assert call.input == {"input": "hello sdk"}, call.input
answer = client.messages.create(model="gpt-ok", max_tokens=64, tools=tools, messages=[
    ask[0],
    {"role": "assistant", "content": [{"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "a greeting"}]},
])
assert answer.content[0].text == "hello from upstream", answer

# count_tokens: local on OpenAI models, forwarded on Anthropic ones.
counted = client.messages.count_tokens(model="gpt-ok", messages=[{"role": "user", "content": "tiktoken is great!"}])
# 3 (message) + 1 (role) + 6 (content) + 3 (reply priming)
assert counted.input_tokens == 13, counted
counted = client.messages.count_tokens(model="claude-ok", messages=ask)
assert counted.input_tokens == 4242, counted

# Our errors, in the Anthropic shape the SDK reads.
try:
    client.messages.create(model="gpt-ok", max_tokens=64, messages=[])
    raise AssertionError("empty messages were served")
except anthropic.BadRequestError as e:
    assert e.body["type"] == "error", e.body
    assert e.body["error"]["type"] == "invalid_request", e.body
try:
    client.messages.count_tokens(model="gpt-nope", messages=ask)
    raise AssertionError("an unknown model was counted")
except anthropic.NotFoundError as e:
    assert e.body["error"]["type"] == "model_not_found", e.body
print("ok")
