"""The official `openai` Python SDK's Responses API against a running
Tollgate whose models are on the mock provider (reached by translation).

Usage: python openai_responses.py BASE_URL API_KEY
Exits non-zero (with the failing check) when the gateway and the SDK
disagree. Run by tests/sdk.rs against a real server.
"""
import json
import sys

import openai

base_url, key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0)

# Plain: the SDK's `output_text` reads the output items.
plain = client.responses.create(model="mock-chat", input="hello", instructions="be brief")
assert plain.object == "response", plain
assert plain.status == "completed", plain
assert plain.output_text == "echo: hello", plain.output_text
assert plain.usage.input_tokens > 0 and plain.usage.output_tokens > 0, plain.usage

# Streamed: the standard events, in sequence, ending with the response.
kinds, deltas, final = [], [], None
with client.responses.stream(model="mock-chat", input="stream me") as stream:
    for event in stream:
        kinds.append(event.type)
        if event.type == "response.output_text.delta":
            deltas.append(event.delta)
    final = stream.get_final_response()
assert kinds[0] == "response.created" and kinds[-1] == "response.completed", kinds
assert "".join(deltas) == "echo: stream me", deltas
assert final.output_text == "echo: stream me", final

# Raw stream events with create(stream=True): sequence numbers from 0.
events = list(client.responses.create(model="mock-chat", input="again", stream=True))
assert [e.sequence_number for e in events] == list(range(len(events))), events

# Tools round trip: a function call, then its output on the same thread.
tools = [{
    "type": "function", "name": "lookup", "description": "Looks a word up",
    "parameters": {"type": "object", "properties": {"input": {"type": "string"}}}, "strict": False,
}]
called = client.responses.create(model="mock-tool", input="Paris", tools=tools)
calls = [item for item in called.output if item.type == "function_call"]
assert len(calls) == 1 and calls[0].name == "lookup", called.output
assert json.loads(calls[0].arguments) == {"input": "Paris"}, calls[0].arguments
answered = client.responses.create(
    model="mock-chat",
    previous_response_id=called.id,
    input=[{"type": "function_call_output", "call_id": calls[0].call_id, "output": "a city"}],
    tools=tools,
)
assert answered.previous_response_id == called.id, answered
# The mock echoes the last user text, which came from the stored thread.
assert answered.output_text == "echo: Paris", answered.output_text

# previous_response_id continues the conversation; unknown is 404.
try:
    client.responses.create(model="mock-chat", input="x", previous_response_id="resp_unknown")
    raise AssertionError("expected NotFoundError")
except openai.NotFoundError as error:
    assert error.body["param"] == "previous_response_id", error.body

# Bad input: our 400 in the OpenAI shape.
try:
    client.responses.create(model="mock-chat", input=[{"type": "telepathy"}])
    raise AssertionError("expected BadRequestError")
except openai.BadRequestError as error:
    assert error.code == "invalid_request", error.body
    assert error.body["param"] == "input[0].type", error.body

print("ok")
