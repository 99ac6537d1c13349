//! The `tollgate` binary: parse the command line, dispatch to the library.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc: glibc's allocator serialises on its arena locks when tokio
/// moves a request between worker threads (measured in `bench/gateway.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = tollgate::cli::Cli::parse();
    if !matches!(cli.command, tollgate::cli::Command::Serve(_)) {
        restore_sigpipe();
    }
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("tollgate: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(tollgate::cli::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("tollgate: {}", failure.message);
            ExitCode::from(failure.exit_code)
        }
    }
}

/// The async runtime. Its worker threads: `TOKIO_WORKER_THREADS` when set
/// (tokio's own variable), else one fewer than the cores, at least one. The
/// server has busy threads of its own beside the workers: the store's
/// writer and the charge journal, which do about a third of a request's
/// work, and the webhook deliveries; with a worker per core they all
/// contend for the cores and every hand-off between them is a wake-up
/// across cores (docs/benchmarks.md, "One worker fewer than the cores").
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        builder.worker_threads(cores.saturating_sub(1).max(1));
    }
    builder.build()
}

/// A command's output piped into a reader that stops early (`| head`)
/// ends the process quietly, as for any Unix tool, instead of a panic in
/// `println!` (Rust ignores SIGPIPE). The server keeps ignoring it: a
/// client that goes away is an error on its socket, not a signal.
fn restore_sigpipe() {
    // SAFETY: called once at start, before any other thread exists; resets
    // one signal's disposition to its default.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
