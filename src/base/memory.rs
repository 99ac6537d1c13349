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

/// Purges the pages freed by the calling thread. Called once, after
/// start-up and before serving, on the thread that built everything.
pub fn release_freed() {
    mi_collect(true);
}
