//! `tracelab merge SHARD… --output run.jsonl`: the shards of one run (`tracelab record --shard`)
//! as one trace.
//!
//! The shards must share a run id and one contract (the header's conditions, window cost and
//! defaults), and be all of them (0 … N−1, once each). Each shard's times are offsets from its
//! own monotonic origin; the merge moves them onto one timeline by the difference of the shards'
//! wall-clock anchors, the same shift for every time of a shard, so every duration (TTFT, each
//! gap, E2E) stays exactly what that shard's own clock measured — never a difference across
//! machines. How far apart two shards' timelines may still be (clock sync bounds + the anchors'
//! 1 ms resolution) is stated in the merged header's `merged` object.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{json, Map, Value};
use tracelab_core::parse::parse_trace_bytes;
use tracelab_core::trace::{ClientShare, ClientTiming, Footer, Lateness, GPU_UNSUPPORTED};
use tracelab_core::{write, Trace};

use crate::shard::rfc3339_epoch_ms;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Every shard's trace of one run, in any order.
    #[arg(required = true, value_name = "SHARD")]
    pub shards: Vec<PathBuf>,
    /// Where to write the merged trace (JSON Lines).
    #[arg(long, short, value_name = "FILE")]
    pub output: PathBuf,
    /// Overwrite --output if it exists.
    #[arg(long)]
    pub force: bool,
    /// Print nothing.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The wall-clock anchors have millisecond resolution, so two shards' timelines may differ by
/// up to 1 ms on top of their clocks' own errors.
const ANCHOR_RESOLUTION_MS: f64 = 1.0;

/// Attempt fields that are times on the shard's clock (`events` holds `[time, tokens]` pairs).
const ATTEMPT_TIMES: [&str; 5] = ["intended_start_ms", "start_ms", "first_byte_ms", "first_token_ms", "end_ms"];

struct Shard {
    name: String,
    index: u32,
    count: u32,
    run_id: String,
    clock_sync: Value,
    header: Map<String, Value>,
    trace: Trace,
    text: String,
    anchor_ms: f64,
}

fn load(path: &Path) -> Result<Shard, String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    let trace = parse_trace_bytes(&name, &bytes).map_err(|e| e.to_string())?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{name} is not UTF-8 text"))?;
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
    let Ok(Value::Object(header)) = serde_json::from_str::<Value>(first) else {
        return Err(format!("{name} line 1: the header is not a JSON object"));
    };
    let Some(shard) = header.get("shard").and_then(Value::as_object) else {
        return Err(format!("{name}: the header has no `shard` field; only traces recorded with --shard I/N (or --shards N) can be merged"));
    };
    let int = |key: &str| shard.get(key).and_then(Value::as_u64).and_then(|v| u32::try_from(v).ok());
    let (Some(index), Some(count), Some(run_id)) = (int("index"), int("count"), shard.get("run_id").and_then(Value::as_str)) else {
        return Err(format!("{name} line 1, field shard: needs `index`, `count` and `run_id`"));
    };
    let anchor = trace.header.wall_clock_anchor_utc.as_deref().ok_or_else(|| {
        format!("{name} line 1: no wall_clock_anchor_utc, so this shard cannot be put on the others' timeline")
    })?;
    let anchor_ms = rfc3339_epoch_ms(anchor)
        .ok_or_else(|| format!("{name} line 1, field wall_clock_anchor_utc: `{anchor}` is not an RFC 3339 time"))?;
    Ok(Shard {
        name,
        index,
        count,
        run_id: run_id.to_string(),
        clock_sync: shard.get("clock_sync").cloned().unwrap_or(json!({"source": "unknown"})),
        header,
        trace,
        text,
        anchor_ms,
    })
}

/// The parts of a header every shard must share: what was asked of the server, and the terms
/// the figures are judged by.
const CONTRACT: [&str; 4] = ["schema", "conditions", "window_cost", "defaults"];

fn check(shards: &mut [Shard]) -> Result<(), String> {
    shards.sort_by_key(|s| s.index);
    let first = &shards[0];
    for s in shards.iter() {
        if s.run_id != first.run_id {
            return Err(format!(
                "{} belongs to run `{}` but {} to run `{}`: merge the shards of one run only",
                s.name, s.run_id, first.name, first.run_id
            ));
        }
        if s.count as usize != shards.len() {
            return Err(format!("{} is one of {} shards, but {} were given: merge all of them", s.name, s.count, shards.len()));
        }
        for key in CONTRACT {
            if s.header.get(key) != first.header.get(key) {
                return Err(format!(
                    "{} and {} were recorded under different contracts (header field `{key}` differs): they are not one run",
                    first.name, s.name
                ));
            }
        }
    }
    for (want, s) in shards.iter().enumerate() {
        if s.index as usize != want {
            let dup = shards.iter().filter(|o| o.index == s.index).count() > 1;
            return Err(if dup {
                format!("shard {} is given twice ({}): each shard once", s.index, s.name)
            } else {
                format!("shard {want} of {} is missing", shards.len())
            });
        }
    }
    Ok(())
}

