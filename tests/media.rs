//! Images and audio end to end: the real server in front of a scripted
//! OpenAI-compatible media upstream (`common::media`), the charges read
//! back through the dashboard API.
//!
//! Prices in the test catalogue: `img` 0.04 credits per image, `whisper`
//! 0.006 per minute, `tts` 15 per million characters.

mod common;

use common::media::{MediaUpstream, SPEECH, TRANSCRIPT};
use common::{TestServer, client, error_code, login};
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

const PROHIBITED: &str = "Use the citizen score to deny housing to people below 600 points.";

fn config(upstream: &str) -> String {
    let model = |id: &str, provider: &str, input: &str, output: &str, pricing: &str| {
        format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"{provider}\"\ninput = {input}\noutput = {output}\n\
             context_window = 8192\npricing = {pricing}\n"
        )
    };
    let mut out = format!(
        "[[providers]]\nid = \"up\"\nkind = \"openai\"\nbase_url = \"{upstream}\"\n\
         [[providers]]\nid = \"google\"\nkind = \"gemini\"\nbase_url = \"http://127.0.0.1:9\"\n"
    );
    let per_image = "{ unit = \"per_image\", per_image = 0.04 }";
    out.push_str(&model(
        "img",
        "up",
        "[\"TEXT\", \"IMAGE\"]",
        "[\"IMAGE\"]",
        per_image,
    ));
    out.push_str(&model(
        "img-cost",
        "up",
        "[\"TEXT\"]",
        "[\"IMAGE\"]",
        per_image,
    ));
    out.push_str(&model(
        "status-500",
        "up",
        "[\"TEXT\"]",
        "[\"IMAGE\"]",
        per_image,
    ));
    out.push_str(&model(
        "gemini-image",
        "google",
        "[\"TEXT\", \"IMAGE\"]",
        "[\"IMAGE\"]",
        per_image,
    ));
    out.push_str(&model(
        "whisper",
        "up",
        "[\"AUDIO\"]",
        "[\"TEXT\"]",
        "{ unit = \"per_minute\", per_minute = 0.006 }",
    ));
    // An OpenAI-compatible server that reports no duration at all.
    out.push_str(&model(
        "whisper-quiet",
        "up",
        "[\"AUDIO\"]",
        "[\"TEXT\"]",
        "{ unit = \"per_minute\", per_minute = 0.006 }",
    ));
    out.push_str(&model(
        "tts",
        "up",
        "[\"TEXT\"]",
        "[\"AUDIO\"]",
        "{ unit = \"per_character\", per_million_characters = 15.0 }",
    ));
    out.push_str(&model(
        "chat",
        "up",
        "[\"TEXT\"]",
        "[\"TEXT\"]",
        "{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }",
    ));
    out
}

async fn setup() -> (MediaUpstream, TestServer) {
    let upstream = MediaUpstream::start().await;
    let server = TestServer::start_with(Some(&config(&upstream.base_url)), &[]);
    (upstream, server)
}

fn micros(credits: &Value) -> u64 {
    (credits.as_f64().expect("credits") * 1_000_000.0).round() as u64
}

fn header_micros(response: &reqwest::Response, name: &str) -> u64 {
    let value: f64 = response.headers()[name].to_str().unwrap().parse().unwrap();
    (value * 1_000_000.0).round() as u64
}

/// A WAV of silence: 8 kHz mono 16-bit, `ms` long.
fn wav(ms: u32) -> Vec<u8> {
    let data = ms * 16;
    let mut out = b"RIFF".to_vec();
    out.extend((36 + data).to_le_bytes());
    out.extend(b"WAVEfmt ");
    out.extend(16u32.to_le_bytes());
    out.extend([1, 0, 1, 0]);
    out.extend(8000u32.to_le_bytes());
    out.extend(16_000u32.to_le_bytes());
    out.extend([2, 0, 16, 0]);
    out.extend(b"data");
    out.extend(data.to_le_bytes());
    out.resize(44 + data as usize, 0);
    out
}

async fn post_json(server: &TestServer, key: &str, path: &str, body: &Value) -> reqwest::Response {
    client()
        .post(server.url(path))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap()
}

