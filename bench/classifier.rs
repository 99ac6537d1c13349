//! Risk classification benchmark: the rules and the learned lexical layer
//! on a typical chat request (a system message and two user turns, about
//! 100 words), beside a baseline measured in the same run; and requests
//! with a long system prompt (3,000 words), as agents and deployed
//! assistants send with every turn: read once and kept, and read afresh.
//!
//! `cargo bench --bench classifier` (add `-- --quick` for a short run).
//! Figures go to stdout and to `target/bench/classifier.json`. Nothing here
//! asserts a timing: the aim is printed next to what was reached.

use std::hint::black_box;
use std::time::Instant;

use serde_json::{Value, json};
use tollgate::compliance::Classifier;

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Median and p99 in nanoseconds of `f` over `runs` calls.
fn measure(runs: usize, mut f: impl FnMut()) -> (u64, u64) {
    for _ in 0..runs / 10 {
        f();
    }
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        f();
        samples.push(start.elapsed().as_nanos() as u64);
    }
    samples.sort_unstable();
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

/// A typical request: nothing in it is a listed use (the common case, and
/// the one where every rule is looked at).
fn typical() -> Value {
    json!([
        { "role": "system", "content": "You are a helpful assistant for the support team of a software company. Answer briefly and politely, use the documentation when it helps, and ask for details when a question is unclear." },
        { "role": "user", "content": "Hi! Our nightly export job failed again with a timeout after about forty minutes. The logs mention the database connection pool. What should we check first?" },
        { "role": "assistant", "content": "Check the pool size and the query plan of the export." },
        { "role": "user", "content": "Thanks. Can you also draft a short note to the team explaining the plan for tomorrow, with the steps we agreed on and who will look at the logs?" },
    ])
}

/// The same length, with a high-risk use in the last turn.
fn risky() -> Value {
    let mut messages = typical();
    messages[3]["content"] = json!(
        "Thanks. Now read the attached CVs of the applicants for the analyst job, shortlist the three best candidates and reject the others, and draft a short note to the team with the plan for tomorrow."
    );
    messages
}

/// A coding agent's request: a long system prompt of the tool (about 250
/// words, the kind that once matched a high-risk rule) and a short user
/// turn; the system prompt is read apart and recognised as a tool's own.
fn agent() -> Value {
    json!([
        { "role": "system", "content": "You are a coding agent running in the user's terminal. You work in a sandbox on the user's repository and can read files, run shell commands and apply patches. Use your judgement to decide which files to read and when to run the unit tests. Keep diffs small and focused; follow the project's style guide, and never commit or push unless the user asks. When several fixes are possible, rank the candidate patches by risk and choose the smallest one that passes the tests. Before finishing, run the linter and the test suite, and report what you changed and why. If a command fails, read the error, assess whether the test or the code is wrong, and fix the right one. Do not modify files outside the workspace. Ask before installing dependencies. When you are unsure what the user wants, ask a short question instead of guessing. Terminate any background process you started before you finish. Prefer the standard library; explain any new dependency in one sentence. Write commit messages in the imperative mood when asked to commit. Respect .gitignore and never print secrets from environment files. Summarise long command output instead of pasting it. Use the available tools: Bash, Read, Edit and Grep." },
        { "role": "user", "content": "The parser test fails on dates with a time zone offset. Fix it and add a unit test." },
    ])
}

/// The coding agent's request at the length of today's agents' system
/// prompts: its prompt twelve times over (about 3,000 words, 19 KB), as
/// every turn of an agent's session sends it again.
fn long_agent() -> Value {
    let mut messages = agent();
    let prompt = messages[0]["content"].as_str().unwrap().to_owned();
    messages[0]["content"] = json!([prompt.as_str(); 12].join("\n\n"));
    messages
}