fn shift(value: &mut Value, by_ms: f64) {
    if let Some(t) = value.as_f64() {
        *value = json!(((t + by_ms) * 1000.0).round() / 1000.0);
    }
}

/// How far two shards' timelines may be apart: the two largest clock error bounds plus the
/// anchors' resolution; None when any shard's synchronisation is unknown.
fn uncertainty_ms(shards: &[Shard]) -> Option<f64> {
    if shards.len() < 2 {
        return Some(0.0);
    }
    let mut bounds: Vec<f64> = shards
        .iter()
        .map(|s| s.clock_sync.get("error_bound_ms").and_then(Value::as_f64))
        .collect::<Option<Vec<f64>>>()?;
    bounds.sort_by(|a, b| b.total_cmp(a));
    Some(((bounds[0] + bounds[1] + ANCHOR_RESOLUTION_MS) * 1000.0).round() / 1000.0)
}

pub fn run(args: MergeArgs) -> Result<(), String> {
    let mut shards = args.shards.iter().map(|p| load(p)).collect::<Result<Vec<_>, _>>()?;
    check(&mut shards)?;
    let origin_ms = shards.iter().map(|s| s.anchor_ms).fold(f64::INFINITY, f64::min);
    let origin_anchor = shards
        .iter()
        .find(|s| s.anchor_ms == origin_ms)
        .and_then(|s| s.trace.header.wall_clock_anchor_utc.clone())
        .unwrap_or_default();
    let telemetry = shards[0].trace.header.capabilities.gpu_telemetry.clone();

    let mut ids = HashSet::new();
    let mut attempts: Vec<(f64, String)> = Vec::new();
    let mut gpu: Vec<(f64, String)> = Vec::new();
    let mut engine: Vec<(f64, String)> = Vec::new();
    let mut clean = true;
    for s in &shards {
        clean &= !s.trace.is_incomplete();
        let offset = s.anchor_ms - origin_ms;
        // dcgm samples the same fleet from every shard: shard 0's are kept. Local telemetry is
        // each client's own GPUs: each shard's become the node of its index.
        let keep_gpu = s.trace.header.capabilities.gpu_telemetry == telemetry
            && telemetry != GPU_UNSUPPORTED
            && (telemetry != "dcgm" || s.index == 0);
        for (n, line) in s.text.lines().enumerate() {
            let Ok(Value::Object(mut record)) = serde_json::from_str::<Value>(line) else { continue };
            match record.get("kind").and_then(Value::as_str) {
                Some("attempt") => {
                    let id = record.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
                    if !ids.insert(id.clone()) {
                        return Err(format!("{} line {}: attempt `{id}` is also in another shard; were the shards recorded with one --shard each?", s.name, n + 1));
                    }
                    for key in ATTEMPT_TIMES {
                        if let Some(v) = record.get_mut(key) {
                            shift(v, offset);
                        }
                    }
                    if let Some(Value::Array(events)) = record.get_mut("events") {
                        for e in events.iter_mut() {
                            if let Some(t) = e.get_mut(0) {
                                shift(t, offset);
                            }
                        }
                    }
                    let at = ["intended_start_ms", "start_ms"]
                        .iter()
                        .find_map(|k| record.get(*k).and_then(Value::as_f64))
                        .unwrap_or(f64::INFINITY);
                    attempts.push((at, Value::Object(record).to_string()));
                }
                Some("gpu") if keep_gpu => {
                    if let Some(t) = record.get_mut("t_ms") {
                        shift(t, offset);
                    }
                    if telemetry != "dcgm" {
                        record.insert("node".into(), json!(s.index));
                    }
                    let at = record.get("t_ms").and_then(Value::as_f64).unwrap_or(0.0);
                    gpu.push((at, Value::Object(record).to_string()));
                }
                // Every shard scrapes the same engine: shard 0's scrapes are kept, re-timed.
                Some("engine") if s.index == 0 => {
                    if let Some(t) = record.get_mut("t_ms") {
                        shift(t, offset);
                    }
                    let at = record.get("t_ms").and_then(Value::as_f64).unwrap_or(0.0);
                    engine.push((at, Value::Object(record).to_string()));
                }
                _ => {}
            }
        }
    }
    attempts.sort_by(|a, b| a.0.total_cmp(&b.0));
    gpu.sort_by(|a, b| a.0.total_cmp(&b.0));
    engine.sort_by(|a, b| a.0.total_cmp(&b.0));

    let mut header = shards[0].header.clone();
    header.remove("shard");
    header.insert("wall_clock_anchor_utc".into(), json!(origin_anchor));
    header.remove("window");
    let windows: Option<Vec<(f64, f64)>> = shards
        .iter()
        .map(|s| s.trace.header.window.map(|w| (w.start_ms + s.anchor_ms - origin_ms, w.length_s)))
        .collect();
    if let Some(windows) = windows {
        // One fixed length for all (--window): kept, from the earliest start; else the envelope
        // of the shards' measured spans.
        let start = windows.iter().map(|w| w.0).fold(f64::INFINITY, f64::min);
        let fixed = windows.iter().all(|w| w.1 == windows[0].1);
        let length_s = if fixed {
            windows[0].1
        } else {
            let end = windows.iter().map(|w| w.0 + w.1 * 1000.0).fold(f64::NEG_INFINITY, f64::max);
            ((end - start) * 1000.0).round() / 1e6
        };
        header.insert("window".into(), json!({"start_ms": (start * 1000.0).round() / 1000.0, "length_s": length_s}));
    }
    // The recorders' own shares add up (counts, CPU); each timing error keeps the worst shard's
    // P50, P99 and max, so the merged bound is never below any shard's. A shard without one
    // (killed) leaves the run's share unknown.
    header.remove("client");
    let shares: Option<Vec<&ClientShare>> = shards.iter().map(|s| s.trace.header.client.as_ref()).collect();
    if let Some(share) = shares.map(|all| merged_share(&all)) {
        header.insert("client".into(), serde_json::to_value(share).map_err(|e| e.to_string())?);
    }
    let uncertainty = uncertainty_ms(&shards);
    let mut merged = Map::new();
    merged.insert("run_id".into(), json!(shards[0].run_id));
    merged.insert("shards".into(), json!(shards.len()));
    merged.insert("alignment_uncertainty_ms".into(), json!(uncertainty));
    merged.insert(
        "alignment".into(),
        json!(match uncertainty {
            Some(_) => "shards' timelines aligned by wall-clock anchors; bound = two largest clock error bounds + 1 ms anchor resolution; durations are each shard's own monotonic clock",
            None => "unknown: at least one shard's clock synchronisation is unknown; durations are each shard's own monotonic clock",
        }),
    );
    merged.insert("clock_sync".into(), Value::Array(shards.iter().map(|s| s.clock_sync.clone()).collect()));
    header.insert("merged".into(), Value::Object(merged));

    let mut out = String::new();
    out.push_str(&Value::Object(header).to_string());
    out.push('\n');
    for (_, line) in attempts.iter().chain(gpu.iter()).chain(engine.iter()) {
        out.push_str(line);
        out.push('\n');
    }
    let footer = Footer { finished_cleanly: clean, attempts: attempts.len() as u64, gpu_samples: gpu.len() as u64 };
    out.push_str(&write::footer_line(&footer));
    out.push('\n');

    let name = args.output.display().to_string();
    parse_trace_bytes(&name, out.as_bytes()).map_err(|e| format!("the merged trace does not load (a bug): {e}"))?;
    if args.output.exists() && !args.force {
        return Err(format!("{name} already exists; give --force to overwrite it"));
    }
    let tmp = args.output.with_extension("merging");
    std::fs::write(&tmp, out).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &args.output).map_err(|e| format!("cannot write {name}: {e}"))?;
    if !args.quiet {
        let align = match uncertainty {
            Some(u) => format!("aligned within ±{u} ms"),
            None => "alignment uncertainty unknown (no clock sync report)".into(),
        };
        crate::outln!(
            "Merged {} shards of run {} into {name}: {} attempts, {} GPU samples; {align}{}",
            shards.len(),
            shards[0].run_id,
            attempts.len(),
            gpu.len(),
            if clean { "" } else { "; at least one shard did not finish cleanly" }
        );
    }
    Ok(())
}

