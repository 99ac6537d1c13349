//! Evaluation of the rules on a labelled set (the `dev.jsonl` format of the
//! EU AI Act taxonomy): one JSON object a line with `id`, `purpose`,
//! `messages`, `expected_level` and optionally `deployer_context` and
//! `expected_area`, `lang` (ISO 639-1), `family` (the phrasing family:
//! imperative, sysprompt, purpose, multiturn, agent, nearmiss...) and
//! `split` (`train` or `heldout`). Only the rules run, never a judge, so the figures say
//! what the rules alone catch.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Classifier, Grey, Level};

/// One labelled request.
#[derive(Debug, Deserialize)]
pub struct Case {
    pub id: String,
    #[serde(default)]
    pub purpose: Option<String>,
    #[serde(default)]
    pub deployer_context: Option<Value>,
    pub messages: Value,
    pub expected_level: Level,
    #[serde(default)]
    pub expected_area: Option<String>,
    #[serde(default)]
    pub lang: Option<String>,
    #[serde(default)]
    pub family: Option<String>,
    #[serde(default)]
    pub split: Option<String>,
}

/// Exact-level results for one slice of the cases (a language, a practice,
/// a phrasing family).
#[derive(Debug, Clone, Default)]
pub struct Slice {
    /// `confusion[expected][got]`, indexed lowest level first.
    pub confusion: [[usize; 4]; 4],
}

impl Slice {
    pub fn total(&self) -> usize {
        self.confusion.iter().flatten().sum()
    }

    /// Cases given exactly their expected level.
    pub fn correct(&self) -> usize {
        (0..4).map(|i| self.confusion[i][i]).sum()
    }

    pub fn rate(&self) -> f64 {
        ratio(self.correct(), self.total())
    }

    /// Prohibited and high cases at or above their level: (caught, total).
    pub fn caught(&self) -> (usize, usize) {
        let (high, prohibited) = (Level::High as usize, Level::Prohibited as usize);
        let row = |l: usize| self.confusion[l].iter().sum::<usize>();
        (
            self.confusion[high][high..].iter().sum::<usize>()
                + self.confusion[prohibited][prohibited],
            row(high) + row(prohibited),
        )
    }

    fn record(&mut self, expected: Level, got: Level) {
        self.confusion[expected as usize][got as usize] += 1;
    }

    fn to_json(&self) -> Value {
        let (caught, risky) = self.caught();
        json!({
            "cases": self.total(),
            "correct": self.correct(),
            "rate": self.rate(),
            "caught": caught,
            "prohibited_and_high": risky,
            "confusion": self.confusion,
        })
    }
}

/// One fold of a cross-validation: the cases with every term, and without
/// the terms that only they use.
#[derive(Debug, Clone, Default)]
pub struct Fold {
    pub all: Slice,
    pub left_out: Slice,
    /// How many terms were left out.
    pub terms: usize,
}

impl Fold {
    fn to_json(&self) -> Value {
        json!({
            "terms_left_out": self.terms,
            "all_terms": self.all.to_json(),
            "left_out": self.left_out.to_json(),
        })
    }
}

/// Cross-validation of hand-written rules (issue 26): a rule cannot be
/// retrained with a family left out, but the terms a family's cases alone
/// use can be left out, which is what the rules would lack had that family
/// never been written. A family whose cases still get their level without
/// its own terms is caught by terms written for the others: the rules
/// learned the practice there, not the sentences.
#[derive(Debug, Clone, Default)]
pub struct CrossValidation {
    /// Leave one phrasing family out.
    pub families: BTreeMap<String, Fold>,
    /// Leave one case out: each case without the terms no other case uses.
    pub cases: Fold,
}

impl CrossValidation {
    pub fn to_json(&self) -> Value {
        json!({
            "families": Value::Object(
                self.families.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()
            ),
            "cases": self.cases.to_json(),
        })
    }
}