async fn post_form(server: &TestServer, key: &str, path: &str, form: Form) -> reqwest::Response {
    client()
        .post(server.url(path))
        .bearer_auth(key)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

fn file(bytes: Vec<u8>, name: &str, mime: &str) -> Part {
    Part::bytes(bytes)
        .file_name(name.to_owned())
        .mime_str(mime)
        .unwrap()
}

fn edit_form(model: &str, prompt: &str) -> Form {
    Form::new()
        .part(
            "image",
            file(b"\x89PNG-image".to_vec(), "cat.png", "image/png"),
        )
        .part(
            "mask",
            file(b"\x89PNG-mask".to_vec(), "mask.png", "image/png"),
        )
        .text("prompt", prompt.to_owned())
        .text("model", model.to_owned())
        .text("n", "2")
}

fn transcription_form(model: &str, audio: Vec<u8>, name: &str, format: Option<&str>) -> Form {
    let form = Form::new()
        .part("file", file(audio, name, "audio/mpeg"))
        .text("model", model.to_owned());
    match format {
        Some(format) => form.text("response_format", format.to_owned()),
        None => form,
    }
}

async fn usage_records(server: &TestServer, key_id: &str) -> Vec<Value> {
    let token = login(server).await;
    let records = common::get_json(
        server,
        &token,
        &format!("/api/v1/usage/records?keyId={key_id}"),
    )
    .await;
    records["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn image_generation_strips_service_fields_and_bills_each_image_returned() {
    let (upstream, server) = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let response = post_json(
        &server,
        &key,
        "/v1/images/generations",
        &json!({ "model": "img", "prompt": "a lighthouse at dusk", "n": 2, "size": "512x512",
                 "response_format": "url", "quality": "hd", "style": "vivid", "user": "u-7",
                 "purpose": "marketing art", "end_user_id": "eu-1", "user_consent_id": "c-1",
                 "deployer_context": { "team": "web" } }),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-ratelimit-limit-requests"], "60");
    let body: Value = response.json().await.unwrap();
    let (path, sent) = upstream.recorded.last();
    assert_eq!(path, "/v1/images/generations");
    assert_eq!(
        sent,
        json!({ "model": "img", "prompt": "a lighthouse at dusk", "n": 2, "size": "512x512",
                "response_format": "url", "quality": "hd", "style": "vivid", "user": "u-7" })
    );
    assert_eq!(body["created"], 1_700_000_000);
    assert_eq!(body["data"][1]["url"], "https://images.invalid/1.png");
    assert_eq!(body["data"][0]["revised_prompt"], "a revised prompt");
    assert_eq!(micros(&body["billing"]["cost"]), 80_000);
    assert_eq!(body["risk_classification"]["level"], "minimal");

    // The upstream's own per-image price wins over the catalogue's.
    let reported: Value = post_json(
        &server,
        &key,
        "/v1/images/generations",
        &json!({ "model": "img-cost", "prompt": "three boats", "n": 3 }),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(micros(&reported["billing"]["cost"]), 150_000);

    let records = usage_records(&server, &key_id).await;
    let costs: Vec<(String, u64)> = records
        .iter()
        .map(|r| (r["model"].as_str().unwrap().to_owned(), micros(&r["cost"])))
        .collect();
    assert!(costs.contains(&("img".into(), 80_000)), "{costs:?}");
    assert!(costs.contains(&("img-cost".into(), 150_000)), "{costs:?}");
    let shown = server.cli_json(&["keys", "show", &key_id]);
    assert_eq!(micros(&shown["creditsConsumed"]), 230_000);

    let metrics = common::scrape_metrics(&server).await;
    assert!(
        metrics.contains("tollgate_credits_charged_total{model=\"img\"}"),
        "{metrics}"
    );
    assert!(metrics.contains("route=\"/v1/images/generations\""));
}

#[tokio::test]
async fn image_generation_refuses_bad_fields_unknown_models_and_failed_upstreams() {
    let (upstream, server) = setup().await;
    let (_, key) = server.create_key(&["--rate-limit", "1000"]);
    for (body, param) in [
        (
            json!({ "model": "img", "prompt": "x", "size": "1024" }),
            "size",
        ),
        (
            json!({ "model": "img", "prompt": "x", "size": "0x512" }),
            "size",
        ),
        (json!({ "model": "img", "prompt": "x", "n": 11 }), "n"),
        (json!({ "model": "img", "prompt": "" }), "prompt"),
        (
            json!({ "model": "img", "prompt": "x", "response_format": "png" }),
            "response_format",
        ),
    ] {
        let response = post_json(&server, &key, "/v1/images/generations", &body).await;
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["code"], "invalid_request", "{body}");
        assert_eq!(error["error"]["param"], param, "{body}");
    }
    let unknown = json!({ "model": "nope", "prompt": "x" });
    let response = post_json(&server, &key, "/v1/images/generations", &unknown).await;
    assert_eq!(error_code(response, 404).await, "model_not_found");
    let text_model = json!({ "model": "chat", "prompt": "x" });
    let response = post_json(&server, &key, "/v1/images/generations", &text_model).await;
    assert_eq!(error_code(response, 422).await, "capability_unsupported");
    // Gemini image models are translated (tests/media_gemini.rs); a size
    // without an aspect ratio Gemini takes is refused before any call.
    let gemini = json!({ "model": "gemini-image", "prompt": "x", "size": "1000x999" });
    let response = post_json(&server, &key, "/v1/images/generations", &gemini).await;
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["param"], "size");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("gemini-image")
    );
    assert_eq!(
        upstream.recorded.count(),
        0,
        "nothing bad reached the upstream"
    );

    let failing = json!({ "model": "status-500", "prompt": "x" });
    let response = post_json(&server, &key, "/v1/images/generations", &failing).await;
    assert_eq!(error_code(response, 502).await, "all_providers_failed");
}

#[tokio::test]
async fn image_edits_go_out_as_multipart_and_only_to_native_providers() {
    let (upstream, server) = setup().await;
    let (key_id, key) = server.create_key(&[]);
    let form = edit_form("img", "add a red hat")
        .text("size", "512x512")
        .text("purpose", "art direction");
    let response = post_form(&server, &key, "/v1/images/edits", form).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let (path, sent) = upstream.recorded.last();
    assert_eq!(path, "/v1/images/edits");
    assert_eq!(
        sent,
        json!({
            "image": { "filename": "cat.png", "contentType": "image/png", "bytes": 10 },
            "mask": { "filename": "mask.png", "contentType": "image/png", "bytes": 9 },
            "prompt": "add a red hat", "model": "img", "n": "2", "size": "512x512",
        })
    );
    assert_eq!(body["data"].as_array().unwrap().len(), 2);
    assert_eq!(body["data"][0]["b64_json"], "aW1hZ2U=");
    assert_eq!(micros(&body["billing"]["cost"]), 80_000);
    let records = usage_records(&server, &key_id).await;
    assert_eq!(micros(&records[0]["cost"]), 80_000);

    // A provider without a native edit endpoint: 400 naming the model.
    let response = post_form(
        &server,
        &key,
        "/v1/images/edits",
        edit_form("gemini-image", "x"),
    )
    .await;
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["code"], "invalid_request");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`gemini-image`")
    );
    // No image.
    let no_image = Form::new().text("model", "img").text("prompt", "x");
    let response = post_form(&server, &key, "/v1/images/edits", no_image).await;
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["param"], "image");
    // Bad size.
    let bad = edit_form("img", "x").text("size", "wide");
    let response = post_form(&server, &key, "/v1/images/edits", bad).await;
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["param"], "size");
    // A field given twice could be validated once and read otherwise upstream.
    let twice = edit_form("img", "x")
        .text("size", "512x512")
        .text("size", "wide");
    let response = post_form(&server, &key, "/v1/images/edits", twice).await;
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["param"], "size");
    // Not multipart at all.
    let response = post_json(
        &server,
        &key,
        "/v1/images/edits",
        &json!({ "model": "img" }),
    )
    .await;
    assert_eq!(error_code(response, 415).await, "unsupported_media_type");
    assert_eq!(upstream.recorded.count(), 1);
}

