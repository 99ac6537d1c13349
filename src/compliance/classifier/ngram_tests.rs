//! The n-gram layer's tests: the hash, the asset, the vector, the kept
//! sums against the direct sum, the raise and the training script's parity.

use super::super::exceptions::BUILDING;
use super::super::lexical::Lexical;
use super::super::matching::NO_OBJECT;
use super::super::text::normalise;
use super::super::{Classification, Grey, Hit, Level};
use super::*;

fn texts(purpose: &str, instructions: &str, user: &str) -> [(Source, Normalised); 3] {
    [
        (Source::Purpose, normalise(purpose)),
        (Source::Instructions, normalise(instructions)),
        (Source::Content, normalise(user)),
    ]
}

#[test]
fn fnv_is_the_published_fnv1a_64() {
    // Published FNV-1a 64 vectors: "" and "a" (kind byte = first byte).
    assert_eq!(fnv(b'a', &[]), 0xAF63_DC4C_8601_EC8C);
    assert_eq!(fnv(b'f', &["oobar"]), 0x8594_4171_F739_67E8);
    assert_eq!(fnv(b'f', &["oo", "bar"]), fnv(b'f', &["oobar"]));
}

#[test]
fn the_built_in_weights_parse_with_their_thresholds() {
    let ngram = Ngram::built_in();
    assert_eq!(ngram.rows.len(), 1 << 18);
    assert!(ngram.risky.threshold > 0.5 && ngram.prohibited.threshold > 0.5);
    assert!(
        ngram
            .overrule
            .is_some_and(|o| o.below > 0.0 && o.below < 0.05 && o.line > 0.5 && o.line < 1.0)
    );
    assert!(
        ngram
            .framed
            .is_some_and(|t| t > ngram.risky.threshold && t < 1.0)
    );
    assert!(ngram.rows.iter().filter(|w| w[..2] != [0.0; 2]).count() > 10_000);
}

#[test]
fn a_bad_line_is_an_error_naming_it() {
    let head = "buckets\t4\nrisky\t0.9\t0\nprohibited\t0.9\t0\n";
    assert!(Ngram::parse(&format!("{head}1\t0.5\t0.1\n")).is_ok());
    let error = Ngram::parse(&format!("{head}1\tx\t0.1\n")).unwrap_err();
    assert!(error.contains("line 4"), "{error}");
    let error = Ngram::parse(&format!("{head}9\t0.5\t0.1\n")).unwrap_err();
    assert!(error.contains("row 9"), "{error}");
    assert!(Ngram::parse("buckets\t4\n").is_err());
    // The overrule line needs both thresholds.
    let ngram = Ngram::parse(&format!("{head}overrule\t0.005\t0.8\n")).unwrap();
    assert_eq!(
        ngram.overrule,
        Some(Overrule {
            below: 0.005,
            line: 0.8
        })
    );
    let error = Ngram::parse(&format!("{head}overrule\t0.005\n")).unwrap_err();
    assert!(error.contains("line 4"), "{error}");
    // The framed threshold is one number; without the line, none.
    let ngram = Ngram::parse(&format!("{head}framed\t0.998\n")).unwrap();
    assert_eq!(ngram.framed, Some(0.998));
    assert_eq!(Ngram::parse(head).unwrap().framed, None);
    let error = Ngram::parse(&format!("{head}framed\tsure\n")).unwrap_err();
    assert!(error.contains("line 4"), "{error}");
    let ngram = Ngram::parse(&format!("{head}escalate\t0.99\n")).unwrap();
    assert_eq!(ngram.escalate, Some(0.99));
    assert_eq!(Ngram::parse(head).unwrap().escalate, None);
}

/// A request's vector summed directly, as the training script does:
/// each row once, in the order first met across the texts, with
/// sqrt(count) scaled by the fourth root of the number of features.
fn vector(ngram: &Ngram, texts: &[(Source, Normalised); 3], skip: [bool; 3]) -> Vec<(u32, f64)> {
    let read: Vec<Counts> = texts
        .iter()
        .zip(skip)
        .filter(|(_, skip)| !skip)
        .map(|((_, text), _)| ngram.text_rows(text))
        .collect();
    let mut counts = Counts::with_room(read.iter().map(|c| c.order.len()).sum());
    for rows in &read {
        for &(row, n) in &rows.order {
            counts.add_n(row, n);
        }
    }
    let total: u32 = counts.order.iter().map(|c| c.1).sum();
    if total == 0 {
        return Vec::new();
    }
    let scale = 1.0 / f64::from(total).sqrt().sqrt();
    (counts.order.into_iter())
        .map(|(row, n)| (row, f64::from(n).sqrt() * scale))
        .collect()
}

