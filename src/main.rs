//! The `tollgate` binary: parse the command line, dispatch to the library.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc: glibc's allocator serialises on its arena locks when tokio
/// moves a request between worker threads (measured in `bench/gateway.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = tollgate::cli::Cli::parse();
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
