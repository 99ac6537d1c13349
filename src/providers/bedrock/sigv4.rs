//! AWS Signature Version 4, header form, for the services that are not S3.
//!
//! A small signer on the `sha2` and `hmac` crates already in the tree
//! (the `aws-sigv4` crate brings the AWS SDK's runtime crates with it).
//! It is pinned by AWS's published signing test suite
//! (`tests/data/sigv4/`, checked by `tests/bedrock.rs`) and by a signature
//! computed by botocore for a Bedrock request (the unit test below).
//!
//! The one subtle rule: for every service but S3, the canonical URI is the
//! path *as sent* (already percent-encoded once) encoded again, segment by
//! segment. A model id `anthropic.claude-3-5-sonnet-20240620-v1:0` is sent
//! as `...-v1%3A0` and signed as `...-v1%253A0`. Getting this wrong makes
//! AWS answer 403 `SignatureDoesNotMatch` for exactly the models whose id
//! has a colon, which is most of them.

use hmac::{KeyInit, Mac};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use time::macros::format_description;

/// The signing algorithm's name, first word of the `Authorization` header.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// The credentials a request is signed with.
pub struct Credentials<'a> {
    pub access_key_id: &'a str,
    pub secret_access_key: &'a str,
    /// Temporary credentials' token, sent as `x-amz-security-token`.
    pub session_token: Option<&'a str>,
}

/// What is signed of a request.
pub struct Request<'a> {
    pub method: &'a str,
    /// The path as sent on the wire (percent-encoded once).
    pub path: &'a str,
    /// The query string as sent, without `?`.
    pub query: Option<&'a str>,
    /// The headers to sign, `x-amz-date` (and the token) included.
    pub headers: &'a [(String, String)],
    pub payload: &'a [u8],
    /// Remove `.` and `..` segments and empty segments from the path
    /// before encoding (every service but S3; a path built by the `url`
    /// crate has none to remove).
    pub normalize: bool,
}

/// Where and when a request is signed.
pub struct Scope<'a> {
    pub region: &'a str,
    pub service: &'a str,
    pub time: OffsetDateTime,
}

