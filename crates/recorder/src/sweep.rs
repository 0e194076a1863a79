//! `tracelab sweep` and `tracelab capacity`: a series of loads (open-loop rates, closed-loop
//! concurrencies, or a workload file at several speed-ups), each step a full recorded trace
//! under one contract with its own warm-up, written into one folder with `sweep.json` linking
//! them in order; then the core's capacity answer (`tracelab_core::capacity`) over that folder.
//!
//! Ctrl-C (or SIGTERM) at any time stops the sweep: the process listens for the whole sweep
//! ([`tracelab_recorder::engine::listen_for_stop`]), so a signal between two steps, or while a
//! step is still setting up, is never lost. Every finished step is kept, sweep.json says the
//! sweep was interrupted and where it stopped, and the exit status is 130.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tracelab_core::capacity::{check_loads, Capacity, LoadKind, Step, StepVerdict, Target};
use tracelab_core::parse::parse_trace_bytes;
use tracelab_core::{Lang, Trace};
use tracelab_recorder::record::{self, RecordArgs, EXIT_INTERRUPTED};

use crate::settings_args::SettingsArgs;

/// The sweep file's name inside `--output-dir`.
pub const SWEEP_FILE: &str = "sweep.json";

#[derive(Args)]
// The step files are named by the sweep, so record's --output is not asked for here.
#[command(mut_arg("output", |a| a.required(false).default_value("-").hide(true)))]
pub struct SweepArgs {
    /// Open loop: one step per rate (requests per second), increasing, e.g. 1,2,4,8.
    #[arg(long, value_delimiter = ',', value_name = "R,R,…", conflicts_with_all = ["concurrencies", "speedups"])]
    pub rates: Vec<f64>,
    /// Closed loop: one step per concurrency, increasing, e.g. 1,4,16.
    #[arg(long, value_delimiter = ',', value_name = "N,N,…", conflicts_with = "speedups")]
    pub concurrencies: Vec<u32>,
    /// With --workload: one step per speed-up of the file's times, increasing, e.g. 1,2,4.
    #[arg(long, value_delimiter = ',', value_name = "X,X,…", requires = "workload")]
    pub speedups: Vec<f64>,
    /// The folder the step traces and sweep.json are written into (created; must be empty).
    #[arg(long, value_name = "DIR")]
    pub output_dir: PathBuf,
    /// The target a step must meet: joint_rate>=X, ttft_p95<=SECONDS or goodput>=PER_SECOND.
    #[arg(long, default_value = "joint_rate>=0.9", value_name = "TARGET")]
    pub target: String,
    /// The TTFT threshold (seconds) a qualified request must meet, for the stop rule.
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub threshold: f64,
    /// Stop when a step's failure rate lies above this share with its whole 95 % interval.
    #[arg(long, default_value_t = 0.5, value_name = "SHARE")]
    pub max_failure_rate: f64,
    /// Run every load even when a step is saturated.
    #[arg(long)]
    pub keep_going: bool,
    #[command(flatten)]
    pub record: RecordArgs,
}

fn file_name(i: usize, kind: LoadKind, load: f64) -> String {
    format!("step-{:02}-{}-{}.jsonl", i + 1, kind.code(), tracelab_core::format::trim_num(load))
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
        for k in ["arrival", "rate_per_s", "burstiness", "concurrency", "seed", "runtime"] {
            o.remove(k);
        }
    }
    format!("{:x}", Sha256::digest(v.to_string().as_bytes()))
}

