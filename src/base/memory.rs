//! Giving back to the system the memory that start-up used and freed.
//!
//! Start-up is the one burst of allocation in the server's life: the risk
//! packs (about 16,000 terms) are parsed and compiled into one automaton,
//! the configuration and the store are read. mimalloc keeps what was freed
//! in its per-thread pages for reuse and purges it only when the same
//! thread allocates again later, so an idle server kept about 40 MB of
//! freed start-up memory resident (measured: 75 MB resident when idle,
//! 37 MB with the pages purged; docs/benchmarks.md). [`release_freed`] asks
//! mimalloc to purge them now, once, on the thread that did the work.

// mimalloc is the binary's global allocator (src/main.rs); naming the crate
// here keeps its C library linked into every build of the library (tests
// and benches included), so the symbol below always resolves.
extern crate mimalloc as _;

unsafe extern "C" {
    /// `void mi_collect(bool force)`: frees what the calling thread's heap
    /// holds unused and, with `force`, purges the freed pages back to the
    /// system. Part of mimalloc's stable C API; safe to call at any time
    /// (it only touches mimalloc's own bookkeeping), and a no-op in effect
    /// when mimalloc is not the global allocator (its heaps are then empty).
    safe fn mi_collect(force: bool);
}

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

/// Purges the pages freed by the calling thread. Called once, after
/// start-up and before serving, on the thread that built everything.
pub fn release_freed() {
    mi_collect(true);
}