/// A deployer's long system prompt that is no tool's own (a support
/// assistant's instructions and policies, about 3,000 words): read by the
/// rules and the learned layers alike.
fn long_deployer() -> Value {
    let mut messages = typical();
    let policy = "Greet the customer by name when it is known. Look up the order in the order tool before answering any question about delivery, and quote the carrier's tracking link rather than guessing a date. Refunds up to fifty euros may be promised when the parcel is more than ten days late; anything above that goes to a human agent with a short summary of the case. Never ask for a full card number or a password. When the customer is upset, acknowledge it in one sentence and move on to the fix. Offer the knowledge-base article that matches the question, and keep answers under 120 words unless the customer asks for detail. Product questions about sizes, materials and care are answered from the catalogue tool; if the catalogue has no answer, say so and offer to pass the question on. Opening hours of the shops are Monday to Saturday, nine to seven.";
    messages[0]["content"] = json!([policy; 20].join("\n\n"));
    messages
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 20_000 } else { 200_000 };
    let start = Instant::now();
    let classifier = Classifier::built_in();
    let load_ms = start.elapsed().as_secs_f64() * 1000.0;

    let typical = typical();
    let risky = risky();
    let words: usize = typical
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().split_whitespace().count())
        .sum();

    // Baseline: serialising the messages, i.e. reading every byte once.
    let baseline = measure(runs, || {
        black_box(serde_json::to_string(black_box(&typical)).unwrap());
    });
    let plain = measure(runs, || {
        black_box(classifier.classify(None, None, black_box(&typical)));
    });
    let with_purpose = measure(runs, || {
        black_box(classifier.classify(
            Some("Internal support assistant"),
            None,
            black_box(&typical),
        ));
    });
    let hit = measure(runs, || {
        black_box(classifier.classify(None, None, black_box(&risky)));
    });
    let agent = agent();
    let tool = measure(runs, || {
        black_box(classifier.classify(None, None, black_box(&agent)));
    });

    let long_agent = long_agent();
    let long_tool = measure(runs / 10, || {
        black_box(classifier.classify(None, None, black_box(&long_agent)));
    });
    let long_deployer = long_deployer();
    let long_own = measure(runs / 10, || {
        black_box(classifier.classify(None, None, black_box(&long_deployer)));
    });
    // The same prompt never seen before: a number in front makes each one
    // new, so every run reads it whole (the cost of a first turn).
    let mut fresh = 0u64;
    let long_fresh = measure(runs / 100, || {
        fresh += 1;
        let mut messages = long_deployer.clone();
        let prompt = format!(
            "Ticket {fresh}. {}",
            messages[0]["content"].as_str().unwrap()
        );
        messages[0]["content"] = json!(prompt);
        black_box(classifier.classify(None, None, black_box(&messages)));
    });

    let us = |ns: u64| ns as f64 / 1000.0;
    println!("Tollgate risk classification (rules and the learned layers, {runs} runs each)");
    println!("  packs compiled in {load_ms:.1} ms; typical request: {words} words in 4 messages");
    println!();
    println!(
        "  {:<34} {:>10} {:>10} {:>10}",
        "", "p50 (us)", "p99 (us)", "p50 ratio"
    );
    let row = |name: &str, (p50, p99): (u64, u64)| {
        println!(
            "  {:<34} {:>10.2} {:>10.2} {:>10.2}",
            name,
            us(p50),
            us(p99),
            p50 as f64 / baseline.0.max(1) as f64
        );
    };
    row("baseline: serde_json::to_string", baseline);
    row("classify, typical request", plain);
    row("classify, typical + purpose", with_purpose);
    row("classify, high-risk request", hit);
    row("classify, coding-agent prompt", tool);
    row("classify, agent prompt 3,000 words", long_tool);
    row("classify, deployer prompt 3,000 w.", long_own);
    row("  the same, read afresh", long_fresh);
    let verdict = |ns: u64| if us(ns) < 50.0 { "met" } else { "NOT met" };
    println!(
        "  aim: well under 50 us -> typical, high-risk and agent requests: {}; a deployer's 3,000-word prompt sent again: {}, read afresh: {}",
        verdict(plain.0.max(hit.0).max(tool.0).max(long_tool.0)),
        verdict(long_own.0),
        verdict(long_fresh.0)
    );

    let report = json!({
        "runs": runs,
        "words": words,
        "load_ms": load_ms,
        "baseline_p50_ns": baseline.0,
        "typical": { "p50_ns": plain.0, "p99_ns": plain.1 },
        "typical_with_purpose": { "p50_ns": with_purpose.0, "p99_ns": with_purpose.1 },
        "high_risk": { "p50_ns": hit.0, "p99_ns": hit.1 },
        "coding_agent": { "p50_ns": tool.0, "p99_ns": tool.1 },
        "coding_agent_3000_words": { "p50_ns": long_tool.0, "p99_ns": long_tool.1 },
        "deployer_prompt_3000_words": { "p50_ns": long_own.0, "p99_ns": long_own.1 },
        "deployer_prompt_3000_words_afresh": { "p50_ns": long_fresh.0, "p99_ns": long_fresh.1 },
    });
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(
        dir.join("classifier.json"),
        serde_json::to_string_pretty(&report).unwrap(),
    );
}
