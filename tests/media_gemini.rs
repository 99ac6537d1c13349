//! Image generation on Gemini image models: the real server in front of the
//! scripted generate-content upstream (`common::gemini`), the request
//! translated, the answer in OpenAI's shape, the charge read back.
//!
//! Prices: `nano` 0.039 credits per image; `nano-tokens` 1 credit per
//! million input and 30 per million output tokens.

mod common;

use base64::Engine;
use common::gemini::{Gemini, PNG};
use common::{TestServer, client, error_code};
use serde_json::{Value, json};

const SECRET: &str = "goog-image-secret";

fn config(base_url: &str) -> String {
    let model = |id: &str, upstream: &str, output: &str, pricing: &str| {
        format!(
            "[[models]]\nid = \"{id}\"\nprovider = \"google\"\nupstream = \"{upstream}\"\n\
             input = [\"TEXT\"]\noutput = {output}\ncontext_window = 32768\npricing = {pricing}\n"
        )
    };
    let image = "[\"TEXT\", \"IMAGE\"]";
    let per_image = "{ unit = \"per_image\", per_image = 0.039 }";
    let per_token = "{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 30.0 }";
    [
        format!(
            "[[providers]]\nid = \"google\"\nkind = \"gemini\"\nbase_url = \"{base_url}\"\napi_key_env = \"TEST_GEMINI_KEY\"\n"
        ),
        model("nano", "gemini-image", image, per_image),
        model("nano-tokens", "gemini-image", image, per_token),
        model("nano-refuses", "gemini-no-image", image, per_image),
        model("gemini-text", "gemini-ok", "[\"TEXT\"]", per_token),
    ]
    .concat()
}

async fn setup() -> (Gemini, TestServer) {
    let gemini = Gemini::start().await;
    let server = TestServer::start_with(
        Some(&config(&gemini.base_url)),
        &[("TEST_GEMINI_KEY", SECRET)],
    );
    (gemini, server)
}

async fn generate(server: &TestServer, key: &str, body: &Value) -> reqwest::Response {
    client()
        .post(server.url("/v1/images/generations"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap()
}

fn micros(credits: &Value) -> u64 {
    (credits.as_f64().expect("credits") * 1_000_000.0).round() as u64
}

#[tokio::test]
async fn gemini_image_models_get_a_translated_request_and_answer_in_openais_shape() {
    let (gemini, server) = setup().await;
    let (key_id, key) = server.create_key(&["--rate-limit", "1000"]);
    let response = generate(
        &server,
        &key,
        &json!({ "model": "nano", "prompt": "a red boat", "n": 2, "size": "1536x1024",
                 "response_format": "b64_json", "quality": "hd", "user": "u-1",
                 "purpose": "marketing art" }),
    )
    .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();

    assert_eq!(
        gemini.recorded.paths(),
        ["/v1beta/models/gemini-image:generateContent"]
    );
    assert_eq!(gemini.recorded.headers()[0]["x-goog-api-key"], SECRET);
    assert_eq!(
        gemini.recorded.bodies()[0],
        json!({
            "contents": [{ "role": "user", "parts": [{ "text": "a red boat" }] }],
            "generationConfig": { "responseModalities": ["TEXT", "IMAGE"], "candidateCount": 2,
                                  "imageConfig": { "aspectRatio": "3:2" } },
        })
    );

    let png = base64::engine::general_purpose::STANDARD.encode(PNG);
    let data = body["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    for image in data {
        assert_eq!(image["b64_json"], png.as_str());
        assert_eq!(image["revised_prompt"], "a red boat");
    }
    assert!(body["created"].is_i64());
    assert_eq!(micros(&body["billing"]["cost"]), 78_000, "2 x 0.039");

    // `url` cannot be a link: Gemini gives bytes, so it is a data URL.
    let linked: Value = generate(
        &server,
        &key,
        &json!({ "model": "nano", "prompt": "a red boat", "response_format": "url" }),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        linked["data"][0]["url"],
        format!("data:image/png;base64,{png}")
    );
    assert_eq!(
        gemini.recorded.bodies()[1]["generationConfig"],
        json!({ "responseModalities": ["TEXT", "IMAGE"] })
    );

    // Priced per token: billed by usageMetadata (9 in, 1290 out).
    let tokens: Value = generate(
        &server,
        &key,
        &json!({ "model": "nano-tokens", "prompt": "x" }),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(micros(&tokens["billing"]["cost"]), 9 + 1290 * 30);

    let shown = server.cli_json(&["keys", "show", &key_id]);
    assert_eq!(micros(&shown["creditsConsumed"]), 78_000 + 39_000 + 38_709);
}

#[tokio::test]
async fn gemini_images_refuse_bad_sizes_edits_text_models_and_imageless_answers() {
    let (gemini, server) = setup().await;
    let (key_id, key) = server.create_key(&["--rate-limit", "1000"]);

    let response = generate(
        &server,
        &key,
        &json!({ "model": "nano", "prompt": "x", "size": "1792x1024" }),
    )
    .await;
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["code"], "invalid_request");
    assert_eq!(error["error"]["param"], "size");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("1792x1024") && message.contains("16:9"),
        "{message}"
    );

    let text = json!({ "model": "gemini-text", "prompt": "x" });
    let response = generate(&server, &key, &text).await;
    assert_eq!(error_code(response, 422).await, "capability_unsupported");

    let form = reqwest::multipart::Form::new()
        .text("model", "nano")
        .text("prompt", "x")
        .part(
            "image",
            reqwest::multipart::Part::bytes(PNG.to_vec())
                .file_name("a.png")
                .mime_str("image/png")
                .unwrap(),
        );
    let response = client()
        .post(server.url("/v1/images/edits"))
        .bearer_auth(&key)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["param"], "model");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`nano`")
    );
    assert_eq!(
        gemini.recorded.count(),
        0,
        "nothing bad reached the upstream"
    );

    // The model answered text and no image: its refusal, not charged.
    let response = generate(
        &server,
        &key,
        &json!({ "model": "nano-refuses", "prompt": "x" }),
    )
    .await;
    assert_eq!(response.status(), 422);
    let error: Value = response.json().await.unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("IMAGE_SAFETY"),
        "{error}"
    );
    let shown = server.cli_json(&["keys", "show", &key_id]);
    assert_eq!(micros(&shown["creditsConsumed"]), 0);
}

#[tokio::test]
async fn a_capped_key_is_refused_gemini_images_once_over_its_limit() {
    let (gemini, server) = setup().await;
    let (_, capped) = server.create_key(&["--credit-limit", "0.01"]);
    let body = json!({ "model": "nano", "prompt": "a cat" });
    assert_eq!(generate(&server, &capped, &body).await.status(), 200);
    let response = generate(&server, &capped, &body).await;
    assert_eq!(error_code(response, 402).await, "budget_exceeded");
    assert_eq!(gemini.recorded.count(), 1);
}
