//! Which upstream model names a catalogue entry may carry.
//!
//! The `upstream` of a model is the provider's own name for it, and it
//! leaves the gateway in every request: in the JSON body (OpenAI-compatible
//! servers, Anthropic) or in the URL path (Gemini's
//! `models/{name}:generateContent`). URLs are built from typed, encoded
//! segments (`providers::http::endpoint`), so no name can rewrite one; this
//! check refuses, where a name is written (configuration loading and the
//! dashboard API), the names that could only be a mistake or an attack:
//! control characters, whitespace, `?`, `#`, and `.` or `..` path segments
//! for every kind, and for Gemini also `/`, `\` and `:`, which would split or
//! end the one path segment the name is sent in. A `/` stays allowed where
//! the name travels in a body, because OpenAI-compatible servers name
//! models `meta-llama/Llama-3-8B`.
//!
//! The mock provider's names are scripts (`fixed:some text`) that never
//! leave the process, so they are not checked.

use super::ProviderKind;

/// Why `name` cannot be the upstream name of a model served by a provider
/// of `kind`, or `Ok`.
pub fn check(name: &str, kind: ProviderKind) -> Result<(), String> {
    match kind {
        ProviderKind::Mock => Ok(()),
        // Bedrock's id is encoded whole into one path segment (`/` too:
        // inference-profile ARNs carry one), so only the common rules apply;
        // an Azure deployment name is one encoded path segment, as a Vertex
        // model name is (`models/{name}:rawPredict`).
        ProviderKind::Openai
        | ProviderKind::Anthropic
        | ProviderKind::Bedrock
        | ProviderKind::Azure => check_common(name),
        ProviderKind::Gemini | ProviderKind::Vertex => {
            check_common(name)?;
            match name.chars().find(|c| matches!(c, '/' | '\\' | ':')) {
                Some(c) => Err(format!(
                    "`{}` contains `{c}`: a {} model name is sent as one URL path segment \
                     (`models/{{name}}:generateContent`), so it may not contain `/`, `\\` or `:`",
                    name.escape_debug(),
                    kind.as_str()
                )),
                None => Ok(()),
            }
        }
    }
}

/// The rules for every kind that reaches the network.
fn check_common(name: &str) -> Result<(), String> {
    let shown = name.escape_debug();
    if name.is_empty() {
        return Err("must not be empty".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_control() || c.is_whitespace() || matches!(c, '?' | '#'))
    {
        let what = match c {
            '?' => "`?` (it would start a URL query)".to_owned(),
            '#' => "`#` (it would start a URL fragment)".to_owned(),
            c if c.is_control() => format!("the control character U+{:04X}", u32::from(c)),
            c => format!("the whitespace U+{:04X}", u32::from(c)),
        };
        return Err(format!("`{shown}` contains {what}"));
    }
    // A URL parser reads `\` as `/` in http(s) paths, so both separate.
    if name.split(['/', '\\']).any(|s| s == "." || s == "..") {
        return Err(format!(
            "`{shown}` contains a `.` or `..` path segment, which would climb the upstream's URL path"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_rewrite_a_url_are_refused_for_every_networked_kind() {
        for kind in [
            ProviderKind::Openai,
            ProviderKind::Anthropic,
            ProviderKind::Gemini,
            ProviderKind::Bedrock,
            ProviderKind::Azure,
            ProviderKind::Vertex,
        ] {
            for name in [
                "",
                "x/../../other",
                "..",
                "./x",
                "a\\..\\b",
                "gpt-4o?key=1",
                "gpt-4o#x",
                "gpt 4o",
                "gpt-4o\t",
                "gpt-4o\n",
                "gpt\u{0}",
                "gpt\u{7f}",
                "gpt\u{a0}4o",
            ] {
                assert!(check(name, kind).is_err(), "{kind:?} {name:?}");
            }
        }
    }

    #[test]
    fn a_gemini_name_is_one_path_segment() {
        for name in ["tunedModels/x", "a\\b", "gemini-ok:countTokens"] {
            assert!(check(name, ProviderKind::Gemini).is_err(), "{name}");
            assert!(check(name, ProviderKind::Vertex).is_err(), "{name}");
            assert!(check(name, ProviderKind::Openai).is_ok(), "{name}");
        }
        for name in [
            "gemini-2.0-flash",
            "gemini-1.5-pro-002",
            "learnlm-1.5-pro-experimental",
        ] {
            assert!(check(name, ProviderKind::Gemini).is_ok(), "{name}");
        }
    }

    #[test]
    fn real_provider_names_pass_and_mock_scripts_are_not_checked() {
        for name in [
            "meta-llama/Llama-3-8B",
            "llama3:8b-instruct-q4_0",
            "accounts/fireworks/models/llama-v3-8b",
            "claude-3-5-sonnet-20241022",
            "gpt-4o-mini",
            "x..y",
        ] {
            assert!(check(name, ProviderKind::Openai).is_ok(), "{name}");
        }
        assert!(check("fixed:any text at all", ProviderKind::Mock).is_ok());
    }
}
