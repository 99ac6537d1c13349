"""The official `openai` Python SDK's image and audio calls against a
running Tollgate serving the default (mock) configuration.

Usage: python openai_media.py BASE_URL API_KEY
Exits non-zero (with the failing check) when the gateway and the SDK
disagree. Run by tests/sdk.rs against a real server.
"""
import io
import json
import struct
import sys

import openai

base_url, key = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0)


def silent_wav(ms):
    data = b"\0" * (ms * 16)
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


# Image generation: the SDK's types, and our billing extension beside them.
raw = client.images.with_raw_response.generate(
    model="mock-image", prompt="a lighthouse", n=2, size="256x256", response_format="b64_json"
)
images = raw.parse()
assert len(images.data) == 2, images
assert images.data[0].b64_json and images.data[0].revised_prompt == "a lighthouse", images
extensions = json.loads(raw.text)
assert abs(extensions["billing"]["cost"] - 0.08) < 1e-9, extensions
assert extensions["risk_classification"]["level"] == "minimal", extensions

urls = client.images.generate(model="mock-image", prompt="a boat")
assert urls.data[0].url.startswith("https://"), urls

# A bad size is the SDK's BadRequestError, naming the field.
try:
    client.images.generate(model="mock-image", prompt="x", size="huge")
    raise SystemExit("a bad size was accepted")
except openai.BadRequestError as e:
    assert e.code == "invalid_request" and e.param == "size", e.body

# Transcription: a WAV file upload, JSON and text answers.
audio = silent_wav(3000)
transcript = client.audio.transcriptions.create(
    model="mock-whisper", file=("talk.wav", io.BytesIO(audio), "audio/wav"), language="en"
)
assert transcript.text == f"mock transcript of {len(audio)} bytes of audio", transcript
text = client.audio.transcriptions.create(
    model="mock-whisper", file=("talk.wav", io.BytesIO(audio), "audio/wav"), response_format="text"
)
assert "mock transcript" in text, text

# A model that cannot transcribe.
try:
    client.audio.transcriptions.create(model="mock-chat", file=("talk.wav", io.BytesIO(audio), "audio/wav"))
    raise SystemExit("a text model transcribed")
except openai.UnprocessableEntityError as e:
    assert e.code == "capability_unsupported", e.body

# Speech: the audio bytes.
speech = client.audio.speech.create(model="mock-tts", input="hello there", voice="alloy")
assert speech.content.startswith(b"RIFF"), speech.content[:16]

print("ok")
