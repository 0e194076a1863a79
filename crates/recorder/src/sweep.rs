//! `tracelab sweep`, `tracelab simulate-sweep` and `tracelab capacity`: a series of loads
//! (open-loop rates, closed-loop concurrencies, or a workload file at several speed-ups), each
//! step a full trace under one contract (recorded with its own warm-up, or simulated), written
//! into one folder with `sweep.json` linking them in order; then the core's capacity answer
//! (`tracelab_core::capacity`) over that folder. Both sweeps take the same loads, target,
//! threshold and comparison ([`SweepLoads`]) and stop by the core's one rule
//! ([`tracelab_core::capacity::saturation`]).
//!
//! Ctrl-C (or SIGTERM) at any time stops the recorded sweep: the process listens for the whole
//! sweep ([`tracelab_recorder::engine::listen_for_stop`]), so a signal between two steps, or
//! while a step is still setting up, is never lost. Every finished step is kept, sweep.json says
//! the sweep was interrupted and where it stopped, and the exit status is 130.
//!
//! `simulate-sweep` runs the core's simulated sweep (`SimulatedSweepPlan`, the capacity page's
//! simulator) at each load: every step's header says it was simulated, and so does sweep.json
//! (`simulated`), so `tracelab capacity` and the capacity page never read it as measured.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tracelab_core::capacity::{
    check_loads, saturation, Capacity, LoadKind, SimulatedLoad, SimulatedSweepPlan, Step,
    SweepFile, SweepStep, Target,
};
use tracelab_core::parse::parse_trace_bytes;
use tracelab_core::simulate::Load;
use tracelab_core::{Lang, Settings, Trace};
use tracelab_recorder::exit::Exit;
use tracelab_recorder::record::{self, RecordArgs, ReplayArgs};
use tracelab_recorder::schedule::Arrival;

use crate::settings_args::{ComparisonArg, SettingsArgs};
use crate::simulate::ServerArgs;

/// The sweep file's name inside `--output-dir`.
pub const SWEEP_FILE: &str = "sweep.json";

/// What both sweeps share: the loads, the folder, and how a step is judged for the stop rule.
#[derive(Args)]
pub struct SweepLoads {
    /// Open loop: one step per rate (requests per second), increasing, e.g. 1,2,4,8.
    #[arg(long, value_delimiter = ',', value_name = "R,R,…", conflicts_with_all = ["concurrencies", "speedups"], allow_hyphen_values = true, value_parser = load_value)]
    pub rates: Vec<f64>,
    /// Closed loop: one step per concurrency, increasing, e.g. 1,4,16.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N,N,…",
        conflicts_with = "speedups"
    )]
    pub concurrencies: Vec<u32>,
    /// With --workload: one step per speed-up of the file's times, increasing, e.g. 1,2,4.
    #[arg(long, value_delimiter = ',', value_name = "X,X,…", requires = "workload", allow_hyphen_values = true, value_parser = load_value)]
    pub speedups: Vec<f64>,
    /// The folder the step traces and sweep.json are written into (created; must be empty).
    #[arg(long, value_name = "DIR")]
    pub output_dir: PathBuf,
    /// The target a step must meet: joint_rate>=X, ttft_p95<=SECONDS or goodput>=PER_SECOND.
    #[arg(long, default_value = "joint_rate>=0.9", value_name = "TARGET")]
    pub target: String,
    /// The TTFT threshold (seconds) a qualified request must meet, for the stop rule and the
    /// answer (kept in sweep.json; `tracelab capacity` starts from it).
    #[arg(
        long,
        default_value_t = 1.0,
        value_name = "SECONDS",
        allow_negative_numbers = true
    )]
    pub threshold: f64,
    /// How TTFT is compared with the threshold: le (≤, within) or lt (<, a TTFT exactly at the
    /// threshold is slow); kept in sweep.json.
    #[arg(long, value_enum, default_value = "le")]
    pub comparison: ComparisonArg,
    /// Stop when a step's failure rate lies above this share with its whole 95 % interval.
    #[arg(long, default_value_t = 0.5, value_name = "SHARE")]
    pub max_failure_rate: f64,
    /// Run every load even when a step is saturated.
    #[arg(long)]
    pub keep_going: bool,
}

