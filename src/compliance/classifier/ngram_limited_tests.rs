//! The n-gram layer's `limited` model (twenty-seventh round): its asset
//! lines, the raise of a minimal result to limited, what holds it back,
//! and the training script's parity for it.

use super::super::exceptions::BUILDING;
use super::super::lexical::Lexical;
use super::super::text::normalise;
use super::super::{Classification, Grey, Level, SetAside};
use super::*;

fn texts(purpose: &str, instructions: &str, user: &str) -> [(Source, Normalised); 3] {
    [
        (Source::Purpose, normalise(purpose)),
        (Source::Instructions, normalise(instructions)),
        (Source::Content, normalise(user)),
    ]
}

/// One bucket (every feature in row 0) with a `limited` line at 0.7 and
/// the raise's thresholds at 0.9: each probability is the sigmoid of its
/// weight times the vector's one value.
fn one_row(risky: f32, limited: f32) -> Ngram {
    Ngram::parse(&format!(
        "buckets\t1\nrisky\t0.9\t0\nprohibited\t0.9\t0\nlimited\t0.7\t0\n0\t{risky}\t-50\t{limited}\n"
    ))
    .unwrap()
}

/// A minimal result with nothing found: no domain, no match set aside.
fn nothing() -> Classification {
    Classification {
        level: Level::Minimal,
        hits: Vec::new(),
        grey: Vec::new(),
        set_aside: Vec::new(),
        judge: None,
    }
}

/// `nothing` with one match of `rule` the rules set aside for `why`.
fn aside(rule: &str, why: &str) -> Classification {
    Classification {
        set_aside: vec![SetAside {
            rule: rule.into(),
            source: Source::Content,
            why: why.into(),
        }],
        ..nothing()
    }
}

const REQUEST: &str =
    "answer our guests on whatsapp at night and sign as me so they think it is me";

#[test]
fn the_limited_line_and_a_rows_third_weight_parse() {
    let head = "buckets\t4\nrisky\t0.9\t0\nprohibited\t0.9\t0\n";
    let ngram = Ngram::parse(&format!("{head}limited\t0.7\t-6.5\n1\t0.5\t0.1\t0.25\n")).unwrap();
    assert_eq!(
        ngram.limited,
        Some(Model {
            threshold: 0.7,
            bias: -6.5
        })
    );
    assert_eq!(ngram.rows[1], [0.5, 0.1, 0.25]);
    // Two weights: the third is 0; no `limited` line: no model.
    let ngram = Ngram::parse(&format!("{head}1\t0.5\t0.1\n")).unwrap();
    assert_eq!((ngram.rows[1], ngram.limited), ([0.5, 0.1, 0.0], None));
    for bad in [
        "1\t0.5\t0.1\tx\n",
        "1\t0.5\t0.1\t0.2\t0.3\n",
        "limited\t0.7\n",
    ] {
        let error = Ngram::parse(&format!("{head}{bad}")).unwrap_err();
        assert!(error.contains("line 4"), "{bad:?}: {error}");
    }
    let built_in = Ngram::built_in();
    assert!(
        built_in
            .limited
            .is_some_and(|m| m.threshold > 0.5 && m.threshold < 1.0)
    );
    assert!(built_in.rows.iter().filter(|w| w[2] != 0.0).count() > 10_000);
}