#[tokio::test]
async fn transcriptions_are_billed_by_the_duration_the_upstream_or_the_file_reports() {
    let (upstream, server) = setup().await;
    let (key_id, key) = server.create_key(&[]);

    // An MP3: its length is not in a header, so the upstream is asked for
    // verbose_json (42.5 s) and the caller still gets plain {text}.
    let mp3 = b"ID3\x04fake-mp3-frames".to_vec();
    let form = transcription_form("whisper", mp3, "talk.mp3", None)
        .text("language", "en")
        .text("end_user_id", "eu-9");
    let response = post_form(&server, &key, "/v1/audio/transcriptions", form).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let (_, sent) = upstream.recorded.last();
    assert_eq!(sent["response_format"], "verbose_json");
    assert_eq!(sent["model"], "whisper");
    assert_eq!(sent["language"], "en");
    assert_eq!(sent["file"]["filename"], "talk.mp3");
    assert!(sent.get("end_user_id").is_none());
    assert_eq!(body["text"], TRANSCRIPT);
    assert!(body.get("segments").is_none());
    // 42.5 s at 0.006 per minute.
    assert_eq!(micros(&body["billing"]["cost"]), 4250);

    // A WAV asked as text: forwarded as asked, billed from its header (2.5 s).
    let form = transcription_form("whisper", wav(2500), "a.wav", Some("text"));
    let response = post_form(&server, &key, "/v1/audio/transcriptions", form).await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    assert_eq!(header_micros(&response, "x-tollgate-cost"), 250);
    assert_eq!(response.text().await.unwrap(), TRANSCRIPT);
    assert_eq!(upstream.recorded.last().1["response_format"], "text");

    // SRT: billed to the end of the last cue (7 s).
    let form = transcription_form("whisper", b"ID3 x".to_vec(), "b.mp3", Some("srt"));
    let response = post_form(&server, &key, "/v1/audio/transcriptions", form).await;
    assert_eq!(header_micros(&response, "x-tollgate-cost"), 700);
    assert!(response.text().await.unwrap().contains("00:00:07,000"));

    let records = usage_records(&server, &key_id).await;
    let mut costs: Vec<u64> = records.iter().map(|r| micros(&r["cost"])).collect();
    costs.sort();
    assert_eq!(costs, [250, 700, 4250]);

    // Bad inputs.
    let no_file = Form::new().text("model", "whisper");
    let response = post_form(&server, &key, "/v1/audio/transcriptions", no_file).await;
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["param"], "file");
    let form = transcription_form("whisper", wav(10), "a.wav", Some("mp4"));
    let response = post_form(&server, &key, "/v1/audio/transcriptions", form).await;
    assert_eq!(error_code(response, 400).await, "invalid_request");
    let form = transcription_form("nope", wav(10), "a.wav", None);
    let response = post_form(&server, &key, "/v1/audio/transcriptions", form).await;
    assert_eq!(error_code(response, 404).await, "model_not_found");
    let form = transcription_form("tts", wav(10), "a.wav", None);
    let response = post_form(&server, &key, "/v1/audio/transcriptions", form).await;
    assert_eq!(error_code(response, 422).await, "capability_unsupported");
    assert_eq!(upstream.recorded.count(), 3);
}

