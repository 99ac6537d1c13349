//! The n-gram layer: three small learned models over runs of characters,
//! which may raise a result, and may set aside a high or prohibited result
//! the rules found in the conversation alone when they read the request
//! as ordinary ([`Ngram::overrule`], twenty-fifth round).
//!
//! Three binary logistic regressions share one feature space: `risky`
//! (prohibited or high against the rest), `prohibited`, and `limited` (an
//! Article 50 case against a minimal one, twenty-seventh round). They are trained
//! by `tests/data/train_ngram.py` on the train part of the labelled set,
//! with 600 ordinary requests as extra negatives (fourteenth round), and
//! shipped as `assets/risk/ngram.tsv` (parsed once, when the classifier
//! loads). The features of each of a request's three texts (the declared
//! purpose, the instructions, the user turns; in the classifier's normal
//! form, [`super::text`]) are every run of 3, 4 and 5 characters of the
//! text with a space before and after, every word and every pair of
//! neighbouring words, each hashed (64-bit FNV-1a) into one of the model's
//! rows; a request's vector holds sqrt(count) per row, scaled by the
//! fourth root of the number of features.
//!
//! Why characters: a run of characters is shared by the inflections and
//! compounds of a word and by related words across languages, so the
//! model reads a practice in words no labelled case used. On two batches
//! written independently the rules and the stem-based lexical layer
//! caught 67 and 71 %; with this layer 79 and 79 %, with no more minimal
//! cases raised (docs/compliance.md, "The n-gram layer").
//!
//! Only a minimal or limited result in which the rules found a regulated
//! domain is read (trained on labelled cases alone, the models read
//! ordinary traffic as risky; with ordinary negatives, cross-validation
//! still found the gate worth keeping): it is raised
//! to high when p(risky) reaches its threshold, to prohibited when
//! p(prohibited) reaches its own too; a request whose match the rules set
//! aside for a framing only from the higher `framed` threshold, and never
//! one whose user has software built. A high result goes to prohibited
//! only when p(prohibited) reaches the `escalate` threshold. A minimal
//! result goes to limited when p(limited) reaches its threshold, in any
//! domain: the Article 50 duties are told in words of every trade (a
//! holiday let's host who answers guests, a council's waste line), which
//! no anchor list holds ([`Ngram::disclose`]).
//! The area named is the lexical layer's likeliest of that level (the
//! n-gram models know levels, not areas), and the raise is a grey zone a
//! judge may review, like the lexical layer's.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Source;
use super::text::Normalised;

/// The weights, generated from the train part (never edited by hand).
const ASSET: &str = include_str!("../../../assets/risk/ngram.tsv");

/// The models, in the order of a row's weights: `risky`, `prohibited`,
/// `limited`.
const MODELS: usize = 3;

/// A row's weights, one per model.
type Weights = [f32; MODELS];

/// The lengths of the character runs.
const RUNS: [usize; 3] = [3, 4, 5];

/// One model: its threshold and bias (the weights are in [`Ngram::rows`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Model {
    threshold: f64,
    bias: f64,
}

/// The thresholds of [`Ngram::overrule`]: the request's p(risky) under
/// `below`, and every sentence's, read alone, under `line`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Overrule {
    below: f64,
    line: f64,
}

/// The parsed models.
#[derive(Debug)]
pub(super) struct Ngram {
    /// Told apart from any other parsed weights: a text's kept
    /// [`Reading`] holds only for the models that made it.
    id: u64,
    risky: Model,
    prohibited: Model,
    /// From when a minimal result is raised to limited; `None` (no
    /// `limited` line): never.
    limited: Option<Model>,
    /// When a high or prohibited result that rests on the conversation
    /// alone is set aside ([`Ngram::overrule`]); `None` (no `overrule`
    /// line) overrules nothing.
    overrule: Option<Overrule>,
    /// The `risky` probability from which a request is raised although
    /// the rules set one of its matches aside for a framing (talk about
    /// the topic, a company, a negation, no person near); `None` (no
    /// `framed` line): such a request is never raised.
    framed: Option<f64>,
    /// The `prohibited` probability from which a high result is moved to
    /// prohibited; `None` (no `escalate` line): a high result stays.
    escalate: Option<f64>,
    /// Per row: the weight in `risky`, in `prohibited`, in `limited`.
    rows: Vec<Weights>,
    /// `rows.len() - 1` when that is a power of two: a hash's row is then
    /// its low bits, the same as the remainder, without a division.
    mask: Option<u64>,
}

