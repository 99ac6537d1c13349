"""The official `anthropic` and `openai` Python SDKs on cloud-backed models.

Usage: python anthropic_cloud.py BASE_URL API_KEY
Models of tests/cloud_endpoints.rs: `vx-claude` (Claude on Vertex, the
Messages passthrough to :rawPredict), `br-claude` (Bedrock, translated
through Converse), `az-chat` (an Azure deployment). Exits non-zero (with
the failing check) when the gateway and the SDKs disagree.
"""
import sys

import anthropic
import openai

base_url, key = sys.argv[1], sys.argv[2]
claude = anthropic.Anthropic(base_url=base_url, api_key=key, max_retries=0)
gpt = openai.OpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0)

expected = {
    "vx-claude": "hello from claude-sonnet-4@20250514",
    "br-claude": "Hello from Bedrock",
    "az-chat": "hello from gpt-4o.eu",
}
ask = [{"role": "user", "content": "hi"}]
for model, text in expected.items():
    message = claude.messages.create(model=model, max_tokens=64, messages=ask)
    assert message.content[0].text == text, (model, message)
    assert message.stop_reason == "end_turn", (model, message)
    assert message.usage.output_tokens > 0, (model, message)
    with claude.messages.stream(model=model, max_tokens=64, messages=ask) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert streamed == text, (model, streamed)
    assert final.usage.output_tokens > 0, (model, final)
    counted = claude.messages.count_tokens(model=model, messages=ask)
    assert counted.input_tokens > 0, (model, counted)

    response = gpt.responses.create(model=model, input="hi")
    assert response.output_text == text, (model, response)
    with gpt.responses.stream(model=model, input="hi") as events:
        deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
        done = events.get_final_response()
    assert deltas == text and done.output_text == text, (model, deltas)

try:
    claude.messages.create(model="br-claude", max_tokens=64, messages=[])
    raise AssertionError("an empty conversation was accepted")
except anthropic.BadRequestError as error:
    assert error.status_code == 400, error
print("ok")
