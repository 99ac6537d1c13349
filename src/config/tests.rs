//! The configuration's unit tests: the documented shape loads, layers
//! apply in order, and every refusal names its line and key.

use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::catalogue::{Pricing, ProviderKind, Strategy};
use crate::upstream::DEFAULT_REQUEST_TIMEOUT;

fn load_text(text: &str, vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tollgate.toml");
    std::fs::write(&path, text).unwrap();
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let names: Vec<String> = vars.iter().map(|(k, _)| k.clone()).collect();
    let env = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    load(Some(&path), &env, &names, &Overrides::default())
}

#[test]
fn risk_rules_dir_adds_packs_and_a_bad_pack_is_refused_naming_the_file() {
    let packs = tempfile::tempdir().unwrap();
    std::fs::write(packs.path().join("sv.toml"), "language = \"sv\"\n").unwrap();
    let dir = packs.path().display().to_string();
    let config = load_text(&format!("risk_rules_dir = {dir:?}\n"), &[]).unwrap();
    assert_eq!(
        config.risk_rules.classifier().languages(),
        ["de", "en", "es", "fr", "it", "nl", "pl", "pt", "sv"]
    );
    let default = load_text("", &[]).unwrap();
    assert_eq!(
        default.risk_rules.classifier().languages(),
        ["de", "en", "es", "fr", "it", "nl", "pl", "pt"]
    );

    std::fs::write(packs.path().join("sv.toml"), "language = 3\n").unwrap();
    let e = load_text(&format!("\nrisk_rules_dir = {dir:?}\n"), &[]).unwrap_err();
    assert_eq!(e.key, "risk_rules_dir");
    assert!(e.origin.ends_with(":2"), "{e}");
    assert!(e.message.starts_with("risk rule pack sv.toml:"), "{e}");
    let e = load_text("", &[("TOLLGATE_RISK_RULES_DIR", &dir)]).unwrap_err();
    assert_eq!(e.origin, "environment TOLLGATE_RISK_RULES_DIR");
    assert!(e.message.contains("sv.toml"), "{e}");
}

const GOOD: &str = r#"
listen = "127.0.0.1:9000"
data_dir = "/var/lib/tollgate"
[[providers]]
id = "openai"
kind = "openai"
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
[[models]]
id = "gpt-4o-mini"
provider = "openai"
upstream = "gpt-4o-mini"
input = ["TEXT", "IMAGE"]
output = ["TEXT"]
context_window = 128000
pricing = { unit = "per_token", input_per_million = 0.15, output_per_million = 0.60 }
"#;

#[test]
fn the_documented_shape_loads() {
    let config = load_text(GOOD, &[("OPENAI_API_KEY", "sk-test")]).unwrap();
    assert_eq!(config.listen.to_string(), "127.0.0.1:9000");
    assert_eq!(
        config.providers[0].api_key.as_ref().unwrap().expose(),
        "sk-test"
    );
    assert_eq!(format!("{:?}", config.providers[0].api_key), "Some(***)");
    assert_eq!(
        config.models[0].pricing,
        Pricing::PerToken {
            input_per_million: 150_000,
            output_per_million: 600_000,
            cached_input_per_million: None
        }
    );
    assert_eq!(config.default_rate_limit, 60);
}

#[test]
fn the_embedded_default_serves_the_mock_provider() {
    let config = load(None, &|_| None, &[], &Overrides::default()).unwrap();
    assert_eq!(config.source, ConfigSource::Embedded);
    assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
    assert_eq!(config.data_dir, PathBuf::from("./tollgate-data"));
    assert!(
        config
            .providers
            .iter()
            .any(|p| p.kind == ProviderKind::Mock)
    );
    assert!(!config.models.is_empty());
}

#[test]
fn layers_apply_in_order_file_env_flags() {
    let config = load_text(GOOD, &[("TOLLGATE_LISTEN", "127.0.0.1:9100")]).unwrap();
    assert_eq!(config.listen.to_string(), "127.0.0.1:9100");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, GOOD).unwrap();
    let env = |n: &str| (n == "TOLLGATE_LISTEN").then(|| "127.0.0.1:9100".to_owned());
    let flags = Overrides {
        listen: Some("127.0.0.1:9200".parse().unwrap()),
        ..Default::default()
    };
    let config = load(Some(&path), &env, &["TOLLGATE_LISTEN".into()], &flags).unwrap();
    assert_eq!(config.listen.to_string(), "127.0.0.1:9200");
}

#[test]
fn webhook_urls_come_from_the_exact_env_name() {
    let config = load_text(
        GOOD,
        &[(
            "WEBHOOK_URLS",
            "https://a.example/hook, https://b.example/h",
        )],
    )
    .unwrap();
    assert_eq!(config.webhook_urls.len(), 2);
    let err = load_text(GOOD, &[("WEBHOOK_URLS", "ftp://x")]).unwrap_err();
    assert_eq!(err.origin, "environment WEBHOOK_URLS");
}

