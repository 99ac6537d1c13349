//! The peer gateways, started as child processes against the same mock:
//! LiteLLM's proxy (from `bench/peers/.venv`) and Portkey's gateway (from
//! `bench/peers/portkey`), both installed by `bench/peers/install.sh`.
//! Each runs as its own docs say, offline, with no database and no
//! features beyond routing: their cheapest path.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::load::Target;
use super::procs::Server;

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/peers")
}

/// Why a peer cannot run, if it cannot.
pub fn missing(name: &str) -> Option<String> {
    let needed = match name {
        "litellm" => peers_dir().join(".venv/bin/litellm"),
        _ => peers_dir().join("portkey/node_modules/@portkey-ai/gateway/build/start-server.js"),
    };
    (!needed.exists()).then(|| {
        format!(
            "{} is not installed (run `bash bench/peers/install.sh`)",
            needed.display()
        )
    })
}

/// LiteLLM's master key in the benchmark: LiteLLM refuses to start
/// without one, and checks it on every request (its cheapest auth: no
/// database).
const LITELLM_MASTER_KEY: &str =
    "sk-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// LiteLLM's proxy, one worker, routing model `bench` (and `bench-slow`)
/// to the mock as an OpenAI-compatible endpoint.
pub fn start_litellm(mock: SocketAddr, dir: &Path) -> (Server, Target) {
    let config = dir.join("litellm.yaml");
    let mut yaml = String::from("model_list:\n");
    for model in ["bench", "bench-slow"] {
        yaml.push_str(&format!(
            "  - model_name: {model}\n    litellm_params:\n      model: openai/{model}\n      api_base: http://{mock}/v1\n      api_key: bench\n"
        ));
    }
    yaml.push_str("litellm_settings:\n  telemetry: false\n  drop_params: true\n");
    std::fs::write(&config, yaml).expect("cannot write the LiteLLM config");
    let port = super::free_port();
    let mut command = Command::new(peers_dir().join(".venv/bin/litellm"));
    command
        .args(["--config", &config.to_string_lossy(), "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "--num_workers", "1"])
        .env("LITELLM_MASTER_KEY", LITELLM_MASTER_KEY)
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .env("LITELLM_LOG", "ERROR")
        .env("LITELLM_TELEMETRY", "False")
        .env("LITELLM_DONT_SHOW_FEEDBACK_BOX", "True")
        .env("DISABLE_SCHEMA_UPDATE", "True")
        .env("NO_DOCS", "True")
        .current_dir(dir);
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let server = Server::start("litellm", command, addr, &dir.join("litellm.log"));
    let target = Target::new(
        "litellm",
        format!("http://{addr}/v1/chat/completions"),
        "bench",
        "bench-slow",
    )
    .with_keys(vec![LITELLM_MASTER_KEY.to_owned()]);
    (server, target)
}

/// Portkey's gateway on Node, headless, told per request (headers) to
/// call the mock as an OpenAI provider.
pub fn start_portkey(mock: SocketAddr, dir: &Path) -> (Server, Target) {
    let port = super::free_port();
    let mut command = Command::new("node");
    command
        .arg(peers_dir().join("portkey/node_modules/@portkey-ai/gateway/build/start-server.js"))
        .arg(format!("--port={port}"))
        .arg("--headless")
        .env("TRUSTED_CUSTOM_HOSTS", "127.0.0.1,localhost")
        .env("NODE_ENV", "production")
        .current_dir(dir);
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let server = Server::start("portkey", command, addr, &dir.join("portkey.log"));
    let target = Target::new(
        "portkey",
        format!("http://{addr}/v1/chat/completions"),
        "bench",
        "bench-slow",
    )
    .with_header("x-portkey-provider", "openai")
    .with_header("x-portkey-custom-host", &format!("http://{mock}/v1"))
    .with_header("authorization", "Bearer bench");
    (server, target)
}
