//! Real clients: the official `openai`, `anthropic` and `google-genai`
//! Python SDKs against the real server. `.ci/test` installs them into
//! `.venv` (tests/sdk/requirements.txt), and an `anthropic` before 2 (which
//! sends `X-Api-Key` where 2.x sends `Authorization: Bearer`) into
//! `.venv-anthropic1` (tests/sdk/requirements-anthropic1.txt). `.venv` also
//! holds `openapi-spec-validator`, which checks the OpenAPI document.

mod common;

use std::path::PathBuf;

use common::TestServer;

const CONFIG: &str = r#"
[[providers]]
id = "mock"
kind = "mock"
[[models]]
id = "mock-chat"
provider = "mock"
upstream = "echo"
input = ["TEXT"]
output = ["TEXT"]
context_window = 8192
pricing = { unit = "per_token", input_per_million = 1.0, output_per_million = 2.0 }
[[models]]
id = "mock-tool"
provider = "mock"
upstream = "tool:lookup"
input = ["TEXT"]
output = ["TEXT"]
context_window = 8192
pricing = { unit = "per_token", input_per_million = 1.0, output_per_million = 2.0 }
[[models]]
id = "mock-down"
provider = "mock"
upstream = "error:503"
input = ["TEXT"]
output = ["TEXT"]
context_window = 8192
pricing = { unit = "per_token", input_per_million = 1.0, output_per_million = 2.0 }
"#;

#[tokio::test(flavor = "multi_thread")]
async fn the_official_openai_sdk_gets_answers_streams_tool_calls_and_our_errors() {
    let server = TestServer::start_with(Some(CONFIG), &[]);
    let (_, key) = server.create_key(&[]);
    run_script(".venv", "openai_client.py", &[&server.base_url, &key]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_openai_sdk_generates_images_transcribes_and_speaks() {
    let server = TestServer::start();
    let key = server.demo_key();
    run_script(".venv", "openai_media.py", &[&server.base_url, &key]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_openai_sdk_embeds_as_floats_and_as_base64() {
    let server = TestServer::start();
    let key = server.demo_key();
    run_script(".venv", "openai_embeddings.py", &[&server.base_url, &key]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_openai_sdk_gets_responses_streams_and_tool_round_trips() {
    let server = TestServer::start_with(Some(CONFIG), &[]);
    let (_, key) = server.create_key(&[]);
    run_script(".venv", "openai_responses.py", &[&server.base_url, &key]).await;
}

/// A server in front of scripted Anthropic and Gemini upstreams.
async fn native_server() -> (
    common::anthropic::Anthropic,
    common::gemini::Gemini,
    TestServer,
) {
    native_server_with("").await
}

/// [`native_server`] with `extra` configuration appended.
async fn native_server_with(
    extra: &str,
) -> (
    common::anthropic::Anthropic,
    common::gemini::Gemini,
    TestServer,
) {
    let anthropic = common::anthropic::Anthropic::start().await;
    let gemini = common::gemini::Gemini::start().await;
    let config = format!(
        "{CONFIG}\n[[providers]]\nid = \"claude\"\nkind = \"anthropic\"\nbase_url = \"{}\"\n\
         [[providers]]\nid = \"gem\"\nkind = \"gemini\"\nbase_url = \"{}\"\n\
         [[models]]\nid = \"claude-ok\"\nprovider = \"claude\"\nupstream = \"claude-ok\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
         context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n\
         [[models]]\nid = \"gemini-ok\"\nprovider = \"gem\"\nupstream = \"gemini-ok\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
         context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n",
        anthropic.base_url, gemini.base_url
    ) + extra;
    let server = TestServer::start_with(Some(&config), &[]);
    (anthropic, gemini, server)
}

/// Runs a script of tests/sdk with `venv`'s Python (the mocks keep serving
/// meanwhile: the script runs on its own process, awaited).
async fn run_script(venv: &str, script: &str, args: &[&str]) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(venv).join("bin/python");
    assert!(
        python.exists(),
        "no {venv} with the SDKs: run `bash .ci/test`, which installs them"
    );
    let output = tokio::process::Command::new(python)
        .arg(root.join("tests/sdk").join(script))
        .args(args)
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{script} disagreed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_anthropic_sdk_2_sends_a_bearer_key_and_gets_messages_and_streams() {
    let (_anthropic, _gemini, server) = native_server().await;
    let (_, key) = server.create_key(&[]);
    run_script(
        ".venv",
        "anthropic_client.py",
        &[&server.base_url, &key, "authorization"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_anthropic_sdk_before_2_sends_x_api_key_and_gets_messages_and_streams() {
    let (_anthropic, _gemini, server) = native_server().await;
    let (_, key) = server.create_key(&[]);
    run_script(
        ".venv-anthropic1",
        "anthropic_client.py",
        &[&server.base_url, &key, "x-api-key"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_anthropic_sdk_gets_messages_streams_tools_and_counts_on_openai_gemini_and_mock_models()
{
    let openai = common::upstream::Upstream::start().await;
    let (_anthropic, _gemini, server) = native_server_with(&format!(
        "[[providers]]\nid = \"oai\"\nkind = \"openai\"\nbase_url = \"{}\"\n\
         [[models]]\nid = \"gpt-ok\"\nprovider = \"oai\"\nupstream = \"ok\"\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\n\
         context_window = 8192\npricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n",
        openai.base_url
    ))
    .await;
    let (_, key) = server.create_key(&[]);
    run_script(
        ".venv",
        "anthropic_translated.py",
        &[&server.base_url, &key],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_google_genai_sdk_gets_generate_content_and_its_stream() {
    let (_anthropic, _gemini, server) = native_server().await;
    let (_, key) = server.create_key(&[]);
    run_script(".venv", "genai_client.py", &[&server.base_url, &key]).await;
}

/// The OpenAPI document (assets/openapi.json, which the server serves
/// unchanged: tests/dashboard_api.rs) is valid OpenAPI 3.1 by
/// `openapi-spec-validator`; the script also shows that the validator
/// refuses a broken copy.
#[tokio::test(flavor = "multi_thread")]
async fn the_openapi_document_is_valid_openapi_3_1() {
    let document = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/openapi.json");
    run_script(".venv", "openapi_valid.py", &[document.to_str().unwrap()]).await;
}
