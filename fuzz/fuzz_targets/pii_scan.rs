//! Any text through the PII detectors and a redaction round trip
//! (`tollgate::pii`), which index the text's bytes by hand:
//!
//! - the scan never panics, and every span is inside the text, not empty,
//!   on character boundaries, in order and not overlapping;
//! - redacting then restoring gives the text back when it holds no `[`
//!   (a placeholder-shaped string the caller wrote would be restored too).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tollgate::pii::{Mode, Session, detect};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut last_end = 0;
    for span in detect::scan(&text) {
        assert!(span.start < span.end && span.end <= text.len(), "{span:?}");
        assert!(span.start >= last_end, "overlapping {span:?}");
        assert!(
            text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
            "{span:?} splits a character"
        );
        last_end = span.end;
    }
    let mut session = Session::new(Mode::Upstream, &[]);
    let redacted = session.redact(&text).into_owned();
    if !text.contains('[') {
        assert_eq!(session.restore(&redacted), text, "the round trip");
    }
});
