//! Real clients: the official `openai` Python SDK against the real server.
//! `.ci/test` installs the SDK into `.venv` (tests/sdk/requirements.txt).

mod common;

use std::path::PathBuf;
use std::process::Command;

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

fn python() -> PathBuf {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        venv.exists(),
        "no .venv with the SDKs: run `bash .ci/test`, which installs tests/sdk/requirements.txt"
    );
    venv
}

#[test]
fn the_official_openai_sdk_gets_answers_streams_tool_calls_and_our_errors() {
    let python = python();
    let server = TestServer::start_with(Some(CONFIG), &[]);
    let (_, key) = server.create_key(&[]);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/openai_client.py");
    let output = Command::new(python)
        .arg(script)
        .arg(&server.base_url)
        .arg(&key)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the openai SDK disagreed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_official_openai_sdk_generates_images_transcribes_and_speaks() {
    let python = python();
    let server = TestServer::start();
    let key = server.demo_key();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/openai_media.py");
    let output = Command::new(python)
        .arg(script)
        .arg(&server.base_url)
        .arg(&key)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the openai SDK disagreed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
