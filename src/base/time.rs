//! Time at the edges: records store Unix milliseconds (`i64`), the API and
//! the CLI speak RFC 3339. Keeping one representation inside avoids a codec
//! dependency on a date library's serde format.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    let now = OffsetDateTime::now_utc();
    (now.unix_timestamp_nanos() / 1_000_000) as i64
}

/// Parses an RFC 3339 timestamp into Unix milliseconds.
pub fn parse_rfc3339(text: &str) -> Result<i64, String> {
    let at = OffsetDateTime::parse(text, &Rfc3339).map_err(|e| {
        format!("`{text}` is not an RFC 3339 timestamp ({e}); example: 2027-01-31T23:59:00Z")
    })?;
    Ok((at.unix_timestamp_nanos() / 1_000_000) as i64)
}

/// Formats Unix milliseconds as RFC 3339 UTC with milliseconds.
pub fn format_rfc3339(ms: i64) -> String {
    let at = OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let format = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    at.format(&format).unwrap_or_default()
}