/// What the models read in one text, kept with it (the long prompt a client
/// sends with every turn is read and summed once): its rows with their
/// counts, and per model the sum of weight · sqrt(count) over them.
///
/// A request's score is bias + scale · Σ w(row) · sqrt(n(row)), the counts
/// summed over its texts. With the longest text's sum kept, a request adds
/// only the rows of its other texts, each as the change it makes to its
/// row's term: w · (sqrt(n_kept + n) - sqrt(n_kept)), its weights read
/// with the text rather than from the table again.
#[derive(Debug, Clone)]
pub(super) struct Reading {
    /// The [`Ngram::id`] read with.
    model: u64,
    /// The rows met, counted, with a lookup of each row's count.
    counts: Counts,
    /// Each row's weights, in the order of `counts` (read from the table
    /// once).
    weights: Vec<Weights>,
    /// The number of features (the sum of the counts).
    total: u32,
    /// Σ w · sqrt(n) over the rows, per model, summed in the order first
    /// met.
    sums: [f64; MODELS],
}

impl Reading {
    /// Bytes held, for the cache of kept texts.
    pub(super) fn bytes(&self) -> usize {
        (8 + size_of::<Weights>()) * self.counts.order.len() + 4 * self.counts.slots.len()
    }
}

/// The next [`Ngram::id`].
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// What the models make of a request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scores {
    /// p(prohibited or high).
    pub risky: f64,
    /// p(prohibited).
    pub prohibited: f64,
    /// p(limited), of a request that is not prohibited or high.
    pub limited: f64,
}

const FNV_OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01B3;

/// FNV-1a of `kind` then `text`, as the training script hashes a feature.
fn fnv(kind: u8, text: &[&str]) -> u64 {
    let mut h = FNV_OFFSET;
    let mut eat = |byte: u8| h = (h ^ u64::from(byte)).wrapping_mul(FNV_PRIME);
    eat(kind);
    for part in text {
        part.bytes().for_each(&mut eat);
    }
    h
}

/// Rows counted in the order first met: an open-addressing table over the
/// rows (hashes already, so their low bits index it), sized once.
#[derive(Debug, Clone)]
struct Counts {
    order: Vec<(u32, u32)>,
    /// Index + 1 into `order` of each slot's row; 0 is empty.
    slots: Vec<u32>,
}

impl Counts {
    /// Room for `most` distinct rows at half load.
    fn with_room(most: usize) -> Counts {
        Counts {
            order: Vec::with_capacity(most.min(4096)),
            slots: vec![0; (2 * most).next_power_of_two().max(16)],
        }
    }

    fn add(&mut self, row: u32) {
        self.add_n(row, 1);
    }

    /// The table resized to the rows it holds (at half load), to be kept.
    fn shrunk(self) -> Counts {
        let mut kept = Counts {
            order: Vec::with_capacity(self.order.len()),
            slots: vec![0; (2 * self.order.len()).next_power_of_two().max(16)],
        };
        for (row, n) in self.order {
            kept.add_n(row, n);
        }
        kept
    }