#[test]
fn a_minimal_result_goes_to_limited_in_any_domain_when_the_model_is_sure() {
    let lexical = Lexical::built_in();
    let request = texts("", "", REQUEST);
    // No domain the rules found, sure of limited: limited, as a grey zone
    // naming an Article 50 duty and its threshold.
    let mut c = nothing();
    one_row(-50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::Limited);
    assert!(
        c.hits[0].rule.starts_with("ngram:art50_"),
        "{:?}",
        c.hits[0]
    );
    assert_eq!(c.hits[0].evidence, "p(limited) = 1.000 (threshold 0.700)");
    assert!(matches!(&c.grey[0], Grey::ContentOnly { rule } if rule == &c.hits[0].rule));
    // Not sure: nothing changes.
    let mut c = nothing();
    one_row(-50.0, -50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!((c.level, c.hits.len()), (Level::Minimal, 0));
    // Every text left out: no features, only the bias (0: p = 0.5).
    let mut c = nothing();
    one_row(-50.0, 50.0).raise(&mut c, &request, &lexical, [true; 3], || false);
    assert_eq!((c.level, c.hits.len()), (Level::Minimal, 0));
    // A limited result is the rules' already; a high one is never lowered.
    for level in [Level::Limited, Level::High] {
        let mut c = Classification { level, ..nothing() };
        one_row(-50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
        assert_eq!((c.level, c.hits.len()), (level, 0));
    }
    // Without a `limited` line, a row's third weight says nothing.
    let without =
        Ngram::parse("buckets\t1\nrisky\t0.9\t0\nprohibited\t0.9\t0\n0\t-50\t-50\t50\n").unwrap();
    let mut c = nothing();
    without.raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!((c.level, c.hits.len()), (Level::Minimal, 0));
}

/// In a domain the rules found, the `risky` raise comes first: a request
/// both models are sure of is high, not limited.
#[test]
fn a_risky_raise_comes_before_the_limited_one() {
    let lexical = Lexical::built_in();
    let request = texts("", "", "rank the people in these files");
    let domain = || Classification {
        grey: vec![Grey::AnchorWithoutAct {
            rule: "annex3_4a_recruitment".into(),
        }],
        ..nothing()
    };
    let mut c = domain();
    one_row(50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::High);
    // Not sure of risky: limited after all.
    let mut c = domain();
    one_row(-50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::Limited);
}

/// An Article 50 match the rules set aside (the deployment says it is an
/// AI, talk about the topic, a fiction) is their reading of the duty
/// itself, building software holds every raise back, and so does a
/// suppressor of an Article 50 rule; a match only in a pasted document
/// (not read) or of another rule set aside does not hold this one.
#[test]
fn an_article_50_match_set_aside_or_software_built_holds_it_back() {
    let lexical = Lexical::built_in();
    let request = texts("", "", REQUEST);
    for (rule, why) in [
        (
            "art50_1_ai_interaction",
            "the deployment discloses that it is an AI (\"you are an AI and say so\")",
        ),
        (
            "art50_4_deepfake",
            "anchor \"photorealistic\" with act \"looks real\", but \"cartoonish\" in the same sentence frames it as talk about the topic",
        ),
        (
            "annex3_4a_recruitment",
            &format!("the user has software built (\"implement\"): {BUILDING}"),
        ),
    ] {
        let mut c = aside(rule, why);
        one_row(-50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
        assert_eq!((c.level, c.hits.len()), (Level::Minimal, 0), "{rule}");
    }
    // A suppressor of an Article 50 rule in the request (the user's own
    // voice, a fiction, detecting fakes) holds it back too.
    let mut c = nothing();
    one_row(-50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || true);
    assert_eq!((c.level, c.hits.len()), (Level::Minimal, 0));
    // A match only in a pasted document was not read: it holds nothing.
    let mut c = aside(
        "art50_1_ai_interaction",
        &format!(
            "a pasted document (1 block(s) fenced or labelled as reference material), not a use on people: {}",
            super::super::documents::NOT_EVALUATED
        ),
    );
    one_row(-50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::Limited);
    let mut c = aside(
        "annex3_5b_creditworthiness",
        "anchor \"credit\" with act \"rank\", but \"suppliers\" in the same sentence frames it as a company",
    );
    one_row(-50.0, 50.0).raise(&mut c, &request, &lexical, [false; 3], || false);
    assert_eq!(c.level, Level::Limited);
}

/// The built-in model: a clinic's voice agent that calls itself Anna and
/// never says it is automated is limited, by this model (no Article 50
/// rule's anchor is in it); a victim asking how to tell a faked voice from
/// a real one is not raised.
#[test]
fn the_built_in_limited_model_reads_an_article_50_use() {
    let classifier = crate::compliance::Classifier::built_in();
    let classify = |user: &str| {
        let messages = serde_json::json!([{"role": "user", "content": user}]);
        classifier.classify(None, None, &messages)
    };
    let c = classify(
        "Set up a voice agent on our clinic's phone line that books appointments. It introduces itself as Anna from reception and never says it is automated.",
    );
    assert_eq!(c.level, Level::Limited);
    assert_eq!(c.hits[0].rule, "ngram:art50_1_ai_interaction");
    let c = classify(
        "I got a voice note that sounds exactly like my brother asking for money. How can I tell if a voice has been faked?",
    );
    assert_eq!(c.level, Level::Minimal);
}
