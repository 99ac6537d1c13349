//! `tollgate risk`: the risk rules tried on one request or measured on a
//! labelled file, without a server.

use std::path::Path;

use serde_json::json;

use super::{ClassifyArgs, Failure, RiskCommand};
use crate::compliance::classifier::eval::{self, CrossValidation, Report};
use crate::compliance::{Classification, Classifier, Grey, Level};

pub fn run(classifier: &Classifier, command: &RiskCommand) -> Result<(), Failure> {
    match command {
        RiskCommand::Eval {
            file,
            split,
            cross_validate,
            json,
        } => evaluate_file(classifier, file, split.as_deref(), *cross_validate, *json),
        RiskCommand::Classify(args) => {
            classify(classifier, args);
            Ok(())
        }
    }
}

/// `classify` and `risk classify`: one request's classification.
pub fn classify(classifier: &Classifier, args: &ClassifyArgs) {
    classify_one(
        classifier,
        args.purpose.as_deref(),
        args.system.as_deref(),
        &args.text,
        args.explain,
        args.json,
    );
}

/// `risk eval`: the rules measured on a labelled file (one split of it
/// when asked), with cross-validation when asked.
fn evaluate_file(
    classifier: &Classifier,
    file: &Path,
    split: Option<&str>,
    cross_validate: bool,
    json: bool,
) -> Result<(), Failure> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
    let mut cases =
        eval::parse_cases(&text).map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
    if let Some(split) = split {
        cases.retain(|c| c.split.as_deref() == Some(split));
    }
    let report = eval::evaluate(classifier, &cases);
    let cv = cross_validate.then(|| eval::cross_validate(classifier, &cases));
    if json {
        let mut out = report.to_json();
        if let Some(cv) = &cv {
            out["cross_validation"] = cv.to_json();
        }
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        print_report(&report);
        if let Some(cv) = &cv {
            print_cross_validation(cv);
        }
    }
    Ok(())
}

/// One request's classification, printed.
fn classify_one(
    classifier: &Classifier,
    purpose: Option<&str>,
    system: Option<&str>,
    text: &str,
    explain: bool,
    json: bool,
) {
    let mut messages = Vec::new();
    if let Some(system) = system {
        messages.push(json!({ "role": "system", "content": system }));
    }
    messages.push(json!({ "role": "user", "content": text }));
    let c = classifier.classify(purpose, None, &json!(messages));
    let grey: Vec<String> = c.grey.iter().map(describe).collect();
    if json {
        let mut view = c.view();
        view["grey"] = json!(grey);
        if explain {
            view["explanation"] = c.explanation();
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&view).unwrap_or_default()
        );
    } else {
        print_classification(&c, &grey, explain);
    }
}

fn print_classification(c: &Classification, grey: &[String], explain: bool) {
    println!("level: {}", c.level);
    println!("reason: {}", c.reason());
    for hit in &c.hits {
        println!(
            "  {} ({}, from {})",
            hit.rule,
            hit.level,
            hit.source.as_str()
        );
        if explain {
            println!("      matched: {}", hit.evidence);
            println!("      means: {}", hit.summary);
        }
    }
    if explain {
        for s in &c.set_aside {
            println!(
                "  set aside: {} in {}: {}",
                s.rule,
                s.source.as_str(),
                s.why
            );
        }
    }
    for g in grey {
        println!("  for a judge: {g}");
    }
}

fn describe(grey: &Grey) -> String {
    match grey {
        Grey::ContentOnly { rule } => format!("content only: {rule}"),
        Grey::AnchorWithoutAct { rule } => format!("anchor without act: {rule}"),
        Grey::Overruled { rule } => format!("overruled by the n-gram model: {rule}"),
        Grey::UnknownLanguage => "unknown language".to_owned(),
    }
}

fn pct(r: f64) -> String {
    format!("{:.1} %", r * 100.0)
}

