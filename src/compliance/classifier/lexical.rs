//! The lexical layer: a small learned model beside the rules, which may
//! raise a rule result and never lowers one.
//!
//! A multinomial logistic regression over the areas of the taxonomy and
//! `minimal`, trained by `tests/data/train_lexical.py` on the train part of
//! the labelled set and shipped as `assets/risk/lexical.tsv` (parsed once,
//! when the classifier loads). Its features are what the rules already read,
//! in the classifier's normal form ([`super::text`]): the words of three
//! letters or more of the declared purpose and the end user's turns cut to
//! a fixed prefix (a crude stem that works the same in eight languages),
//! and pairs of neighbouring stems; the system and developer instructions
//! give the same features in their own namespace (`s:`), and none at all
//! when they are a software tool's own prompt. A request's features are
//! binary, scaled to unit length (a very short text to less than that).
//!
//! The model raises a minimal or limited result to a level only when the
//! probabilities of the areas at or above that level (for limited: of the
//! Article 50 areas) add up to the threshold, to the likeliest area of that
//! level, unless the rules set that area's match aside (no person, a
//! company, talk about the topic, a negation); the hit is named
//! `lexical:<area>` and shows the probability and the features that
//! weighed most, so that an auditor can see why. The Python script
//! computes the same features; a test checks that the checked-in asset is
//! what the script writes.

use super::text::Normalised;
use super::{Classification, Grey, Hit, Level, Source};

/// The weights, generated from the train part (never edited by hand).
const ASSET: &str = include_str!("../../../assets/risk/lexical.tsv");

/// A feature found in a request: its row in the model and where it was.
#[derive(Debug, Clone, Copy)]
struct Found {
    feature: u32,
    source: Source,
}

/// The parsed model.
#[derive(Debug)]
pub(super) struct Lexical {
    /// Letters kept of a word.
    stem: usize,
    /// A request's vector is scaled by 1/sqrt(max(features, this)): a very
    /// short text is less evidence, not a surer one.
    norm_floor: usize,
    /// The probability a level needs before the model raises to it.
    threshold: f64,
    /// Each class: the area id (or `minimal`), its level and its bias.
    classes: Vec<(String, Level, f64)>,
    /// Feature text → row of `features`.
    index: Index,
    /// The features' texts and weights.
    features: Features,
}

/// The features' texts and non-zero weights, flat: about 39,000 features
/// with 390,000 weights take 2 MB this way, against about 12 MB as a
/// `String` and a `Vec` of their own per feature (measured with heaptrack;
/// docs/benchmarks.md, "The lexical model's table, flat").
#[derive(Debug, Default)]
struct Features {
    /// Every feature's text, one after the other.
    text: String,
    /// Where each feature's text ends in `text`.
    text_ends: Vec<u32>,
    /// Every feature's weights: (class, weight in thousandths).
    pairs: Vec<(u16, i16)>,
    /// Where each feature's weights end in `pairs`.
    pair_ends: Vec<u32>,
}

impl Features {
    fn len(&self) -> usize {
        self.text_ends.len()
    }

    /// The range of row `row` in a table of ends.
    fn span(ends: &[u32], row: usize) -> std::ops::Range<usize> {
        let start = match row {
            0 => 0,
            _ => ends[row - 1] as usize,
        };
        start..ends[row] as usize
    }

    fn name(&self, row: usize) -> &str {
        &self.text[Features::span(&self.text_ends, row)]
    }

    /// Row `row`'s weights: (class, weight). A weight is its thousandths
    /// divided by 1,000, which is the same `f64` as the asset's decimal
    /// parsed (both are the nearest to the same number; `push` checks it).
    fn weights(&self, row: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.pairs[Features::span(&self.pair_ends, row)]
            .iter()
            .map(|&(class, milli)| (usize::from(class), f64::from(milli) / 1000.0))
    }