/// One load of `--rates` or `--speedups`: a finite number above 0 (a mistake here is a
/// command-line mistake, exit status 2, in our words rather than the parser's).
fn load_value(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number (give loads such as 1,2,4)"))?;
    if v.is_nan() || v.is_infinite() {
        Err(format!(
            "`{text}` is not a finite number: each load is a number above 0, such as 1,2,4"
        ))
    } else if v <= 0.0 {
        Err(format!(
            "`{text}` is not above 0: a load of 0 or less sends nothing; give loads such as 1,2,4"
        ))
    } else {
        Ok(v)
    }
}

/// A mistake in the loads' order found after parsing: still a command-line mistake (status 2).
fn usage_error(message: &str) -> ! {
    clap::Error::raw(
        clap::error::ErrorKind::ValueValidation,
        format!("{message}\n"),
    )
    .exit()
}

impl SweepLoads {
    /// What is varied and the loads, checked (finite, positive, increasing).
    fn kind_and_loads(&self) -> Result<(LoadKind, Vec<f64>), String> {
        let (kind, loads) = if !self.rates.is_empty() {
            (LoadKind::Rate, self.rates.clone())
        } else if !self.concurrencies.is_empty() {
            (
                LoadKind::Concurrency,
                self.concurrencies.iter().map(|c| *c as f64).collect(),
            )
        } else if !self.speedups.is_empty() {
            (LoadKind::Speedup, self.speedups.clone())
        } else {
            return Err("give the loads: --rates 1,2,4 (open loop), --concurrencies 1,4,16 (closed loop) or --workload FILE --speedups 1,2,4".into());
        };
        if let Err(e) = check_loads(&loads) {
            usage_error(&e.en);
        }
        Ok((kind, loads))
    }

    /// The target and the settings every step is judged with (the threshold and comparison).
    fn judge(&self) -> Result<(Target, Settings), String> {
        let target = Target::parse(&self.target).map_err(|e| e.en)?;
        if !(self.max_failure_rate > 0.0 && self.max_failure_rate < 1.0) {
            return Err(format!(
                "--max-failure-rate must lie between 0 and 1, got {}",
                self.max_failure_rate
            ));
        }
        let common = Settings {
            ttft_threshold_s: self.threshold,
            comparison: self.comparison.core(),
            ..Settings::default()
        };
        common
            .validate()
            .map_err(|e| format!("{e} (--threshold, --comparison)"))?;
        Ok((target, common))
    }

    /// The output folder, created; refused when it holds anything and `force` is not given.
    fn prepare_dir(&self, force: bool) -> Result<PathBuf, String> {
        let dir = self.output_dir.clone();
        if dir.exists()
            && std::fs::read_dir(&dir)
                .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
                .next()
                .is_some()
            && !force
        {
            return Err(format!(
                "{} is not empty; pass --force to overwrite its steps, or choose another output folder",
                dir.display()
            ));
        }
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(dir)
    }

    /// sweep.json before its first step.
    fn file(&self, kind: LoadKind, loads: &[f64], simulated: Option<Value>) -> SweepFile {
        SweepFile {
            kind,
            loads: loads.to_vec(),
            steps: Vec::new(),
            contract_sha256: None,
            target: Some(self.target.clone()),
            threshold_s: Some(self.threshold),
            comparison: Some(self.comparison.core()),
            stopped: None,
            interrupted: false,
            simulated,
        }
    }
}

/// The capacity answer over the steps so far.
fn answer(
    file: &SweepFile,
    traces: &[Trace],
    common: &Settings,
    target: Target,
) -> Result<Capacity, String> {
    let steps: Vec<Step> = file
        .steps
        .iter()
        .zip(traces)
        .map(|(s, t)| Step {
            load: s.load,
            name: s.file.clone(),
            trace: t,
            interrupted: s.interrupted,
        })
        .collect();
    Capacity::compute(file.kind, &steps, common, target).map_err(|e| e.en)
}