/// Runs the cross-validation by phrasing family and by case. Only the
/// terms of the rules that fired on a case count as its terms (a term
/// found but unused cannot have taught the rules the case).
pub fn cross_validate(classifier: &Classifier, cases: &[Case]) -> CrossValidation {
    let n = classifier.term_count();
    let used: Vec<Vec<u32>> = cases
        .iter()
        .map(|c| {
            classifier.terms_used(
                c.purpose.as_deref(),
                c.deployer_context.as_ref(),
                &c.messages,
            )
        })
        .collect();
    let family = |c: &Case| c.family.clone().unwrap_or_else(|| "?".into());
    // How many cases use each term, over all and per family.
    let mut users = vec![0usize; n];
    let mut by_family: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (case, terms) in cases.iter().zip(&used) {
        let counts = by_family.entry(family(case)).or_insert_with(|| vec![0; n]);
        for &t in terms {
            users[t as usize] += 1;
            counts[t as usize] += 1;
        }
    }
    let level = |c: &Case, disabled: Option<&[bool]>| {
        let (p, d, m) = (
            c.purpose.as_deref(),
            c.deployer_context.as_ref(),
            &c.messages,
        );
        match disabled {
            None => classifier.classify(p, d, m).level,
            Some(disabled) => classifier.classify_without(p, d, m, disabled).level,
        }
    };
    let mut cv = CrossValidation::default();
    for (name, counts) in &by_family {
        let disabled: Vec<bool> = (0..n)
            .map(|t| counts[t] > 0 && counts[t] == users[t])
            .collect();
        let fold = cv.families.entry(name.clone()).or_default();
        fold.terms = disabled.iter().filter(|&&d| d).count();
        for case in cases.iter().filter(|c| &family(c) == name) {
            fold.all.record(case.expected_level, level(case, None));
            fold.left_out
                .record(case.expected_level, level(case, Some(&disabled)));
        }
    }
    let mut disabled = vec![false; n];
    for (case, terms) in cases.iter().zip(&used) {
        let own: Vec<usize> = terms
            .iter()
            .map(|&t| t as usize)
            .filter(|&t| users[t] == 1)
            .collect();
        own.iter().for_each(|&t| disabled[t] = true);
        cv.cases.terms += own.len();
        cv.cases.all.record(case.expected_level, level(case, None));
        cv.cases
            .left_out
            .record(case.expected_level, level(case, Some(&disabled)));
        own.iter().for_each(|&t| disabled[t] = false);
    }
    cv
}

/// Reads a JSONL text; blank lines are skipped, a bad line names its number.
pub fn parse_cases(text: &str) -> Result<Vec<Case>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// A case whose level the rules got wrong.
#[derive(Debug, Clone)]
pub struct Miss {
    pub id: String,
    pub expected: Level,
    pub got: Level,
    pub rules: Vec<String>,
}

/// The outcome over a set of cases.
#[derive(Debug, Clone)]
pub struct Report {
    /// `confusion[expected][got]`, indexed lowest level first.
    pub confusion: [[usize; 4]; 4],
    /// Prohibited and high cases at or above their expected level.
    pub caught: usize,
    pub risky: usize,
    /// Minimal cases classified above minimal.
    pub raised: usize,
    pub minimal: usize,
    /// Cases whose expected area is among the triggered rules.
    pub area_found: usize,
    pub with_area: usize,
    /// Cases a judge would see, per kind of grey zone (a case counts once
    /// per kind).
    pub content_only: usize,
    pub anchor_without_act: usize,
    pub overruled: usize,
    pub unknown_language: usize,
    pub misses: Vec<Miss>,
    /// Per `lang` (cases without one: `?`).
    pub languages: BTreeMap<String, Slice>,
    /// Per expected area (`minimal` for cases without one).
    pub practices: BTreeMap<String, Slice>,
    /// Per phrasing family (cases without one: `?`).
    pub families: BTreeMap<String, Slice>,
}

impl Report {
    pub fn total(&self) -> usize {
        self.confusion.iter().flatten().sum()
    }

    /// Exact level for the cases expected at `level`: (right, total).
    pub fn accuracy(&self, level: Level) -> (usize, usize) {
        let row = &self.confusion[level as usize];
        (row[level as usize], row.iter().sum())
    }

    pub fn catch_rate(&self) -> f64 {
        ratio(self.caught, self.risky)
    }

    pub fn false_raise_rate(&self) -> f64 {
        ratio(self.raised, self.minimal)
    }

    pub fn to_json(&self) -> Value {
        let levels: Vec<&str> = Level::ALL.iter().map(|l| l.as_str()).collect();
        let accuracy: serde_json::Map<String, Value> = Level::ALL
            .iter()
            .map(|&l| {
                let (right, total) = self.accuracy(l);
                (
                    l.as_str().to_owned(),
                    json!({ "correct": right, "total": total, "rate": ratio(right, total) }),
                )
            })
            .collect();
        json!({
            "cases": self.total(),
            "levels": levels,
            "confusion": self.confusion,
            "accuracy": accuracy,
            "catch_rate": self.catch_rate(),
            "caught": self.caught,
            "prohibited_and_high": self.risky,
            "false_raise_rate": self.false_raise_rate(),
            "raised": self.raised,
            "minimal": self.minimal,
            "area_found": self.area_found,
            "with_area": self.with_area,
            "grey": {
                "content_only": self.content_only,
                "anchor_without_act": self.anchor_without_act,
                "overruled": self.overruled,
                "unknown_language": self.unknown_language,
            },
            "languages": slices(&self.languages),
            "practices": slices(&self.practices),
            "families": slices(&self.families),
            "misses": self.misses.iter().map(|m| json!({
                "id": m.id,
                "expected": m.expected.as_str(),
                "got": m.got.as_str(),
                "rules": m.rules,
            })).collect::<Vec<_>>(),
        })
    }
}

