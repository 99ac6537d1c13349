//! Credentials in URLs, hidden from those who may not see them.
//!
//! A webhook URL often carries its receiver's secret: a `?token=` query, or
//! (refused at registration, yet still sent and audited) `user:pass@`. The
//! audit log keeps every dashboard act's body and is read by auditors, and
//! the tenant view reaches roles that do not manage webhooks, so both show
//! URLs through [`url`]: the user information and every query value and
//! fragment replaced by `***`. Only the webhook settings, for
//! `webhooks.manage`, show a URL whole.

/// What replaces a hidden part.
const HIDDEN: &str = "***";

/// `text` with its user information, query values and fragment hidden, when
/// it is an absolute URL with a host; any other text as it is.
pub fn url(text: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(text.trim()) else {
        return text.to_owned();
    };
    if !parsed.has_host() {
        return text.to_owned();
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        let _ = parsed.set_password(None);
        let _ = parsed.set_username(HIDDEN);
    }
    if let Some(query) = parsed.query() {
        let hidden: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) => format!("{name}={HIDDEN}"),
                // A bare value (`?s3cr3t`) may be the secret itself.
                None => HIDDEN.to_owned(),
            })
            .collect();
        parsed.set_query(Some(&hidden.join("&")));
    }
    if parsed.fragment().is_some() {
        parsed.set_fragment(Some(HIDDEN));
    }
    parsed.to_string()
}

/// Hides the credentials of every URL among `value`'s strings.
pub fn urls_in(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) if text.contains("://") => *text = url(text),
        serde_json::Value::Array(items) => items.iter_mut().for_each(urls_in),
        serde_json::Value::Object(map) => map.values_mut().for_each(urls_in),
        _ => {}
    }
}

/// reqwest errors print the URL; a `?key=` must never reach a message.
pub fn without_url(e: &reqwest::Error) -> String {
    let mut e = e.to_string();
    if let Some(i) = e.find(" for url") {
        e.truncate(i);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_query_values_and_fragments_are_hidden() {
        assert_eq!(
            url("https://alice:pw@hooks.example.com/in?token=abc&team=t2#frag"),
            "https://***@hooks.example.com/in?token=***&team=***#***"
        );
        assert_eq!(url("https://h.example/x?s3cr3t"), "https://h.example/x?***");
        assert_eq!(url("https://h.example/x"), "https://h.example/x");
        assert_eq!(url("not a url"), "not a url");
        assert_eq!(
            url("mailto:someone@example.com"),
            "mailto:someone@example.com"
        );
    }

    #[test]
    fn urls_are_hidden_anywhere_in_a_body() {
        let mut body = serde_json::json!({ "urls": ["https://h.example/?token=abc"], "n": 1 });
        urls_in(&mut body);
        assert_eq!(body["urls"][0], "https://h.example/?token=***");
    }
}