#[derive(Args)]
// The step files are named by the sweep, so record's --output is not asked for here.
#[command(mut_arg("output", |a| a.required(false).default_value("-").hide(true)))]
pub struct SweepArgs {
    #[command(flatten)]
    pub sweep: SweepLoads,
    #[command(flatten)]
    pub record: RecordArgs,
}

fn read_trace(path: &Path) -> Result<Trace, String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    parse_trace_bytes(&name, &bytes).map_err(|e| format!("{e}"))
}

/// The contract's fingerprint without the load: what every step must share.
fn contract_sha256(trace: &Trace) -> String {
    let mut v = serde_json::to_value(&trace.header.conditions).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        for k in [
            "arrival",
            "rate_per_s",
            "burstiness",
            "concurrency",
            "seed",
            "runtime",
        ] {
            o.remove(k);
        }
    }
    format!("{:x}", Sha256::digest(v.to_string().as_bytes()))
}

/// Runs `tracelab sweep`; `Ok` holds the exit status (130 when stopped by Ctrl-C).
pub fn run(mut args: SweepArgs) -> Result<u8, String> {
    if args.record.output != Path::new("-") {
        return Err(
            "sweep names its step files itself: drop --output and give --output-dir".into(),
        );
    }
    if args.record.runs > 1 {
        return Err("a sweep records one trace per load; for replications run the sweep again into another --output-dir, and compare a step's runs with `tracelab compare A B --vs C D`".into());
    }
    let (kind, loads) = args.sweep.kind_and_loads()?;
    if args.record.rate.is_some()
        || args.record.concurrency != 1
        || args.record.replay.speedup != 1.0
    {
        return Err("a sweep sets the load per step: use --rates, --concurrencies or --speedups, not --rate, --concurrency or --speedup".into());
    }
    // A session workload: --rates are sessions started per second, each step a session run.
    let sessions = args.record.conversation.sessions.is_some()
        || args.record.conversation.conversations.is_some();
    let kind = match (kind, sessions) {
        (LoadKind::Rate, true) => LoadKind::SessionRate,
        (_, true) => {
            return Err("a session sweep varies the sessions started per second: give --rates R,R,… (sessions per second), not --concurrencies or --speedups".into())
        }
        (k, false) => k,
    };
    if sessions && args.record.conversation.session_rate.is_some() {
        return Err(
            "a sweep sets the session rate per step from --rates: drop --session-rate".into(),
        );
    }
    if kind == LoadKind::Speedup && args.record.workload.is_none() {
        return Err("--speedups needs --workload FILE".into());
    }
    if kind != LoadKind::Speedup && args.record.workload.is_some() {
        return Err("a workload file sets its own arrivals: sweep it with --speedups".into());
    }
    let (target, common) = args.sweep.judge()?;
    let dir = args.sweep.prepare_dir(args.record.force)?;
    let key = record::api_key(&args.record.api_key_env)?;
    // From here on a signal stops the sweep, whenever it comes.
    let stop = tracelab_recorder::engine::listen_for_stop()?;

    let mut file = args.sweep.file(kind, &loads, None);
    let mut traces: Vec<Trace> = Vec::new();
    for (i, &load) in loads.iter().enumerate() {
        if stop.requested() {
            file.interrupted = true;
            file.stopped = Some((i as u64, format!("stopped by Ctrl-C or SIGTERM before step {} began; every finished step is kept", i + 1)));
            write_sweep(&dir, &file)?;
            break;
        }
        let name = tracelab_core::capacity::step_file_name(i, kind, load);
        match kind {
            LoadKind::Rate => args.record.rate = Some(load),
            LoadKind::Concurrency => args.record.concurrency = load as u32,
            LoadKind::Speedup => args.record.replay.speedup = load,
            LoadKind::SessionRate => args.record.conversation.session_rate = Some(load),
        }
        args.record.output = dir.join(&name);
        let plan = record::plan(&args.record)?;
        if !args.record.quiet {
            eprintln!(
                "tracelab: step {} of {}: {} → {}",
                i + 1,
                loads.len(),
                kind.describe(load, Lang::En),
                name
            );
        }
        let recorded = tracelab_recorder::engine::record(plan, key.clone())?;
        let trace = read_trace(&dir.join(&name))?;
        let sha = contract_sha256(&trace);
        if file.contract_sha256.get_or_insert_with(|| sha.clone()) != &sha {
            file.stopped = Some((
                (i + 1) as u64,
                "the step's contract differs from step 1's in more than the load".into(),
            ));
        }
        file.steps.push(SweepStep {
            load,
            file: name,
            interrupted: recorded.interrupted,
        });
        traces.push(trace);
        // A signal after the step's measured phase ended still stops the sweep; the step is whole.
        file.interrupted = recorded.interrupted || stop.requested();
        // Judge the last step as the answer would: its interval against the target.
        let cap = answer(&file, &traces, &common, target)?;
        let last = cap.steps.last().expect("one step at least");
        let why = if file.interrupted {
            Some("stopped by Ctrl-C or SIGTERM; every finished step is kept".to_string())
        } else {
            saturation(last, &target, args.sweep.max_failure_rate)
                .filter(|_| !args.sweep.keep_going)
                .map(|t| t.en)
        };
        if file.stopped.is_none() {
            file.stopped = why.map(|w| ((i + 1) as u64, w));
        }
        write_sweep(&dir, &file)?;
        if file.stopped.is_some() {
            break;
        }
    }
    finish(&file, &traces, &common, target, &dir, args.record.quiet)?;
    Ok(if file.interrupted {
        Exit::Interrupted.code()
    } else {
        Exit::Done.code()
    })
}

