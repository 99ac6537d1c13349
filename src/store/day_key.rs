//! Keys of day-bucketed tables (usage and refusal rollups): the UTC day's
//! index, big-endian so a day's rows sort together, then `\0`-separated
//! parts.

use super::StoreError;

pub const DAY_MS: i64 = 86_400_000;

pub fn day_index(at: i64) -> u32 {
    u32::try_from(at.max(0).div_euclid(DAY_MS)).unwrap_or(u32::MAX)
}

/// A key's day start (Unix ms) and its parts.
pub fn split_key(key: &[u8]) -> Result<(i64, Vec<&str>), StoreError> {
    let bad = || StoreError::Corrupt("a rollup key is malformed".into());
    let (day, rest) = key.split_first_chunk::<4>().ok_or_else(bad)?;
    let parts = std::str::from_utf8(rest)
        .map_err(|_| bad())?
        .split('\0')
        .collect();
    Ok((i64::from(u32::from_be_bytes(*day)) * DAY_MS, parts))
}
