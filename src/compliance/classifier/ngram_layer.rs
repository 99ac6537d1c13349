//! The n-gram layer's decisions on a classification (split from
//! `ngram.rs`, whose models they read): the raise of a minimal or limited
//! result, the escalation of a high one, the raise of a minimal one to
//! limited, and the overrule of an accidental match. Design and thresholds: `ngram.rs` and docs/compliance.md, steps 12
//! and 13.

use super::super::lexical::Lexical;
use super::super::text::Normalised;
use super::super::{Classification, Grey, Hit, Level, SetAside, Source};
use super::{Ngram, Overrule, Scores, sigmoid};
use std::cell::OnceCell;

impl Ngram {
    /// Raises `c`: a minimal or limited result in a domain the rules found
    /// to high when p(risky) reaches its threshold, and to prohibited when
    /// p(prohibited) also reaches its own. Never lowers. A text the rules read
    /// as a use that decides nothing (`skip`: a tool's own prompt, fiction,
    /// research, the Act) gives no features, and a raise to an area the
    /// rules set aside is stopped as in the lexical layer: on the first
    /// independent batch that check cost five true raises, but without it
    /// the near-misses the rules exist for (a company's credit risk, fraud
    /// checks on loans, a GPU driver's performance) were raised.
    /// A minimal result the `risky` model does not raise may still go to
    /// limited ([`Ngram::disclose`]), unless `held` says a suppressor of an
    /// Article 50 rule stands in the request (`article50::held_back`; asked
    /// only when that raise is reached).
    pub(in crate::compliance::classifier) fn raise(
        &self,
        c: &mut Classification,
        texts: &[(Source, Normalised); 3],
        lexical: &Lexical,
        skip: [bool; 3],
        held: impl FnOnce() -> bool,
    ) {
        if c.level == Level::High {
            self.escalate(c, texts, lexical, skip);
            return;
        }
        if c.level >= Level::High || built(c) {
            return;
        }
        // Read once for both raises, and only when one may need it.
        let scores = OnceCell::new();
        if (!domain(c) || !self.raise_risky(c, texts, lexical, skip, &scores)) && !held() {
            self.disclose(c, texts, lexical, skip, &scores);
        }
    }

    /// The raise to high or prohibited of [`Ngram::raise`], in a domain
    /// the rules found; whether it raised.
    fn raise_risky(
        &self,
        c: &mut Classification,
        texts: &[(Source, Normalised); 3],
        lexical: &Lexical,
        skip: [bool; 3],
        scores: &OnceCell<Scores>,
    ) -> bool {
        // A match the rules set aside for a framing holds back a raise,
        // unless the models are surer than for an unframed request: the
        // framing words ("explain", "vendor", "lettre de motivation") are
        // a sentence's, the models read the whole request (twenty-sixth
        // round).
        let framed = stopped(c);
        let threshold = match (framed, self.framed) {
            (false, _) => self.risky.threshold,
            (true, Some(framed)) => framed,
            (true, None) => return false,
        };
        let scores = *scores.get_or_init(|| self.scores(texts, skip));
        if scores.risky < threshold {
            return false;
        }
        let level = if scores.prohibited >= self.prohibited.threshold {
            Level::Prohibited
        } else {
            Level::High
        };
        let area = match level {
            Level::Prohibited => lexical.likeliest(texts, skip, Level::Prohibited),
            _ => lexical.likeliest(texts, skip, Level::High),
        };
        let Some(area) = area else { return false };
        let (p, model) = match level {
            Level::Prohibited => (scores.prohibited, self.prohibited),
            _ => (scores.risky, self.risky),
        };
        let evidence = format!(
            "p({level}{}) = {p:.3} (threshold {:.3}{})",
            if level == Level::High {
                " or above"
            } else {
                ""
            },
            if level == Level::High {
                threshold
            } else {
                model.threshold
            },
            if framed {
                ", for a request whose matches the rules set aside"
            } else {
                ""
            }
        );
        learned_hit(c, &area, level, "the request", "of that level", evidence);
        true
    }