/// Says why the sweep stopped, then (unless quiet) the capacity answer and how to recompute it.
fn finish(
    file: &SweepFile,
    traces: &[Trace],
    common: &Settings,
    target: Target,
    dir: &Path,
    quiet: bool,
) -> Result<(), String> {
    if let Some((step, why)) = &file.stopped {
        eprintln!("tracelab: the sweep stopped after step {step}: {why}");
    }
    if !quiet && !file.steps.is_empty() {
        tracelab_recorder::outln!(
            "{}",
            answer(file, traces, common, target)?.render_text(Lang::En)
        );
        tracelab_recorder::outln!(
            "Recompute with other settings: tracelab capacity {}",
            dir.display()
        );
    }
    Ok(())
}

/// sweep.json written beside, then renamed, so a Ctrl-C never leaves half a sweep file.
fn write_sweep(dir: &Path, file: &SweepFile) -> Result<(), String> {
    let tmp = dir.join(".sweep.json.tmp");
    std::fs::write(&tmp, file.to_json())
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join(SWEEP_FILE))
        .map_err(|e| format!("cannot write {}: {e}", dir.join(SWEEP_FILE).display()))
}

const SIMULATE_SWEEP_HELP: &str = "\
A load sweep on the simulator: the same simulated server as `tracelab simulate` (the capacity
page's simulator, in the core) at each load, one trace per step written into --output-dir with
sweep.json, exactly as `tracelab sweep` lays out a recorded sweep, so `tracelab capacity DIR`
and the lab's capacity page read it. Every step's header and sweep.json's `simulated` say it
was simulated, never measured. Step i (from 1) uses --seed + i - 1: the same flags always write
the same files. The simulator writes no answers, so every simulated success counts as passing
quality and the joint rate is the share served within the threshold.

The sweep stops early by the same rule as `tracelab sweep` (the failure rate's whole interval
above --max-failure-rate, or the step fails --target with its whole interval, judged with
--threshold and --comparison); --keep-going runs every load.

Example, M/M/4 (exponential service, mean 1 s; TTFT is the wait when --first-token-share is 0):
  tracelab simulate-sweep --slots 4 --service exponential:1 --first-token-share 0 \\
      --rates 1.5,1.75,2,2.25,2.5 --requests 20000 --seed 11 \\
      --target ttft_p95<=0.5 --threshold 0.5 --output-dir mmc-sweep";