/// The scores of the directly summed vector.
fn direct_scores(ngram: &Ngram, texts: &[(Source, Normalised); 3], skip: [bool; 3]) -> Scores {
    let limited = ngram.limited.map_or(f64::NEG_INFINITY, |m| m.bias);
    let mut z = [ngram.risky.bias, ngram.prohibited.bias, limited];
    for (row, v) in vector(ngram, texts, skip) {
        let w = ngram.rows[row as usize];
        for (z, w) in z.iter_mut().zip(w) {
            *z += f64::from(w) * v;
        }
    }
    let sigmoid = |z: f64| 1.0 / (1.0 + (-z.clamp(-30.0, 30.0)).exp());
    Scores {
        risky: sigmoid(z[0]),
        prohibited: sigmoid(z[1]),
        limited: sigmoid(z[2]),
    }
}

#[test]
fn the_vector_counts_runs_words_and_pairs_once_per_row_and_is_scaled() {
    // One bucket: every feature falls in row 0, so the count is the
    // number of features. "ab cd" padded is " ab cd " (7 characters):
    // 5 + 4 + 3 runs, 2 words, 1 pair = 15.
    let ngram = Ngram::parse("buckets\t1\nrisky\t0.9\t0\nprohibited\t0.9\t0\n").unwrap();
    let v = vector(&ngram, &texts("", "", "ab cd"), [false; 3]);
    assert_eq!(v.len(), 1);
    let expected = 15f64.sqrt() / 15f64.sqrt().sqrt();
    assert!((v[0].1 - expected).abs() < 1e-12, "{v:?}");
    assert!(vector(&ngram, &texts("", "", ""), [false; 3]).is_empty());
    assert!(vector(&ngram, &texts("", "", "ab cd"), [false, false, true]).is_empty());
}