    /// Raises a minimal result to limited when the `limited` model reaches
    /// its threshold, in any domain: a system set up to talk with people
    /// as a person would, media of a real person or event made to pass as
    /// real, text for the public that no one reads first are told in the
    /// words of every trade, which the Article 50 rules' anchors cannot
    /// list (on two Article 50 sets written independently and never read,
    /// 26 and 20 of 60 such cases limited before, 45 and 44 with the model;
    /// docs/compliance.md, "Twenty-seventh round"). Not when the rules set
    /// an Article 50 match aside (the deployment says it is an AI, talk
    /// about the topic, a fiction): that is the rules' reading of the very
    /// duty; a match only in a pasted document (a voice agent's
    /// configuration pasted for review) was not read, and holds nothing
    /// back. Nor when `held` ([`Ngram::raise`]). Its hit names the
    /// lexical model's likeliest Article 50 area and is a grey zone a judge
    /// may review.
    fn disclose(
        &self,
        c: &mut Classification,
        texts: &[(Source, Normalised); 3],
        lexical: &Lexical,
        skip: [bool; 3],
        scores: &OnceCell<Scores>,
    ) {
        let Some(model) = self.limited else { return };
        if c.level != Level::Minimal
            || skip.iter().all(|&s| s)
            || c.set_aside
                .iter()
                .any(|s| article50(&s.rule) && !s.in_pasted_document())
        {
            return;
        }
        let p = scores.get_or_init(|| self.scores(texts, skip)).limited;
        if p < model.threshold {
            return;
        }
        let Some(area) = lexical.likeliest(texts, skip, Level::Limited) else {
            return;
        };
        let evidence = format!("p(limited) = {p:.3} (threshold {:.3})", model.threshold);
        learned_hit(
            c,
            &area,
            Level::Limited,
            "the request",
            "Article 50 duty",
            evidence,
        );
    }

    /// Moves a high result to prohibited when the `prohibited` model is
    /// sure of it (p at least the `escalate` threshold, and p(risky) at
    /// least the raise's): the conditions that make an Annex III use an
    /// Article 5 practice (the workplace or a school for emotions, real
    /// time and the police for faces, traits alone for crime risk) are
    /// often told in words no rule holds, and the model, trained on both
    /// levels' cases, tells them apart (twenty-sixth round; until then a
    /// high result was the rules' alone). Its hit names the likeliest
    /// Article 5 area and is a content-only grey zone: a judge may lower
    /// it. Not when the rules set a match aside because the user has
    /// software built.
    fn escalate(
        &self,
        c: &mut Classification,
        texts: &[(Source, Normalised); 3],
        lexical: &Lexical,
        skip: [bool; 3],
    ) {
        let Some(threshold) = self.escalate else {
            return;
        };
        if built(c) {
            return;
        }
        let scores = self.scores(texts, skip);
        if scores.prohibited < threshold || scores.risky < self.risky.threshold {
            return;
        }
        let Some(area) = lexical.likeliest(texts, skip, Level::Prohibited) else {
            return;
        };
        let evidence = format!(
            "p(prohibited) = {:.3} (threshold {threshold:.3}, for a high result)",
            scores.prohibited
        );
        learned_hit(
            c,
            &area,
            Level::Prohibited,
            "a request the rules found high-risk",
            "Article 5 practice",
            evidence,
        );
    }

    /// The highest p(risky) of one sentence read alone, over the sentences
    /// of the texts read: a listed use stated in one line of a long prompt
    /// is not outweighed by the rest of it.
    fn sentence_max(&self, texts: &[(Source, Normalised); 3], skip: [bool; 3]) -> f64 {
        let mut best = 0.0_f64;
        for ((_, text), _) in texts.iter().zip(skip).filter(|(_, skip)| !skip) {
            let n = text.starts.len();
            let mut first = 0;
            while first < n {
                let mut last = first;
                while last + 1 < n && text.sentences[last + 1] == text.sentences[first] {
                    last += 1;
                }
                let start = text.starts[first] as usize;
                let end = text
                    .starts
                    .get(last + 1)
                    .map_or(text.text.len(), |&s| s as usize);
                let counts = self.rows_of(&text.text[start..end], last + 1 - first);
                let (mut sum, mut total) = (0.0, 0);
                for &(row, n) in &counts.order {
                    total += n;
                    sum += f64::from(self.rows[row as usize][0]) * f64::from(n).sqrt();
                }
                if total > 0 {
                    let z = self.risky.bias + sum / f64::from(total).sqrt().sqrt();
                    best = best.max(sigmoid(z));
                }
                first = last + 1;
            }
        }
        best
    }