/// An MPEG-1 layer III stream of `frames` frames (128 kbit/s, 44.1 kHz):
/// 26.122 ms each.
fn mp3(frames: usize) -> Vec<u8> {
    let mut frame = vec![0xFF, 0xFB, 0x90, 0x00];
    frame.resize(417, 0);
    let mut out = b"ID3\x04\x00\x00\x00\x00\x00\x00".to_vec();
    out.extend((0..frames).flat_map(|_| frame.clone()));
    out
}

/// When the upstream reports no duration, a compressed file is billed for
/// the audio it holds (its MP3 frames), not estimated from its size: a
/// low-bitrate file cannot buy long audio for the price of its bytes.
#[tokio::test]
async fn an_mp3_is_billed_by_its_frames_when_the_upstream_reports_no_length() {
    let (upstream, server) = setup().await;
    let (key_id, key) = server.create_key(&[]);
    // 2,297 frames: 60.003 s, 0.006 credits at 0.006 per minute.
    let form = transcription_form("whisper-quiet", mp3(2297), "talk.mp3", None);
    let response = post_form(&server, &key, "/v1/audio/transcriptions", form).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        upstream.recorded.last().1["response_format"],
        "verbose_json"
    );
    assert_eq!(micros(&body["billing"]["cost"]), 6000);
    let records = usage_records(&server, &key_id).await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["estimated"], false, "{}", records[0]);
}