#[test]
fn an_unknown_key_names_the_line_and_key() {
    let text = GOOD.replace(
        "context_window = 128000",
        "context_window = 128000\ncontext_windw = 5",
    );
    let err = load_text(&text, &[]).unwrap_err();
    assert!(err.origin.ends_with(":16"), "{err}");
    assert!(
        err.message.contains("unknown field `context_windw`"),
        "{err}"
    );
}

#[test]
fn a_wrong_type_names_the_line_and_key() {
    let text = GOOD.replace("context_window = 128000", "context_window = \"big\"");
    let err = load_text(&text, &[]).unwrap_err();
    assert!(err.origin.ends_with(":15"), "{err}");
    assert_eq!(err.key, "models[0].context_window");
}

#[test]
fn the_responses_mode_is_passthrough_by_default_and_translate_for_openai_only() {
    let config = load_text(GOOD, &[]).unwrap();
    assert_eq!(config.providers[0].responses, ResponsesMode::Passthrough);
    let translate = GOOD.replace(
        "api_key_env = \"OPENAI_API_KEY\"",
        "api_key_env = \"OPENAI_API_KEY\"\nresponses = \"translate\"",
    );
    let config = load_text(&translate, &[]).unwrap();
    assert_eq!(config.providers[0].responses, ResponsesMode::Translate);
    let err = load_text(&translate.replace("\"translate\"", "\"sometimes\""), &[]).unwrap_err();
    assert_eq!(err.key, "providers[0].responses");
    assert!(err.message.contains("passthrough"), "{err}");
    let mock =
        format!("{GOOD}[[providers]]\nid = \"m\"\nkind = \"mock\"\nresponses = \"translate\"\n");
    let err = load_text(&mock, &[]).unwrap_err();
    assert_eq!(err.key, "providers[1].responses");
    assert!(err.message.contains("`openai` only"), "{err}");
}

#[test]
fn an_unknown_provider_reference_names_the_line() {
    let text = GOOD.replace("provider = \"openai\"", "provider = \"opnai\"");
    let err = load_text(&text, &[]).unwrap_err();
    assert!(err.origin.ends_with(":11"), "{err}");
    assert_eq!(err.key, "models[0].provider");
    assert!(err.message.contains("unknown provider `opnai`"), "{err}");
}

#[test]
fn bad_values_are_refused_with_their_key() {
    let cases = [
        (
            GOOD.replace("0.60", "-1.0"),
            "models[0].pricing.output_per_million",
        ),
        (
            GOOD.replace("\"TEXT\", \"IMAGE\"", "\"TEXT\", \"SMELL\""),
            "models[0].input[1]",
        ),
        (
            GOOD.replace("https://api.openai.com/v1", "api.openai.com"),
            "providers[0].base_url",
        ),
        (GOOD.replace("127.0.0.1:9000", "localhost"), "listen"),
        (
            GOOD.replace("kind = \"openai\"", "kind = \"watsonx\""),
            "providers[0].kind",
        ),
        (
            GOOD.replace(
                "unit = \"per_token\"",
                "unit = \"per_token\", per_image = 1.0",
            ),
            "models[0].pricing",
        ),
        (
            GOOD.replace("data_dir", "log_level = \"info,tollgate=[\"\ndata_dir"),
            "log_level",
        ),
        // An embedding model takes TEXT and produces EMBEDDING alone.
        (
            GOOD.replace("output = [\"TEXT\"]", "output = [\"TEXT\", \"EMBEDDING\"]"),
            "models[0].output",
        ),
        (
            GOOD.replace("output = [\"TEXT\"]", "output = [\"EMBEDDING\"]"),
            "models[0].output",
        ),
    ];
    for (text, key) in cases {
        let err = load_text(&text, &[]).unwrap_err();
        assert!(err.key.starts_with(key), "expected key {key}, got {err}");
    }
}

const DEPLOYED: &str = r#"
[[providers]]
id = "a"
kind = "openai"
base_url = "https://a.example/v1"
retry_backoff_ms = 50
[[providers]]
id = "b"
kind = "openai"
base_url = "https://b.example/v1"
[[models]]
id = "m"
deployments = [
  { provider = "a", upstream = "m-a", weight = 3 },
  { provider = "b" },
]
strategy = "least_busy"
rpm_limit = 100
tpm_limit = 5000
input = ["TEXT"]
output = ["TEXT"]
context_window = 1000
pricing = { unit = "per_request", per_request = 0.01 }
"#;