    /// Sets aside a high or prohibited result that rests on the
    /// conversation alone when the `risky` model reads the request as no
    /// listed use: p(risky) under the `overrule` threshold, and under its
    /// second threshold for each sentence read alone (a bag of features
    /// averages a long prompt, so one line that states a practice among
    /// fifty of store policy would read as ordinary as a whole). The rules'
    /// high and prohibited hits become matches set aside (with the model's
    /// probabilities as the reason), the level falls to what the rules' other
    /// hits give (limited or minimal), and each such rule is a grey zone
    /// ([`Grey::Overruled`]) a judge may raise back.
    ///
    /// Why: on ordinary traffic written independently, a rule's anchor
    /// and act meet by accident ("Mastercard" and "accept", a courier's
    /// route and "rate", a carbon footprint and "identification"), in any
    /// language and at a rate no round of terms has brought down; the
    /// model, which weighs every run of characters of the request, gives
    /// such requests a p(risky) near zero while it gives the practices the
    /// rules catch far more (docs/compliance.md, "Twenty-fifth round").
    ///
    /// Never overruled: a hit from the declared purpose (a declared use is
    /// never lowered), a result a learned layer raised, a hit of a rule
    /// `kept` says the model may not set aside (`not_overruled` in the
    /// rule table), and a request whose every text the rules read as a use
    /// that decides nothing (`skip`: the models then read no features at
    /// all).
    pub(in crate::compliance::classifier) fn overrule(
        &self,
        c: &mut Classification,
        texts: &[(Source, Normalised); 3],
        skip: [bool; 3],
        kept: impl Fn(&str) -> bool,
    ) {
        let Some(Overrule { below, line }) = self.overrule else {
            return;
        };
        if c.level < Level::High || skip.iter().all(|&s| s) {
            return;
        }
        let counts = |h: &Hit| h.level >= Level::High;
        let learned = |h: &Hit| h.rule.starts_with("ngram:") || h.rule.starts_with("lexical:");
        if c.hits
            .iter()
            .any(|h| counts(h) && (h.source == Source::Purpose || learned(h) || kept(&h.rule)))
        {
            return;
        }
        let scores = self.scores(texts, skip);
        if scores.risky >= below {
            return;
        }
        // The whole request reads as ordinary; so must each sentence.
        let sentence = self.sentence_max(texts, skip);
        if sentence >= line {
            return;
        }
        let (lowered, rest): (Vec<Hit>, Vec<Hit>) =
            std::mem::take(&mut c.hits).into_iter().partition(counts);
        c.hits = rest;
        c.level = c
            .hits
            .iter()
            .map(|h| h.level)
            .max()
            .unwrap_or(Level::Minimal);
        for hit in lowered {
            let rule = hit.rule;
            c.grey
                .retain(|g| !matches!(g, Grey::ContentOnly { rule: r } if *r == rule));
            if !c
                .grey
                .iter()
                .any(|g| matches!(g, Grey::Overruled { rule: r } if *r == rule))
            {
                c.grey.push(Grey::Overruled { rule: rule.clone() });
            }
            c.set_aside.push(SetAside {
                rule,
                source: hit.source,
                why: format!(
                    "{}, but the learned n-gram model reads the request as no listed use: p(prohibited or high) = {:.4}, under {below}, and at most {sentence:.3} for one sentence, under {line}",
                    hit.evidence, scores.risky
                ),
            });
        }
    }
}

/// Whether the rules found a regulated domain in the request (an anchor:
/// applicants, tenants, pupils, the police...), or some hit of their own.
/// The layer reads only such requests: trained on labelled cases alone, the
/// models read an article summary or a restaurant's takings as risky
/// (docs/compliance.md, "The n-gram layer", ordinary traffic).
pub(in crate::compliance::classifier) fn domain(c: &Classification) -> bool {
    c.hits.iter().any(|h| !h.rule.starts_with("ngram:"))
        || c.set_aside.iter().any(SetAside::lacked_only_object)
        || c.grey
            .iter()
            .any(|g| matches!(g, Grey::AnchorWithoutAct { .. }))
}

/// Whether the rules found a practice's terms and set them aside for a
/// framing: no person near them ("monitor the GPU driver"), a company, a
/// carve-out (fraud checks), talk about the topic ("how is the score
/// calculated"), a negation. Whatever area that was, the request is
/// raised only from the `framed` threshold, above the usual one (until the
/// twenty-sixth round: never). A missing object of the rule is a
/// vocabulary gap the models may fill, as the lexical layer.
pub(in crate::compliance::classifier) fn stopped(c: &Classification) -> bool {
    c.set_aside.iter().any(|s| !s.lacked_only_object())
}

/// Puts the layer's hit first in `c` at `level`, naming `area` (the
/// lexical model's likeliest `of_level`) and what was `read`, with the
/// probability and threshold as `evidence`; a content-only grey zone a
/// judge may review.
fn learned_hit(
    c: &mut Classification,
    area: &str,
    level: Level,
    read: &str,
    of_level: &str,
    evidence: String,
) {
    let hit = Hit {
        rule: format!("ngram:{area}"),
        level,
        summary: format!(
            "{area}, as the learned character n-gram model reads {read} (a second signal beside the rules: it can raise a result, never lower one; the area is the lexical model's likeliest {of_level})"
        ),
        source: Source::Content,
        evidence,
    };
    c.level = level;
    c.grey.push(Grey::ContentOnly {
        rule: hit.rule.clone(),
    });
    c.hits.insert(0, hit);
}

/// Whether `rule` is one of Article 50's (limited: the transparency
/// duties), by the taxonomy's ids.
fn article50(rule: &str) -> bool {
    rule.starts_with("art50_")
}

/// Whether the rules set a match aside because the user has software
/// built: building an Annex III system is not using it (TAXONOMY rule 4),
/// which the models, reading the same words either way, cannot tell. Such
/// a request is never raised.
pub(in crate::compliance::classifier) fn built(c: &Classification) -> bool {
    c.set_aside
        .iter()
        .any(|s| s.why.ends_with(super::super::exceptions::BUILDING))
}