#[tokio::test]
async fn speech_streams_the_upstream_audio_and_is_billed_per_character() {
    let (upstream, server) = setup().await;
    let (key_id, key) = server.create_key(&["--credit-limit", "10"]);
    let response = post_json(
        &server,
        &key,
        "/v1/audio/speech",
        &json!({ "model": "tts", "input": "Hello world", "voice": "alloy",
                 "response_format": "mp3", "speed": 1.25, "purpose": "narration" }),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "audio/mpeg");
    // 11 characters at 15 credits per million.
    assert_eq!(header_micros(&response, "x-tollgate-cost"), 165);
    assert_eq!(
        header_micros(&response, "x-tollgate-key-remaining"),
        10_000_000 - 165
    );
    assert_eq!(response.headers()["x-tollgate-risk-level"], "minimal");
    let audio = response.bytes().await.unwrap();
    assert_eq!(&audio[..], SPEECH.concat().as_slice());
    let (path, sent) = upstream.recorded.last();
    assert_eq!(path, "/v1/audio/speech");
    assert_eq!(
        sent,
        json!({ "model": "tts", "input": "Hello world", "voice": "alloy", "response_format": "mp3", "speed": 1.25 })
    );
    let records = usage_records(&server, &key_id).await;
    assert_eq!(micros(&records[0]["cost"]), 165);
    assert_eq!(records[0]["model"], "tts");

    // A model without AUDIO output: 422.
    let text_model = json!({ "model": "chat", "input": "hi", "voice": "alloy" });
    let response = post_json(&server, &key, "/v1/audio/speech", &text_model).await;
    assert_eq!(error_code(response, 422).await, "capability_unsupported");
    let no_voice = json!({ "model": "tts", "input": "hi" });
    let response = post_json(&server, &key, "/v1/audio/speech", &no_voice).await;
    assert_eq!(error_code(response, 400).await, "invalid_request");
    let fast = json!({ "model": "tts", "input": "hi", "voice": "alloy", "speed": 9 });
    let response = post_json(&server, &key, "/v1/audio/speech", &fast).await;
    assert_eq!(error_code(response, 400).await, "invalid_request");
    assert_eq!(upstream.recorded.count(), 1);
}

/// One request per route, each a fresh body.
async fn each_route(
    server: &TestServer,
    key: &str,
    text: &str,
) -> Vec<(String, reqwest::Response)> {
    let mut out = Vec::new();
    let generation = json!({ "model": "img", "prompt": text });
    out.push((
        "generation".into(),
        post_json(server, key, "/v1/images/generations", &generation).await,
    ));
    let edit = edit_form("img", text);
    out.push((
        "edit".into(),
        post_form(server, key, "/v1/images/edits", edit).await,
    ));
    let transcription =
        transcription_form("whisper", wav(100), "a.wav", None).text("prompt", text.to_owned());
    out.push((
        "transcription".into(),
        post_form(server, key, "/v1/audio/transcriptions", transcription).await,
    ));
    let speech = json!({ "model": "tts", "input": text, "voice": "alloy" });
    out.push((
        "speech".into(),
        post_json(server, key, "/v1/audio/speech", &speech).await,
    ));
    out
}