    /// Adds a feature: its text and its `class:weight` pairs, each weight
    /// with at most three decimals.
    fn push(&mut self, name: &str, pairs: &str, classes: usize) -> Result<(), String> {
        for pair in pairs.split(' ') {
            let bad = || format!("bad weight {pair:?}");
            let (class, weight) = pair.split_once(':').ok_or_else(bad)?;
            let class: u16 = class.parse().map_err(|_| bad())?;
            if usize::from(class) >= classes {
                return Err("class out of range".to_owned());
            }
            let weight: f64 = weight.parse().map_err(|_| bad())?;
            let milli = (weight * 1000.0).round();
            if !(f64::from(i16::MIN)..=f64::from(i16::MAX)).contains(&milli)
                || milli / 1000.0 != weight
            {
                return Err(format!(
                    "weight {pair:?}: more than three decimals or too large"
                ));
            }
            self.pairs.push((class, milli as i16));
        }
        self.text.push_str(name);
        self.text_ends.push(self.text.len() as u32);
        self.pair_ends.push(self.pairs.len() as u32);
        Ok(())
    }

    /// Gives back the room the vectors grew into while parsing.
    fn shrink(&mut self) {
        self.text.shrink_to_fit();
        self.text_ends.shrink_to_fit();
        self.pairs.shrink_to_fit();
        self.pair_ends.shrink_to_fit();
    }
}

/// Feature texts → rows: an open-addressing table keyed by a hash made
/// from each stem's own hash, so that a request's words are hashed once
/// each and no feature text is built to look it up.
#[derive(Debug, Default)]
struct Index {
    /// Row + 1 of the feature in each slot; 0 is empty.
    slots: Vec<u32>,
}

/// The prefix of the instructions' features.
const INSTRUCTIONS: &str = "s:";

/// A feature as its pieces: the namespace, a stem and maybe the next stem,
/// each stem with its [`stem_hash`].
#[derive(Clone, Copy)]
struct Key<'a> {
    instructions: bool,
    first: (&'a str, u64),
    second: Option<(&'a str, u64)>,
}

impl Key<'_> {
    fn hash(&self) -> u64 {
        let mut h = self.first.1 ^ u64::from(self.instructions);
        if let Some((_, second)) = self.second {
            h = h.rotate_left(29) ^ second;
        }
        h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^ (h >> 29)
    }

    /// Whether `name` is this feature's text.
    fn spells(&self, name: &str) -> bool {
        let name = match self.instructions {
            true => match name.strip_prefix(INSTRUCTIONS) {
                Some(rest) => rest,
                None => return false,
            },
            false => name,
        };
        match (name.split_once(' '), self.second) {
            (None, None) => name == self.first.0,
            (Some((a, b)), Some((second, _))) => a == self.first.0 && b == second,
            _ => false,
        }
    }
}

/// FNV-1a over a stem's bytes.
fn stem_hash(stem: &str) -> u64 {
    stem.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Index {
    fn new(features: &Features) -> Index {
        let size = (features.len() * 2).next_power_of_two().max(2);
        let mut slots = vec![0u32; size];
        for row in 0..features.len() {
            let name = features.name(row);
            let (instructions, text) = match name.strip_prefix(INSTRUCTIONS) {
                Some(rest) => (true, rest),
                None => (false, name),
            };
            let (first, second) = match text.split_once(' ') {
                Some((a, b)) => (a, Some((b, stem_hash(b)))),
                None => (text, None),
            };
            let key = Key {
                instructions,
                first: (first, stem_hash(first)),
                second,
            };
            let mut at = key.hash() as usize & (size - 1);
            while slots[at] != 0 {
                at = (at + 1) & (size - 1);
            }
            slots[at] = row as u32 + 1;
        }
        Index { slots }
    }

    /// The row of the feature `key`, if the model has it.
    fn get(&self, features: &Features, key: Key) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut at = key.hash() as usize & mask;
        loop {
            let row = self.slots[at].checked_sub(1)?;
            if key.spells(features.name(row as usize)) {
                return Some(row);
            }
            at = (at + 1) & mask;
        }
    }
}

/// The features that weigh most towards the area shown in an explanation.
const TOP_FEATURES: usize = 5;

