//! `tracelab compare BASE NEW [MORE…]`: the baseline contract, then every figure of each later run
//! against the base with its difference, 95 % interval and verdict. Exits with its own status
//! (`Exit::ContractBroken`) when the contract is broken, so a CI pipeline can refuse a comparison that is not one.

use std::path::PathBuf;

use clap::Args;
use tracelab_core::compare::{judge_alike, Bootstrap, Report, Run};

use crate::settings_args::SettingsArgs;

const AFTER_HELP: &str = "\
Every run is judged with BASE's threshold, comparison and percentile; window and cost stay each
run's own. Rates get Newcombe's interval for the difference, goodput the same construction with
exact Poisson limits, percentiles a seeded bootstrap (the seed and resample count are printed so
the result can be repeated). With three or more runs, the reruns check says whether P50 and the
tail agree across them.";

#[derive(Args)]
#[command(after_help = format!("{AFTER_HELP}\n\n{}", tracelab_recorder::exit::Exit::help_text()))]
pub struct CompareArgs {
    /// The baseline run.
    pub base: PathBuf,
    /// The run(s) to compare with the baseline (three or more runs in all also check reruns).
    /// With --vs: more runs of the baseline's side.
    #[arg(required_unless_present = "vs")]
    pub new: Vec<PathBuf>,
    /// Replications: the runs before --vs are independent runs of the baseline's contract, these
    /// are the other side's; every figure is compared between the runs (one value per run,
    /// Student's t, Welch's t for the difference), which holds however correlated the attempts
    /// inside a run are.
    #[arg(long, num_args = 1.., value_name = "RUN")]
    pub vs: Vec<PathBuf>,
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
    for path in std::iter::once(&args.base)
        .chain(args.new.iter())
        .chain(args.vs.iter())
    {
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
    if !args.vs.is_empty() {
        return replications(&args, &runs);
    }
    let report = Report::build_varying(
        &runs,
        Bootstrap {
            seed: args.seed,
            resamples: args.resamples as usize,
        },
        &args.vary,
    )?;
    let baselines = tracelab_core::baseline::of_comparison(&runs, &report);
    // Session runs: the base's session figures against each other run's, the session the unit.
    let sessions: Vec<(String, Vec<tracelab_core::session::SessionDiff>)> = {
        let of = |r: &Run| tracelab_core::session::Sessions::of(&r.trace.attempts, &r.settings);
        match of(&runs[0]) {
            None => Vec::new(),
            Some(base) => runs[1..]
                .iter()
                .filter_map(|r| {
                    of(r).map(|new| {
                        (
                            r.name.clone(),
                            tracelab_core::session::compare_sessions(&base, &new),
                        )
                    })
                })
                .collect(),
        }
    };
    if args.json {
        let mut json = serde_json::to_value(&report).expect("json");
        json["baselines"] = serde_json::to_value(&baselines).expect("json");
        json["sessions"] = sessions
            .iter()
            .map(|(name, rows)| serde_json::json!({ "new": name, "rows": rows }))
            .collect();
        // Each run's own intervals, an open bound as null with its reason.
        json["runs"] = runs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "name": r.name,
                    "intervals": r.intervals,
                    "reuse": tracelab_core::reuse::reuse_split(&r.trace.attempts, &r.settings),
                })
            })
            .collect();
        tracelab_recorder::outln!("{}", serde_json::to_string_pretty(&json).expect("json"));
    } else {
        tracelab_recorder::out!("{}", report.render_text(args.settings.lang()));
        tracelab_recorder::out!(
            "{}",
            tracelab_core::baseline::comparison_text(&baselines, args.settings.lang())
        );
        for (name, rows) in &sessions {
            if runs.len() > 2 {
                tracelab_recorder::outln!("{name}:");
            }
            for line in tracelab_core::session::compare_lines(rows, args.settings.lang()) {
                tracelab_recorder::outln!("{line}");
            }
        }
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

/// `compare A1 A2 … --vs B1 B2 …`: every run's contract against A1, then each figure between
/// the runs of the two sides.
fn replications(args: &CompareArgs, runs: &[Run]) -> Result<bool, String> {
    use tracelab_core::compare::{
        check_contract_varying,
        replications::{compare_sides, render_text},
    };
    let lang = args.settings.lang();
    let split = runs.len() - args.vs.len();
    let (base, new) = runs.split_at(split);
    let mut broken = false;
    let mut contracts = Vec::new();
    for r in &runs[1..] {
        let check = check_contract_varying(&runs[0].trace.header, &r.trace.header, &args.vary)?;
        broken |= check.is_broken();
        contracts.push((r.name.clone(), check));
    }
    fn metrics(side: &[Run]) -> Vec<&tracelab_core::Metrics> {
        side.iter().map(|r| &r.metrics).collect()
    }
    let rows = compare_sides(&metrics(base), &metrics(new));
    let names = |side: &[Run]| side.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
    if args.json {
        let json = serde_json::json!({
            "kind": "replications",
            "base_runs": names(base),
            "new_runs": names(new),
            "contracts": contracts.iter().map(|(n, c)| serde_json::json!({"run": n, "contract": c})).collect::<Vec<_>>(),
            "rows": rows,
        });
        tracelab_recorder::outln!("{}", serde_json::to_string_pretty(&json).expect("json"));
    } else {
        // A broken contract is spelled out; otherwise one line says the runs share it.
        for (name, check) in contracts.iter().filter(|(_, c)| c.is_broken()) {
            tracelab_recorder::outln!("{name}:");
            for l in check.lines(lang) {
                tracelab_recorder::outln!("  {l}");
            }
        }
        if !broken {
            let first = &runs[0].name;
            tracelab_recorder::outln!(
                "{}",
                if lang == tracelab_core::Lang::Zh {
                    format!("契约：每次运行的必须一致的条件都与 {first} 相同或无法核对（单独比较两次运行可看细节）")
                } else {
                    format!("Contract: no run differs from {first} in a must-match condition (compare two runs alone for the details)")
                }
            );
        }
        tracelab_recorder::out!("{}", render_text(&rows, &names(base), &names(new), lang));
    }
    Ok(!broken)
}