/// `tracelab simulate-sweep`.
#[derive(Args)]
#[command(after_help = SIMULATE_SWEEP_HELP)]
pub struct SimulateSweepArgs {
    #[command(flatten)]
    pub sweep: SweepLoads,
    #[command(flatten)]
    pub server: ServerArgs,
    /// With --rates: how the schedule spaces requests [default: poisson].
    #[arg(long, value_enum)]
    pub arrival: Option<Arrival>,
    /// With --rates and poisson arrivals: gamma shape of the gaps (1 Poisson, < 1 burstier) [default: 1].
    #[arg(long, value_name = "B")]
    pub burstiness: Option<f64>,
    /// With --concurrencies: seconds a client waits after a reply before sending again [default: 0].
    #[arg(long, value_name = "S")]
    pub think: Option<f64>,
    /// Requests per step (with --workload: each step's window; with --sessions: sessions ×
    /// turns; so not given).
    #[arg(
        long,
        value_name = "K",
        required_unless_present_any = ["workload", "sessions"],
        conflicts_with_all = ["workload", "sessions"]
    )]
    pub requests: Option<u32>,
    /// Sessions instead of single requests (`tracelab simulate --sessions`' flags, but no
    /// --session-rate: --rates are the sessions started per second, step by step).
    #[command(flatten)]
    pub conversation: crate::simulate::SessionArgs,
    /// The seed of step 1 (step i uses SEED + i - 1).
    #[arg(long, value_name = "SEED")]
    pub seed: u64,
    /// A real workload file (Azure CSV or Mooncake JSONL), replayed at each of --speedups.
    #[arg(long, value_name = "FILE")]
    pub workload: Option<PathBuf>,
    #[command(flatten)]
    pub replay: ReplayArgs,
    /// Overwrite the step files of a folder that is not empty.
    #[arg(long)]
    pub force: bool,
    /// Only the files; no answer printed.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `tracelab simulate-sweep`.
pub fn simulate(args: SimulateSweepArgs) -> Result<(), String> {
    let (kind, loads) = args.sweep.kind_and_loads()?;
    if let Some(n) = args.conversation.sessions {
        return simulate_sessions(&args, kind, &loads, n);
    }
    if args.replay.speedup != 1.0 {
        return Err("a sweep sets the speed-up per step: use --speedups, not --speedup".into());
    }
    match kind {
        LoadKind::Speedup if args.workload.is_none() => {
            return Err("--speedups needs --workload FILE".into())
        }
        LoadKind::Rate | LoadKind::Concurrency if args.workload.is_some() => {
            return Err("a workload file sets its own arrivals: sweep it with --speedups".into())
        }
        _ => {}
    }
    if kind != LoadKind::Rate && (args.arrival.is_some() || args.burstiness.is_some()) {
        return Err(
            "--arrival and --burstiness shape an open loop's schedule; they go with --rates".into(),
        );
    }
    if kind != LoadKind::Concurrency && args.think.is_some() {
        return Err("--think is the closed loop's pause between a reply and the next request; it goes with --concurrencies".into());
    }
    let arrival = args.arrival.unwrap_or(Arrival::Poisson);
    if arrival == Arrival::Constant && args.burstiness.is_some() {
        return Err("--burstiness shapes random gaps; it needs --arrival poisson".into());
    }
    let (target, common) = args.sweep.judge()?;
    let requests = args.requests.unwrap_or(0);
    let first = match kind {
        LoadKind::Rate => Load::Open {
            rate_per_s: loads[0],
            arrival: arrival.core().into(),
            burstiness: args.burstiness.unwrap_or(1.0),
        },
        LoadKind::Concurrency => Load::Closed {
            clients: loads[0] as u32,
            think_s: args.think.unwrap_or(0.0),
        },
        LoadKind::Speedup => Load::Workload {
            requests: 0,
            span_s: 0.0,
        },
        LoadKind::SessionRate => unreachable!("--rates are a session rate only with --sessions"),
    };
    let (server, tokens) = args.server.params(first, requests, args.seed)?;
    let load = match (kind, &args.workload) {
        (LoadKind::Rate, _) => SimulatedLoad::Rates {
            arrival: arrival.core().into(),
            burstiness: args.burstiness.unwrap_or(1.0),
        },
        (LoadKind::Concurrency, _) => SimulatedLoad::Concurrencies {
            think_s: args.think.unwrap_or(0.0),
        },
        (LoadKind::Speedup, Some(path)) => SimulatedLoad::Speedups {
            workload: crate::simulate::read_workload(path)?,
            replay: args.replay.replay(),
            tokens,
        },
        (LoadKind::Speedup, None) => unreachable!("refused above"),
        (LoadKind::SessionRate, _) => unreachable!("sessions take simulate_sessions"),
    };
    if tokens.is_some() && kind != LoadKind::Speedup {
        return Err("--service-per-output-token needs the lengths of a workload file: --workload FILE --speedups".into());
    }
    let plan = SimulatedSweepPlan {
        server,
        load,
        loads: loads.clone(),
    };
    run_plan(&args, kind, &loads, &plan, target, &common)
}

