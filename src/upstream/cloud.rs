//! The settings of the cloud provider kinds, read from their provider
//! table: Azure OpenAI's `api_version`; Vertex AI's `project`,
//! `location` and credentials (`credentials_file` or `access_token_env`).
//! Validated once at configuration loading (and by `config check`): a
//! missing field is named, a key file is read and checked to be a service
//! account with an RSA key, and a field of another kind is refused.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use toml::Spanned;

use super::ProviderKind;
use super::vertex::{Credentials, ServiceAccount, TokenSource, Vertex};
use crate::base::secret::Secret;

/// What a cloud kind needs beyond a base URL and a key.
#[derive(Debug, Clone, Default)]
pub enum Cloud {
    /// Every other kind.
    #[default]
    None,
    Azure {
        /// The `api-version` query parameter of every call.
        api_version: String,
    },
    /// Shared by every clone of the provider, so its token cache is one.
    Vertex(Arc<Vertex>),
}

impl Cloud {
    pub fn vertex(&self) -> Option<&Vertex> {
        match self {
            Cloud::Vertex(vertex) => Some(vertex),
            _ => None,
        }
    }

    pub fn api_version(&self) -> Option<&str> {
        match self {
            Cloud::Azure { api_version } => Some(api_version),
            _ => None,
        }
    }
}

/// The cloud fields of a provider table, as written.
#[derive(Default)]
pub struct RawCloud {
    pub api_version: Option<Spanned<String>>,
    pub project: Option<Spanned<String>>,
    pub location: Option<Spanned<String>>,
    pub credentials_file: Option<Spanned<String>>,
    pub access_token_env: Option<Spanned<String>>,
}

/// A refusal: where (the field's span, else none), the field, and why.
pub type Refusal = (Option<Range<usize>>, &'static str, String);

/// The cloud settings of a provider of `kind`. `env` reads the
/// environment variable an `access_token_env` names.
pub fn validate(
    kind: ProviderKind,
    raw: RawCloud,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Cloud, Refusal> {
    refuse_foreign_fields(kind, &raw)?;
    match kind {
        ProviderKind::Azure => Ok(Cloud::Azure {
            api_version: required(kind, "api_version", raw.api_version)?,
        }),
        ProviderKind::Vertex => {
            let project = required(kind, "project", raw.project)?;
            let location = required(kind, "location", raw.location)?;
            // Both are one path segment and the location part of a host name.
            if !location
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
            {
                return Err((
                    None,
                    "location",
                    format!("`{location}` is not a Google Cloud location such as `europe-west4`"),
                ));
            }
            let credentials = vertex_credentials(raw.credentials_file, raw.access_token_env, env)?;
            Ok(Cloud::Vertex(Arc::new(Vertex {
                project,
                location,
                tokens: TokenSource::new(credentials),
            })))
        }
        _ => Ok(Cloud::None),
    }
}

/// Refuses a field that is not a setting of `kind`.
fn refuse_foreign_fields(kind: ProviderKind, raw: &RawCloud) -> Result<(), Refusal> {
    let allowed: &[&str] = match kind {
        ProviderKind::Azure => &["api_version"],
        ProviderKind::Vertex => &[
            "project",
            "location",
            "credentials_file",
            "access_token_env",
        ],
        _ => &[],
    };
    let fields = [
        ("api_version", &raw.api_version),
        ("project", &raw.project),
        ("location", &raw.location),
        ("credentials_file", &raw.credentials_file),
        ("access_token_env", &raw.access_token_env),
    ];
    for (name, value) in fields {
        if let Some(value) = value
            && !allowed.contains(&name)
        {
            return Err((
                Some(value.span()),
                name,
                format!(
                    "`{name}` is not a setting of provider kind `{}`",
                    kind.as_str()
                ),
            ));
        }
    }
    Ok(())
}

/// A field `kind` needs, trimmed and not empty.
fn required(
    kind: ProviderKind,
    name: &'static str,
    value: Option<Spanned<String>>,
) -> Result<String, Refusal> {
    match value {
        Some(v) if !v.get_ref().trim().is_empty() => Ok(v.into_inner().trim().to_owned()),
        Some(v) => Err((Some(v.span()), name, "must not be empty".to_owned())),
        None => Err((
            None,
            name,
            format!("provider kind `{}` needs {name}", kind.as_str()),
        )),
    }
}

/// Vertex credentials: a service account key file, or an environment
/// variable holding an access token; exactly one of the two.
fn vertex_credentials(
    credentials_file: Option<Spanned<String>>,
    access_token_env: Option<Spanned<String>>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Credentials, Refusal> {
    Ok(match (credentials_file, access_token_env) {
        (Some(file), None) => Credentials::ServiceAccount(
            ServiceAccount::load(Path::new(file.get_ref()))
                .map_err(|e| (Some(file.span()), "credentials_file", e.to_string()))?,
        ),
        (None, Some(name)) => {
            let n = name.get_ref();
            if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err((
                    Some(name.span()),
                    "access_token_env",
                    format!("`{n}` is not an environment variable name"),
                ));
            }
            Credentials::Token(env(n).filter(|v| !v.is_empty()).map(Secret::new))
        }
        (Some(file), Some(_)) => {
            return Err((
                Some(file.span()),
                "credentials_file",
                "give credentials_file or access_token_env, not both".into(),
            ));
        }
        (None, None) => {
            return Err((
                None,
                "credentials_file",
                "provider kind `vertex` needs credentials_file (a service account key file) or access_token_env".into(),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::config::{Overrides, load};
    use crate::upstream::ProviderKind;

    fn load_text(text: &str) -> Result<crate::config::Config, crate::config::ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tollgate.toml");
        std::fs::write(&path, text).unwrap();
        let env = |name: &str| (name == "VERTEX_TOKEN").then(|| "ya29.env-token".to_owned());
        load(Some(&path), &env, &[], &Overrides::default())
    }

    #[test]
    fn a_vertex_provider_defaults_to_its_regional_endpoint() {
        let config = load_text(
            "[[providers]]\nid = \"vx\"\nkind = \"vertex\"\nproject = \"p\"\nlocation = \"europe-west4\"\n\
             access_token_env = \"VERTEX_TOKEN\"\n",
        )
        .unwrap();
        let provider = &config.providers[0];
        assert_eq!(provider.kind, ProviderKind::Vertex);
        assert_eq!(
            provider.base_url.as_ref().unwrap().as_str(),
            "https://europe-west4-aiplatform.googleapis.com/"
        );
        let vertex = provider.cloud.vertex().unwrap();
        assert_eq!(
            (vertex.project.as_str(), vertex.location.as_str()),
            ("p", "europe-west4")
        );
        // The token is held, and never printed.
        assert!(!format!("{provider:?}").contains("ya29"));
    }

    #[test]
    fn both_credentials_or_none_are_refused() {
        let base = "[[providers]]\nid = \"vx\"\nkind = \"vertex\"\nproject = \"p\"\nlocation = \"europe-west4\"\n";
        let none = load_text(base).unwrap_err().to_string();
        assert!(none.contains("providers[0].credentials_file"), "{none}");
        let both = load_text(&format!(
            "{base}credentials_file = \"/x.json\"\naccess_token_env = \"VERTEX_TOKEN\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(both.contains("not both"), "{both}");
    }
}
