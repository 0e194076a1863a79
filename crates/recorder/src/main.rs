//! `tracelab`: the native companion of Trace Lab. It reports on traces with the same core the
//! lab uses, so the terminal and the browser always show the same numbers.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod report;

#[derive(Parser)]
#[command(name = "tracelab", version, about = "Record LLM-serving traces and account for their latency honestly")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the metric card of a trace (JSON Lines or classroom CSV).
    Report(report::ReportArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Report(args) => report::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("tracelab: {message}");
            ExitCode::from(1)
        }
    }
}
