//! `kseek`: read Kafka topics by time from the command line.
//!
//! Subcommands: `read` (print records of a resolved range), `offsets` (the plan without
//! reading), `metadata`, `commit` (set a group's offsets), `committed` (show them) and `sql`
//! (SQL over topics). Exit
//! codes: 0 success, 1 other failures, 2 usage, 3 Kafka or network, 4 corrupt data.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

#[cfg(test)]
mod alloc_count;
mod args;
mod cmd;
mod decode;
mod fail;
mod json;
mod output;
mod progress;
mod table;

use args::Cli;
use fail::Fail;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version, as clap prints them (exit 0); a closed stdout is no error.
            let _ = e.print();
            return ExitCode::from(fail::OK);
        }
        Err(e) => {
            // The arguments again, only to name the subcommand in the line.
            let args: Vec<String> = std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let f = Fail::from_clap(&e, &args);
            report(&f);
            return ExitCode::from(f.code);
        }
    };
    // `sql` runs its scans and operators on every core; the other commands on this thread.
    let mut builder = if matches!(cli.command, args::Command::Sql(_)) {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            report(&Fail {
                code: fail::OTHER,
                message: format!(
                    "starting the async runtime failed: {e}. Check the process limits"
                ),
            });
            return ExitCode::from(fail::OTHER);
        }
    };
    let result = runtime.block_on(cmd::run(cli));
    // Don't wait for the read's background tasks (they may be in a long poll).
    runtime.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(()) => ExitCode::from(fail::OK),
        Err(f) => {
            report(&f);
            ExitCode::from(f.code)
        }
    }
}

/// Prints a failure's one line (nothing for a quiet stop, such as a closed pipe).
pub(crate) fn report(f: &Fail) {
    if !f.message.is_empty() {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{f}");
    }
}
