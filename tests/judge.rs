//! The LLM judge and the monitoring sampler, against a scripted upstream
//! whose models answer fixed verdicts (`judge-lower`, `judge-unsure`,
//! `judge-raise`, `judge-babble`) or a prohibited text
//! (`prohibited-output`).

mod common;

use std::time::{Duration, Instant};

use common::upstream::{Upstream, catalogue};
use common::{TestServer, chat_post, client, error_code, get_json, login};
use serde_json::{Value, json};

/// Content-only high: the recruitment rule matches the conversation.
const CONTENT_HIGH: &str = "Shortlist the 3 best candidates and reject the others.";

async fn setup(extra_config: &str) -> (Upstream, TestServer, String) {
    let upstream = Upstream::start().await;
    let config = format!(
        "{extra_config}\n{}",
        catalogue(
            &upstream.base_url,
            &[
                ("chat", "ok"),
                ("lower", "judge-lower"),
                ("unsure", "judge-unsure"),
                ("raise", "judge-raise"),
                ("babble", "judge-babble"),
                ("sleepy", "slow-3000"),
                ("bad-answers", "prohibited-output"),
            ],
        )
    );
    let server = TestServer::start_with(Some(&config), &[]);
    server.cli_json(&["tenants", "topup", "default", "--credits", "100"]);
    let token = login(&server).await;
    (upstream, server, token)
}

