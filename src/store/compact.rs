//! The compact layout of the records written once per request (schema 9):
//! usage records, audit entries, conversation records.
//!
//! A compact value starts with [`FORMAT_COMPACT`] (the codec's
//! [`codec::FORMAT_V1`] values are bincode), then the record's own fields,
//! written by hand: integers as LEB128 varints (signed ones zigzagged),
//! strings length-prefixed, ids as 16 bytes when they are ULIDs with a
//! known prefix or UUIDs ([`Out::id`]), enums as one byte. Fields the row's
//! key already holds (time, request id, sequence number) are not repeated
//! in the value. [`decode`] still reads a bincode value of schema 8, so the
//! migration is "decode, encode again" and a reader never meets a layout
//! it cannot read. A record whose layout changes later takes the next
//! format byte of its own ([`Compact::FORMAT`]; the conversation record's
//! is 3 since schema 10), and still reads its values of format 2.
//!
//! Every malformed value is [`StoreError::Corrupt`], never a panic.

use super::{StoreError, codec};

/// The format byte of a compact value.
pub const FORMAT_COMPACT: u8 = 2;

/// A record with a compact layout. `key` is the row's key: what it holds
/// is not repeated in the value.
pub trait Compact: Sized {
    /// The format byte this build writes: [`FORMAT_COMPACT`], or a later
    /// one when the record's layout changed since (read by
    /// [`Compact::read_later`]).
    const FORMAT: u8 = FORMAT_COMPACT;
    fn write(&self, out: &mut Out);
    /// Reads a value of format [`FORMAT_COMPACT`].
    fn read(key: &[u8], input: &mut In<'_>) -> Result<Self, StoreError>;
    /// Reads a value of a format after [`FORMAT_COMPACT`], up to
    /// [`Compact::FORMAT`].
    fn read_later(format: u8, _key: &[u8], _input: &mut In<'_>) -> Result<Self, StoreError> {
        Err(unknown_format(format, Self::FORMAT))
    }
    /// Reads a value of the bincode format ([`codec::FORMAT_V1`], schema
    /// 8 and older).
    fn legacy(key: &[u8], bytes: &[u8]) -> Result<Self, StoreError>;
}

fn unknown_format(format: u8, newest: u8) -> StoreError {
    StoreError::Corrupt(format!(
        "value in format {format}, this build reads formats 1 to {newest}"
    ))
}

pub fn encode<T: Compact>(value: &T) -> Vec<u8> {
    let mut out = Out(vec![T::FORMAT]);
    value.write(&mut out);
    out.0
}

pub fn decode<T: Compact>(key: &[u8], bytes: &[u8]) -> Result<T, StoreError> {
    match bytes.first() {
        Some(&format) if (FORMAT_COMPACT..=T::FORMAT).contains(&format) => {
            let mut input = In::new(&bytes[1..]);
            let value = if format == FORMAT_COMPACT {
                T::read(key, &mut input)?
            } else {
                T::read_later(format, key, &mut input)?
            };
            input.end()?;
            Ok(value)
        }
        Some(&codec::FORMAT_V1) => T::legacy(key, bytes),
        Some(&format) => Err(unknown_format(format, T::FORMAT)),
        None => Err(StoreError::Corrupt("empty stored value".into())),
    }
}
/// Id prefixes whose ULID ids are stored as 16 bytes (`new_id` callers).
/// Append only: the index is stored.
const PREFIXES: [&str; 10] = [
    "key", "ten", "acc", "rev", "inc", "cns", "resp", "top", "req", "sub",
];
const ID_TEXT: u8 = 0;
const ID_UUID: u8 = 1;
const ID_ULID: u8 = 2;

/// The bytes of a canonical (lower-case, hyphenated) UUID.
fn uuid_bytes(s: &str) -> Option<[u8; 16]> {
    let raw = s.as_bytes();
    if raw.len() != 36 || [8, 13, 18, 23].iter().any(|&i| raw[i] != b'-') {
        return None;
    }
    let hex: Vec<u8> = raw.iter().copied().filter(|&b| b != b'-').collect();
    if hex.len() != 32 || !hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut out = [0; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        let text = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

fn uuid_text(bytes: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// A prefixed ULID id (`key_01J...`): the prefix's index and the ULID.
fn ulid_id(s: &str) -> Option<(u8, [u8; 16])> {
    let (prefix, rest) = s.split_once('_')?;
    let index = PREFIXES.iter().position(|p| *p == prefix)?;
    let ulid = ulid::Ulid::from_string(rest).ok()?;
    // Only the canonical spelling, so the id reads back the same.
    (ulid.to_string() == rest).then(|| (index as u8, ulid.to_bytes()))
}

/// The writing side.
pub struct Out(pub Vec<u8>);

impl Out {
    pub fn byte(&mut self, b: u8) {
        self.0.push(b);
    }

    pub fn u64(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    pub fn i64(&mut self, v: i64) {
        self.u64(((v << 1) ^ (v >> 63)) as u64);
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    pub fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.byte(0),
            Some(s) => {
                self.byte(1);
                self.str(s);
            }
        }
    }

    pub fn raw(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }

    /// An id: 17 bytes for a UUID or a ULID with a known prefix, else
    /// the text.
    pub fn id(&mut self, s: &str) {
        if let Some(bytes) = uuid_bytes(s) {
            self.byte(ID_UUID);
            self.raw(&bytes);
        } else if let Some((prefix, bytes)) = ulid_id(s) {
            self.byte(ID_ULID + prefix);
            self.raw(&bytes);
        } else {
            self.byte(ID_TEXT);
            self.str(s);
        }
    }

    /// A list of strings.
    pub fn strs(&mut self, list: &[String]) {
        self.u64(list.len() as u64);
        for s in list {
            self.str(s);
        }
    }
}

/// An id's stored form on its own (for row keys).
pub fn id_bytes(s: &str) -> Vec<u8> {
    let mut out = Out(Vec::new());
    out.id(s);
    out.0
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("a compact value is malformed: {what}"))
}

/// The reading side: every read checks the bounds.
pub struct In<'a> {
    pub bytes: &'a [u8],
    pub at: usize,
}

impl<'a> In<'a> {
    pub fn new(bytes: &'a [u8]) -> In<'a> {
        In { bytes, at: 0 }
    }

    pub fn byte(&mut self) -> Result<u8, StoreError> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| corrupt("truncated"))?;
        self.at += 1;
        Ok(b)
    }

    pub fn u64(&mut self) -> Result<u64, StoreError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f)
                .checked_shl(shift)
                .filter(|x| x >> shift == u64::from(b & 0x7f))
                .ok_or_else(|| corrupt("varint overflow"))?;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt("varint too long"))
    }

    pub fn i64(&mut self) -> Result<i64, StoreError> {
        let v = self.u64()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    pub fn bool(&mut self) -> Result<bool, StoreError> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(corrupt("not a boolean")),
        }
    }

    pub fn raw(&mut self, n: usize) -> Result<&'a [u8], StoreError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| corrupt("truncated"))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    pub fn bytes(&mut self) -> Result<&'a [u8], StoreError> {
        let n = usize::try_from(self.u64()?).map_err(|_| corrupt("length"))?;
        self.raw(n)
    }

    pub fn str(&mut self) -> Result<String, StoreError> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| corrupt("text is not UTF-8"))
    }

    pub fn opt_str(&mut self) -> Result<Option<String>, StoreError> {
        Ok(if self.bool()? {
            Some(self.str()?)
        } else {
            None
        })
    }

    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], StoreError> {
        Ok(self.raw(N)?.try_into().expect("N bytes"))
    }

    pub fn id(&mut self) -> Result<String, StoreError> {
        match self.byte()? {
            ID_TEXT => self.str(),
            ID_UUID => Ok(uuid_text(&self.array()?)),
            tag => {
                let prefix = PREFIXES
                    .get(usize::from(tag - ID_ULID))
                    .ok_or_else(|| corrupt("unknown id prefix"))?;
                let ulid = ulid::Ulid::from_bytes(self.array()?);
                Ok(format!("{prefix}_{ulid}"))
            }
        }
    }

    pub fn strs(&mut self) -> Result<Vec<String>, StoreError> {
        let n = self.u64()?;
        // Each string takes at least its length byte.
        if n > (self.bytes.len() - self.at) as u64 {
            return Err(corrupt("list longer than the value"));
        }
        (0..n).map(|_| self.str()).collect()
    }

    /// What is left, taken whole.
    pub fn rest(&mut self) -> &'a [u8] {
        let out = &self.bytes[self.at..];
        self.at = self.bytes.len();
        out
    }

    pub fn end(&self) -> Result<(), StoreError> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(corrupt("trailing bytes"))
        }
    }
}