impl Lexical {
    /// The built-in model (its validity is checked by a unit test).
    pub(super) fn built_in() -> Lexical {
        let lexical = Lexical::parse(ASSET).expect("the built-in lexical model is valid");
        crate::base::memory::forget_embedded(ASSET);
        lexical
    }

    /// Parses the asset format: `stem`, `norm_floor`, `threshold`, one
    /// `class` line per class in index order (area, level, bias), one `f`
    /// line per feature (its text, then `class:weight` pairs).
    pub(super) fn parse(text: &str) -> Result<Lexical, String> {
        let mut model = Lexical {
            stem: 0,
            norm_floor: 1,
            threshold: 1.0,
            classes: Vec::new(),
            index: Index::default(),
            features: Features::default(),
        };
        for (n, line) in text.lines().enumerate() {
            let bad = |what: &str| format!("lexical model line {}: {what}", n + 1);
            let fields: Vec<&str> = line.split('\t').collect();
            match fields.as_slice() {
                [] | [""] => {}
                [first, ..] if first.starts_with('#') => {}
                ["stem", v] => model.stem = v.parse().map_err(|_| bad("bad stem"))?,
                ["norm_floor", v] => {
                    model.norm_floor = v.parse().map_err(|_| bad("bad norm_floor"))?
                }
                ["threshold", v] => {
                    model.threshold = v.parse().map_err(|_| bad("bad threshold"))?
                }
                ["class", area, level, bias] => model.classes.push((
                    (*area).to_owned(),
                    level.parse().map_err(|e: String| bad(&e))?,
                    bias.parse().map_err(|_| bad("bad bias"))?,
                )),
                ["f", feature, weights] => model
                    .features
                    .push(feature, weights, model.classes.len())
                    .map_err(|e| bad(&e))?,
                _ => return Err(bad("unknown line")),
            }
        }
        if model.stem == 0 || model.classes.is_empty() {
            return Err("lexical model: no stem or no class".to_owned());
        }
        model.features.shrink();
        model.index = Index::new(&model.features);
        Ok(model)
    }

    /// How many features the model has.
    #[cfg(test)]
    pub(super) fn features(&self) -> usize {
        self.features.len()
    }

    /// The features of a request's three texts (purpose, instructions,
    /// user turns), each once, where first found; `skip` leaves texts out:
    /// a tool's own prompt, and a text framed as a use that decides nothing
    /// (fiction, research, talk about the Act, a decision already taken),
    /// of which the model has no sense. Each word is hashed once; no key is
    /// built.
    fn found(&self, texts: &[(Source, Normalised); 3], skip: [bool; 3]) -> Vec<Found> {
        let mut found: Vec<Found> = Vec::new();
        for ((source, text), skip) in texts.iter().zip(skip) {
            if skip {
                continue;
            }
            // Each text's features are found once (and kept with a repeated
            // text), each once and sorted: the texts' lists, in order, then
            // sorted stably keep each feature where it was first found.
            let features = text
                .derived
                .lexical
                .get_or_init(|| self.text_features(text, *source == Source::Instructions));
            found.extend(features.iter().map(|&feature| Found {
                feature,
                source: *source,
            }));
        }
        // Each feature once, where it was first found (a stable sort: the
        // lists are sorted runs already).
        found.sort_by_key(|f| f.feature);
        found.dedup_by_key(|f| f.feature);
        found
    }