/// A simulated sweep's steps, one after another: each simulated (the first before the folder is
/// touched, so a bad parameter writes nothing), written beside sweep.json, judged, and the one
/// early-stop rule applied; then the capacity answer.
fn run_plan(
    args: &SimulateSweepArgs,
    kind: LoadKind,
    loads: &[f64],
    plan: &SimulatedSweepPlan,
    target: Target,
    common: &Settings,
) -> Result<(), String> {
    plan.check().map_err(|e| e.en)?;
    // The first step is simulated before the folder is touched, so a bad parameter writes nothing.
    let mut next = Some(plan.step(0).map_err(|e| e.en)?);
    let dir = args.sweep.prepare_dir(args.force)?;
    let mut file = args.sweep.file(kind, loads, Some(plan.record()));
    let mut traces: Vec<Trace> = Vec::new();
    for i in 0..loads.len() {
        let step = match next.take() {
            Some(s) => s,
            None => plan.step(i).map_err(|e| e.en)?,
        };
        if !args.quiet {
            eprintln!(
                "tracelab: simulated step {} of {}: {} → {}",
                i + 1,
                loads.len(),
                kind.describe(step.load, Lang::En),
                step.file
            );
        }
        let text = match (&plan.load, &step.replayed) {
            (
                SimulatedLoad::Speedups {
                    workload,
                    replay,
                    tokens,
                },
                Some(planned),
            ) => {
                let replay = tracelab_core::workload::Replay {
                    speedup: step.load,
                    ..*replay
                };
                crate::simulate::workload_trace_text(
                    workload,
                    &replay,
                    planned,
                    &step.trace,
                    *tokens,
                )
            }
            _ => tracelab_core::write::to_jsonl(&step.trace),
        };
        let path = dir.join(&step.file);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        file.steps.push(SweepStep {
            load: step.load,
            file: step.file,
            interrupted: false,
        });
        traces.push(step.trace);
        let cap = answer(&file, &traces, common, target)?;
        let last = cap.steps.last().expect("one step at least");
        if !args.sweep.keep_going {
            file.stopped = saturation(last, &target, args.sweep.max_failure_rate)
                .map(|t| ((i + 1) as u64, t.en));
        }
        write_sweep(&dir, &file)?;
        if file.stopped.is_some() {
            break;
        }
    }
    finish(&file, &traces, common, target, &dir, args.quiet)
}