fn print_report(report: &Report) {
    println!(
        "{} cases, rules and the learned layers, no judge",
        report.total()
    );
    print_levels(report);
    print_rates(report);
    print_slices(report);
    if !report.misses.is_empty() {
        println!();
        println!("misses (id, expected, got, rules):");
        for m in &report.misses {
            println!(
                "  {:<12} {:<11} {:<11} {}",
                m.id,
                m.expected.as_str(),
                m.got.as_str(),
                m.rules.join(", ")
            );
        }
    }
}

/// Accuracy per expected level, then the confusion matrix.
fn print_levels(report: &Report) {
    println!();
    println!("accuracy per expected level (exact level):");
    for level in Level::ALL.iter().rev() {
        let (right, total) = report.accuracy(*level);
        let rate = if total == 0 {
            1.0
        } else {
            right as f64 / total as f64
        };
        println!(
            "  {:<11} {right:>3} / {total:<3} {}",
            level.as_str(),
            pct(rate)
        );
    }
    println!();
    println!("confusion (rows expected, columns got):");
    println!(
        "  {:<11} {:>10} {:>10} {:>10} {:>10}",
        "", "prohibited", "high", "limited", "minimal"
    );
    for level in Level::ALL.iter().rev() {
        let row = &report.confusion[*level as usize];
        println!(
            "  {:<11} {:>10} {:>10} {:>10} {:>10}",
            level.as_str(),
            row[3],
            row[2],
            row[1],
            row[0]
        );
    }
}

/// Catch and false-raise rates, areas found, and the cases for a judge.
fn print_rates(report: &Report) {
    println!();
    println!(
        "catch rate (prohibited + high at or above expected): {} / {} = {}",
        report.caught,
        report.risky,
        pct(report.catch_rate())
    );
    println!(
        "false-raise rate (minimal classified higher):        {} / {} = {}",
        report.raised,
        report.minimal,
        pct(report.false_raise_rate())
    );
    println!(
        "expected area among the triggered rules:             {} / {}",
        report.area_found, report.with_area
    );
    println!(
        "for a judge (cases): {} content-only hit, {} anchor without act, {} overruled by the n-gram model, {} unknown language",
        report.content_only, report.anchor_without_act, report.overruled, report.unknown_language
    );
}

/// Exact level per language, practice and phrasing family.
fn print_slices(report: &Report) {
    for (title, map) in [
        ("language", &report.languages),
        ("practice (expected area)", &report.practices),
        ("phrasing family", &report.families),
    ] {
        println!();
        println!(
            "exact level per {title} (correct / cases; rows of the confusion: P H L M expected, got P H L M):"
        );
        for (key, slice) in map {
            let c = &slice.confusion;
            let row = |e: usize| format!("{} {} {} {}", c[e][3], c[e][2], c[e][1], c[e][0]);
            println!(
                "  {key:<45} {:>3} / {:<3} {:>7}   P[{}] H[{}] L[{}] M[{}]",
                slice.correct(),
                slice.total(),
                pct(slice.rate()),
                row(3),
                row(2),
                row(1),
                row(0)
            );
        }
    }
}

fn print_cross_validation(cv: &CrossValidation) {
    println!("cross-validation (exact level; caught of prohibited and high)");
    println!("  left out        terms  all terms            without them");
    let row = |name: &str, fold: &eval::Fold| {
        let (c, r) = fold.all.caught();
        let (lc, lr) = fold.left_out.caught();
        println!(
            "  {name:<15} {:>5}  {:>4}/{:<4} {c:>3}/{r:<3}   {:>4}/{:<4} {lc:>3}/{lr:<3}",
            fold.terms,
            fold.all.correct(),
            fold.all.total(),
            fold.left_out.correct(),
            fold.left_out.total(),
        );
    };
    for (name, fold) in &cv.families {
        row(name, fold);
    }
    row("each case", &cv.cases);
}
