//! Escalation: an Annex III hit in the conditions of an Article 5
//! practice (twentieth round). Remote identification of faces is Article
//! 5(1)(h) with a live signal and a police or public place, and Article
//! 5(1)(e) with scraping; emotion recognition is Article 5(1)(f) with
//! workers or students. The conditions may be told anywhere in the
//! request, as the practice is described across turns and sentences; the
//! rule table says which rule escalates which (`escalates_from`) and which
//! of its terms it needs. Split from `matching.rs`, which calls it.

use super::matching::{Scanned, Tally};
use super::pack::Role;
use super::spans::Found;
use super::{Classifier, Source};

impl Classifier {
    /// An Annex III hit in the conditions of an Article 5 practice
    /// (twentieth round): the rule marked `escalates_from` it hits too when
    /// the request also holds its terms of the kinds it needs, anywhere in
    /// the texts read (not a tool's own prompt, not a pasted document).
    /// Remote identification of faces with a live signal and a police or
    /// public place is Article 5(1)(h); with scraping, Article 5(1)(e);
    /// emotion recognition with workers or students, Article 5(1)(f). Not
    /// when a carve-out of the practice or an exception marker is there.
    pub(super) fn escalate(&self, s: &Scanned, tally: &mut Tally) {
        let rules = &self.compiled.rules;
        // Most requests have no hit a rule escalates from: the finds read
        // are gathered only for one that has.
        let mut read: Option<Vec<&Found>> = None;
        for (rule, meta) in rules.iter().enumerate() {
            let Some((from, needs)) = &meta.escalates_from else {
                continue;
            };
            let r = rule as u16;
            let Some(&(_, source, _)) = tally.hits.iter().find(|h| h.0 == *from) else {
                continue;
            };
            if tally.hits.iter().any(|h| h.0 == rule)
                || s.exception(rule).is_some()
                || read
                    .get_or_insert_with(|| {
                        s.texts
                            .iter()
                            .zip(&s.found)
                            .filter(|((source, _), _)| {
                                !(s.tool_prompt && *source == Source::Instructions)
                            })
                            .flat_map(|(_, found)| found)
                            .collect()
                    })
                    .iter()
                    .any(|f| f.role == Role::Suppressor(r))
            {
                continue;
            }
            let words: Option<Vec<String>> = needs
                .iter()
                .map(|need| {
                    let role = need.role(r);
                    s.texts
                        .iter()
                        .zip(&s.found)
                        .find_map(|((source, text), found)| {
                            if s.tool_prompt && *source == Source::Instructions {
                                return None;
                            }
                            let f = found.iter().find(|f| f.role == role)?;
                            Some(format!("\"{}\"", text.words(f.token, f.last)))
                        })
                })
                .collect();
            if let Some(words) = words {
                let evidence = format!(
                    "{} with {} in the same request",
                    rules[*from].id,
                    words.join(" and ")
                );
                tally.hits.push((rule, source, evidence));
            }
        }
    }
}
