//! `tracelab compare BASE NEW [MORE…]`: the baseline contract, then every figure of each later run
//! against the base with its difference, 95 % interval and verdict. Exits with status 3 when the
//! contract is broken, so a CI pipeline can refuse a comparison that is not one.

use std::path::PathBuf;

use clap::Args;
use tracelab_core::compare::{judge_alike, Bootstrap, Report, Run};

use crate::settings_args::SettingsArgs;

/// The exit status of a comparison across a broken contract.
pub const EXIT_CONTRACT_BROKEN: u8 = 3;

const AFTER_HELP: &str = "\
Every run is judged with BASE's threshold, comparison and percentile; window and cost stay each
run's own. Rates get Newcombe's interval for the difference, goodput the same construction with
exact Poisson limits, percentiles a seeded bootstrap (the seed and resample count are printed so
the result can be repeated). With three or more runs, the reruns check says whether P50 and the
tail agree across them.

Exit status: 0 compared, 3 the contract is broken (the comparison is still printed, labelled),
1 an error (unreadable or invalid file, unusable setting), 2 a bad command line.";

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct CompareArgs {
    /// The baseline run.
    pub base: PathBuf,
    /// The run(s) to compare with the baseline (three or more runs in all also check reruns).
    #[arg(required = true)]
    pub new: Vec<PathBuf>,
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Seed of the percentile bootstrap.
    #[arg(long, default_value_t = Bootstrap::default().seed)]
    pub seed: u64,
    /// Resamples of the percentile bootstrap.
    #[arg(long, default_value_t = Bootstrap::default().resamples as u32, value_parser = clap::value_parser!(u32).range(100..=1_000_000))]
    pub resamples: u32,
    /// The condition(s) this comparison sets out to change, e.g. `--vary runtime` for the same
    /// model on another engine (or engine_version, model, load, prompts, or any single condition
    /// the contract lists): that difference is the variable under test, every other difference
    /// still breaks the contract.
    #[arg(long, value_name = "CONDITION", value_delimiter = ',')]
    pub vary: Vec<String>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Ok(true) when the contract holds (or is unverified), Ok(false) when it is broken.
pub fn run(args: CompareArgs) -> Result<bool, String> {
    let mut runs: Vec<Run> = Vec::new();
    for path in std::iter::once(&args.base).chain(args.new.iter()) {
        let (name, trace, _) = crate::import::load(path, None, None)?;
        let own = args.settings.settings(&trace.header)?;
        let settings = match runs.first() {
            None => own,
            Some(base) => {
                let (s, notes) = judge_alike(&base.settings, own);
                for n in notes {
                    eprintln!("note: {name}: {}", n.get(args.settings.lang()));
                }
                s
            }
        };
        runs.push(Run::new(name, trace, settings));
    }
    let report = Report::build_varying(&runs, Bootstrap { seed: args.seed, resamples: args.resamples as usize }, &args.vary)?;
    let baselines = tracelab_core::baseline::of_comparison(&runs, &report);
    if args.json {
        let mut json = serde_json::to_value(&report).expect("json");
        json["baselines"] = serde_json::to_value(&baselines).expect("json");
        // Each run's own intervals, an open bound as null with its reason.
        json["runs"] = runs
            .iter()
            .map(|r| serde_json::json!({
                "name": r.name,
                "intervals": r.intervals,
                "reuse": tracelab_core::reuse::reuse_split(&r.trace.attempts, &r.settings),
            }))
            .collect();
        tracelab_recorder::outln!("{}", serde_json::to_string_pretty(&json).expect("json"));
    } else {
        tracelab_recorder::out!("{}", report.render_text(args.settings.lang()));
        tracelab_recorder::out!("{}", tracelab_core::baseline::comparison_text(&baselines, args.settings.lang()));
        // Each run's TTFT by first send and repeat, where its attempts say which they were.
        for r in &runs {
            if let Some(split) = tracelab_core::reuse::reuse_split(&r.trace.attempts, &r.settings) {
                tracelab_recorder::outln!("{}:", r.name);
                for line in split.card_lines(args.settings.lang()) {
                    tracelab_recorder::outln!("  {line}");
                }
            }
        }
    }
    Ok(!report.contract_broken())
}
