//! What was derived from a long text lately, kept for the next request
//! that sends the same text again.
//!
//! An agent or a deployed assistant sends the same system prompt with every
//! turn, thousands of words long, and the gateway reads every request's
//! text more than once (the risk classifier's scan and learned layers, the
//! PII detectors for the logged copy). What such a reading derives from a
//! text depends on that text alone, so it is kept here, keyed by the text
//! itself: a candidate is picked by a cheap fingerprint and then compared
//! whole, never trusted to a hash. Only long texts are kept (a short one
//! is read faster than it is copied), a few of them, within a bound on the
//! bytes held (counted when a text is added, by [`Weigh`]).

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;

/// Shorter texts are read every time.
pub const SHORTEST: usize = 2 * 1024;
/// Longer texts are read every time too: a text this size is rare, and one
/// would crowd out the rest.
pub const LONGEST: usize = 128 * 1024;

/// The bytes a kept value holds besides the text.
pub trait Weigh {
    fn bytes(&self) -> usize;
}

struct Entry<T> {
    raw: String,
    fingerprint: u64,
    value: T,
    used: u64,
}

impl<T: Weigh> Entry<T> {
    fn bytes(&self) -> usize {
        self.raw.len() + self.value.bytes()
    }
}

struct Kept<T> {
    entries: Vec<Entry<T>>,
    clock: u64,
}

/// The values derived from the long texts read lately: at most `entries`
/// of them, holding about `bytes` at most.
pub struct Recent<T> {
    kept: Mutex<Kept<T>>,
    entries: usize,
    bytes: usize,
}

/// A cheap fingerprint of a long text (its length, start and end): it
/// only picks the candidates, which are then compared whole.
pub fn fingerprint(raw: &str) -> u64 {
    let bytes = raw.as_bytes();
    let mut h = DefaultHasher::new();
    bytes.len().hash(&mut h);
    bytes[..bytes.len().min(128)].hash(&mut h);
    bytes[bytes.len().saturating_sub(128)..].hash(&mut h);
    h.finish()
}

impl<T: Clone + Weigh> Recent<T> {
    pub fn new(entries: usize, bytes: usize) -> Recent<T> {
        Recent {
            kept: Mutex::new(Kept {
                entries: Vec::new(),
                clock: 0,
            }),
            entries,
            bytes,
        }
    }

    /// Whether a text of this length is kept.
    pub fn keeps(raw: &str) -> bool {
        (SHORTEST..=LONGEST).contains(&raw.len())
    }

    /// The value derived from `raw` if it was kept, else `derive(raw)`,
    /// kept if `raw` is long enough.
    pub fn get(&self, raw: &str, derive: impl FnOnce(&str) -> T) -> T {
        if !Self::keeps(raw) {
            return derive(raw);
        }
        let fingerprint = fingerprint(raw);
        let same = |e: &Entry<T>| e.fingerprint == fingerprint && e.raw == raw;
        {
            let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            kept.clock += 1;
            let now = kept.clock;
            if let Some(entry) = kept.entries.iter_mut().find(|e| same(e)) {
                entry.used = now;
                return entry.value.clone();
            }
        }
        // Derived outside the lock: another request's hit waits for no one.
        let value = derive(raw);
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.entries.iter().any(same) {
            return value;
        }
        let entry = Entry {
            raw: raw.to_owned(),
            fingerprint,
            value: value.clone(),
            used: kept.clock,
        };
        let mut held = kept.entries.iter().map(Entry::bytes).sum::<usize>() + entry.bytes();
        while !kept.entries.is_empty() && (kept.entries.len() >= self.entries || held > self.bytes)
        {
            let oldest = (0..kept.entries.len())
                .min_by_key(|&i| kept.entries[i].used)
                .expect("an entry");
            held -= kept.entries.swap_remove(oldest).bytes();
        }
        kept.entries.push(entry);
        value
    }

    /// How many texts are kept.
    pub fn len(&self) -> usize {
        self.kept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entries
            .len()
    }

    /// Whether no text is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[derive(Clone, Debug, PartialEq)]
    struct Words(usize);
    impl Weigh for Words {
        fn bytes(&self) -> usize {
            8
        }
    }

    fn count(raw: &str) -> Words {
        Words(raw.split_whitespace().count())
    }

    #[test]
    fn a_long_text_is_derived_once_and_a_short_one_every_time() {
        let recent = Recent::new(4, 1 << 20);
        let long = "word ".repeat(1000);
        let derived = Cell::new(0);
        let counting = |raw: &str| {
            derived.set(derived.get() + 1);
            count(raw)
        };
        assert_eq!(recent.get(&long, counting), Words(1000));
        assert_eq!(recent.get(&long, counting), Words(1000));
        assert_eq!(derived.get(), 1);
        assert_eq!(recent.get("a few words", counting), Words(3));
        assert_eq!(recent.get("a few words", counting), Words(3));
        assert_eq!(derived.get(), 3);
        assert_eq!(recent.len(), 1);
    }

    #[test]
    fn a_text_with_the_same_fingerprint_is_derived_for_itself() {
        let recent = Recent::new(4, 1 << 20);
        let edge = "edge ".repeat(40);
        let a = format!("{edge}{}{edge}", "alpha ".repeat(400));
        let b = format!("{edge}{}{edge}", "gamma beta ".repeat(218) + "zz");
        assert_eq!(a.len(), b.len());
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_eq!(recent.get(&a, count), count(&a));
        assert_eq!(recent.get(&b, count), count(&b));
        assert_ne!(count(&a), count(&b));
        assert_eq!(recent.len(), 2);
    }

    #[test]
    fn the_least_recently_used_text_goes_first_and_the_bytes_are_bounded() {
        let recent = Recent::new(3, 1 << 20);
        let texts: Vec<String> = (0..4).map(|i| format!("{i} ").repeat(1500)).collect();
        for text in &texts[..3] {
            recent.get(text, count);
        }
        // The first is used again: the second is the least recent.
        recent.get(&texts[0], |_| panic!("kept"));
        recent.get(&texts[3], count);
        assert_eq!(recent.len(), 3);
        recent.get(&texts[0], |_| panic!("kept"));
        let derived = Cell::new(false);
        recent.get(&texts[1], |raw| {
            derived.set(true);
            count(raw)
        });
        assert!(derived.get(), "the least recent was kept");
        // A bound of bytes below two texts keeps one.
        let small = Recent::new(8, 4000);
        for text in &texts {
            small.get(text, count);
        }
        assert_eq!(small.len(), 1);
    }
}
