//! One text read: normalised, scanned and its language told; and the long
//! instructions read lately, kept for the next request that sends them
//! again ([`crate::base::recent`]).
//!
//! An agent or a deployed assistant sends the same system prompt with every
//! turn: reading a 3,000-word prompt took 200 to 680 µs of a classification
//! whose user turn takes about 10 (`cargo bench --bench classifier`,
//! docs/compliance.md). What the scan finds in a text, and what the learned
//! layers derive from it ([`Derived`](super::text::Derived), filled when
//! first read), depend on that text alone, so a repeated text's reading is
//! copied from the last one.

use crate::base::recent::{self, Weigh};

use super::pack::{Edge, Role};
use super::spans::{Found, dominant_language};
use super::text::{self, Normalised};
use super::{Classifier, documents, exceptions};

/// At most this many texts kept.
pub(super) const ENTRIES: usize = 32;
/// At most about this many bytes held (texts, token tables, the layers'
/// features).
const BYTES: usize = 16 << 20;

/// The long instructions read lately.
pub(super) type Recent = recent::Recent<Scan>;

/// A classifier's kept readings.
pub(super) fn kept() -> Recent {
    Recent::new(ENTRIES, BYTES)
}

/// What the reading of one text found: the normalised text (its language
/// set), the terms, the stop words counted per language, and the token
/// ranges of the documents pasted into it ([`documents::locate`]; none
/// for a declared use, which is never read for documents).
#[derive(Clone)]
pub(super) struct Scan {
    pub text: Normalised,
    pub found: Vec<Found>,
    pub stopwords: Vec<usize>,
    pub blocks: Vec<(u32, u32)>,
}

impl Weigh for Scan {
    /// The normalised text, its token tables, its terms, and the layers'
    /// features once read.
    fn bytes(&self) -> usize {
        let text = &self.text;
        let derived = &text.derived;
        text.text.len()
            + 4 * (text.starts.len() + text.sentences.len())
            + std::mem::size_of::<Found>() * self.found.len()
            + 8 * self.blocks.len()
            + derived.ngram.get().map_or(0, |reading| reading.bytes())
            + derived
                .lexical
                .get()
                .map_or(0, |features| 4 * features.len())
    }
}

impl Classifier {
    /// Reads one text: normalised, scanned, its language told by its stop
    /// words; terms whose `disabled` entry is true left out; the documents
    /// pasted into it located if it may hold some (`pasted`).
    pub(super) fn read_text(&self, raw: &str, disabled: Option<&[bool]>, pasted: bool) -> Scan {
        let mut text = text::normalise(raw);
        let mut stopwords = vec![0; self.compiled.languages.len()];
        let found = exceptions::without_machines(self.scan(&text, disabled, &mut stopwords));
        text.language = dominant_language(&stopwords);
        let blocks = match pasted {
            true => documents::locate(raw, &text),
            false => Vec::new(),
        };
        Scan {
            text,
            found,
            stopwords,
            blocks,
        }
    }

