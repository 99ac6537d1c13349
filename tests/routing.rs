//! Routing resilience (issue 22, docs/routing.md): a model's deployments
//! with weights, same-deployment retries with backoff and `Retry-After`,
//! cooldown with a half-open probe, the order on failure, and a model's
//! request and token limits across all keys. Upstreams are scripted
//! (tests/common/scripted.rs) and count their calls; no test asserts a
//! timing.
#![allow(clippy::disallowed_methods)] // Test and bench code spawns its own clients and servers.

mod common;

use std::collections::HashMap;

use common::scripted::{Scripted, Step};
use common::{TestServer, chat_post, client, error_code, scrape_metrics};
use serde_json::{Value, json};

#[path = "../docs/examples/verify_webhook.rs"]
mod verify_webhook;

/// Two providers on the scripted upstream (`pa` with key `sk-a`, `pb` with
/// key `sk-b`), with `provider_extra` added to both, then `models`.
fn config(base: &str, provider_extra: &str, models: &str) -> String {
    provider(base, "pa", "PA_KEY", provider_extra)
        + &provider(base, "pb", "PB_KEY", provider_extra)
        + models
}

/// One provider `id` on the scripted upstream, its key in `env`.
fn provider(base: &str, id: &str, env: &str, extra: &str) -> String {
    format!(
        "[[providers]]\nid = \"{id}\"\nkind = \"openai\"\nbase_url = \"{base}\"\napi_key_env = \"{env}\"\nretry_backoff_ms = 5\n{extra}\n"
    )
}

/// A text model entry: `routing` is its `provider`/`upstream` or
/// `deployments` lines (and any strategy or limit).
fn model(id: &str, routing: &str) -> String {
    format!(
        "[[models]]\nid = \"{id}\"\n{routing}\ninput = [\"TEXT\"]\noutput = [\"TEXT\"]\ncontext_window = 8192\n\
         pricing = {{ unit = \"per_token\", input_per_million = 1.0, output_per_million = 2.0 }}\n"
    )
}

fn start(text: &str, extra_env: &[(&str, &str)]) -> (TestServer, String) {
    let mut env = vec![("PA_KEY", "sk-a"), ("PB_KEY", "sk-b")];
    env.extend_from_slice(extra_env);
    let server = TestServer::start_with(Some(text), &env);
    let (_, key) = server.create_key(&["--rate-limit", "10000"]);
    (server, key)
}

/// A chat request for one model (a string) or a chain (an array).
fn hello(models: Value) -> Value {
    let field = if models.is_array() { "models" } else { "model" };
    json!({ field: models, "messages": [{ "role": "user", "content": "hi" }] })
}

