//! `tracelab`: the native companion of Trace Lab. It reports on traces with the same core the
//! lab uses, so the terminal and the browser always show the same numbers.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tracelab_recorder::exit::Exit;

mod compare;
mod export;
mod import;
mod report;
mod settings_args;
mod simulate;
mod sweep;

#[derive(Parser)]
#[command(
    name = "tracelab",
    version,
    about = "Record LLM-serving traces and account for their latency honestly",
    after_help = Exit::help_text()
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the metric card of a trace (JSON Lines, classroom CSV, or a peer tool's result file).
    Report(report::ReportArgs),
    /// Record a trace from an OpenAI-compatible endpoint (streaming, client-side clock).
    Record(tracelab_recorder::record::RecordArgs),
    /// Scan what this machine can measure (GPU telemetry) without sending any request.
    Probe(tracelab_recorder::probe::ProbeArgs),
    /// Convert a peer tool's result file (vLLM, AIPerf, guidellm, LLMPerf) into a trace.
    Import(import::ImportArgs),
    /// Export a trace as CSV, a Markdown/JSON metric card, or Perfetto trace-event JSON.
    Export(export::ExportArgs),
    /// Compare runs: the baseline contract, each figure's difference with its 95 % interval and a verdict.
    Compare(compare::CompareArgs),
    /// Simulate a server with fixed slots under a closed or open loop (with an optional stall)
    /// and write the result as a trace marked as simulated.
    Simulate(simulate::SimulateArgs),
    /// Record a load sweep: one trace per load (--rates, --concurrencies, or --workload with
    /// --speedups) into --output-dir with sweep.json, stopping when a step is saturated.
    Sweep(sweep::SweepArgs),
    /// A load sweep on the simulator: one simulated trace per load into --output-dir with
    /// sweep.json (marked simulated), stopping by the same rule as `sweep`.
    SimulateSweep(sweep::SimulateSweepArgs),
    /// The capacity answer of a sweep folder: every step's figures with intervals against a target.
    Capacity(sweep::CapacityArgs),
    /// Merge the shards of one run (`record --shard I/N`) into one trace on one timeline.
    Merge(tracelab_recorder::merge::MergeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let done = |r: Result<(), String>| r.map(|()| Exit::Done.code());
    let result = match cli.command {
        Command::Report(args) => done(report::run(args)),
        Command::Record(args) => tracelab_recorder::record::run(args),
        Command::Probe(args) => done(tracelab_recorder::probe::run(args)),
        Command::Import(args) => done(import::run(args)),
        Command::Export(args) => done(export::run(args)),
        Command::Compare(args) => match compare::run(args) {
            Ok(true) => Ok(0),
            Ok(false) => Ok(Exit::ContractBroken.code()),
            Err(e) => Err(e),
        },
        Command::Simulate(args) => done(simulate::run(args)),
        Command::Sweep(args) => sweep::run(args),
        Command::SimulateSweep(args) => done(sweep::simulate(args)),
        Command::Capacity(args) => done(sweep::capacity(args)),
        Command::Merge(args) => done(tracelab_recorder::merge::run(args)),
    };
    match result {
        Ok(status) => ExitCode::from(status),
        Err(message) => {
            eprintln!("tracelab: {message}");
            ExitCode::from(Exit::Error.code())
        }
    }
}
