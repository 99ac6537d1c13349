//! Serde helpers shared by the HTTP layer and the parts that take JSON
//! settings.

use serde::Deserialize;

/// For `Option<Option<T>>` fields: absent is `None` (keep), `null` is
/// `Some(None)` (clear), a value is `Some(Some(v))` (set). Use with
/// `#[serde(default, deserialize_with = "...")]`.
pub fn nullable<'de, T, D>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// `value` as compact JSON text: the same bytes as `value.to_string()`,
/// written straight into the string's buffer. `Display` passes every token
/// through a `fmt::Formatter` (a virtual call and a copy each): on the
/// request path that took 36,000 instructions a request, this 22,000
/// (docs/benchmarks.md, "The whole server's instructions per request").
pub fn text(value: &serde_json::Value) -> String {
    serde_json::to_string(value).expect("a JSON value always serializes")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn text_is_the_display_form_byte_for_byte() {
        for value in [
            json!(null),
            json!("quote \" backslash \\ newline \n tab \t control \u{1} é 😀"),
            json!({"b": [1, -2, 3.5, 1e300, 0.1, 18446744073709551615u64, -9223372036854775808i64],
                   "a": {"nested": [true, false, null, {}, []]}, "": ""}),
            json!([0.000123, 2.5e-7, 1.0, 100.0]),
        ] {
            assert_eq!(super::text(&value), value.to_string());
        }
    }
}
