//! Key values: `kp_live_` followed by 24 random bytes in URL-safe base64
//! without padding (32 characters). Only the SHA-256 digest of a value is
//! stored, with a short hint for display.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::base::ids::{random_token, sha256};

pub const KEY_PREFIX: &str = "kp_live_";
/// Random bytes in a key (spec, "Limits").
pub const KEY_RANDOM_BYTES: usize = 24;
const KEY_LEN: usize = KEY_PREFIX.len() + 32;

/// A new key value, and the digest and hint that are stored instead.
pub struct NewKeyValue {
    pub value: String,
    pub digest: [u8; 32],
    pub hint: String,
}

pub fn generate_value() -> NewKeyValue {
    let value = format!("{KEY_PREFIX}{}", random_token(KEY_RANDOM_BYTES));
    let random = &value[KEY_PREFIX.len()..];
    let hint = format!(
        "{KEY_PREFIX}{}…{}",
        &random[..4],
        &random[random.len() - 4..]
    );
    NewKeyValue {
        digest: sha256(value.as_bytes()),
        hint,
        value,
    }
}

/// The digest of a presented key, or `None` when it cannot be one of ours
/// (wrong prefix, length or alphabet): such a key is unknown without a
/// lookup.
pub fn digest_of(presented: &str) -> Option<[u8; 32]> {
    let random = presented.strip_prefix(KEY_PREFIX)?;
    if presented.len() != KEY_LEN {
        return None;
    }
    let mut decoded = [0u8; KEY_RANDOM_BYTES];
    match URL_SAFE_NO_PAD.decode_slice(random, &mut decoded) {
        Ok(KEY_RANDOM_BYTES) => Some(sha256(presented.as_bytes())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_values_have_the_spec_format() {
        let issued = generate_value();
        assert!(issued.value.starts_with("kp_live_"));
        assert_eq!(issued.value.len(), 8 + 32);
        let random = &issued.value[8..];
        assert_eq!(URL_SAFE_NO_PAD.decode(random).unwrap().len(), 24);
        assert!(
            random
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        assert_eq!(digest_of(&issued.value), Some(issued.digest));
        assert_eq!(issued.digest, sha256(issued.value.as_bytes()));
        assert!(!issued.hint.contains(random));
        assert_ne!(generate_value().value, issued.value);
    }

    #[test]
    fn malformed_keys_have_no_digest() {
        let good = generate_value().value;
        assert!(digest_of(&good.replace("kp_live_", "kp_test_")).is_none());
        assert!(digest_of(&good[..good.len() - 1]).is_none());
        assert!(digest_of(&format!("{good}A")).is_none());
        assert!(digest_of(&good.replacen(&good[8..9], "+", 1)).is_none());
        assert!(digest_of("").is_none());
        assert!(digest_of("kp_live_").is_none());
    }
}