    /// The count of `row`, 0 when not met.
    fn get(&self, row: u32) -> u32 {
        let mask = self.slots.len() - 1;
        let mut slot = (row as usize).wrapping_mul(0x9E37_79B9) & mask;
        loop {
            match self.slots[slot] {
                0 => return 0,
                i if self.order[i as usize - 1].0 == row => return self.order[i as usize - 1].1,
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    fn add_n(&mut self, row: u32, n: u32) {
        let mask = self.slots.len() - 1;
        let mut slot = (row as usize).wrapping_mul(0x9E37_79B9) & mask;
        loop {
            match self.slots[slot] {
                0 => {
                    self.order.push((row, n));
                    self.slots[slot] = self.order.len() as u32;
                    return;
                }
                i if self.order[i as usize - 1].0 == row => {
                    self.order[i as usize - 1].1 += n;
                    return;
                }
                _ => slot = (slot + 1) & mask,
            }
        }
    }
}

impl Ngram {
    pub(super) fn built_in() -> Ngram {
        let ngram = Ngram::parse(ASSET).expect("the built-in n-gram weights are valid");
        crate::base::memory::forget_embedded(ASSET);
        ngram
    }

    /// Parses the asset: `buckets N` first, `risky THRESHOLD BIAS`,
    /// `prohibited THRESHOLD BIAS`, optionally `overrule BELOW LINE`,
    /// `framed THRESHOLD`, `escalate THRESHOLD` and `limited THRESHOLD
    /// BIAS`, then `ROW RISKY PROHIBITED [LIMITED]` lines (a missing
    /// `limited` weight is 0), each written straight into the table (no
    /// copy of the asset's rows).
    pub(super) fn parse(text: &str) -> Result<Ngram, String> {
        let mut rows: Vec<Weights> = Vec::new();
        let mut models = [None, None, None];
        let mut overrule = None;
        let mut framed = None;
        let mut escalate = None;
        for (n, line) in text.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = || format!("ngram.tsv line {}: {line:?}", n + 1);
            let mut fields = line.split('\t');
            let kind = fields.next().unwrap_or_default();
            let mut number = || -> Result<f64, String> {
                fields.next().and_then(|f| f.parse().ok()).ok_or_else(bad)
            };
            match kind {
                "buckets" => rows = vec![[0.0; MODELS]; number()? as usize],
                "risky" | "prohibited" | "limited" => {
                    let model = Model {
                        threshold: number()?,
                        bias: number()?,
                    };
                    let at = match kind {
                        "risky" => 0,
                        "prohibited" => 1,
                        _ => 2,
                    };
                    models[at] = Some(model);
                }
                "overrule" => {
                    overrule = Some(Overrule {
                        below: number()?,
                        line: number()?,
                    })
                }
                "framed" => framed = Some(number()?),
                "escalate" => escalate = Some(number()?),
                row => {
                    let row: usize = row.parse().map_err(|_| bad())?;
                    let weights = [number()? as f32, number()? as f32, 0.0];
                    let weights = match fields.next() {
                        None => weights,
                        Some(limited) => {
                            let limited = limited.parse::<f32>().map_err(|_| bad())?;
                            if fields.next().is_some() {
                                return Err(bad());
                            }
                            [weights[0], weights[1], limited]
                        }
                    };
                    let buckets = rows.len();
                    *rows.get_mut(row).ok_or_else(|| {
                        format!(
                            "ngram.tsv: row {row} is not under {buckets} (`buckets` comes first)"
                        )
                    })? = weights;
                }
            }
        }
        if rows.is_empty() {
            return Err("ngram.tsv: no `buckets` line".into());
        }
        let [Some(risky), Some(prohibited), limited] = models else {
            return Err("ngram.tsv: a `risky` and a `prohibited` line are needed".into());
        };
        let mask = rows.len().is_power_of_two().then(|| rows.len() as u64 - 1);
        Ok(Ngram {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            risky,
            prohibited,
            limited,
            overrule,
            framed,
            escalate,
            rows,
            mask,
        })
    }

    /// The row of a hashed feature.
    fn row(&self, hash: u64) -> u32 {
        match self.mask {
            Some(mask) => (hash & mask) as u32,
            None => (hash % self.rows.len() as u64) as u32,
        }
    }

    /// What the models read in a text: kept with it when it was read by
    /// these models, else read now.
    fn reading<'a>(&self, normalised: &'a Normalised) -> Cow<'a, Reading> {
        let kept = normalised
            .derived
            .ngram
            .get_or_init(|| self.read(normalised));
        match kept.model == self.id {
            true => Cow::Borrowed(kept),
            false => Cow::Owned(self.read(normalised)),
        }
    }

    /// Reads a text: its rows, their total and their weighted sums.
    fn read(&self, normalised: &Normalised) -> Reading {
        let counts = self.text_rows(normalised);
        // A long text's table was sized for every feature it might have had
        // distinct; it is kept at the size of the rows it has.
        let fitting = (2 * counts.order.len()).next_power_of_two().max(16);
        let counts = match counts.slots.len() > 4 * fitting {
            true => counts.shrunk(),
            false => counts,
        };
        let mut sums = [0.0; MODELS];
        let mut total = 0;
        let weights: Vec<Weights> = counts
            .order
            .iter()
            .map(|&(row, _)| self.rows[row as usize])
            .collect();
        for (&(_, n), w) in counts.order.iter().zip(&weights) {
            total += n;
            if *w != [0.0; MODELS] {
                let v = f64::from(n).sqrt();
                for (sum, w) in sums.iter_mut().zip(w) {
                    *sum += f64::from(*w) * v;
                }
            }
        }
        Reading {
            model: self.id,
            counts,
            weights,
            total,
            sums,
        }
    }