/// A row key of a time-ordered table: big-endian Unix ms, then an id.
pub fn time_id_key(at: i64, id: &str) -> Vec<u8> {
    let mut key = at.to_be_bytes().to_vec();
    key.extend_from_slice(&id_bytes(id));
    key
}

/// The time and the id of a [`time_id_key`].
pub fn split_time_id_key(key: &[u8]) -> Result<(i64, String), StoreError> {
    if key.len() < 9 {
        return Err(corrupt("row key too short"));
    }
    let at = i64::from_be_bytes(key[..8].try_into().expect("8 bytes"));
    let mut input = In::new(&key[8..]);
    let id = input.id()?;
    input.end()?;
    Ok((at, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_sixteen_bytes_when_they_can_be_and_read_back_the_same() {
        let ulid = crate::base::ids::new_id("key");
        for (id, len) in [
            (ulid.as_str(), 17),
            ("3f2b8c1e-9a4d-4e2f-8b1c-0d9e8f7a6b5c", 17),
            // Upper-case UUIDs and foreign prefixes keep their text.
            ("3F2B8C1E-9A4D-4E2F-8B1C-0D9E8F7A6B5C", 38),
            ("chatcmpl-abc", 14),
            ("key_not-a-ulid", 16),
            ("", 2),
        ] {
            let bytes = id_bytes(id);
            assert_eq!(bytes.len(), len, "{id}");
            let mut input = In::new(&bytes);
            assert_eq!(input.id().unwrap(), id);
            input.end().unwrap();
        }
        // A lower-case ULID is not canonical: kept as text.
        let lower = format!("key_{}", ulid::Ulid::generate().to_string().to_lowercase());
        assert_eq!(In::new(&id_bytes(&lower)).id().unwrap(), lower);
    }

    #[test]
    fn integers_round_trip_at_their_limits() {
        let mut out = Out(Vec::new());
        for v in [0, 1, 127, 128, u64::MAX] {
            out.u64(v);
        }
        for v in [0, -1, 1, i64::MIN, i64::MAX, 1_764_000_000_000] {
            out.i64(v);
        }
        let mut input = In::new(&out.0);
        for v in [0, 1, 127, 128, u64::MAX] {
            assert_eq!(input.u64().unwrap(), v);
        }
        for v in [0, -1, 1, i64::MIN, i64::MAX, 1_764_000_000_000] {
            assert_eq!(input.i64().unwrap(), v);
        }
        input.end().unwrap();
    }

    #[test]
    fn damaged_input_is_corrupt_not_a_panic() {
        let cases: [&[u8]; 6] = [
            &[],
            &[0x80],
            &[0xff; 11],
            &[ID_TEXT, 5, b'a'],
            &[ID_ULID + 200, 0, 0],
            &[ID_UUID, 1, 2],
        ];
        for bytes in cases {
            let mut input = In::new(bytes);
            assert!(
                matches!(input.id(), Err(StoreError::Corrupt(_))),
                "{bytes:?}"
            );
        }
        assert!(matches!(In::new(&[9]).bool(), Err(StoreError::Corrupt(_))));
        assert!(matches!(
            In::new(&[0xff, 0xff, 0xff, 0xff, 0x0f]).strs(),
            Err(StoreError::Corrupt(_))
        ));
        assert!(split_time_id_key(&[0; 4]).is_err());
    }
}