/// Runs `tracelab sweep`; `Ok` holds the exit status (130 when stopped by Ctrl-C).
pub fn run(mut args: SweepArgs) -> Result<u8, String> {
    if args.record.output != Path::new("-") {
        return Err("sweep names its step files itself: drop --output and give --output-dir".into());
    }
    let (kind, loads): (LoadKind, Vec<f64>) = if !args.rates.is_empty() {
        (LoadKind::Rate, args.rates.clone())
    } else if !args.concurrencies.is_empty() {
        (LoadKind::Concurrency, args.concurrencies.iter().map(|c| *c as f64).collect())
    } else if !args.speedups.is_empty() {
        (LoadKind::Speedup, args.speedups.clone())
    } else {
        return Err("give the loads: --rates 1,2,4 (open loop), --concurrencies 1,4,16 (closed loop) or --workload FILE --speedups 1,2,4".into());
    };
    check_loads(&loads).map_err(|e| e.en)?;
    if args.record.rate.is_some() || args.record.concurrency != 1 || args.record.replay.speedup != 1.0 {
        return Err("a sweep sets the load per step: use --rates, --concurrencies or --speedups, not --rate, --concurrency or --speedup".into());
    }
    if kind == LoadKind::Speedup && args.record.workload.is_none() {
        return Err("--speedups needs --workload FILE".into());
    }
    if kind != LoadKind::Speedup && args.record.workload.is_some() {
        return Err("a workload file sets its own arrivals: sweep it with --speedups".into());
    }
    let target = Target::parse(&args.target).map_err(|e| e.en)?;
    if !(args.max_failure_rate > 0.0 && args.max_failure_rate < 1.0) {
        return Err(format!("--max-failure-rate must lie between 0 and 1, got {}", args.max_failure_rate));
    }
    let dir = args.output_dir.clone();
    if dir.exists() && std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?.next().is_some() && !args.record.force {
        return Err(format!("{} is not empty; name a new folder (or add --force to overwrite its steps)", dir.display()));
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let key = record::api_key(&args.record.api_key_env)?;
    // From here on a signal stops the sweep, whenever it comes.
    let stop = tracelab_recorder::engine::listen_for_stop()?;
    let common = tracelab_core::Settings { ttft_threshold_s: args.threshold, ..tracelab_core::Settings::default() };
    common.validate().map_err(|e| format!("{e}"))?;

    let mut files: Vec<(f64, String, bool)> = Vec::new();
    let mut traces: Vec<Trace> = Vec::new();
    let mut contract: Option<String> = None;
    let mut stopped: Option<Value> = None;
    let mut interrupted = false;
    for (i, &load) in loads.iter().enumerate() {
        if stop.requested() {
            interrupted = true;
            stopped = Some(json!({"step": i, "why": format!("stopped by Ctrl-C or SIGTERM before step {} began; every finished step is kept", i + 1)}));
            write_sweep(&dir, kind, &loads, &files, contract.as_deref(), &args.target, args.threshold, stopped.as_ref(), interrupted)?;
            break;
        }
        let name = file_name(i, kind, load);
        match kind {
            LoadKind::Rate => args.record.rate = Some(load),
            LoadKind::Concurrency => args.record.concurrency = load as u32,
            LoadKind::Speedup => args.record.replay.speedup = load,
        }
        args.record.output = dir.join(&name);
        let plan = record::plan(&args.record)?;
        if !args.record.quiet {
            eprintln!("tracelab: step {} of {}: {} → {}", i + 1, loads.len(), kind.describe(load, Lang::En), name);
        }
        let recorded = tracelab_recorder::engine::record(plan, key.clone())?;
        let trace = read_trace(&dir.join(&name))?;
        let sha = contract_sha256(&trace);
        if contract.get_or_insert_with(|| sha.clone()) != &sha {
            stopped = Some(json!({"step": i + 1, "why": "the step's contract differs from step 1's in more than the load"}));
        }
        files.push((load, name, recorded.interrupted));
        traces.push(trace);
        // A signal after the step's measured phase ended still stops the sweep; the step is whole.
        interrupted = recorded.interrupted || stop.requested();
        // Judge the last step as the answer would: its interval against the target.
        let steps: Vec<Step> = files.iter().zip(&traces).map(|((l, n, int), t)| Step { load: *l, name: n.clone(), trace: t, interrupted: *int }).collect();
        let cap = Capacity::compute(kind, &steps, &common, target).map_err(|e| e.en)?;
        let last = cap.steps.last().expect("one step at least");
        let why = if interrupted {
            Some("stopped by Ctrl-C or SIGTERM; every finished step is kept".to_string())
        } else if last.failure_rate.interval.and_then(|b| b.lo).is_some_and(|lo| lo > args.max_failure_rate) {
            Some(format!("saturated: the failure rate's whole 95 % interval lies above {}", args.max_failure_rate))
        } else if last.client_behind == Some(true) {
            Some("saturated: the client fell behind its schedule beyond its bound (the server saw less than offered)".into())
        } else if last.verdict == StepVerdict::Fails {
            Some(format!("saturated: the step fails the target ({}) with its whole 95 % interval", target.describe(Lang::En)))
        } else {
            None
        };
        if stopped.is_none() {
            stopped = why.filter(|_| interrupted || !args.keep_going).map(|w| json!({"step": i + 1, "why": w}));
        }
        write_sweep(&dir, kind, &loads, &files, contract.as_deref(), &args.target, args.threshold, stopped.as_ref(), interrupted)?;
        if stopped.is_some() {
            break;
        }
    }
    if let Some(s) = &stopped {
        eprintln!("tracelab: the sweep stopped after step {}: {}", s["step"], s["why"].as_str().unwrap_or_default());
    }
    if !args.record.quiet && !files.is_empty() {
        let steps: Vec<Step> = files.iter().zip(&traces).map(|((l, n, int), t)| Step { load: *l, name: n.clone(), trace: t, interrupted: *int }).collect();
        let cap = Capacity::compute(kind, &steps, &common, target).map_err(|e| e.en)?;
        tracelab_recorder::outln!("{}", cap.render_text(Lang::En));
        tracelab_recorder::outln!("Recompute with other settings: tracelab capacity {}", dir.display());
    }
    Ok(if interrupted { EXIT_INTERRUPTED } else { 0 })
}

#[allow(clippy::too_many_arguments)]
fn write_sweep(dir: &Path, kind: LoadKind, loads: &[f64], files: &[(f64, String, bool)], contract: Option<&str>, target: &str, threshold: f64, stopped: Option<&Value>, interrupted: bool) -> Result<(), String> {
    let v = json!({
        "tracelab_sweep": 1,
        "kind": kind.code(),
        "loads": loads,
        "steps": files.iter().map(|(l, f, i)| json!({"load": l, "file": f, "interrupted": i})).collect::<Vec<_>>(),
        "contract_sha256": contract,
        "target": target,
        "threshold_s": threshold,
        "stopped": stopped,
        "interrupted": interrupted,
    });
    let text = serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n";
    // Written beside, then renamed, so a Ctrl-C never leaves half a sweep file.
    let tmp = dir.join(".sweep.json.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join(SWEEP_FILE)).map_err(|e| format!("cannot write {}: {e}", dir.join(SWEEP_FILE).display()))
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

/// Runs `tracelab capacity DIR`: every step recomputed under the given settings and target.
pub fn capacity(args: CapacityArgs) -> Result<(), String> {
    let sweep_path = args.dir.join(SWEEP_FILE);
    let text = std::fs::read_to_string(&sweep_path)
        .map_err(|e| format!("cannot read {} ({e}); give a folder written by tracelab sweep", sweep_path.display()))?;
    let sweep: Value = serde_json::from_str(&text).map_err(|e| format!("{}: not JSON ({e})", sweep_path.display()))?;
    let bad = |field: &str| format!("{}: field `{field}` is missing or wrong", sweep_path.display());
    let kind = sweep["kind"].as_str().and_then(LoadKind::from_code).ok_or_else(|| bad("kind"))?;
    let steps_v = sweep["steps"].as_array().ok_or_else(|| bad("steps"))?;
    let mut loaded = Vec::new();
    for s in steps_v {
        let load = s["load"].as_f64().ok_or_else(|| bad("steps[].load"))?;
        let file = s["file"].as_str().filter(|f| !f.contains('/') && !f.contains('\\')).ok_or_else(|| bad("steps[].file"))?;
        loaded.push((load, file.to_string(), s["interrupted"].as_bool().unwrap_or(false), read_trace(&args.dir.join(file))?));
    }
    if loaded.is_empty() {
        return Err(format!("{}: the sweep has no finished step", sweep_path.display()));
    }
    let target_spec = args.target.clone().or_else(|| sweep["target"].as_str().map(String::from)).unwrap_or_else(|| "joint_rate>=0.9".into());
    let target = Target::parse(&target_spec).map_err(|e| e.en)?;
    let mut common = args.settings.settings(&loaded[0].3.header)?;
    if args.settings.threshold.is_none() {
        common.ttft_threshold_s = sweep["threshold_s"].as_f64().unwrap_or(common.ttft_threshold_s);
    }
    // Each step's own window and cost, unless the flags set them for all.
    common.window_s = args.settings.window;
    if args.settings.cost.is_none() {
        common.window_cost = None;
    }
    let steps: Vec<Step> = loaded.iter().map(|(l, n, i, t)| Step { load: *l, name: n.clone(), trace: t, interrupted: *i }).collect();
    let lang = args.settings.lang();
    let cap = Capacity::compute(kind, &steps, &common, target).map_err(|e| e.get(lang).to_string())?;
    if args.json {
        tracelab_recorder::outln!("{}", serde_json::to_string_pretty(&cap).map_err(|e| e.to_string())?);
        return Ok(());
    }
    tracelab_recorder::outln!("{}", cap.render_text(lang));
    if let Some(why) = sweep["stopped"]["why"].as_str() {
        let step = &sweep["stopped"]["step"];
        tracelab_recorder::outln!("{}", if lang == Lang::Zh { format!("扫描在第 {step} 步后停止：{why}") } else { format!("The sweep stopped after step {step}: {why}") });
    }
    Ok(())
}