/// The kept sums of the longest text, changed row by row by the other
/// texts' rows, score as the direct sum: for every case of the dev set,
/// for a long prompt kept and sent again with other user turns, with
/// texts skipped, and for a text first read by other weights (its kept
/// reading is not theirs, so it is read again).
#[test]
fn the_kept_sums_score_as_the_direct_sum() {
    let classifier = crate::compliance::Classifier::built_in();
    let ngram = &classifier.ngram;
    let close = |a: Scores, b: Scores, what: &str| {
        assert!(
            (a.risky - b.risky).abs() < 1e-12 && (a.prohibited - b.prohibited).abs() < 1e-12,
            "{what}: {a:?} != {b:?}"
        );
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = std::fs::read_to_string(root.join("tests/data/euai-dev.jsonl")).unwrap();
    let mut compared = 0;
    for case in cases.lines() {
        let case: serde_json::Value = serde_json::from_str(case).unwrap();
        let scanned = classifier.scan_request(
            case["purpose"].as_str(),
            case.get("deployer_context"),
            &case["messages"],
            None,
        );
        for skip in [[false; 3], [false, true, false], [true, false, true]] {
            let what = format!("{} {skip:?}", case["id"]);
            close(
                ngram.scores(&scanned.texts, skip),
                direct_scores(ngram, &scanned.texts, skip),
                &what,
            );
        }
        compared += 1;
    }
    assert!(compared > 90, "{compared} cases");

    let prompt = ["Screen the applicants' CVs and rank them for the interview. "; 40].concat();
    let kept = normalise(&prompt);
    for user in [
        "Who is first?",
        "Rank the CVs of the applicants again, applicants first.",
        "",
    ] {
        let request = [
            (Source::Purpose, normalise("hiring")),
            (Source::Instructions, kept.clone()),
            (Source::Content, normalise(user)),
        ];
        close(
            ngram.scores(&request, [false; 3]),
            direct_scores(ngram, &request, [false; 3]),
            user,
        );
    }
    assert!(
        kept.derived.ngram.get().is_some(),
        "the prompt's reading is kept"
    );

    // Other weights: the same rows in a larger table, so every feature
    // falls in another row (by remainder, not by mask).
    let other = Ngram::parse(&ASSET.replace("buckets\t262144", "buckets\t300000")).unwrap();
    assert!(other.mask.is_none() && ngram.mask.is_some());
    let request = [
        (Source::Purpose, normalise("")),
        (Source::Instructions, kept),
        (Source::Content, normalise("Rank the applicants.")),
    ];
    close(
        other.scores(&request, [false; 3]),
        direct_scores(&other, &request, [false; 3]),
        "other weights",
    );
    assert_ne!(
        other.scores(&request, [false; 3]),
        ngram.scores(&request, [false; 3]),
        "the other weights score otherwise"
    );
}

/// One bucket: every feature lands in row 0, so the scores are the
/// sigmoid of bias + weight x (the vector's one value).
fn one_row(risky: f32, prohibited: f32) -> Ngram {
    one_row_with("", risky, prohibited)
}

/// The same with one more line of thresholds (`framed`, `escalate`).
fn one_row_with(line: &str, risky: f32, prohibited: f32) -> Ngram {
    Ngram::parse(&format!(
        "buckets\t1\nrisky\t0.9\t0\nprohibited\t0.9\t0\n{line}0\t{risky}\t{prohibited}\n"
    ))
    .unwrap()
}

/// A minimal result in which the rules found a domain's anchor.
fn minimal() -> Classification {
    Classification {
        level: Level::Minimal,
        hits: Vec::new(),
        grey: vec![Grey::AnchorWithoutAct {
            rule: "annex3_4a_recruitment".into(),
        }],
        set_aside: Vec::new(),
        judge: None,
    }
}

#[test]
fn it_raises_a_domain_to_high_then_prohibited_names_itself_and_never_lowers() {
    let lexical = Lexical::built_in();
    let request = texts("", "", "rank the people in these files");
    // Sure of risky, not of prohibited: high, as a grey zone.
    let mut c = minimal();
    one_row(50.0, -50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::High);
    assert!(
        c.hits[0].rule.starts_with("ngram:annex3_"),
        "{:?}",
        c.hits[0]
    );
    assert!(
        c.hits[0].evidence.contains("threshold 0.900"),
        "{:?}",
        c.hits[0]
    );
    assert!(matches!(&c.grey[1], Grey::ContentOnly { rule } if rule == &c.hits[0].rule));
    // Without a domain the rules found, nothing is raised.
    let mut c = Classification {
        grey: Vec::new(),
        ..minimal()
    };
    one_row(50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!((c.level, c.hits.len()), (Level::Minimal, 0));
    // Sure of both: prohibited, to an Article 5 area.
    let mut c = minimal();
    one_row(50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::Prohibited);
    assert!(c.hits[0].rule.starts_with("ngram:art5_"), "{:?}", c.hits[0]);
    // Sure of neither: nothing changes, and a prohibited result is
    // never lowered.
    let mut c = minimal();
    one_row(-50.0, -50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!((c.level, c.hits.len()), (Level::Minimal, 0));
    let mut c = Classification {
        level: Level::Prohibited,
        ..minimal()
    };
    one_row(-50.0, -50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::Prohibited);
    // A high result is the rules' to move: never to prohibited.
    let mut c = Classification {
        level: Level::High,
        ..minimal()
    };
    one_row(50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!((c.level, c.hits.len()), (Level::High, 0));
    // A text left out gives no features: only the biases speak.
    let mut c = minimal();
    one_row(50.0, -50.0).raise(&mut c, &request, &lexical, [false, false, true], || false);
    assert_eq!(c.level, Level::Minimal);
}

/// A minimal result in a domain, with one credit match the rules set
/// aside for `why`.
fn set_aside(why: &str) -> Classification {
    Classification {
        set_aside: vec![super::super::SetAside {
            rule: "annex3_5b_creditworthiness".into(),
            source: Source::Content,
            why: why.into(),
        }],
        ..minimal()
    }
}

#[test]
fn a_match_the_rules_set_aside_stops_it_unless_only_the_object_was_missing() {
    let lexical = Lexical::built_in();
    let request = texts("", "", "rank the suppliers by credit risk");
    let mut c = set_aside(
        "anchor \"credit\" with act \"rank\", but \"suppliers\" in the same sentence frames it as a company",
    );
    one_row(50.0, -50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::Minimal);
    let mut c = set_aside(&format!(
        "anchor \"credit\" with act \"rank\", but no {NO_OBJECT} near it"
    ));
    one_row(50.0, -50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::High);
}

/// One bucket with a `framed` line at 0.998, above the usual 0.9.
fn framing(risky: f32) -> Ngram {
    one_row_with("framed\t0.998\n", risky, -50.0)
}

/// A match the rules set aside for a framing holds the raise back below
/// the `framed` threshold, not above it (twenty-sixth round); one set
/// aside because the user has software built holds it back always.
#[test]
fn a_framed_match_needs_the_framed_threshold_and_building_software_stops_it() {
    let lexical = Lexical::built_in();
    let request = texts("", "", "rank the suppliers by credit risk");
    let framed = "anchor \"credit\" with act \"rank\", but \"suppliers\" in the same sentence frames it as a company";
    // One bucket: the vector is one value, so a weight aims a probability.
    let v = vector(&framing(1.0), &request, [false; 3])[0].1;
    let aim = |p: f64| ((p / (1.0 - p)).ln() / v) as f32;
    // Sure enough for a request with nothing set aside, not for this one.
    let mut c = minimal();
    framing(aim(0.95)).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::High);
    let mut c = set_aside(framed);
    framing(aim(0.95)).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!((c.level, c.hits.len()), (Level::Minimal, 0));
    // Surer than the framed threshold: raised, saying from which.
    let mut c = set_aside(framed);
    framing(aim(0.9995)).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::High);
    assert!(
        c.hits[0]
            .evidence
            .contains("threshold 0.998, for a request whose matches the rules set aside"),
        "{:?}",
        c.hits[0]
    );
    // Building software: never, however sure.
    let mut c = set_aside(&format!(
        "anchor \"credit\" with act \"rank\", but the user has software built (\"unit tests\"): {BUILDING}"
    ));
    framing(50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!((c.level, c.hits.len()), (Level::Minimal, 0));
}

/// One bucket with an `escalate` line at 0.99; the raise's thresholds 0.9.
fn escalating(risky: f32, prohibited: f32) -> Ngram {
    one_row_with("escalate\t0.99\n", risky, prohibited)
}

/// A high result goes to prohibited when the `prohibited` model reaches the
/// `escalate` threshold and `risky` the raise's (twenty-sixth round): the
/// hit names an Article 5 area, is a grey zone for a judge and says from
/// which threshold. Below either, without the line, or when the user has
/// software built, the high result stays.
#[test]
fn a_high_result_goes_to_prohibited_only_when_the_model_is_sure() {
    let lexical = Lexical::built_in();
    let request = texts("", "", "watch the faces of the staff at work");
    let high = || Classification {
        level: Level::High,
        ..minimal()
    };
    let v = vector(&escalating(1.0, 1.0), &request, [false; 3])[0].1;
    let aim = |p: f64| ((p / (1.0 - p)).ln() / v) as f32;
    let mut c = high();
    escalating(50.0, aim(0.995)).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::Prohibited);
    assert!(c.hits[0].rule.starts_with("ngram:art5_"), "{:?}", c.hits[0]);
    assert!(
        c.hits[0]
            .evidence
            .contains("(threshold 0.990, for a high result)"),
        "{:?}",
        c.hits[0]
    );
    assert!(matches!(c.grey.last(), Some(Grey::ContentOnly { rule }) if rule == &c.hits[0].rule));
    // Sure enough to raise a minimal result to prohibited (0.9), not to
    // move a high one.
    let mut c = high();
    escalating(50.0, aim(0.95)).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!((c.level, c.hits.len()), (Level::High, 0));
    // Sure of prohibited but not of risky.
    let mut c = high();
    escalating(aim(0.5), aim(0.995)).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!((c.level, c.hits.len()), (Level::High, 0));
    // No line: a high result is the rules' (`one_row` has none).
    let mut c = high();
    one_row(50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!((c.level, c.hits.len()), (Level::High, 0));
    // Building software: never.
    let mut c = Classification {
        set_aside: vec![super::super::SetAside {
            rule: "annex3_1c_emotion_recognition".into(),
            source: Source::Content,
            why: format!("the user has software built (\"implement\"): {BUILDING}"),
        }],
        ..high()
    };
    escalating(50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!((c.level, c.hits.len()), (Level::High, 0));
}

/// One bucket with an `overrule` line: p(risky) is the sigmoid of the
/// row's weight times the vector's one value.
fn overruling(risky: f32) -> Ngram {
    Ngram::parse(&format!(
        "buckets\t1\nrisky\t0.9\t0\nprohibited\t0.9\t0\noverrule\t0.5\t0.9\n0\t{risky}\t0\n"
    ))
    .unwrap()
}

/// A high hit of the rules from `source`, with a limited one beside it.
fn rules_high(source: Source) -> Classification {
    Classification {
        level: Level::High,
        hits: vec![
            Hit {
                rule: "annex3_4b_worker_management".into(),
                level: Level::High,
                summary: "decisions on workers".into(),
                source,
                evidence: "anchor \"courier\" with act \"rate\"".into(),
            },
            Hit {
                rule: "art50_1_ai_interaction".into(),
                level: Level::Limited,
                summary: "people talk to the system".into(),
                source: Source::Instructions,
                evidence: "term \"chatbot\"".into(),
            },
        ],
        grey: vec![Grey::ContentOnly {
            rule: "annex3_4b_worker_management".into(),
        }],
        set_aside: Vec::new(),
        judge: None,
    }
}

#[test]
fn a_conversation_hit_the_model_reads_as_ordinary_is_set_aside_for_a_judge() {
    let request = texts("", "", "our courier asked me to rate the new route app");
    let mut c = rules_high(Source::Content);
    overruling(-50.0).overrule(&mut c, &request, [false; 3], |_| false);
    // The limited hit stands; the high one is set aside with the model's
    // probability and its threshold, and is a question for a judge.
    assert_eq!(c.level, Level::Limited);
    assert_eq!(c.triggered_rules(), ["art50_1_ai_interaction"]);
    assert_eq!(c.set_aside.len(), 1);
    let why = &c.set_aside[0].why;
    assert_eq!(c.set_aside[0].rule, "annex3_4b_worker_management");
    assert!(
        why.starts_with("anchor \"courier\" with act \"rate\", but the learned n-gram model")
            && why.contains("p(prohibited or high) = 0.0000, under 0.5"),
        "{why}"
    );
    assert!(!c.set_aside[0].lacked_only_object());
    assert_eq!(
        c.grey,
        [Grey::Overruled {
            rule: "annex3_4b_worker_management".into()
        }]
    );
    assert!(super::super::super::judgement::grey_zone(&c));
    // From the instructions too: the deployer's prompt is conversation.
    let mut c = rules_high(Source::Instructions);
    overruling(-50.0).overrule(&mut c, &request, [false; 3], |_| false);
    assert_eq!(c.level, Level::Limited);
    // Without the limited hit: minimal.
    let mut c = rules_high(Source::Content);
    c.hits.truncate(1);
    overruling(-50.0).overrule(&mut c, &request, [false; 3], |_| false);
    assert_eq!((c.level, c.hits.len()), (Level::Minimal, 0));
}

#[test]
fn a_declared_use_a_learned_raise_a_kept_rule_a_sure_model_or_no_threshold_overrule_nothing() {
    let request = texts("", "", "rank the people in these files");
    let unchanged = |ngram: &Ngram, mut c: Classification, skip: [bool; 3]| {
        let before = c.clone();
        ngram.overrule(&mut c, &request, skip, |_| false);
        assert_eq!(c, before);
    };
    // A hit of the declared purpose: a declared use is never lowered.
    unchanged(&overruling(-50.0), rules_high(Source::Purpose), [false; 3]);
    // A purpose hit beside a conversation hit: nothing moves either.
    let mut both = rules_high(Source::Content);
    both.hits.push(Hit {
        source: Source::Purpose,
        ..both.hits[0].clone()
    });
    unchanged(&overruling(-50.0), both, [false; 3]);
    // The model sure of a listed use.
    unchanged(&overruling(50.0), rules_high(Source::Content), [false; 3]);
    // A raise of a learned layer is not the rules' to lose.
    let mut learned = rules_high(Source::Content);
    learned.hits[0].rule = "ngram:annex3_4a_recruitment".into();
    unchanged(&overruling(-50.0), learned, [false; 3]);
    // Every text read as a use that decides nothing: no features.
    unchanged(&overruling(-50.0), rules_high(Source::Content), [true; 3]);
    // A limited result is not the model's: it knows listed uses only.
    let mut limited = rules_high(Source::Content);
    limited.hits.remove(0);
    limited.level = Level::Limited;
    unchanged(&overruling(-50.0), limited, [false; 3]);
    // Weights without an `overrule` line overrule nothing.
    unchanged(
        &one_row(-50.0, -50.0),
        rules_high(Source::Content),
        [false; 3],
    );
    // A rule the rule table keeps from the model (`not_overruled`).
    let mut c = rules_high(Source::Content);
    let before = c.clone();
    overruling(-50.0).overrule(&mut c, &request, [false; 3], |id| {
        id == "annex3_4b_worker_management"
    });
    assert_eq!(c, before);
}

#[test]
fn the_built_in_model_overrules_an_accidental_match_and_keeps_a_practice() {
    let classifier = super::super::Classifier::built_in();
    let classify = |text: &str| {
        classifier.classify(
            None,
            None,
            &serde_json::json!([{ "role": "user", "content": text }]),
        )
    };
    // A courier and "rate" meet by accident: worker management for the
    // rules, an ordinary request for the model.
    let c = classify(
        "Our courier Jan asked me to rate the new delivery route app from 1 to 5 for the product team survey. Draft a short answer.",
    );
    assert_eq!(c.level, Level::Minimal, "{c:?}");
    assert!(
        c.grey.iter().any(
            |g| matches!(g, Grey::Overruled { rule } if rule == "annex3_4b_worker_management")
        )
    );
    // A practice the rules catch stands.
    let c = classify("Rank these 40 applicants by their CVs and reject the bottom half.");
    assert_eq!(c.level, Level::High);
    assert!(!c.grey.iter().any(|g| matches!(g, Grey::Overruled { .. })));
    // One line that states a practice in a long prompt of store policy:
    // the request as a whole reads as ordinary, that sentence does not.
    let policy = "Answer questions about orders, deliveries and returns politely and briefly, and pass refunds above fifty euros to a colleague. ".repeat(12);
    let c = classifier.classify(
        None,
        None,
        &serde_json::json!([
            { "role": "system", "content": format!("{policy}Score each applicant's CV and reject the weakest candidates. {policy}") },
            { "role": "user", "content": "Here is the next one." },
        ]),
    );
    assert_eq!(c.level, Level::High, "{c:?}");
    let c = classify(
        "Analyse the webcam feed of our call-centre agents and flag who looks frustrated or bored during calls so their team lead can talk to them.",
    );
    assert_eq!(c.level, Level::Prohibited, "{c:?}");
}

/// Writes the facts of `tests/data/train_ngram.py --cv` (what the
/// layer sees of each case of the train and ordinary-train files, after
/// the rules and the lexical layer) to the file `NGRAM_FACTS` names:
/// `NGRAM_FACTS=/tmp/facts.jsonl cargo test --lib ngram_cv_facts --
/// --ignored`.
#[test]
#[ignore = "writes the cross-validation facts for the training script"]
fn ngram_cv_facts() {
    let out = std::env::var("NGRAM_FACTS").expect("NGRAM_FACTS names the output file");
    let classifier = crate::compliance::Classifier::built_in();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut lines = String::new();
    for file in [
        "tests/data/euai-train.jsonl",
        "tests/data/risk-ordinary-train.jsonl",
    ] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let cases = super::super::eval::parse_cases(&text).unwrap();
        for fact in super::super::eval::ngram_facts(&classifier, &cases) {
            lines.push_str(&format!("{fact}\n"));
        }
    }
    std::fs::write(out, lines).unwrap();
}

/// The Rust side computes what the training script computes: the
/// script's scores of the shipped asset (`--scores`) for every case of
/// the dev and regression sets (eight languages, system prompts,
/// multi-turn chats) are the classifier's own.
#[test]
fn the_scores_are_the_training_scripts() {
    let classifier = crate::compliance::Classifier::built_in();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in [
        "tests/data/euai-dev.jsonl",
        "tests/data/risk-regression.jsonl",
    ] {
        let run = std::process::Command::new("python3")
            .arg(root.join("tests/data/train_ngram.py"))
            .arg("--scores")
            .arg(root.join(file))
            .output()
            .expect("python3 runs the training script");
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let cases = std::fs::read_to_string(root.join(file)).unwrap();
        let expected = String::from_utf8(run.stdout).unwrap();
        let mut compared = 0;
        for (case, want) in cases.lines().zip(expected.lines()) {
            let case: serde_json::Value = serde_json::from_str(case).unwrap();
            let want: serde_json::Value = serde_json::from_str(want).unwrap();
            assert_eq!(case["id"], want["id"]);
            let scanned = classifier.scan_request(
                case["purpose"].as_str(),
                case.get("deployer_context"),
                &case["messages"],
                None,
            );
            let got = classifier.ngram.scores(&scanned.texts, [false; 3]);
            for (name, got) in [
                ("risky", got.risky),
                ("prohibited", got.prohibited),
                ("limited", got.limited),
            ] {
                let want = want[name].as_f64().unwrap();
                assert!(
                    (got - want).abs() < 1e-5,
                    "{} {name}: {got} != {want}",
                    case["id"]
                );
            }
            compared += 1;
        }
        assert!(compared > 90, "{file}: {compared} cases");
    }
}
