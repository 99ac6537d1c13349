//! The one codec for stored values: a format-version byte, then bincode 2
//! (through serde). The byte makes a later codec change (bincode 2 is frozen)
//! a migration that can tell old values from new ones, not a rewrite in the
//! dark. Stored types avoid serde features bincode cannot carry (internally
//! tagged enums, `flatten`, skipped fields).

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::StoreError;

/// The format of every value written by this build.
pub const FORMAT_V1: u8 = 1;

fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = vec![FORMAT_V1];
    // Writing into a Vec cannot fail, and our types always serialize.
    bincode::serde::encode_into_std_write(value, &mut out, config())
        .expect("encoding a stored value into memory");
    out
}

pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, StoreError> {
    match bytes.split_first() {
        Some((&FORMAT_V1, rest)) => {
            let (value, used) = bincode::serde::decode_from_slice(rest, config())
                .map_err(|e| StoreError::Corrupt(format!("undecodable value: {e}")))?;
            if used != rest.len() {
                return Err(StoreError::Corrupt(
                    "trailing bytes after a stored value".into(),
                ));
            }
            Ok(value)
        }
        Some((&version, _)) => Err(StoreError::Corrupt(format!(
            "value in format {version}, this build reads format {FORMAT_V1}"
        ))),
        None => Err(StoreError::Corrupt("empty stored value".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Mode {
        Off,
        On(u32),
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        id: String,
        amount: u64,
        balance: i64,
        limit: Option<u64>,
        flags: Vec<u8>,
        digest: [u8; 32],
        mode: Mode,
    }

    #[test]
    fn values_round_trip_with_their_version_byte() {
        let sample = Sample {
            id: "key_01".into(),
            amount: u64::MAX,
            balance: -5,
            limit: None,
            flags: vec![50, 80],
            digest: [7; 32],
            mode: Mode::On(3),
        };
        let bytes = encode(&sample);
        assert_eq!(bytes[0], FORMAT_V1);
        assert_eq!(decode::<Sample>(&bytes).unwrap(), sample);
    }

    #[test]
    fn foreign_and_damaged_bytes_are_refused() {
        let mut bytes = encode(&42u64);
        bytes[0] = 9;
        assert!(matches!(decode::<u64>(&bytes), Err(StoreError::Corrupt(_))));
        assert!(matches!(decode::<u64>(&[]), Err(StoreError::Corrupt(_))));
        let mut long = encode(&42u64);
        long.push(0);
        assert!(matches!(decode::<u64>(&long), Err(StoreError::Corrupt(_))));
        assert!(matches!(
            decode::<String>(&[FORMAT_V1, 200]),
            Err(StoreError::Corrupt(_))
        ));
    }
}
