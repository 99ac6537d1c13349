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
    let runtime = match tokio::runtime::Runtime::new() {
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