    /// One text's features, each once, sorted.
    fn text_features(&self, text: &Normalised, instructions: bool) -> Vec<u32> {
        let mut found: Vec<u32> = Vec::new();
        let mut previous: Option<(&str, u64)> = None;
        for word in text.text.split(' ') {
            if word.chars().nth(2).is_none() || !word.chars().any(char::is_alphabetic) {
                continue;
            }
            let stem = match word.char_indices().nth(self.stem) {
                Some((end, _)) => &word[..end],
                None => word,
            };
            let stem = (stem, stem_hash(stem));
            let mut push = |second: Option<(&str, u64)>, first: (&str, u64)| {
                let key = Key {
                    instructions,
                    first,
                    second,
                };
                if let Some(feature) = self.index.get(&self.features, key) {
                    found.push(feature);
                }
            };
            push(None, stem);
            if let Some(previous) = previous {
                push(Some(stem), previous);
            }
            previous = Some(stem);
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The class probabilities for a set of features.
    fn probabilities(&self, found: &[Found]) -> Vec<f64> {
        let scale = if found.is_empty() {
            0.0
        } else {
            1.0 / (found.len().max(self.norm_floor) as f64).sqrt()
        };
        let mut z: Vec<f64> = self.classes.iter().map(|c| c.2).collect();
        for f in found {
            for (class, weight) in self.features.weights(f.feature as usize) {
                z[class] += weight * scale;
            }
        }
        let max = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut sum = 0.0;
        for v in &mut z {
            *v = (*v - max).exp();
            sum += *v;
        }
        z.iter_mut().for_each(|v| *v /= sum);
        z
    }

    /// Raises `c` when the model reads a higher level than the rules. Only
    /// a minimal or limited result: a high one is never moved to
    /// prohibited, which turns on conditions the rules spell out (the
    /// workplace, real time, law enforcement). Never to an area whose rule
    /// the rules set aside for a reason the model has no sense of (no
    /// person, a company, talk about the topic, fiction, a negation); a
    /// missing object of the rule is a vocabulary gap, which it may fill.
    /// The raise is a grey zone, so a judge may review it.
    pub(super) fn raise(
        &self,
        c: &mut Classification,
        texts: &[(Source, Normalised); 3],
        skip: [bool; 3],
    ) {
        if c.level >= Level::High {
            return;
        }
        let Some((area, hit)) = self.read(texts, skip) else {
            return;
        };
        let set_aside = c
            .set_aside
            .iter()
            .any(|s| s.rule == area && !s.lacked_only_object());
        if hit.level <= c.level || set_aside {
            return;
        }
        c.level = hit.level;
        c.grey.push(Grey::ContentOnly {
            rule: hit.rule.clone(),
        });
        c.hits.insert(0, hit);
    }

    /// The model's reading of a request: the area and its hit when it is
    /// sure enough of a level above minimal (the likeliest area of the
    /// highest such level), None otherwise.
    pub(super) fn read(
        &self,
        texts: &[(Source, Normalised); 3],
        skip: [bool; 3],
    ) -> Option<(&str, Hit)> {
        let found = self.found(texts, skip);
        if found.is_empty() {
            return None;
        }
        let p = self.probabilities(&found);
        for level in [Level::Prohibited, Level::High, Level::Limited] {
            // Article 50 is no lesser high risk: limited counts its own
            // areas only.
            let at_or_above: f64 = (0..p.len())
                .filter(|&c| match level {
                    Level::Limited => self.classes[c].1 == level,
                    _ => self.classes[c].1 >= level,
                })
                .map(|c| p[c])
                .sum();
            if at_or_above < self.threshold {
                continue;
            }
            let Some(best) = (0..p.len())
                .filter(|&c| self.classes[c].1 == level)
                .max_by(|&a, &b| p[a].total_cmp(&p[b]))
            else {
                continue;
            };
            return Some((
                self.classes[best].0.as_str(),
                self.hit(best, level, at_or_above, &found),
            ));
        }
        None
    }

    /// The likeliest area of `level` as the model reads a request (from
    /// its biases alone when no feature is known): the area the n-gram
    /// layer names when it raises to that level.
    pub(super) fn likeliest(
        &self,
        texts: &[(Source, Normalised); 3],
        skip: [bool; 3],
        level: Level,
    ) -> Option<String> {
        let p = self.probabilities(&self.found(texts, skip));
        (0..p.len())
            .filter(|&c| self.classes[c].1 == level)
            .max_by(|&a, &b| p[a].total_cmp(&p[b]))
            .map(|best| self.classes[best].0.clone())
    }

    /// The hit for class `best`, with the features that weigh most towards
    /// it as evidence.
    fn hit(&self, best: usize, level: Level, probability: f64, found: &[Found]) -> Hit {
        let weight_of = |f: &Found| {
            self.features
                .weights(f.feature as usize)
                .find(|&(c, _)| c == best)
                .map_or(0.0, |(_, w)| w)
        };
        let mut top: Vec<(f64, &Found)> = found
            .iter()
            .map(|f| (weight_of(f), f))
            .filter(|(w, _)| *w > 0.0)
            .collect();
        top.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.feature.cmp(&b.1.feature)));
        top.truncate(TOP_FEATURES);
        let source = top.first().map_or(Source::Content, |(_, f)| f.source);
        let features: Vec<String> = top
            .iter()
            .map(|(w, f)| format!("\"{}\" {w:+.2}", self.features.name(f.feature as usize)))
            .collect();
        let area = &self.classes[best].0;
        Hit {
            rule: format!("lexical:{area}"),
            level,
            summary: format!(
                "{area}, as the learned lexical model reads the words (a second signal beside the rules: it can raise a result, never lower one)"
            ),
            source,
            evidence: format!(
                "p({level} or above) = {probability:.2} (threshold {:.2}); strongest features: {}",
                self.threshold,
                features.join(", ")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::text::normalise;
    use super::*;
    use crate::compliance::Classifier;

    /// A two-class model: "s:reject" (in instructions) and "screen cand"
    /// (a pair of stems) point to recruitment.
    const TINY: &str = "stem\t6\nnorm_floor\t1\nthreshold\t0.9\n\
        class\tannex3_4a_recruitment\thigh\t0\nclass\tminimal\tminimal\t0\n\
        f\ts:reject\t0:9\nf\tscreen candid\t0:9\nf\tscreen\t1:1\n";

    fn texts(purpose: &str, instructions: &str, user: &str) -> [(Source, Normalised); 3] {
        [
            (Source::Purpose, normalise(purpose)),
            (Source::Instructions, normalise(instructions)),
            (Source::Content, normalise(user)),
        ]
    }

    #[test]
    fn the_built_in_model_parses_and_its_areas_are_rule_ids() {
        let model = Lexical::built_in();
        assert!(model.features() > 1000, "{} features", model.features());
        let rules: Vec<String> = Classifier::built_in()
            .rule_ids()
            .map(str::to_owned)
            .collect();
        for (area, level, _) in &model.classes {
            match level {
                Level::Minimal => assert_eq!(area, "minimal"),
                _ => assert!(rules.contains(area), "{area} is no rule id"),
            }
        }
        for level in Level::ALL {
            assert!(
                model.classes.iter().any(|c| c.1 == level),
                "no {level} class"
            );
        }
    }

    #[test]
    fn a_bad_line_is_an_error_naming_it() {
        let err = Lexical::parse("stem\t6\nclass\tminimal\tminimal\t0\nf\tx\t7:1\n").unwrap_err();
        assert!(err.contains("line 3"), "{err}");
        assert!(
            Lexical::parse("stem\tsix\n")
                .unwrap_err()
                .contains("line 1")
        );
        assert!(Lexical::parse("# nothing\n").is_err());
        // The weights are kept in thousandths: a fourth decimal, or a
        // weight beyond what thousandths in 16 bits hold, is refused.
        for weights in ["0:0.0005", "0:40", "0:x"] {
            let text = format!("stem\t6\nclass\tminimal\tminimal\t0\nf\tx\t{weights}\n");
            let err = Lexical::parse(&text).unwrap_err();
            assert!(err.contains("line 3"), "{weights}: {err}");
        }
    }

    #[test]
    fn weights_read_back_as_the_decimals_parsed() {
        let text = "stem\t6\nclass\tminimal\tminimal\t0\nclass\ta\thigh\t0\n\
                    f\tfirst\t0:-0.079 1:0.531\nf\tnext word\t1:-32.5\n";
        let model = Lexical::parse(text).unwrap();
        assert_eq!(model.features.len(), 2);
        assert_eq!(model.features.name(0), "first");
        assert_eq!(model.features.name(1), "next word");
        let first: Vec<(usize, f64)> = model.features.weights(0).collect();
        assert_eq!(
            first,
            ["-0.079", "0.531"]
                .map(|w| w.parse::<f64>().unwrap())
                .into_iter()
                .enumerate()
                .collect::<Vec<_>>()
        );
        assert_eq!(model.features.weights(1).collect::<Vec<_>>(), [(1, -32.5)]);
    }

    #[test]
    fn it_raises_above_its_threshold_with_its_strongest_features_and_stems_words() {
        let model = Lexical::parse(TINY).unwrap();
        let (area, hit) = model
            .read(&texts("", "", "Screening candidates, please"), [false; 3])
            .expect("a hit");
        assert_eq!(area, "annex3_4a_recruitment");
        assert_eq!(hit.rule, "lexical:annex3_4a_recruitment");
        assert_eq!(hit.level, Level::High);
        assert_eq!(hit.source, Source::Content);
        assert!(
            hit.evidence.contains("\"screen candid\" +9.00"),
            "{}",
            hit.evidence
        );
        // One word alone points the other way: no hit.
        assert!(model.read(&texts("", "", "screen"), [false; 3]).is_none());
    }

    #[test]
    fn a_tool_prompt_gives_no_features_and_instructions_have_their_own() {
        let model = Lexical::parse(TINY).unwrap();
        let deployer = texts("", "Reject the weak ones.", "next");
        assert!(model.read(&deployer, [false; 3]).is_some());
        assert!(model.read(&deployer, [false, true, false]).is_none());
        // "reject" in the user's turn is not the instructions' feature.
        assert!(model.read(&texts("", "", "reject"), [false; 3]).is_none());
    }

    #[test]
    fn the_layer_raises_a_rule_result_and_names_itself() {
        // No rule reads this request (a fresh9 case) as exploiting the
        // vulnerability of people with dementia; the learned layer does
        // (when a rule comes to catch it, choose another text the rules
        // miss).
        let c = Classifier::built_in().classify(
            None,
            None,
            &serde_json::json!([{ "role": "user", "content": "Our collections team wants a call script aimed at customers flagged with early dementia, since they're less likely to notice the extra fees." }]),
        );
        assert_eq!(c.level, Level::Prohibited);
        let first = &c.hits[0];
        assert_eq!(first.rule, "lexical:art5_1_b_vulnerability_exploitation");
        assert!(
            first.evidence.contains("strongest features"),
            "{}",
            first.evidence
        );
        assert_eq!(c.triggered_rules(), std::slice::from_ref(&first.rule));
        assert!(c.grey.contains(&Grey::ContentOnly {
            rule: first.rule.clone()
        }));
    }

    #[test]
    fn it_raises_minimal_but_never_moves_a_high_rule_result_to_prohibited() {
        // A model sure that any "emotion" is Article 5(1)(f).
        let mut classifier = Classifier::built_in();
        classifier.lexical = Lexical::parse(
            "stem\t6\nnorm_floor\t1\nthreshold\t0.9\n\
             class\tart5_1_f_emotion_workplace_education\tprohibited\t0\n\
             class\tminimal\tminimal\t0\nf\temotio\t0:20\n",
        )
        .unwrap();
        let classify = |text: &str| {
            classifier.classify(
                None,
                None,
                &serde_json::json!([{ "role": "user", "content": text }]),
            )
        };
        // The rules read emotion recognition (high), no workplace: high.
        let high = classify("Recognise customers' emotions from their voice in support calls.");
        assert_eq!(high.level, Level::High);
        assert!(high.hits.iter().all(|h| !h.rule.starts_with("lexical:")));
        // Nothing for the rules: the model raises it.
        let raised = classify("Sort the list of emotions alphabetically.");
        assert_eq!(raised.level, Level::Prohibited);
        assert_eq!(
            raised.hits[0].rule,
            "lexical:art5_1_f_emotion_workplace_education"
        );
        // Fiction decides nothing about a person: the model does not read it
        // (thirteenth round).
        assert_eq!(classify("A poem about emotions.").level, Level::Minimal);
    }
}