    /// Every term found in `text`, with its token; stop words are only
    /// counted, per language, into `stopwords`.
    fn scan(
        &self,
        text: &Normalised,
        disabled: Option<&[bool]>,
        stopwords: &mut [usize],
    ) -> Vec<Found> {
        let mut found = Vec::new();
        let mut occurrences = Vec::with_capacity(text.starts.len());
        self.compiled
            .scanner
            .scan(&text.text, &text.starts, &mut occurrences);
        for (end, start, pattern) in occurrences {
            let (start, end, pattern) = (start as usize, end as usize, pattern as usize);
            if disabled.is_some_and(|d| d[pattern]) {
                continue;
            }
            let (edge, roles) = &self.compiled.patterns[pattern];
            let fits = match edge {
                Edge::Infix | Edge::Prefix => true,
                Edge::Word => text.is_token_end(end),
            };
            if fits {
                let token = text.token_at(start) as u32;
                let last = text.token_at(end - 1) as u32;
                for &role in roles {
                    match role {
                        Role::Stopword(lang) => stopwords[lang as usize] += 1,
                        role => found.push(Found {
                            role,
                            pattern: pattern as u32,
                            token,
                            last,
                        }),
                    }
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Classifier, Level};
    use serde_json::{Value, json};

    /// A deployer's long prompt (over the shortest kept) around `middle`.
    fn long_prompt(middle: &str) -> String {
        let policy = "Answer questions about orders, deliveries and returns politely and briefly, quote the tracking link from the order tool, and pass anything about refunds above fifty euros to a human colleague with a short summary.";
        let half = [policy; 8].join(" ");
        format!("{half} {middle} {half}")
    }

    fn request(system: &str, user: &str) -> Value {
        json!([
            { "role": "system", "content": system },
            { "role": "user", "content": user },
        ])
    }

    #[test]
    fn a_repeated_long_prompt_is_read_once_and_classified_as_afresh() {
        let kept = Classifier::built_in();
        let system = long_prompt("Keep the tone warm.");
        assert!(super::Recent::keeps(&system));
        let users = [
            "Where is my parcel? It was due on Monday.",
            "Rank these three applicants for the warehouse job and reject the weakest one.",
            "Can I return shoes I wore once?",
        ];
        for user in users {
            let messages = request(&system, user);
            let again = kept.classify(None, None, &messages);
            let afresh = Classifier::built_in().classify(None, None, &messages);
            assert_eq!(again, afresh, "{user}");
        }
        assert_eq!(kept.recent.len(), 1);
        // The high-risk turn is still read under the kept prompt.
        let hit = kept.classify(None, None, &request(&system, users[1]));
        assert_eq!(hit.level, Level::High);
    }

    #[test]
    fn a_prompt_of_the_same_length_start_and_end_is_no_hit() {
        // Only the middle differs: the fingerprint is the same, the text
        // is not, and the second prompt is read for itself.
        let kept = Classifier::built_in();
        let harmless = long_prompt("Keep the tone warm and friendly with every customer, always.");
        let risky = long_prompt("Score each applicant's CV and reject the weakest candidates.");
        assert_eq!(harmless.len(), risky.len());
        assert_eq!(
            crate::base::recent::fingerprint(&harmless),
            crate::base::recent::fingerprint(&risky)
        );
        let user = "Here is the next one.";
        let first = kept.classify(None, None, &request(&harmless, user));
        let second = kept.classify(None, None, &request(&risky, user));
        // Limited: a deployment before the public (Article 50(1)).
        assert_eq!(first.level, Level::Limited);
        assert_eq!(second.level, Level::High);
        assert_eq!(
            first,
            Classifier::built_in().classify(None, None, &request(&harmless, user))
        );
        assert_eq!(
            second,
            Classifier::built_in().classify(None, None, &request(&risky, user))
        );
        assert_eq!(kept.recent.len(), 2);
    }

    #[test]
    fn a_document_pasted_into_a_kept_prompt_is_set_aside_every_time() {
        // The document's token ranges are kept with the prompt's reading:
        // a turn sent again under it sets the handbook's recruitment and
        // staff terms aside as the first reading did.
        let kept = Classifier::built_in();
        let half = long_prompt("Quote the handbook section you rely on.");
        let system = format!(
            "{half}\nExcerpt from the HR handbook: Managers rank the applicants for every opening, reject the weakest candidates and score each employee's performance every quarter.\n\n{half}"
        );
        let messages = request(
            &system,
            "How many days of annual leave do I get in my first year?",
        );
        let afresh = Classifier::built_in().classify(None, None, &messages);
        assert!(
            afresh
                .set_aside
                .iter()
                .any(|s| s.rule == "annex3_4a_recruitment" && s.why.contains("pasted document")),
            "{afresh:#?}"
        );
        for _ in 0..2 {
            assert_eq!(kept.classify(None, None, &messages), afresh);
        }
        assert_eq!(kept.recent.len(), 1);
    }

    #[test]
    fn the_kept_texts_are_bounded() {
        let kept = Classifier::built_in();
        for i in 0..(super::ENTRIES + 8) {
            let system = long_prompt(&format!("Ticket queue number {i}."));
            kept.classify(None, None, &request(&system, "Next ticket, please."));
        }
        assert_eq!(kept.recent.len(), super::ENTRIES);
        // A short prompt is read every time and never kept.
        let short = Classifier::built_in();
        short.classify(None, None, &request("You are a helpful assistant.", "Hi"));
        assert_eq!(short.recent.len(), 0);
    }
}