#[test]
fn deployments_load_with_their_weights_and_the_provider_retry_defaults() {
    let config = load_text(DEPLOYED, &[]).unwrap();
    let m = &config.models[0];
    let deployments = m.deployments();
    assert_eq!(deployments.len(), 2);
    assert_eq!(
        (
            deployments[0].provider.as_str(),
            deployments[0].upstream.as_str(),
            deployments[0].weight
        ),
        ("a", "m-a", 3)
    );
    assert_eq!(
        (
            deployments[1].provider.as_str(),
            deployments[1].upstream.as_str(),
            deployments[1].weight
        ),
        ("b", "m", 1)
    );
    assert_eq!(m.routing.strategy, Strategy::LeastBusy);
    assert_eq!(
        (m.routing.rpm_limit, m.routing.tpm_limit),
        (Some(100), Some(5000))
    );
    let a = &config.providers[0];
    assert_eq!(a.retry.backoff_base, Duration::from_millis(50));
    assert_eq!(a.retry.max_retries, 2);
    assert_eq!(a.retry.retry_after_cap, Duration::from_secs(10));
    assert_eq!(a.cooldown, CooldownPolicy::default());
    assert_eq!(a.request_timeout, DEFAULT_REQUEST_TIMEOUT);
    // The single form is one deployment of weight 1.
    let single = load_text(GOOD, &[]).unwrap();
    assert_eq!(single.models[0].deployments().len(), 1);
    assert_eq!(single.models[0].routing.strategy, Strategy::Weighted);
}

#[test]
fn bad_deployments_are_refused_with_the_line_and_key() {
    let cases = [
        (
            DEPLOYED.replace("id = \"m\"\n", "id = \"m\"\nprovider = \"a\"\n"),
            "models[0].deployments",
            ":13",
            "not both",
        ),
        (
            DEPLOYED.replace("weight = 3", "weight = 0"),
            "models[0].deployments[0].weight",
            ":14",
            "must be 1",
        ),
        (
            DEPLOYED.replace("{ provider = \"b\" }", "{ provider = \"c\" }"),
            "models[0].deployments[1].provider",
            ":15",
            "unknown provider `c`",
        ),
        (
            DEPLOYED.replace("retry_backoff_ms = 50", "retry_backoff_ms = -5"),
            "providers[0].retry_backoff_ms",
            ":6",
            "-5 is out of range",
        ),
        (
            DEPLOYED.replace("strategy = \"least_busy\"", "strategy = \"fastest\""),
            "models[0].strategy",
            ":17",
            "unknown variant",
        ),
        (
            DEPLOYED.replace("rpm_limit = 100", "rpm_limit = 0"),
            "models[0].rpm_limit",
            ":18",
            "out of range",
        ),
        (
            DEPLOYED.replace("{ provider = \"b\" }", "{ provider = \"b\", wieght = 2 }"),
            "models[0].deployments[1]",
            ":15",
            "unknown field `wieght`",
        ),
    ];
    for (text, key, line, message) in cases {
        let err = load_text(&text, &[]).unwrap_err();
        assert!(err.key.starts_with(key), "expected key {key}, got {err}");
        assert!(err.origin.ends_with(line), "expected line {line}: {err}");
        assert!(err.message.contains(message), "{err}");
    }
    let neither = GOOD.replace("provider = \"openai\"\n", "");
    let err = load_text(&neither, &[]).unwrap_err();
    assert_eq!(err.key, "models[0].provider");
    assert!(err.message.contains("or `deployments`"), "{err}");
}

#[test]
fn a_syntax_error_names_the_line() {
    let err = load_text("listen = \"127.0.0.1:1\"\n[[models]\n", &[]).unwrap_err();
    assert!(err.origin.ends_with(":2"), "{err}");
}

#[test]
fn unknown_tollgate_env_vars_are_refused() {
    let err = load_text(GOOD, &[("TOLLGATE_LISTN", "x")]).unwrap_err();
    assert_eq!(err.key, "TOLLGATE_LISTN");
    let err = load_text(GOOD, &[("TOLLGATE_DEFAULT_RATE_LIMIT", "0")]).unwrap_err();
    assert_eq!(err.origin, "environment TOLLGATE_DEFAULT_RATE_LIMIT");
}

#[test]
fn a_number_out_of_its_declared_range_is_refused_with_that_range() {
    let err = load_text("judge_timeout_ms = 50\n", &[]).unwrap_err();
    assert_eq!(err.key, "judge_timeout_ms");
    assert!(err.origin.ends_with(":1"), "{err}");
    assert_eq!(err.message, "50 is out of range: must be 100 to 60000");
    let err = load_text("", &[("TOLLGATE_SESSION_TTL_HOURS", "0")]).unwrap_err();
    assert_eq!(err.origin, "environment TOLLGATE_SESSION_TTL_HOURS");
    assert_eq!(
        err.message,
        "`0` is not a whole number of hours (1 or more)"
    );
    let err = load_text("audit_retention_days = 30\n", &[]).unwrap_err();
    assert_eq!(
        err.message,
        "30 is out of range: must be 183 to 36500: audit entries are kept at least six months (EU AI Act Articles 19 and 26(6))"
    );
    let config = load_text("", &[("TOLLGATE_FREE_MULTIMODAL_PER_DAY", "0")]).unwrap();
    assert_eq!(config.free_multimodal_per_day, 0);
    assert_eq!(config.judge_timeout_ms, 5_000);
}
