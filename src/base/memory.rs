//! Giving back to the system the memory that start-up used and freed.
//!
//! Start-up is the one burst of allocation in the server's life: the risk
//! packs (about 16,000 terms) are parsed and compiled into one automaton,
//! the configuration and the store are read. mimalloc keeps what was freed
//! in its per-thread pages for reuse and purges it only when the same
//! thread allocates again later, so an idle server kept about 40 MB of
//! freed start-up memory resident (measured: 75 MB resident when idle,
//! 37 MB with the pages purged; docs/benchmarks.md). [`StartUp`] makes
//! mimalloc purge what is freed while the server starts, at once, then
//! asks it to purge what is left, on the thread that did the work.
//!
//! Why at once: mimalloc 3 waits a second (`purge_delay`) before it
//! purges freed pages, and purges them only when an allocation or a
//! collection comes after that second. Start-up ends within it, and an idle
//! server allocates nothing, so about 12 MB freed by the last steps of
//! start-up stayed resident for good (52 MB idle instead of 41 to 42,
//! measured 2026-11-28). The delay is restored for serving: purging every
//! freed page at once would cost system calls and page faults per request.

// mimalloc is the binary's global allocator (src/main.rs); naming the crate
// here keeps its C library linked into every build of the library (tests
// and benches included), so the symbol below always resolves.
extern crate mimalloc as _;

use std::ffi::{c_int, c_long};

unsafe extern "C" {
    /// `void mi_collect(bool force)`: frees what the calling thread's heap
    /// holds unused and, with `force`, purges the freed pages back to the
    /// system. Part of mimalloc's stable C API; safe to call at any time
    /// (it only touches mimalloc's own bookkeeping), and a no-op in effect
    /// when mimalloc is not the global allocator (its heaps are then empty).
    safe fn mi_collect(force: bool);
    /// `long mi_option_get(mi_option_t)` and `void mi_option_set(mi_option_t,
    /// long)`: read and set one of mimalloc's options at run time (stable
    /// C API; the enum is a C `int`). Safe: they only read or write
    /// mimalloc's option table.
    safe fn mi_option_get(option: c_int) -> c_long;
    safe fn mi_option_set(option: c_int, value: c_long);
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (its position is
/// kept stable across releases: retired options keep their numbers as
/// `deprecated_` entries). Milliseconds; 0 purges freed pages at once.
const PURGE_DELAY: c_int = 15;

/// Takes the whole pages of `text`, a text embedded in the binary and read
/// once at start-up (the risk models' weights, the rule packs), out of the
/// process's resident memory. They are clean pages of the binary's
/// read-only mapping: `MADV_DONTNEED` drops them, and a later read (a test
/// that parses the text again) faults them back in from the file, as at
/// the first read. Measured: about 4.5 MB less resident when idle
/// (docs/benchmarks.md, "Idle memory without huge pages").
pub fn forget_embedded(text: &'static str) {
    let page = 4096usize;
    let start = (text.as_ptr() as usize).next_multiple_of(page);
    let end = (text.as_ptr() as usize + text.len()) / page * page;
    if end > start {
        // SAFETY: the range lies inside `text`, a `'static` read-only
        // mapping of the binary that nothing writes; `MADV_DONTNEED` on it
        // only drops resident copies of the file's pages, and every later
        // read sees the same bytes again. An error (none expected) leaves
        // the pages resident, which is harmless.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
        }
    }
}

/// The server's start-up, as mimalloc sees it: from [`StartUp::begin`]
/// (before the configuration and its risk packs are read) to
/// [`StartUp::done`] (listening, before the first request), every freed
/// page is purged at once.
#[must_use = "the purge delay is restored by `done`"]
pub struct StartUp {
    delay: c_long,
}

impl StartUp {
    pub fn begin() -> StartUp {
        let delay = mi_option_get(PURGE_DELAY);
        mi_option_set(PURGE_DELAY, 0);
        StartUp { delay }
    }

    /// Purges what the calling thread's heap still holds freed and gives
    /// mimalloc back its purge delay for serving. Called on the thread
    /// that built everything.
    pub fn done(self) {
        mi_collect(true);
        mi_option_set(PURGE_DELAY, self.delay);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_up_sets_the_purge_delay_to_none_and_done_restores_it() {
        let before = mi_option_get(PURGE_DELAY);
        let start = StartUp::begin();
        assert_eq!(mi_option_get(PURGE_DELAY), 0);
        start.done();
        assert_eq!(mi_option_get(PURGE_DELAY), before);
    }
}
