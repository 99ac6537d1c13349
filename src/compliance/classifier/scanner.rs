//! The term scanner: where the terms of every pack occur in a normalised
//! text.
//!
//! Almost every term must start at a token start, so instead of one
//! unanchored Aho-Corasick pass over every byte (which reports each "a",
//! "de" or "in" inside every word, only for most of them to be dropped), the
//! terms are one trie walked from each token start until no term continues
//! (a multi-word term walks on through the spaces). Only the few `*term`s,
//! which may start inside a token (German and Dutch compounds), take an
//! unanchored pass of their own. The occurrences come out in the order of
//! an overlapping Aho-Corasick search (by end, then start, then term), so
//! what is found, and in which order, is what one pass over the text gives.

use aho_corasick::automaton::Automaton;
use aho_corasick::nfa::contiguous::NFA;
use aho_corasick::{AhoCorasick, Anchored, MatchKind};

/// One occurrence: end byte, start byte, term number.
pub(super) type Occurrence = (u32, u32, u32);

pub(super) struct Scanner {
    /// The terms that start at a token start, walked from each one.
    anchored: NFA,
    /// The term number of each pattern of `anchored`.
    anchored_terms: Vec<u32>,
    /// The `*term`s, which may start anywhere: one unanchored pass.
    infix: Option<AhoCorasick>,
    /// The term number of each pattern of `infix`.
    infix_terms: Vec<u32>,
}

impl Scanner {
    /// Compiles the terms (`texts`, numbered by position); `is_infix` says
    /// which may start inside a token.
    pub fn new(texts: &[String], is_infix: impl Fn(usize) -> bool) -> Result<Scanner, String> {
        let (mut anchored, mut infix) = (Vec::new(), Vec::new());
        let (mut anchored_terms, mut infix_terms) = (Vec::new(), Vec::new());
        for (i, text) in texts.iter().enumerate() {
            let term = u32::try_from(i).map_err(|_| "too many terms".to_owned())?;
            if is_infix(i) {
                infix.push(text.as_str());
                infix_terms.push(term);
            } else {
                anchored.push(text.as_str());
                anchored_terms.push(term);
            }
        }
        let anchored = NFA::builder()
            .match_kind(MatchKind::Standard)
            .build(&anchored)
            .map_err(|e| e.to_string())?;
        let infix = if infix.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .build(&infix)
                    .map_err(|e| e.to_string())?,
            )
        };
        Ok(Scanner {
            anchored,
            anchored_terms,
            infix,
            infix_terms,
        })
    }

    /// Every occurrence in `text` (whose tokens start at `starts`) of a term
    /// that starts at a token start, or anywhere for a `*term`, into `out`
    /// (cleared first), ordered by end, start and term.
    pub fn scan(&self, text: &str, starts: &[u32], out: &mut Vec<Occurrence>) {
        out.clear();
        let bytes = text.as_bytes();
        let nfa = &self.anchored;
        // An NFA always supports anchored searches.
        let Ok(start_state) = nfa.start_state(Anchored::Yes) else {
            return;
        };
        for &from in starts {
            let mut state = start_state;
            for (at, &byte) in bytes.iter().enumerate().skip(from as usize) {
                state = nfa.next_state(Anchored::Yes, state, byte);
                if nfa.is_dead(state) {
                    break;
                }
                if !nfa.is_match(state) {
                    continue;
                }
                let end = at + 1;
                for i in 0..nfa.match_len(state) {
                    let pattern = nfa.match_pattern(state, i);
                    // A match state also lists the terms that end here but
                    // start later (Aho-Corasick copies them along failure
                    // links); those are found from their own token start.
                    if end - nfa.pattern_len(pattern) == from as usize {
                        out.push((end as u32, from, self.anchored_terms[pattern.as_usize()]));
                    }
                }
            }
        }
        if let Some(infix) = &self.infix {
            for m in infix.find_overlapping_iter(text) {
                out.push((
                    m.end() as u32,
                    m.start() as u32,
                    self.infix_terms[m.pattern().as_usize()],
                ));
            }
        }
        out.sort_unstable();
    }
}