#[tokio::test]
async fn no_media_route_is_a_way_around_caps_rate_limits_or_the_risk_gate() {
    let (upstream, server) = setup().await;

    // Over its cap: one image spends the key's allowance, then every route is 402.
    let (_, capped) = server.create_key(&["--credit-limit", "0.01"]);
    let first = json!({ "model": "img", "prompt": "a cat" });
    assert_eq!(
        post_json(&server, &capped, "/v1/images/generations", &first)
            .await
            .status(),
        200
    );
    let reached = upstream.recorded.count();
    for (route, response) in each_route(&server, &capped, "a cat").await {
        assert_eq!(response.status(), 402, "{route}");
        assert_eq!(
            error_code(response, 402).await,
            "budget_exceeded",
            "{route}"
        );
    }

    // Rate limited: one request a minute.
    let (_, limited) = server.create_key(&["--rate-limit", "1"]);
    let speech = json!({ "model": "tts", "input": "hi", "voice": "alloy" });
    assert_eq!(
        post_json(&server, &limited, "/v1/audio/speech", &speech)
            .await
            .status(),
        200
    );
    let reached = reached + 1;
    for (route, response) in each_route(&server, &limited, "a cat").await {
        assert!(response.headers().contains_key("retry-after"), "{route}");
        assert_eq!(
            error_code(response, 429).await,
            "rate_limit_exceeded",
            "{route}"
        );
    }

    // Prohibited text: refused before any upstream call, whatever the key.
    let (_, allowed) = server.create_key(&["--allow-high-risk", "--rate-limit", "1000"]);
    for (route, response) in each_route(&server, &allowed, PROHIBITED).await {
        assert_eq!(error_code(response, 403).await, "prohibited_use", "{route}");
    }
    // High-risk text on a key without allowHighRisk.
    let (_, plain) = server.create_key(&["--rate-limit", "1000"]);
    let scoring = "Score this loan applicant and decide whether to approve the loan.";
    for (route, response) in each_route(&server, &plain, scoring).await {
        assert_eq!(
            error_code(response, 403).await,
            "high_risk_not_allowed",
            "{route}"
        );
    }
    assert_eq!(
        upstream.recorded.count(),
        reached,
        "nothing refused reached the upstream"
    );
}

#[tokio::test]
async fn the_mock_provider_serves_images_and_audio_offline() {
    let server = TestServer::start();
    let key = server.demo_key();
    let image: Value = post_json(
        &server,
        &key,
        "/v1/images/generations",
        &json!({ "model": "mock-image", "prompt": "a cat", "n": 2, "response_format": "b64_json" }),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(image["data"].as_array().unwrap().len(), 2);
    assert!(image["data"][0]["b64_json"].is_string());
    assert!(micros(&image["billing"]["cost"]) > 0);

    let form = transcription_form("mock-whisper", wav(3000), "a.wav", None);
    let transcript: Value = post_form(&server, &key, "/v1/audio/transcriptions", form)
        .await
        .json()
        .await
        .unwrap();
    assert!(
        transcript["text"]
            .as_str()
            .unwrap()
            .starts_with("mock transcript")
    );
    assert!(micros(&transcript["billing"]["cost"]) > 0);

    let speech = post_json(
        &server,
        &key,
        "/v1/audio/speech",
        &json!({ "model": "mock-tts", "input": "hello", "voice": "alloy" }),
    )
    .await;
    assert_eq!(speech.status(), 200);
    assert_eq!(speech.headers()["content-type"], "audio/wav");
    assert!(speech.bytes().await.unwrap().starts_with(b"RIFF"));
}

#[tokio::test]
async fn media_requests_count_against_the_free_tiers_daily_multimodal_cap() {
    let upstream = MediaUpstream::start().await;
    let config = format!(
        "free_multimodal_per_day = 1\n{}",
        config(&upstream.base_url)
    );
    let server = TestServer::start_with(Some(&config), &[]);
    server.cli_json(&["tenants", "create", "--name", "freebie", "--tier", "free"]);
    server.cli_json(&["tenants", "topup", "freebie", "--credits", "10"]);
    let (_, free_key) = server.create_key(&["--tenant", "freebie"]);
    let speech = json!({ "model": "tts", "input": "hi", "voice": "alloy" });
    assert_eq!(
        post_json(&server, &free_key, "/v1/audio/speech", &speech)
            .await
            .status(),
        200
    );
    let image = json!({ "model": "img", "prompt": "a cat" });
    let refused = post_json(&server, &free_key, "/v1/images/generations", &image).await;
    assert_eq!(error_code(refused, 429).await, "multimodal_cap_exceeded");
    // The default (paid) tenant has no such cap.
    let (_, paid_key) = server.create_key(&[]);
    for _ in 0..2 {
        assert_eq!(
            post_json(&server, &paid_key, "/v1/images/generations", &image)
                .await
                .status(),
            200
        );
    }
}
