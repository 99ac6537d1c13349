// Verifying a Tollgate webhook in Rust, with the RustCrypto crates
// (hmac 0.13, sha2 0.11). Call it with the raw body bytes, before parsing.
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// True when `header` is `sha256=<hex>` of HMAC-SHA256(secret, body).
pub fn verify(secret: &[u8], header: Option<&str>, body: &[u8]) -> bool {
    // Unsigned, or a scheme this receiver does not accept.
    let Some(hex) = header.and_then(|h| h.strip_prefix("sha256=")) else {
        return false;
    };
    let Some(claimed) = decode_hex(hex) else {
        return false;
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("any key length");
    mac.update(body);
    // `verify_slice` compares in constant time.
    mac.verify_slice(&claimed).is_ok()
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() != 64 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}