    /// One text's rows with their counts, in the order first met.
    fn text_rows(&self, normalised: &Normalised) -> Counts {
        self.rows_of(&normalised.text, normalised.starts.len())
    }

    /// The rows of a text of `words` words joined by single spaces, with
    /// their counts, in the order first met.
    fn rows_of(&self, text: &str, words: usize) -> Counts {
        let text = text.trim_matches(' ');
        if text.is_empty() {
            return Counts::with_room(0);
        }
        // At most three runs a character and two features a word.
        let mut counts = Counts::with_room(3 * (text.len() + 2) + 2 * words);
        let mut padded = Vec::with_capacity(text.len() + 2);
        padded.push(b' ');
        padded.extend_from_slice(text.as_bytes());
        padded.push(b' ');
        // Each start's runs of 3, 4 and 5 characters share their hash's
        // first bytes: one FNV pass per start, a run ending where the next
        // character starts (a byte that is no UTF-8 continuation).
        let starts_char = |byte: u8| byte & 0xC0 != 0x80;
        let seed = fnv(b'c', &[]);
        for start in (0..padded.len()).filter(|&i| starts_char(padded[i])) {
            let mut h = seed;
            let mut chars = 0;
            for (i, &byte) in padded.iter().enumerate().skip(start) {
                h = (h ^ u64::from(byte)).wrapping_mul(FNV_PRIME);
                if padded.get(i + 1).is_none_or(|&next| starts_char(next)) {
                    chars += 1;
                    if chars >= RUNS[0] {
                        counts.add(self.row(h));
                    }
                    if chars == RUNS[2] {
                        break;
                    }
                }
            }
        }
        let mut previous: Option<&str> = None;
        for word in text.split(' ').filter(|w| !w.is_empty()) {
            counts.add(self.row(fnv(b'w', &[word])));
            if let Some(previous) = previous {
                counts.add(self.row(fnv(b'b', &[previous, " ", word])));
            }
            previous = Some(word);
        }
        counts
    }

    /// What the models make of a request's three texts, those
    /// `skip` marks left out. The longest text's sums are its kept
    /// [`Reading`]'s; the rows of the others change them row by row. The
    /// script sums in its own order; the sums differ in the last bits at
    /// most (the parity test holds them to 1e-5).
    pub(super) fn scores(&self, texts: &[(Source, Normalised); 3], skip: [bool; 3]) -> Scores {
        let read: Vec<Cow<Reading>> = texts
            .iter()
            .zip(skip)
            .filter(|(_, skip)| !skip)
            .map(|((_, text), _)| self.reading(text))
            .collect();
        let mut z = [
            self.risky.bias,
            self.prohibited.bias,
            self.limited.map_or(f64::NEG_INFINITY, |m| m.bias),
        ];
        let longest = (0..read.len()).max_by_key(|&i| (read[i].counts.order.len(), usize::MAX - i));
        if let Some(longest) = longest {
            // Each other text's rows in turn: a row's count so far is its
            // count in the texts already summed.
            let mut summed = vec![&*read[longest]];
            let mut sums = read[longest].sums;
            let mut total = read[longest].total;
            for (_, reading) in read.iter().enumerate().filter(|&(i, _)| i != longest) {
                total += reading.total;
                for (&(row, n), w) in reading.counts.order.iter().zip(&reading.weights) {
                    if *w != [0.0; MODELS] {
                        let had: u32 = summed.iter().map(|r| r.counts.get(row)).sum();
                        let change = f64::from(had + n).sqrt() - f64::from(had).sqrt();
                        for (sum, w) in sums.iter_mut().zip(w) {
                            *sum += f64::from(*w) * change;
                        }
                    }
                }
                summed.push(reading);
            }
            if total > 0 {
                let scale = 1.0 / f64::from(total).sqrt().sqrt();
                for (z, sum) in z.iter_mut().zip(sums) {
                    *z += sum * scale;
                }
            }
        }
        Scores {
            risky: sigmoid(z[0]),
            prohibited: sigmoid(z[1]),
            limited: sigmoid(z[2]),
        }
    }
}

/// The logistic function, clamped as the training script's.
fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z.clamp(-30.0, 30.0)).exp())
}

// The layer's decisions on a classification: raise, escalate, overrule.
#[path = "ngram_layer.rs"]
mod layer;
pub(super) use layer::{built, domain, stopped};

#[cfg(test)]
#[path = "ngram_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "ngram_limited_tests.rs"]
mod limited_tests;