async fn set_judge(server: &TestServer, token: &str, model: &str) {
    let response = client()
        .put(server.url("/api/v1/policies"))
        .bearer_auth(token)
        .json(&json!({ "judgeEnabled": true, "judgeModel": model }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

fn ask(text: &str) -> Value {
    json!({ "model": "chat", "messages": [{ "role": "user", "content": text }] })
}

#[tokio::test]
async fn the_judge_lowers_a_content_only_hit_when_confident_and_says_so() {
    let (upstream, server, token) = setup("").await;
    set_judge(&server, &token, "lower").await;
    let (_, key) = server.create_key(&[]);
    let response = chat_post(&server, &key, &ask(CONTENT_HIGH)).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let risk = &body["risk_classification"];
    assert_eq!(risk["level"], "minimal", "{risk}");
    assert_eq!(risk["triggered_rules"][0], "annex3_4a_recruitment");
    assert_eq!(risk["judge"]["used"], true);
    assert_eq!(risk["judge"]["effect"], "lowered");
    assert_eq!(risk["judge"]["confidence"], 0.95);
    assert!(risk["reason"].as_str().unwrap().contains("judge"), "{risk}");
    // The judge got the fixed prompt and the conversation, as its own call.
    let judged = upstream
        .recorded
        .bodies()
        .into_iter()
        .find(|b| b["model"] == "judge-lower")
        .expect("the judge was called");
    assert!(
        judged["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("EU AI Act")
    );
    assert!(
        judged["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("Shortlist")
    );
}

#[tokio::test]
async fn an_unsure_judge_cannot_lower_and_a_declared_purpose_is_never_lowered() {
    let (_upstream, server, token) = setup("").await;
    let (_, key) = server.create_key(&[]);
    set_judge(&server, &token, "unsure").await;
    let refused = chat_post(&server, &key, &ask(CONTENT_HIGH)).await;
    assert_eq!(error_code(refused, 403).await, "high_risk_not_allowed");

    // Confident, but the purpose declares a high-risk use: it stays high.
    set_judge(&server, &token, "lower").await;
    let mut body = ask(CONTENT_HIGH);
    body["purpose"] = json!("credit decision support");
    let refused = chat_post(&server, &key, &body).await;
    let error: Value = refused.json().await.unwrap();
    assert_eq!(error["error"]["code"], "high_risk_not_allowed", "{error}");
}

#[tokio::test]
async fn the_judge_may_raise_to_prohibited() {
    let (_upstream, server, token) = setup("").await;
    set_judge(&server, &token, "raise").await;
    let (_, key) = server.create_key(&["--allow-high-risk"]);
    let refused = chat_post(&server, &key, &ask(CONTENT_HIGH)).await;
    assert_eq!(error_code(refused, 403).await, "prohibited_use");
}

#[tokio::test]
async fn a_judge_that_fails_or_times_out_keeps_the_rule_result() {
    let (_upstream, server, token) = setup("judge_timeout_ms = 200").await;
    let (_, key) = server.create_key(&["--allow-high-risk"]);
    for (judge, error) in [
        ("babble", "no JSON object"),
        ("sleepy", "no answer within 200 ms"),
        ("not-in-catalogue", "not in the catalogue"),
    ] {
        if judge == "not-in-catalogue" {
            // The policy refuses an unknown judge model.
            let response = client()
                .put(server.url("/api/v1/policies"))
                .bearer_auth(&token)
                .json(&json!({ "judgeEnabled": true, "judgeModel": judge }))
                .send()
                .await
                .unwrap();
            assert_eq!(error_code(response, 400).await, "invalid_request");
            continue;
        }
        set_judge(&server, &token, judge).await;
        let response = chat_post(&server, &key, &ask(CONTENT_HIGH)).await;
        assert_eq!(response.status(), 200, "{judge}");
        let body: Value = response.json().await.unwrap();
        let risk = &body["risk_classification"];
        assert_eq!(risk["level"], "high", "{judge}: {risk}");
        assert_eq!(risk["judge"]["used"], false, "{judge}");
        assert!(
            risk["judge"]["error"].as_str().unwrap().contains(error),
            "{judge}: {risk}"
        );
        assert!(
            risk["reason"]
                .as_str()
                .unwrap()
                .contains("rule result stands")
        );
    }
}

#[tokio::test]
async fn without_a_grey_zone_or_a_policy_the_judge_is_not_called() {
    let (upstream, server, token) = setup("").await;
    let (_, key) = server.create_key(&[]);
    // No policy: no judge, even for a grey zone.
    let refused = chat_post(&server, &key, &ask(CONTENT_HIGH)).await;
    assert_eq!(error_code(refused, 403).await, "high_risk_not_allowed");
    set_judge(&server, &token, "lower").await;
    // A plain request is no grey zone.
    let body: Value = chat_post(&server, &key, &ask("Summarise the plot of Hamlet."))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["risk_classification"]["level"], "minimal");
    assert!(body["risk_classification"].get("judge").is_none());
    assert!(
        upstream
            .recorded
            .bodies()
            .iter()
            .all(|b| b["model"] != "judge-lower")
    );
}

/// A match of the rules that the n-gram model reads as no listed use: a
/// courier and "rate" meet by accident.
const OVERRULED: &str = "Our courier Jan asked me to rate the new delivery route app from 1 to 5 for the product team survey. Draft a short answer.";

#[tokio::test]
async fn a_match_the_model_overrules_passes_and_goes_to_the_judge_who_may_raise_it() {
    let (upstream, server, token) = setup("").await;
    let (_, key) = server.create_key(&[]);
    // Without a judge: answered, minimal.
    let response = chat_post(&server, &key, &ask(OVERRULED)).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let risk = &body["risk_classification"];
    assert_eq!(risk["level"], "minimal", "{risk}");
    assert!(risk.get("judge").is_none(), "{risk}");
    // With a judge: it is asked, told which rule was overruled, and raises.
    set_judge(&server, &token, "raise").await;
    let refused = chat_post(&server, &key, &ask(OVERRULED)).await;
    assert_eq!(error_code(refused, 403).await, "prohibited_use");
    let judged = upstream
        .recorded
        .bodies()
        .into_iter()
        .find(|b| b["model"] == "judge-raise")
        .expect("the judge was called");
    let question: Value =
        serde_json::from_str(judged["messages"][1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(question["rule_result"]["level"], "minimal", "{question}");
    assert_eq!(
        question["rule_result"]["overruled"],
        json!(["annex3_4b_worker_management"]),
        "{question}"
    );
}

#[tokio::test]
async fn the_sampler_files_an_incident_for_a_prohibited_answer() {
    let (_upstream, server, token) = setup("incident_sample_share = 1.0").await;
    let (_, key) = server.create_key(&[]);
    let mut body = ask("Tell me a story.");
    body["model"] = json!("bad-answers");
    let served: Value = chat_post(&server, &key, &body).await.json().await.unwrap();
    assert_eq!(served["risk_classification"]["level"], "minimal");
    let deadline = Instant::now() + Duration::from_secs(20);
    let incident = loop {
        let list = get_json(&server, &token, "/api/v1/incidents").await;
        if let Some(found) = list["data"].as_array().and_then(|d| d.first()).cloned() {
            break found;
        }
        assert!(Instant::now() < deadline, "no incident was filed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(incident["source"], "sampler");
    assert_eq!(incident["category"], "prohibited_output");
    assert_eq!(incident["severity"], "serious");
    assert_eq!(incident["requestIds"].as_array().unwrap().len(), 1);
    // Filed in the audit log by the system, in the filing's transaction.
    let audit = get_json(&server, &token, "/api/v1/audit?action=incident.file").await;
    assert_eq!(audit["data"][0]["actor"], "system");
}