/// `simulate-sweep --sessions N --turns K … --rates R,R,…`: the session simulator at each
/// session rate, laid out as every sweep (the steps' kind `session_rate`).
fn simulate_sessions(
    args: &SimulateSweepArgs,
    kind: LoadKind,
    loads: &[f64],
    sessions: u32,
) -> Result<(), String> {
    if kind != LoadKind::Rate {
        return Err("a session sweep varies the sessions started per second: give --rates R,R,… (sessions per second), not --concurrencies or --speedups".into());
    }
    if args.conversation.session_rate.is_some() {
        return Err(
            "a sweep sets the session rate per step from --rates: drop --session-rate".into(),
        );
    }
    if args.arrival.is_some() || args.burstiness.is_some() || args.think.is_some() {
        return Err("sessions start as a Poisson stream and pause --think-s between a reply and the next turn: drop --arrival, --burstiness and --think".into());
    }
    let kind = LoadKind::SessionRate;
    let (target, common) = args.sweep.judge()?;
    let mut conversation = crate::simulate::SessionArgs {
        session_rate: Some(loads[0]),
        ..args.conversation.clone()
    };
    conversation.sessions = Some(sessions);
    let params =
        crate::simulate::session_params_of(&args.server, &conversation, sessions, args.seed)?;
    let (server, _) = args.server.params(
        Load::Open {
            rate_per_s: loads[0],
            arrival: Arrival::Poisson.core().into(),
            burstiness: 1.0,
        },
        sessions.saturating_mul(params.turns),
        args.seed,
    )?;
    let plan = SimulatedSweepPlan {
        server,
        load: SimulatedLoad::Sessions(params),
        loads: loads.to_vec(),
    };
    run_plan(args, kind, loads, &plan, target, &common)
}

#[derive(Args)]
pub struct CapacityArgs {
    /// A sweep folder (with sweep.json), as `tracelab sweep` writes it.
    pub dir: PathBuf,
    /// The target: joint_rate>=X, ttft_p95<=SECONDS or goodput>=PER_SECOND [default: the sweep's].
    #[arg(long, value_name = "TARGET")]
    pub target: Option<String>,
    /// Every figure and interval as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub settings: SettingsArgs,
}

/// Runs `tracelab capacity DIR`: every step recomputed under the given settings and target
/// (the threshold, comparison and target default to the sweep's own).
pub fn capacity(args: CapacityArgs) -> Result<(), String> {
    let sweep_path = args.dir.join(SWEEP_FILE);
    let text = std::fs::read_to_string(&sweep_path).map_err(|e| {
        format!(
            "cannot read {} ({e}); give a folder written by tracelab sweep",
            sweep_path.display()
        )
    })?;
    let lang = args.settings.lang();
    let sweep = SweepFile::parse(&sweep_path.display().to_string(), &text)
        .map_err(|e| e.get(lang).to_string())?;
    let mut traces = Vec::with_capacity(sweep.steps.len());
    for s in &sweep.steps {
        traces.push(read_trace(&args.dir.join(&s.file))?);
    }
    let target_spec = args
        .target
        .clone()
        .or_else(|| sweep.target.clone())
        .unwrap_or_else(|| "joint_rate>=0.9".into());
    let target = Target::parse(&target_spec).map_err(|e| e.get(lang).to_string())?;
    let mut common = args.settings.settings(&traces[0].header)?;
    if args.settings.threshold.is_none() {
        common.ttft_threshold_s = sweep.threshold_s.unwrap_or(common.ttft_threshold_s);
    }
    if args.settings.comparison.is_none() {
        common.comparison = sweep.comparison.unwrap_or(common.comparison);
    }
    common.validate().map_err(|e| format!("{e} (see --help)"))?;
    // Each step's own window and cost, unless the flags set them for all.
    common.window_s = args.settings.window;
    if args.settings.cost.is_none() {
        common.window_cost = None;
    }
    let steps: Vec<Step> = sweep
        .steps
        .iter()
        .zip(&traces)
        .map(|(s, t)| Step {
            load: s.load,
            name: s.file.clone(),
            trace: t,
            interrupted: s.interrupted,
        })
        .collect();
    let cap = Capacity::compute(sweep.kind, &steps, &common, target)
        .map_err(|e| e.get(lang).to_string())?;
    if args.json {
        tracelab_recorder::outln!(
            "{}",
            serde_json::to_string_pretty(&cap).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    tracelab_recorder::outln!("{}", cap.render_text(lang));
    if let Some((step, why)) = &sweep.stopped {
        tracelab_recorder::outln!(
            "{}",
            if lang == Lang::Zh {
                format!("扫描在第 {step} 步后停止：{why}")
            } else {
                format!("The sweep stopped after step {step}: {why}")
            }
        );
    }
    Ok(())
}
