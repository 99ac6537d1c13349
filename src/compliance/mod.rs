//! EU AI Act risk classification at request time (DESIGN section 5).
//!
//! Every chat request is classified before it goes upstream: prohibited
//! (Article 5), high (Annex III, or Annex I medical devices), limited
//! (Article 50 transparency) or minimal. The classifier is a rule engine
//! whose rules are data (`assets/risk/`, one file per language, replaceable
//! by the operator through `risk_rules_dir`); see [`classifier`] for how a
//! request is read and `docs/compliance.md` for the rule pack format.

pub mod classifier;

pub use classifier::{Classification, Classifier, Grey, Hit, Level, Source};