/// The shards' shares as one run's (see where it is used).
fn merged_share(all: &[&ClientShare]) -> ClientShare {
    let sum = |f: fn(&ClientShare) -> u64| all.iter().map(|c| f(c)).sum::<u64>();
    let worst = |f: fn(&ClientTiming) -> Lateness| {
        let parts: Vec<Lateness> = all.iter().filter_map(|c| c.timing.as_ref().map(f)).collect();
        Lateness {
            n: parts.iter().map(|l| l.n).sum(),
            p50_ms: parts.iter().map(|l| l.p50_ms).fold(0.0, f64::max),
            p99_ms: parts.iter().map(|l| l.p99_ms).fold(0.0, f64::max),
            max_ms: parts.iter().map(|l| l.max_ms).fold(0.0, f64::max),
        }
    };
    let timing = all.iter().find_map(|c| c.timing.as_ref()).map(|t| ClientTiming {
        method: format!("{} (merged: each figure the worst shard's)", t.method),
        first_token: worst(|t| t.first_token),
        events: worst(|t| t.events),
    });
    let cpu: Option<Vec<f64>> = all.iter().map(|c| c.cpu_cores_busy).collect();
    ClientShare {
        measured: sum(|c| c.measured),
        measured_failures: sum(|c| c.measured_failures),
        new_connections: sum(|c| c.new_connections),
        warm_connections: sum(|c| c.warm_connections),
        resent: sum(|c| c.resent),
        not_sent: sum(|c| c.not_sent),
        timing,
        cpu_cores_busy: cpu.map(|v| (v.iter().sum::<f64>() * 100.0).round() / 100.0),
        server_closed_after_reply: all.iter().any(|c| c.server_closed_after_reply),
    }
}
