//! Refusals of unauthenticated inference requests (no key, an unknown
//! key): counted by the metrics layer (`tollgate_errors_total`) and logged
//! here, at most once per source address and minute, never stored.
//!
//! Anyone can send such a request, with any path up to the header limit,
//! as fast as the network allows; writing each to the audit log let one
//! client grow the store by megabytes a second. A log line per source and
//! minute, with the path cut short and the count of the source's refusals
//! in its previous minute, tells the operator who is knocking without
//! letting the knocking fill the disk or the journal.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

/// The longest part of a path kept in a log line or an audit entry, in
/// bytes.
pub const MAX_LOGGED_PATH: usize = 256;

/// Sources remembered at most; past this, minutes that ended are
/// forgotten, and sources that still find no room share one window with
/// the unknown source (one line a minute for all of them).
const MAX_SOURCES: usize = 10_000;

/// `path` cut to [`MAX_LOGGED_PATH`] bytes (on a character boundary).
pub fn bounded_path(path: &str) -> &str {
    if path.len() <= MAX_LOGGED_PATH {
        return path;
    }
    let mut end = MAX_LOGGED_PATH;
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    &path[..end]
}

#[derive(Debug, Clone, Copy)]
struct Window {
    minute: i64,
    count: u64,
}

/// Per source, the refusals of its current minute.
#[derive(Debug, Default)]
pub struct RefusalLog {
    sources: Mutex<HashMap<Option<IpAddr>, Window>>,
}

/// What to log for one refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The source's first refusal this minute: log it, with the count of
    /// its refusals in the minute it was last seen.
    Log { previous: u64 },
    /// Already logged this minute: counted only.
    Quiet,
}

impl RefusalLog {
    /// Counts a refusal from `source` at `now_ms` and says whether to log it.
    pub fn note(&self, source: Option<IpAddr>, now_ms: i64) -> Verdict {
        let minute = now_ms.div_euclid(60_000);
        let mut sources = self.sources.lock().unwrap_or_else(|e| e.into_inner());
        let mut source = source;
        if sources.len() >= MAX_SOURCES && !sources.contains_key(&source) {
            sources.retain(|_, w| w.minute == minute);
            if sources.len() >= MAX_SOURCES {
                source = None;
            }
        }
        let window = sources.entry(source).or_insert(Window { minute, count: 0 });
        if window.minute == minute && window.count > 0 {
            window.count += 1;
            return Verdict::Quiet;
        }
        let previous = if window.minute == minute {
            0
        } else {
            window.count
        };
        *window = Window { minute, count: 1 };
        Verdict::Log { previous }
    }

    /// Notes a refusal and logs it if it is the source's first this minute.
    pub fn refused(&self, source: Option<IpAddr>, path: &str, code: &str, now_ms: i64) {
        if let Verdict::Log { previous } = self.note(source, now_ms) {
            let source = source.map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
            // When the table is full the count is that of every untracked
            // source; the line still names the one that opened the minute.
            tracing::warn!(
                %source,
                path = bounded_path(path),
                path_bytes = path.len(),
                code,
                refused_in_previous_minute = previous,
                "unauthenticated request refused (logged once per source and minute; every refusal is counted in tollgate_errors_total)"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_is_logged_once_a_minute_with_the_count_of_its_last_minute() {
        let log = RefusalLog::default();
        let a = Some(IpAddr::from([10, 0, 0, 1]));
        let b = Some(IpAddr::from([10, 0, 0, 2]));
        assert_eq!(log.note(a, 0), Verdict::Log { previous: 0 });
        for _ in 0..9 {
            assert_eq!(log.note(a, 30_000), Verdict::Quiet);
        }
        assert_eq!(log.note(b, 30_000), Verdict::Log { previous: 0 });
        assert_eq!(log.note(a, 60_000), Verdict::Log { previous: 10 });
        assert_eq!(log.note(a, 60_001), Verdict::Quiet);
    }

    #[test]
    fn paths_are_cut_on_a_character_boundary() {
        assert_eq!(bounded_path("/v1/x"), "/v1/x");
        let long = format!("/v1/{}", "é".repeat(300));
        let cut = bounded_path(&long);
        assert!(cut.len() <= MAX_LOGGED_PATH && long.starts_with(cut));
    }

    #[test]
    fn the_table_of_sources_stays_bounded() {
        let log = RefusalLog::default();
        for i in 0..(MAX_SOURCES as u32 + 50) {
            log.note(Some(IpAddr::from(i.to_be_bytes())), 0);
        }
        assert!(log.sources.lock().unwrap().len() <= MAX_SOURCES + 1);
        // The sources beyond the table share one window: one line a minute.
        let late = Some(IpAddr::from([9, 9, 9, 9]));
        assert_eq!(log.note(late, 1), Verdict::Quiet);
        log.note(Some(IpAddr::from([1, 2, 3, 4])), 60_000);
        assert!(log.sources.lock().unwrap().len() <= MAX_SOURCES + 1);
    }
}