async fn completion(server: &TestServer, key: &str, body: Value) -> Value {
    let response = chat_post(server, key, &body).await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

/// The value of one sample line of /metrics.
fn sample(metrics: &str, line_start: &str) -> Option<f64> {
    metrics
        .lines()
        .find(|l| l.starts_with(line_start))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[tokio::test]
async fn weighted_deployments_share_the_load_by_weight_with_each_providers_key() {
    let upstream = Scripted::start().await;
    let routing = "deployments = [{ provider = \"pa\", upstream = \"a\", weight = 3 }, { provider = \"pb\", upstream = \"b\" }]";
    let (server, key) = start(&config(&upstream.base_url, "", &model("m", routing)), &[]);
    let n = 200;
    for _ in 0..n {
        let answer = completion(&server, &key, hello(json!("m"))).await;
        assert_eq!(answer["model"], "m");
        assert_eq!(answer["billing"]["isFallback"], false);
        let deployment = answer["explainability"]["deployment"].as_str().unwrap();
        assert!(deployment == "pa/a" || deployment == "pb/b", "{deployment}");
        assert_eq!(answer["explainability"]["strategy"], "weighted");
    }
    let (a, b) = (upstream.script.count("a"), upstream.script.count("b"));
    assert_eq!(a + b, n);
    // 3 : 1 expects 150 : 50; a binomial's spread is about 6, so 30 is
    // five deviations of tolerance.
    assert!((120..=180).contains(&a), "a served {a} of {n}");
    for call in upstream.script.calls() {
        assert_eq!(call.path, "/v1/chat/completions");
        let expected = if call.model == "a" {
            "Bearer sk-a"
        } else {
            "Bearer sk-b"
        };
        assert_eq!(
            call.headers["authorization"], expected,
            "each deployment uses its provider's key"
        );
    }
}

#[tokio::test]
async fn a_retryable_failure_is_retried_on_the_same_deployment_then_served() {
    let upstream = Scripted::start().await;
    let (server, key) = start(
        &config(
            &upstream.base_url,
            "",
            &model("m", "provider = \"pa\"\nupstream = \"flaky\""),
        ),
        &[],
    );
    upstream
        .script
        .push("flaky", &[Step::Status(503), Step::Status(429)]);
    let answer = completion(&server, &key, hello(json!("m"))).await;
    assert_eq!(
        upstream.script.count("flaky"),
        3,
        "two retries, then served"
    );
    assert_eq!(answer["billing"]["isFallback"], false);
    assert_eq!(answer["explainability"]["retries"], 2);
    assert_eq!(answer["explainability"]["attempts"], json!([]));
    assert!(
        answer["explainability"]["human_readable"]
            .as_str()
            .unwrap()
            .contains("2 retries")
    );
    let metrics = scrape_metrics(&server).await;
    assert_eq!(
        sample(&metrics, "tollgate_upstream_retries_total{provider=\"pa\"}"),
        Some(2.0)
    );

    // A connect error is retried too: max_retries + 1 calls, then 502.
    let dead = "[[providers]]\nid = \"dead\"\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nretry_backoff_ms = 1\nmax_retries = 1\n";
    let (server, key) = start(&format!("{dead}{}", model("d", "provider = \"dead\"")), &[]);
    let response = chat_post(&server, &key, &hello(json!("d"))).await;
    assert_eq!(error_code(response, 502).await, "all_providers_failed");
    let metrics = scrape_metrics(&server).await;
    assert_eq!(
        sample(
            &metrics,
            "tollgate_upstream_retries_total{provider=\"dead\"}"
        ),
        Some(1.0)
    );
}

#[tokio::test]
async fn a_timeout_before_the_first_byte_is_retried_on_the_same_deployment_then_served() {
    let upstream = Scripted::start().await;
    let (server, key) = start(
        &config(
            &upstream.base_url,
            "first_byte_timeout_ms = 1000",
            &model("m", "provider = \"pa\"\nupstream = \"slow\""),
        ),
        &[],
    );
    // Far slower than the first-byte timeout, then prompt.
    upstream.script.push("slow", &[Step::Delay(30_000)]);
    let answer = completion(&server, &key, hello(json!("m"))).await;
    assert_eq!(upstream.script.count("slow"), 2, "one timeout, one retry");
    assert_eq!(answer["explainability"]["deployment"], "pa/slow");
    assert_eq!(answer["explainability"]["retries"], 1);
    assert_eq!(answer["explainability"]["attempts"], json!([]));
    assert_eq!(answer["billing"]["isFallback"], false);
    let metrics = scrape_metrics(&server).await;
    assert_eq!(
        sample(&metrics, "tollgate_upstream_retries_total{provider=\"pa\"}"),
        Some(1.0)
    );
}

/// The message of a 502 `all_providers_failed` answer.
async fn all_failed(response: reqwest::Response) -> String {
    assert_eq!(response.status(), 502);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "all_providers_failed", "{body}");
    body["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn request_timeout_ms_bounds_every_attempt_and_each_deployment_has_its_providers() {
    let upstream = Scripted::start().await;
    let base = &upstream.base_url;
    // `pa` allows 500 ms per deployment; `pb` the default two minutes;
    // `pc` a 200 ms first-byte timeout and a hundred retries.
    let mut text = provider(base, "pa", "PA_KEY", "request_timeout_ms = 500")
        + &provider(base, "pb", "PB_KEY", "")
        + &provider(
            base,
            "pc",
            "PB_KEY",
            "first_byte_timeout_ms = 200\nmax_retries = 100",
        );
    let heavy = |first: &str, second: &str| {
        format!(
            "deployments = [{{ provider = \"pa\", upstream = \"{first}\", weight = 1000000 }}, {{ provider = \"pb\", upstream = \"{second}\" }}]"
        )
    };
    text += &model(
        "own",
        "provider = \"pb\"\nupstream = \"hang\"\nrequest_timeout_ms = 500",
    );
    text += &model(
        "retried",
        "provider = \"pc\"\nupstream = \"drip\"\nrequest_timeout_ms = 1000",
    );
    text += &model("each", &heavy("hang-a", "ok-b"));
    text += &model(
        "shared",
        &(heavy("hang-c", "ok-d") + "\nrequest_timeout_ms = 500"),
    );
    let (server, key) = start(&text, &[]);
    for name in ["hang", "drip", "hang-a", "hang-c"] {
        upstream.script.always(name, Step::Delay(30_000));
    }

    // The first attempt is bounded too: a 60 s first-byte timeout does not
    // outlast the model's 500 ms, and no retry starts past it.
    let response = chat_post(&server, &key, &hello(json!("own"))).await;
    assert!(all_failed(response).await.contains("timeout"));
    assert_eq!(upstream.script.count("hang"), 1);

    // Every attempt times out after at least 200 ms: within 1000 ms at
    // most five start, of the 101 that max_retries allows.
    let response = chat_post(&server, &key, &hello(json!("retried"))).await;
    assert!(all_failed(response).await.contains("timeout"));
    let calls = upstream.script.count("drip");
    assert!((1..=5).contains(&calls), "{calls} attempts within 1000 ms");

    // Without a model budget, each deployment has its own provider's: `pa`
    // gives up after 500 ms, then `pb` serves within its two minutes.
    let answer = completion(&server, &key, hello(json!("each"))).await;
    assert_eq!(answer["explainability"]["deployment"], "pb/ok-b");
    assert_eq!(answer["billing"]["isFallback"], true);
    let attempts = &answer["explainability"]["attempts"];
    assert_eq!(attempts.as_array().unwrap().len(), 1, "{attempts}");
    assert_eq!(attempts[0]["deployment"], "pa/hang-a");
    assert_eq!(attempts[0]["status"], "timeout");
    assert_eq!(upstream.script.count("hang-a"), 1);

    // A model's own budget covers all its deployments: spent on the first,
    // the second is not tried.
    let response = chat_post(&server, &key, &hello(json!("shared"))).await;
    assert!(all_failed(response).await.contains("timeout"));
    assert_eq!(upstream.script.count("hang-c"), 1);
    assert_eq!(upstream.script.count("ok-d"), 0);
}

#[tokio::test]
async fn retry_after_is_honoured_up_to_the_cap_and_a_longer_one_moves_on_at_once() {
    let upstream = Scripted::start().await;
    let models = model("m", "provider = \"pa\"\nupstream = \"busy\"")
        + &model(
            "two",
            "deployments = [{ provider = \"pa\", upstream = \"long\", weight = 1000000 }, { provider = \"pb\", upstream = \"other\" }]",
        );
    let (server, key) = start(
        &config(&upstream.base_url, "retry_after_cap_ms = 2000", &models),
        &[],
    );
    // Within the cap (ms and seconds forms): waited out, then retried.
    upstream.script.push(
        "busy",
        &[Step::RetryAfterMs(429, 20), Step::RetryAfter(503, 1)],
    );
    let answer = completion(&server, &key, hello(json!("m"))).await;
    assert_eq!(upstream.script.count("busy"), 3);
    assert_eq!(answer["explainability"]["retries"], 2);

    // Beyond the cap: no retry of that deployment, the next one serves.
    upstream.script.push("long", &[Step::RetryAfter(429, 3600)]);
    let answer = completion(&server, &key, hello(json!("two"))).await;
    if upstream.script.count("long") == 1 {
        assert_eq!(answer["explainability"]["deployment"], "pb/other");
        let attempts = answer["explainability"]["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 1);
        assert_eq!(attempts[0]["deployment"], "pa/long");
        assert_eq!(attempts[0]["status"], "429");
        assert_eq!(attempts[0]["retries"], 0);
        assert_eq!(answer["billing"]["isFallback"], true);
    } else {
        // The one-in-a-million draw put `other` first.
        assert_eq!(upstream.script.count("long"), 0);
    }
}

#[tokio::test]
async fn client_errors_are_never_retried() {
    let upstream = Scripted::start().await;
    let models = ["400", "401", "403", "404", "413", "422"]
        .iter()
        .map(|code| {
            model(
                &format!("m{code}"),
                &format!("provider = \"pa\"\nupstream = \"c{code}\""),
            )
        })
        .collect::<String>()
        + &model("ok", "provider = \"pb\"\nupstream = \"fine\"");
    let (server, key) = start(&config(&upstream.base_url, "", &models), &[]);
    for code in [400u16, 401, 403, 404, 413, 422] {
        upstream
            .script
            .always(&format!("c{code}"), Step::Status(code));
        let response = chat_post(&server, &key, &hello(json!([format!("m{code}"), "ok"]))).await;
        let status = response.status().as_u16();
        match code {
            // The request itself is wrong: relayed, no fallback either.
            400 | 413 | 422 => assert_eq!(status, code, "c{code}"),
            // The deployment's own problem: the next model serves.
            _ => assert_eq!(status, 200, "c{code}"),
        }
        assert_eq!(
            upstream.script.count(&format!("c{code}")),
            1,
            "c{code} retried"
        );
    }
}

#[tokio::test]
async fn a_stream_is_never_retried_once_its_first_byte_reached_the_caller() {
    let upstream = Scripted::start().await;
    let (server, key) = start(
        &config(
            &upstream.base_url,
            "",
            &model("m", "provider = \"pa\"\nupstream = \"s\""),
        ),
        &[],
    );
    upstream.script.push("s", &[Step::CutStream]);
    let mut body = hello(json!("m"));
    body["stream"] = json!(true);
    let response = chat_post(&server, &key, &body).await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    assert!(text.contains("partial"), "{text}");
    assert_eq!(
        upstream.script.count("s"),
        1,
        "no retry after the first chunk"
    );

    // Before the first chunk, a stream is retried like any attempt.
    upstream.script.push("s", &[Step::Status(502)]);
    let response = chat_post(&server, &key, &body).await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    assert!(text.contains("[DONE]"), "{text}");
    assert_eq!(upstream.script.count("s"), 3);
}

#[tokio::test]
async fn a_failing_deployment_cools_down_then_one_probe_decides() {
    // The rest lasts 4 s: long enough that a loaded machine still sends the
    // resting phase's requests inside it.
    const COOLDOWN_PASSED_MS: u64 = 4_100;
    let upstream = Scripted::start().await;
    let receiver = common::receiver::Receiver::start().await;
    let routing = "deployments = [{ provider = \"pa\", upstream = \"bad\", weight = 1000000 }, { provider = \"pb\", upstream = \"good\" }]";
    let text = config(
        &upstream.base_url,
        "max_retries = 0\ncooldown_after_failures = 2\ncooldown_seconds = 4",
        &model("m", routing),
    );
    let operator = receiver.url("/operator");
    let (server, key) = start(
        &text,
        &[
            ("WEBHOOK_URLS", &operator),
            ("TOLLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS", "true"),
        ],
    );
    // The tenant's own URL gets the event signed with its secret.
    let owner = common::login(&server).await;
    let put = client()
        .put(server.url("/api/v1/webhooks"))
        .bearer_auth(&owner)
        .json(&json!({ "urls": [receiver.url("/tenant")] }))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    let rotated: Value = client()
        .post(server.url("/api/v1/webhooks/secret/rotate"))
        .bearer_auth(&owner)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let secret = rotated["signingSecret"].as_str().unwrap().to_owned();
    let health = async || -> Vec<String> {
        let view = common::get_json(&server, &owner, "/api/v1/models/m").await;
        view["deployments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["health"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(health().await, ["healthy", "healthy"]);

    upstream.script.always("bad", Step::Status(500));
    // Two failures (each request then served by `good`) open the circuit.
    for _ in 0..2 {
        let answer = completion(&server, &key, hello(json!("m"))).await;
        assert_eq!(answer["explainability"]["deployment"], "pb/good");
    }
    let failures = upstream.script.count("bad");
    assert_eq!(failures, 2);
    assert_eq!(health().await, ["cooldown", "healthy"]);
    let metrics = scrape_metrics(&server).await;
    let healthy = "tollgate_deployment_healthy{model=\"m\",deployment=\"pa/bad\"}";
    let cooldowns = "tollgate_deployment_cooldowns_total{model=\"m\",deployment=\"pa/bad\"}";
    assert_eq!(sample(&metrics, healthy), Some(0.0));
    assert_eq!(sample(&metrics, cooldowns), Some(1.0));
    // Resting: no traffic while `good` serves.
    for _ in 0..5 {
        let answer = completion(&server, &key, hello(json!("m"))).await;
        assert_eq!(answer["explainability"]["deployment"], "pb/good");
        assert_eq!(answer["billing"]["isFallback"], false);
    }
    assert_eq!(upstream.script.count("bad"), 2);

    let events = receiver.wait_for("/operator", 1).await;
    let cooled = events
        .iter()
        .find(|e| e.event() == "deployment.cooldown")
        .expect("a deployment.cooldown event");
    let data = &cooled.json()["data"];
    assert_eq!(data["model"], "m");
    assert_eq!(data["deployment"], "pa/bad");
    assert_eq!(data["consecutiveFailures"], 2);
    assert_eq!(data["cooldownSeconds"], 4);
    let signed = receiver.wait_for("/tenant", 1).await;
    let signed = signed
        .iter()
        .find(|e| e.event() == "deployment.cooldown")
        .expect("the tenant's deployment.cooldown event");
    assert_eq!(signed.json()["data"], *data);
    assert!(
        verify_webhook::verify(
            secret.as_bytes(),
            signed.header("x-service-signature").as_deref(),
            &signed.body
        ),
        "signed with the tenant's secret over the raw body"
    );
    assert!(!verify_webhook::verify(
        b"another secret",
        signed.header("x-service-signature").as_deref(),
        &signed.body
    ));

    // The rest is over: one probe fails and the circuit opens again.
    tokio::time::sleep(std::time::Duration::from_millis(COOLDOWN_PASSED_MS)).await;
    completion(&server, &key, hello(json!("m"))).await;
    assert_eq!(upstream.script.count("bad"), 3, "one probe");
    completion(&server, &key, hello(json!("m"))).await;
    assert_eq!(upstream.script.count("bad"), 3, "resting again");
    let metrics = scrape_metrics(&server).await;
    assert_eq!(sample(&metrics, cooldowns), Some(2.0));

    // The next probe succeeds: serving again. The upstream holds its
    // answer until the model API showed the probe.
    upstream.script.always("bad", Step::Ok);
    upstream.script.push("bad", &[Step::Held]);
    tokio::time::sleep(std::time::Duration::from_millis(COOLDOWN_PASSED_MS)).await;
    let probe = {
        let (url, key) = (server.url("/v1/chat/completions"), key.clone());
        tokio::spawn(async move {
            client()
                .post(url)
                .bearer_auth(key)
                .json(&hello(json!("m")))
                .send()
                .await
                .unwrap()
        })
    };
    for _ in 0..500 {
        if upstream.script.count("bad") == 4 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(upstream.script.count("bad"), 4, "the probe reached `bad`");
    assert_eq!(health().await, ["probing", "healthy"]);
    upstream.script.release(1);
    let answer: Value = probe.await.unwrap().json().await.unwrap();
    assert_eq!(answer["explainability"]["deployment"], "pa/bad");
    assert_eq!(health().await, ["healthy", "healthy"]);
    let metrics = scrape_metrics(&server).await;
    assert_eq!(sample(&metrics, healthy), Some(1.0));
}

#[tokio::test]
async fn deployments_are_exhausted_before_the_requests_fallback_model() {
    let upstream = Scripted::start().await;
    let models = model(
        "pair",
        "deployments = [{ provider = \"pa\", upstream = \"x1\" }, { provider = \"pb\", upstream = \"x2\" }]",
    ) + &model("backup", "provider = \"pb\"\nupstream = \"y\"");
    let (server, key) = start(&config(&upstream.base_url, "max_retries = 1", &models), &[]);
    upstream.script.always("x1", Step::Status(503));
    upstream.script.always("x2", Step::Status(500));
    let answer = completion(&server, &key, hello(json!(["pair", "backup"]))).await;
    assert_eq!(answer["model"], "backup");
    assert_eq!(answer["billing"]["isFallback"], true);
    // Each deployment: the first call and one retry.
    assert_eq!(upstream.script.count("x1"), 2);
    assert_eq!(upstream.script.count("x2"), 2);
    let attempts = answer["explainability"]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    let mut tried: Vec<&str> = attempts
        .iter()
        .map(|a| a["deployment"].as_str().unwrap())
        .collect();
    tried.sort();
    assert_eq!(tried, ["pa/x1", "pb/x2"]);
    for a in attempts {
        assert_eq!(a["model"], "pair");
        assert_eq!(a["retries"], 1);
    }
    assert_eq!(answer["explainability"]["deployment"], "pb/y");
    let calls: Vec<String> = upstream
        .script
        .calls()
        .into_iter()
        .map(|c| c.model)
        .collect();
    assert_eq!(calls.last().unwrap(), "y", "the fallback model comes last");
}

#[tokio::test]
async fn a_model_request_limit_holds_across_keys_with_retry_after() {
    let upstream = Scripted::start().await;
    let (server, key) = start(
        &config(
            &upstream.base_url,
            "",
            &model("m", "provider = \"pa\"\nupstream = \"u\"\nrpm_limit = 3"),
        ),
        &[],
    );
    let (_, other) = server.create_key(&[]);
    for k in [&key, &other, &key] {
        completion(&server, k, hello(json!("m"))).await;
    }
    let response = chat_post(&server, &other, &hello(json!("m"))).await;
    assert!(response.headers().get("retry-after").is_some());
    assert_eq!(error_code(response, 429).await, "model_rate_limit_exceeded");
    assert_eq!(upstream.script.count("u"), 3);
}

#[tokio::test]
async fn a_model_token_limit_stays_exact_within_one_request_under_100_concurrent_requests() {
    let upstream = Scripted::start().await;
    let limit = 300;
    let (server, key) = start(
        &config(
            &upstream.base_url,
            "",
            &model(
                "m",
                &format!("provider = \"pa\"\nupstream = \"u\"\ntpm_limit = {limit}"),
            ),
        ),
        &[],
    );
    let server = std::sync::Arc::new(server);
    let mut tasks = Vec::new();
    for _ in 0..100 {
        let (server, key) = (server.clone(), key.clone());
        tasks.push(tokio::spawn(async move {
            // Estimated at 11 prompt tokens (the upstream reports 10), plus
            // the 5 completion tokens it allows itself: 16 reserved each.
            let body = json!({ "model": "m", "max_tokens": 5,
                "messages": [{ "role": "user", "content": "please say hello to me now" }] });
            let response = chat_post(&server, &key, &body).await;
            let status = response.status().as_u16();
            let code = if status == 200 {
                String::new()
            } else {
                let retry = response.headers().get("retry-after").is_some();
                assert!(retry, "Retry-After on a refusal");
                error_code(response, 429).await
            };
            (status, code)
        }));
    }
    let mut outcomes: HashMap<u16, usize> = HashMap::new();
    for task in tasks {
        let (status, code) = task.await.unwrap();
        if status == 429 {
            assert_eq!(code, "model_rate_limit_exceeded");
        }
        *outcomes.entry(status).or_default() += 1;
    }
    let served = outcomes.get(&200).copied().unwrap_or(0);
    assert_eq!(served + outcomes.get(&429).copied().unwrap_or(0), 100);
    // Each served request used 15 tokens.
    assert!(
        served * 15 <= limit + 15,
        "{served} requests of 15 tokens passed a limit of {limit}"
    );
    // A window holding fewer than limit / 16 requests (each 16 reserved,
    // or 15 once settled) has room for one more: a refusal then means the
    // limiter refused too much.
    assert!(
        served >= limit / 16,
        "only {served} requests of 16 reserved tokens passed a limit of {limit}"
    );
    assert_eq!(upstream.script.count("u"), served);
}

/// Sends `n` copies of a chat request for `model` at once, on the keys in
/// turn; the statuses and the error codes of the refusals (each checked
/// for `Retry-After`).
async fn at_once(
    server: &TestServer,
    keys: &[String],
    model: &str,
    n: usize,
) -> Vec<(u16, String)> {
    let mut tasks = Vec::new();
    for i in 0..n {
        let (url, key) = (
            server.url("/v1/chat/completions"),
            keys[i % keys.len()].clone(),
        );
        let body = hello(json!(model));
        tasks.push(tokio::spawn(async move {
            let response = client()
                .post(url)
                .bearer_auth(key)
                .json(&body)
                .send()
                .await
                .unwrap();
            match response.status().as_u16() {
                200 => (200, String::new()),
                status => {
                    assert!(
                        response.headers().get("retry-after").is_some(),
                        "Retry-After on a refusal"
                    );
                    (status, error_code(response, 429).await)
                }
            }
        }));
    }
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.unwrap());
    }
    out
}

#[tokio::test]
async fn a_model_request_limit_stays_exact_under_100_concurrent_requests() {
    let upstream = Scripted::start().await;
    // A token limit too, far from reached: both are checked at once.
    let routing = "provider = \"pa\"\nupstream = \"u\"\nrpm_limit = 30\ntpm_limit = 1000000";
    let (server, key) = start(&config(&upstream.base_url, "", &model("m", routing)), &[]);
    let (_, other) = server.create_key(&["--rate-limit", "10000"]);
    let outcomes = at_once(&server, &[key, other], "m", 100).await;
    let served = outcomes.iter().filter(|(s, _)| *s == 200).count();
    assert_eq!(served, 30, "exactly the limit across both keys");
    for (status, code) in &outcomes {
        assert!(
            *status == 200 || code == "model_rate_limit_exceeded",
            "{status} {code}"
        );
    }
    assert_eq!(upstream.script.count("u"), 30);
}

#[tokio::test]
async fn a_key_request_limit_stays_exact_under_100_concurrent_requests() {
    let upstream = Scripted::start().await;
    let (server, _) = start(
        &config(
            &upstream.base_url,
            "",
            &model("m", "provider = \"pa\"\nupstream = \"u\""),
        ),
        &[],
    );
    let (_, key) = server.create_key(&["--rate-limit", "25"]);
    let outcomes = at_once(&server, &[key], "m", 100).await;
    let served = outcomes.iter().filter(|(s, _)| *s == 200).count();
    assert_eq!(served, 25, "exactly the key's rateLimit");
    for (status, code) in &outcomes {
        assert!(
            *status == 200 || code == "rate_limit_exceeded",
            "{status} {code}"
        );
    }
    assert_eq!(upstream.script.count("u"), 25);
}

#[tokio::test]
async fn the_model_view_lists_deployments_and_their_health() {
    let upstream = Scripted::start().await;
    let routing = "deployments = [{ provider = \"pa\", upstream = \"a\", weight = 2 }, { provider = \"pb\", upstream = \"b\" }]\nstrategy = \"lowest_latency\"\ntpm_limit = 1000";
    let (server, _key) = start(&config(&upstream.base_url, "", &model("m", routing)), &[]);
    let token = common::login(&server).await;
    let view = common::get_json(&server, &token, "/api/v1/models/m").await;
    assert_eq!(
        view["deployments"],
        json!([
            { "provider": "pa", "upstream": "a", "weight": 2, "health": "healthy" },
            { "provider": "pb", "upstream": "b", "weight": 1, "health": "healthy" },
        ])
    );
    assert_eq!(view["strategy"], "lowest_latency");
    assert_eq!(view["tpmLimit"], 1000);
    let _ = client();
}

#[tokio::test]
async fn refusals_of_a_known_key_carry_the_request_rate_headers() {
    let upstream = Scripted::start().await;
    let (server, _key) = start(
        &config(
            &upstream.base_url,
            "",
            &model("m", "provider = \"pa\"\nupstream = \"u\""),
        ),
        &[],
    );
    let headers_of = |response: &reqwest::Response| {
        ["limit", "remaining", "reset"].map(|h| {
            response
                .headers()
                .get(format!("x-ratelimit-{h}-requests"))
                .map(|v| v.to_str().unwrap().to_owned())
        })
    };
    // Over its credit limit (one answer costs 20 micro-credits): 402.
    let (_, capped) = server.create_key(&["--rate-limit", "7", "--credit-limit", "0.00001"]);
    let served = chat_post(&server, &capped, &hello(json!("m"))).await;
    assert_eq!(served.status(), 200);
    assert_eq!(headers_of(&served)[1].as_deref(), Some("6"));
    let refused = chat_post(&server, &capped, &hello(json!("m"))).await;
    let [limit, remaining, reset] = headers_of(&refused);
    assert_eq!(limit.as_deref(), Some("7"));
    assert_eq!(remaining.as_deref(), Some("6"), "a refusal is not counted");
    assert!(reset.is_some());
    assert_eq!(error_code(refused, 402).await, "budget_exceeded");

    // Revoked: 403, with the headers.
    let (id, revoked) = server.create_key(&["--rate-limit", "9"]);
    server.cli_json(&["keys", "revoke", &id]);
    let refused = chat_post(&server, &revoked, &hello(json!("m"))).await;
    assert_eq!(headers_of(&refused)[0].as_deref(), Some("9"));
    assert_eq!(error_code(refused, 403).await, "invalid_api_key");
    assert_eq!(upstream.script.count("u"), 1);
}

/// The `x-ratelimit-*-tokens` headers of an answer.
fn token_headers(response: &reqwest::Response) -> [Option<String>; 3] {
    ["limit", "remaining", "reset"].map(|h| {
        response
            .headers()
            .get(format!("x-ratelimit-{h}-tokens"))
            .map(|v| v.to_str().unwrap().to_owned())
    })
}

#[tokio::test]
async fn a_key_token_limit_is_reserved_reconciled_and_shown_on_every_answer() {
    let upstream = Scripted::start().await;
    let (server, plain) = start(
        &config(
            &upstream.base_url,
            "",
            &model("m", "provider = \"pa\"\nupstream = \"u\""),
        ),
        &[],
    );
    let (id, key) = server.create_key(&["--rate-limit", "1000", "--tpm-limit", "40"]);
    assert_eq!(server.cli_json(&["keys", "show", &id])["tpmLimit"], 40);
    // Estimated 11 + max_tokens 5 = 16 reserved; the usage is 15.
    let body = json!({ "model": "m", "max_tokens": 5,
        "messages": [{ "role": "user", "content": "please say hello to me now" }] });
    let first = chat_post(&server, &key, &body).await;
    assert_eq!(first.status(), 200);
    let [limit, remaining, reset] = token_headers(&first);
    assert_eq!(limit.as_deref(), Some("40"));
    assert_eq!(remaining.as_deref(), Some("25"), "reconciled to the usage");
    assert!(reset.unwrap().ends_with('s'));
    assert!(first.headers().get("x-ratelimit-limit-requests").is_some());
    let second = chat_post(&server, &key, &body).await;
    assert_eq!(second.status(), 200);
    assert_eq!(token_headers(&second)[1].as_deref(), Some("10"));
    // 10 left, 16 asked: refused before any upstream call.
    let refused = chat_post(&server, &key, &body).await;
    assert_eq!(token_headers(&refused)[1].as_deref(), Some("10"));
    assert!(refused.headers().get("retry-after").is_some());
    assert!(
        refused
            .headers()
            .get("x-ratelimit-remaining-requests")
            .is_some()
    );
    assert_eq!(error_code(refused, 429).await, "token_rate_limit_exceeded");
    assert_eq!(upstream.script.count("u"), 2);
    // A key without tpmLimit has no token headers.
    let other = chat_post(&server, &plain, &body).await;
    assert_eq!(other.status(), 200);
    assert_eq!(token_headers(&other), [None, None, None]);
    let metrics = scrape_metrics(&server).await;
    assert_eq!(
        sample(
            &metrics,
            "tollgate_refusals_total{reason=\"token_rate_limit\"}"
        ),
        Some(1.0)
    );

    // Lifted by the operator: served again.
    server.cli_json(&["keys", "update", &id, "--tpm-limit", "none"]);
    let lifted = chat_post(&server, &key, &body).await;
    assert_eq!(lifted.status(), 200);
    assert_eq!(token_headers(&lifted), [None, None, None]);
}

#[tokio::test]
async fn a_key_token_limit_stays_exact_within_one_request_under_100_concurrent_requests() {
    let upstream = Scripted::start().await;
    let (server, _) = start(
        &config(
            &upstream.base_url,
            "",
            &model("m", "provider = \"pa\"\nupstream = \"u\""),
        ),
        &[],
    );
    let limit = 300;
    let (_, key) = server.create_key(&["--rate-limit", "1000", "--tpm-limit", &limit.to_string()]);
    let server = std::sync::Arc::new(server);
    let mut tasks = Vec::new();
    for _ in 0..100 {
        let (server, key) = (server.clone(), key.clone());
        tasks.push(tokio::spawn(async move {
            let body = json!({ "model": "m", "max_tokens": 5,
                "messages": [{ "role": "user", "content": "please say hello to me now" }] });
            let response = chat_post(&server, &key, &body).await;
            assert!(
                token_headers(&response)[0].is_some(),
                "token headers on every answer"
            );
            match response.status().as_u16() {
                200 => true,
                _ => {
                    assert_eq!(error_code(response, 429).await, "token_rate_limit_exceeded");
                    false
                }
            }
        }));
    }
    let mut served = 0;
    for task in tasks {
        served += usize::from(task.await.unwrap());
    }
    assert!(
        served * 15 <= limit + 15,
        "{served} requests of 15 tokens passed a key limit of {limit}"
    );
    // Fewer than limit / 16 requests (16 reserved each, 15 once settled)
    // leave room for one more: the limiter must not refuse it.
    assert!(
        served >= limit / 16,
        "only {served} requests of 16 reserved tokens passed a key limit of {limit}"
    );
    assert_eq!(upstream.script.count("u"), served);
}

#[tokio::test]
async fn the_dashboard_sets_tpm_limit_and_refuses_bad_values() {
    let upstream = Scripted::start().await;
    let (server, _) = start(
        &config(
            &upstream.base_url,
            "",
            &model("m", "provider = \"pa\"\nupstream = \"u\""),
        ),
        &[],
    );
    let token = common::login(&server).await;
    let post = |body: Value| {
        client()
            .post(server.url("/api/v1/keys"))
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    let created: Value = post(json!({ "keyName": "t", "tpmLimit": 1000 }))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(created["key"]["tpmLimit"], 1000, "{created}");
    let id = created["key"]["id"].as_str().unwrap().to_owned();
    for bad in [json!(0), json!(-1), json!("many"), json!(1.5)] {
        let response = post(json!({ "keyName": "t", "tpmLimit": bad }))
            .await
            .unwrap();
        assert_eq!(error_code(response, 400).await, "invalid_request", "{bad}");
    }
    let patch = |body: Value| {
        client()
            .patch(server.url(&format!("/api/v1/keys/{id}")))
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    let changed: Value = patch(json!({ "tpmLimit": 500 }))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(changed["tpmLimit"], 500);
    let response = patch(json!({ "tpmLimit": 0 })).await.unwrap();
    assert_eq!(error_code(response, 400).await, "invalid_request");
    let cleared: Value = patch(json!({ "tpmLimit": null }))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(cleared["tpmLimit"], Value::Null);
}

/// A store as schema 4 wrote it (keys without `tpm_limit`) is migrated
/// when opened: every key keeps its settings and works, with no token
/// limit.
#[tokio::test]
async fn a_schema_4_store_is_migrated_to_keys_with_a_token_limit() {
    use tollgate::auth::keys::{ApiKey, ResetInterval};
    use tollgate::store::codec;

    #[derive(serde::Serialize)]
    struct ApiKeyV4 {
        id: String,
        tenant_id: String,
        owner_account_id: Option<String>,
        name: String,
        digest: [u8; 32],
        hint: String,
        credit_limit: Option<u64>,
        credits_consumed: u64,
        reset_interval: ResetInterval,
        cycle_start: i64,
        rate_limit: Option<u32>,
        expires_at: Option<i64>,
        allow_high_risk: bool,
        notified_thresholds: Vec<u8>,
        created_at: i64,
        revoked_at: Option<i64>,
        rotated_from: Option<String>,
    }

    let upstream = Scripted::start().await;
    let (mut server, key) = start(
        &config(
            &upstream.base_url,
            "",
            &model("m", "provider = \"pa\"\nupstream = \"u\""),
        ),
        &[],
    );
    server.terminate();
    let data_file = server.data_dir().join("tollgate.redb");
    {
        let db = redb::Database::open(&data_file).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut table = txn.open_table(tollgate::store::tables::API_KEYS).unwrap();
            let rows: Vec<(Vec<u8>, ApiKey)> = redb::ReadableTable::iter(&table)
                .unwrap()
                .map(|row| {
                    let (k, v) = row.unwrap();
                    (k.value().to_vec(), codec::decode(v.value()).unwrap())
                })
                .collect();
            assert!(!rows.is_empty());
            for (id, k) in rows {
                let old = ApiKeyV4 {
                    id: k.id,
                    tenant_id: k.tenant_id,
                    owner_account_id: k.owner_account_id,
                    name: k.name,
                    digest: k.digest,
                    hint: k.hint,
                    credit_limit: k.credit_limit,
                    credits_consumed: k.credits_consumed,
                    reset_interval: k.reset_interval,
                    cycle_start: k.cycle_start,
                    rate_limit: k.rate_limit,
                    expires_at: k.expires_at,
                    allow_high_risk: k.allow_high_risk,
                    notified_thresholds: k.notified_thresholds,
                    created_at: k.created_at,
                    revoked_at: k.revoked_at,
                    rotated_from: k.rotated_from,
                };
                table
                    .insert(id.as_slice(), codec::encode(&old).as_slice())
                    .unwrap();
            }
            let mut meta = txn.open_table(tollgate::store::tables::META).unwrap();
            meta.insert(
                tollgate::store::tables::META_SCHEMA_VERSION,
                4u32.to_be_bytes().as_slice(),
            )
            .unwrap();
        }
        txn.commit().unwrap();
    }
    server.launch().unwrap();
    let response = chat_post(&server, &key, &hello(json!("m"))).await;
    assert_eq!(response.status(), 200, "the key works after the migration");
    assert_eq!(token_headers(&response), [None, None, None]);
    let keys = server.cli_json(&["keys", "list"]);
    for k in keys.as_array().or(keys["data"].as_array()).unwrap() {
        assert_eq!(k["tpmLimit"], Value::Null);
        assert_eq!(k["rateLimit"], 10000);
    }
    server.terminate();
    let db = redb::Database::open(&data_file).unwrap();
    let txn = redb::ReadableDatabase::begin_read(&db).unwrap();
    let meta = txn.open_table(tollgate::store::tables::META).unwrap();
    assert_eq!(
        meta.get(tollgate::store::tables::META_SCHEMA_VERSION)
            .unwrap()
            .unwrap()
            .value(),
        tollgate::store::tables::SCHEMA_VERSION.to_be_bytes()
    );
}

#[tokio::test]
async fn the_dashboard_edits_deployments_and_refuses_bad_ones() {
    let upstream = Scripted::start().await;
    let (mut server, key) = start(
        &config(
            &upstream.base_url,
            "",
            &model("m", "provider = \"pa\"\nupstream = \"u\""),
        ),
        &[],
    );
    let token = common::login(&server).await;
    let send = |method: reqwest::Method, path: &str, body: Value| {
        client()
            .request(method, server.url(path))
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    let new = |routing: Value| {
        let mut body = json!({ "id": "d", "inputCapabilities": ["TEXT"], "outputCapabilities": ["TEXT"],
            "contextWindow": 8192, "pricing": { "unit": "per_request", "per_request": 0.001 } });
        for (k, v) in routing.as_object().unwrap() {
            body[k] = v.clone();
        }
        body
    };
    let bad = [
        (
            json!({ "provider": "pa", "deployments": [{ "provider": "pb" }] }),
            "deployments",
        ),
        (json!({ "deployments": [] }), "deployments"),
        (
            json!({ "deployments": [{ "provider": "pa", "weight": 0 }] }),
            "deployments[0].weight",
        ),
        (
            json!({ "deployments": [{ "provider": "pa" }, { "provider": "nope" }] }),
            "",
        ),
        (
            json!({ "deployments": [{ "provider": "pa", "colour": "red" }] }),
            "",
        ),
        (
            json!({ "deployments": [{ "provider": "pa" }], "upstream": "x" }),
            "upstream",
        ),
        (
            json!({ "deployments": [{ "provider": "pa" }], "strategy": "fastest" }),
            "",
        ),
        (json!({ "provider": "pa", "rpmLimit": 0 }), ""),
        (json!({}), "provider"),
    ];
    for (routing, param) in bad {
        let response = send(
            reqwest::Method::POST,
            "/api/v1/models",
            new(routing.clone()),
        )
        .await
        .unwrap();
        assert_eq!(response.status(), 400, "{routing}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "invalid_request", "{routing}");
        if !param.is_empty() {
            assert_eq!(body["error"]["param"], param, "{routing}");
        }
    }
    let created: Value = send(
        reqwest::Method::POST,
        "/api/v1/models",
        new(json!({ "deployments": [{ "provider": "pa", "upstream": "d1", "weight": 3 }, { "provider": "pb", "upstream": "d2" }],
            "strategy": "least_busy", "tpmLimit": 100000 })),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(created["provider"], "pa");
    assert_eq!(created["deployments"][1]["upstream"], "d2");
    assert_eq!(created["deployments"][0]["weight"], 3);
    assert_eq!(created["strategy"], "least_busy");
    assert_eq!(created["tpmLimit"], 100000);
    for _ in 0..10 {
        completion(&server, &key, hello(json!("d"))).await;
    }
    assert_eq!(
        upstream.script.count("d1") + upstream.script.count("d2"),
        10
    );

    // A configuration entry gains a second deployment; the view sent back
    // (with its health) is accepted.
    let view: Value = common::get_json(&server, &token, "/api/v1/models/m").await;
    let mut list = view["deployments"].as_array().unwrap().clone();
    list.push(json!({ "provider": "pb", "upstream": "u2", "weight": 1 }));
    let changed: Value = send(
        reqwest::Method::PATCH,
        "/api/v1/models/m",
        json!({ "deployments": list, "strategy": "lowest_latency", "rpmLimit": 500 }),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(
        changed["deployments"].as_array().unwrap().len(),
        2,
        "{changed}"
    );
    assert_eq!(changed["strategy"], "lowest_latency");
    assert_eq!(changed["rpmLimit"], 500);
    let response = send(
        reqwest::Method::PATCH,
        "/api/v1/models/m",
        json!({ "deployments": [{ "provider": "ghost" }] }),
    )
    .await
    .unwrap();
    assert_eq!(error_code(response, 400).await, "invalid_request");
    let cleared: Value = send(
        reqwest::Method::PATCH,
        "/api/v1/models/m",
        json!({ "rpmLimit": null }),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(cleared["rpmLimit"], Value::Null);
    assert_eq!(cleared["deployments"].as_array().unwrap().len(), 2, "kept");

    // Stored: the routing is read back after a restart.
    server.restart();
    let token = common::login(&server).await;
    let view = common::get_json(&server, &token, "/api/v1/models/d").await;
    assert_eq!(view["deployments"][1]["upstream"], "d2");
    assert_eq!(view["strategy"], "least_busy");
    let view = common::get_json(&server, &token, "/api/v1/models/m").await;
    assert_eq!(view["deployments"][1]["upstream"], "u2");
    assert_eq!(view["strategy"], "lowest_latency");
}

/// An Anthropic-kind provider `id` on the scripted upstream (which answers
/// `/v1/messages` like any path: the passthrough relays its bytes).
fn anthropic_provider(base: &str, id: &str, env: &str, extra: &str) -> String {
    provider(base, id, env, extra).replace("kind = \"openai\"", "kind = \"anthropic\"")
}

/// `POST /v1/messages` for `model`, as an Anthropic client sends it.
async fn messages(server: &TestServer, key: &str, model: &str) -> reqwest::Response {
    client()
        .post(server.url("/v1/messages"))
        .header("x-api-key", key)
        .header("content-type", "application/json")
        .body(
            json!({ "model": model, "max_tokens": 16, "messages": [{ "role": "user", "content": "hi" }] })
                .to_string(),
        )
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_native_passthrough_retries_a_503_on_the_same_deployment_then_is_served() {
    let upstream = Scripted::start().await;
    let text = anthropic_provider(&upstream.base_url, "pa", "PA_KEY", "")
        + &anthropic_provider(&upstream.base_url, "pb", "PB_KEY", "")
        + &model(
            "m",
            "deployments = [{ provider = \"pa\", upstream = \"a\" }, { provider = \"pb\", upstream = \"b\" }]",
        );
    let (server, key) = start(&text, &[]);
    // Whichever deployment the router draws first fails once.
    upstream.script.push("a", &[Step::Status(503)]);
    upstream.script.push("b", &[Step::Status(503)]);
    let response = messages(&server, &key, "m").await;
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    let served = answer["model"].as_str().unwrap().to_owned();
    let other = if served == "a" { "b" } else { "a" };
    assert_eq!(upstream.script.count(&served), 2, "the 503, then its retry");
    assert_eq!(upstream.script.count(other), 0, "no other deployment tried");
    for call in upstream.script.calls() {
        assert_eq!(call.path, "/v1/messages");
        let expected = if call.model == "a" { "sk-a" } else { "sk-b" };
        assert_eq!(call.headers["x-api-key"], expected, "the deployment's key");
    }
    let metrics = scrape_metrics(&server).await;
    let provider = if served == "a" { "pa" } else { "pb" };
    assert_eq!(
        sample(
            &metrics,
            &format!("tollgate_upstream_retries_total{{provider=\"{provider}\"}}")
        ),
        Some(1.0),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_native_passthrough_steps_around_a_failing_deployment_that_cools_down() {
    let upstream = Scripted::start().await;
    let extra = "max_retries = 1\ncooldown_after_failures = 2\ncooldown_seconds = 600";
    let text = anthropic_provider(&upstream.base_url, "pa", "PA_KEY", extra)
        + &anthropic_provider(&upstream.base_url, "pb", "PB_KEY", extra)
        + &model(
            "m",
            "deployments = [{ provider = \"pa\", upstream = \"bad\", weight = 1000000 }, { provider = \"pb\", upstream = \"good\" }]",
        );
    let (server, key) = start(&text, &[]);
    upstream.script.always("bad", Step::Status(500));
    for _ in 0..5 {
        let response = messages(&server, &key, "m").await;
        assert_eq!(response.status(), 200);
        let answer: Value = response.json().await.unwrap();
        assert_eq!(answer["model"], "good");
    }
    // The first request: the 500 and its retry open the circuit; the
    // deployment then rests, and the other four go straight to `good`.
    assert_eq!(upstream.script.count("bad"), 2);
    assert_eq!(upstream.script.count("good"), 5);
    let metrics = scrape_metrics(&server).await;
    assert_eq!(
        sample(
            &metrics,
            "tollgate_deployment_cooldowns_total{model=\"m\",deployment=\"pa/bad\"}"
        ),
        Some(1.0),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_native_passthrough_skips_deployments_of_another_kind() {
    let upstream = Scripted::start().await;
    let text = provider(&upstream.base_url, "po", "PA_KEY", "")
        + &anthropic_provider(&upstream.base_url, "pa", "PB_KEY", "")
        + &model(
            "m",
            "deployments = [{ provider = \"po\", upstream = \"o\", weight = 1000000 }, { provider = \"pa\", upstream = \"a\" }]",
        );
    let (server, key) = start(&text, &[]);
    for _ in 0..3 {
        let response = messages(&server, &key, "m").await;
        assert_eq!(response.status(), 200);
        let answer: Value = response.json().await.unwrap();
        assert_eq!(answer["model"], "a");
    }
    assert_eq!(
        upstream.script.count("o"),
        0,
        "an OpenAI deployment never gets a native body"
    );
    assert_eq!(upstream.script.count("a"), 3);
    // The chat route still walks both.
    let answer = completion(&server, &key, hello(json!("m"))).await;
    assert_eq!(answer["model"], "m");

    // A model with no Anthropic deployment is translated and walks its
    // deployments as chat does (docs/messages.md).
    let text = provider(&upstream.base_url, "po", "PA_KEY", "")
        + &model("plain", "provider = \"po\"\nupstream = \"o\"");
    let (server, key) = start(&text, &[]);
    let response = messages(&server, &key, "plain").await;
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["type"], "message");
    assert_eq!(answer["model"], "plain");
    assert_eq!(
        upstream.script.count("o"),
        2,
        "the chat call above, then this one"
    );
    let last = upstream.script.calls().pop().unwrap();
    assert_eq!(last.path, "/v1/chat/completions");
}

#[tokio::test]
async fn a_native_refusal_of_the_request_is_relayed_at_once_and_never_retried() {
    let upstream = Scripted::start().await;
    let text = anthropic_provider(&upstream.base_url, "pa", "PA_KEY", "")
        + &anthropic_provider(&upstream.base_url, "pb", "PB_KEY", "")
        + &model(
            "m",
            "deployments = [{ provider = \"pa\", upstream = \"a\" }, { provider = \"pb\", upstream = \"b\" }]",
        );
    let (server, key) = start(&text, &[]);
    upstream.script.always("a", Step::Status(400));
    upstream.script.always("b", Step::Status(400));
    let response = messages(&server, &key, "m").await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("scripted 400"),
        "the upstream's own body: {body}"
    );
    assert_eq!(upstream.script.calls().len(), 1);
}

#[tokio::test]
async fn an_image_request_falls_over_to_the_next_deployment_on_a_500() {
    let upstream = Scripted::start().await;
    let image_model = "[[models]]\nid = \"img\"\n\
        deployments = [{ provider = \"pa\", upstream = \"x\", weight = 1000000 }, { provider = \"pb\", upstream = \"y\" }]\n\
        input = [\"TEXT\"]\noutput = [\"IMAGE\"]\ncontext_window = 4096\n\
        pricing = { unit = \"per_image\", per_image = 0.04 }\n";
    let (server, key) = start(
        &config(&upstream.base_url, "max_retries = 0", image_model),
        &[],
    );
    upstream.script.always("x", Step::Status(500));
    let response = client()
        .post(server.url("/v1/images/generations"))
        .bearer_auth(&key)
        .json(&json!({ "model": "img", "prompt": "a lighthouse" }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["data"][0]["revised_prompt"], "drawn by y");
    assert_eq!(answer["billing"]["isFallback"], true, "{answer}");
    assert_eq!(upstream.script.count("x"), 1, "max_retries = 0: tried once");
    assert_eq!(upstream.script.count("y"), 1);
    for call in upstream.script.calls() {
        assert_eq!(call.path, "/v1/images/generations");
    }

    // Both failing: the attempts name each deployment.
    upstream.script.always("y", Step::Status(503));
    let response = client()
        .post(server.url("/v1/images/generations"))
        .bearer_auth(&key)
        .json(&json!({ "model": "img", "prompt": "a lighthouse" }))
        .send()
        .await
        .unwrap();
    let message = all_failed(response).await;
    assert!(
        message.contains("pa/x") && message.contains("pb/y"),
        "{message}"
    );
}