impl Scope<'_> {
    /// `YYYYMMDDTHHMMSSZ`, the value of `x-amz-date`.
    pub fn amz_date(&self) -> String {
        let format = format_description!("[year][month][day]T[hour][minute][second]Z");
        self.time
            .to_offset(time::UtcOffset::UTC)
            .format(format)
            .expect("a UTC time formats")
    }

    fn date(&self) -> String {
        self.amz_date()[..8].to_owned()
    }

    /// `date/region/service/aws4_request`.
    pub fn credential_scope(&self) -> String {
        format!(
            "{}/{}/{}/aws4_request",
            self.date(),
            self.region,
            self.service
        )
    }
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// Hex SHA-256 of `data`.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = hmac::Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// AWS's URI encoding: every byte but the unreserved characters
/// (`A-Z a-z 0-9 - . _ ~`) as `%XX`, upper-case hex; `/` kept when
/// `keep_slash`.
pub fn uri_encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            b'/' if keep_slash => out.push('/'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Percent-decoding of a query component (`+` is not a space in SigV4).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex_at = |j: usize| bytes.get(j).and_then(|c| (*c as char).to_digit(16));
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (hex_at(i + 1), hex_at(i + 2))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The canonical URI of a path as sent.
pub fn canonical_uri(path: &str, normalize: bool) -> String {
    let path = if path.is_empty() { "/" } else { path };
    if !normalize {
        return uri_encode(path, true);
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let mut out = String::from("/");
    out.push_str(&segments.join("/"));
    if path.ends_with('/') && !segments.is_empty() {
        out.push('/');
    }
    uri_encode(&out, true)
}

/// The canonical query string: each name and value decoded, then encoded
/// AWS's way, sorted by name and then value.
pub fn canonical_query(query: Option<&str>) -> String {
    let mut pairs: Vec<(String, String)> = query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (
                uri_encode(&percent_decode(name), false),
                uri_encode(&percent_decode(value), false),
            )
        })
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// The canonical headers block and the signed-headers list: names lower
/// case and sorted, values trimmed with inner runs of spaces collapsed,
/// repeated headers joined by `,` in the order given.
pub fn canonical_headers(headers: &[(String, String)]) -> (String, String) {
    let mut merged: Vec<(String, Vec<String>)> = Vec::new();
    for (name, value) in headers {
        let name = name.to_ascii_lowercase();
        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
        match merged.iter_mut().find(|(n, _)| *n == name) {
            Some((_, values)) => values.push(value),
            None => merged.push((name, vec![value])),
        }
    }
    merged.sort_by(|a, b| a.0.cmp(&b.0));
    let block: String = merged
        .iter()
        .map(|(n, v)| format!("{n}:{}\n", v.join(",")))
        .collect();
    let signed = merged
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(";");
    (block, signed)
}

/// The canonical request, and the signed-headers list.
pub fn canonical_request(request: &Request<'_>) -> (String, String) {
    let (headers, signed) = canonical_headers(request.headers);
    let canonical = format!(
        "{}\n{}\n{}\n{}\n{}\n{}",
        request.method,
        canonical_uri(request.path, request.normalize),
        canonical_query(request.query),
        headers,
        signed,
        sha256_hex(request.payload),
    );
    (canonical, signed)
}

/// The string to sign for a canonical request.
pub fn string_to_sign(scope: &Scope<'_>, canonical_request: &str) -> String {
    format!(
        "{ALGORITHM}\n{}\n{}\n{}",
        scope.amz_date(),
        scope.credential_scope(),
        sha256_hex(canonical_request.as_bytes())
    )
}

/// The hex signature of `string_to_sign`.
pub fn signature(secret_access_key: &str, scope: &Scope<'_>, string_to_sign: &str) -> String {
    let key = hmac(
        format!("AWS4{secret_access_key}").as_bytes(),
        scope.date().as_bytes(),
    );
    let key = hmac(&key, scope.region.as_bytes());
    let key = hmac(&key, scope.service.as_bytes());
    let key = hmac(&key, b"aws4_request");
    hex(&hmac(&key, string_to_sign.as_bytes()))
}

/// The `Authorization` header value for `request`.
pub fn authorization(
    credentials: &Credentials<'_>,
    scope: &Scope<'_>,
    request: &Request<'_>,
) -> String {
    let (canonical, signed) = canonical_request(request);
    let signature = signature(
        credentials.secret_access_key,
        scope,
        &string_to_sign(scope, &canonical),
    );
    format!(
        "{ALGORITHM} Credential={}/{}, SignedHeaders={signed}, Signature={signature}",
        credentials.access_key_id,
        scope.credential_scope()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Bedrock Converse request for a model id with a colon, signed by
    /// botocore 1.43 (`SigV4Auth(creds, "bedrock", "eu-central-1")`, time
    /// fixed at 2024-07-01T12:00:00Z): an independent check of the double
    /// encoding of the path.
    #[test]
    fn a_colon_model_id_is_signed_as_botocore_signs_it() {
        let headers = [
            ("content-type".to_owned(), "application/json".to_owned()),
            (
                "host".to_owned(),
                "bedrock-runtime.eu-central-1.amazonaws.com".to_owned(),
            ),
            ("x-amz-date".to_owned(), "20240701T120000Z".to_owned()),
            (
                "x-amz-security-token".to_owned(),
                "session-token-example".to_owned(),
            ),
        ];
        let request = Request {
            method: "POST",
            path: "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
            query: None,
            headers: &headers,
            payload: br#"{"messages":[{"role":"user","content":[{"text":"hi"}]}]}"#,
            normalize: true,
        };
        let scope = Scope {
            region: "eu-central-1",
            service: "bedrock",
            time: time::macros::datetime!(2024-07-01 12:00:00 UTC),
        };
        let (canonical, signed) = canonical_request(&request);
        assert!(
            canonical.starts_with(
                "POST\n/model/anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse\n\n"
            ),
            "{canonical}"
        );
        assert_eq!(signed, "content-type;host;x-amz-date;x-amz-security-token");
        let to_sign = string_to_sign(&scope, &canonical);
        assert!(
            to_sign.ends_with("\nc1d1cb5d47c3a5d659c525d59c4180c9353cb8a0ceaeeabd13a563b94edf4c40")
        );
        assert_eq!(
            signature("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", &scope, &to_sign),
            "82e675ef276e17a34ca99157b550980e11bb91e413c2804e4ceefe98b11903c3"
        );
    }
}