fn slices(map: &BTreeMap<String, Slice>) -> Value {
    Value::Object(map.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// Classifies every case with the rules alone.
pub fn evaluate(classifier: &Classifier, cases: &[Case]) -> Report {
    let mut report = Report {
        confusion: [[0; 4]; 4],
        caught: 0,
        risky: 0,
        raised: 0,
        minimal: 0,
        area_found: 0,
        with_area: 0,
        content_only: 0,
        anchor_without_act: 0,
        overruled: 0,
        unknown_language: 0,
        misses: Vec::new(),
        languages: BTreeMap::new(),
        practices: BTreeMap::new(),
        families: BTreeMap::new(),
    };
    for case in cases {
        let c = classifier.classify(
            case.purpose.as_deref(),
            case.deployer_context.as_ref(),
            &case.messages,
        );
        let (expected, got) = (case.expected_level, c.level);
        report.confusion[expected as usize][got as usize] += 1;
        let unknown = || "?".to_owned();
        for (map, key) in [
            (
                &mut report.languages,
                case.lang.clone().unwrap_or_else(unknown),
            ),
            (
                &mut report.practices,
                case.expected_area
                    .clone()
                    .unwrap_or_else(|| "minimal".into()),
            ),
            (
                &mut report.families,
                case.family.clone().unwrap_or_else(unknown),
            ),
        ] {
            map.entry(key).or_default().confusion[expected as usize][got as usize] += 1;
        }
        if expected >= Level::High {
            report.risky += 1;
            report.caught += usize::from(got >= expected);
        }
        if expected == Level::Minimal {
            report.minimal += 1;
            report.raised += usize::from(got > Level::Minimal);
        }
        let has = |kind: fn(&Grey) -> bool| usize::from(c.grey.iter().any(kind));
        report.content_only += has(|g| matches!(g, Grey::ContentOnly { .. }));
        report.anchor_without_act += has(|g| matches!(g, Grey::AnchorWithoutAct { .. }));
        report.overruled += has(|g| matches!(g, Grey::Overruled { .. }));
        report.unknown_language += has(|g| matches!(g, Grey::UnknownLanguage));
        let rules = c.triggered_rules();
        if let Some(area) = &case.expected_area {
            report.with_area += 1;
            report.area_found += usize::from(rules.contains(area));
        }
        if got != expected {
            report.misses.push(Miss {
                id: case.id.clone(),
                expected,
                got,
                rules,
            });
        }
    }
    report
}

/// What the n-gram layer sees of each case, for its cross-validation in
/// `tests/data/train_ngram.py --cv` (the models are retrained per fold
/// there; the rules and the lexical layer are this build's): the level
/// before the layer, whether the rules found a domain, whether they set a
/// match aside for a reason that stops the layer, and which texts the
/// layer does not read. One JSON object per case.
pub fn ngram_facts(classifier: &Classifier, cases: &[Case]) -> Vec<Value> {
    cases
        .iter()
        .map(|case| {
            let (p, d, m) = (
                case.purpose.as_deref(),
                case.deployer_context.as_ref(),
                &case.messages,
            );
            let c = classifier.classify(p, d, m);
            let scanned = classifier.scan_request(p, d, m, None);
            let skip = super::exceptions::unread(&scanned);
            let before = c
                .hits
                .iter()
                .filter(|h| !h.rule.starts_with("ngram:"))
                .map(|h| h.level)
                .max()
                .unwrap_or(Level::Minimal);
            let rules = c
                .hits
                .iter()
                .filter(|h| !h.rule.starts_with("ngram:") && !h.rule.starts_with("lexical:"))
                .map(|h| h.level)
                .max()
                .unwrap_or(Level::Minimal);
            json!({
                "id": case.id,
                "before": before.as_str(),
                "rules": rules.as_str(),
                "aside": c.set_aside.iter().map(|s| s.rule.as_str()).collect::<Vec<_>>(),
                "aside_why": c.set_aside.iter().map(|s| s.why.as_str()).collect::<Vec<_>>(),
                "domain": super::ngram::domain(&c),
                "stopped": super::ngram::stopped(&c),
                "built": super::ngram::built(&c),
                "skip": skip,
                "held": super::article50::held_back(&scanned, &classifier.compiled.rules, skip),
            })
        })
        .collect()
}
