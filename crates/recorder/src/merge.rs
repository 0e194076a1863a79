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
//!
//! Streamed: each shard is checked by the core's streamed reader, then read again line by line,
//! its attempts re-timed and sorted on disk by time ([`crate::spill`]: a shard's attempts are
//! in the order they finished), and the sorted runs of every shard merged k ways into the output.
//! Memory holds one sorted run and the GPU and engine samples (a few per second), never a
//! shard's attempts; the attempt ids are checked on disk too (an id in two shards is refused).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{json, Map, Value};
use tracelab_core::parse::duplicate_id;
use tracelab_core::parse::stream::{self, Ids, StreamError};
use tracelab_core::trace::{ClientShare, ClientTiming, Footer, Lateness, GPU_UNSUPPORTED};
use tracelab_core::{write, Header};

use crate::shard::rfc3339_epoch_ms;
use crate::spill::{self, Duplicates, Spill};

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
const ATTEMPT_TIMES: [&str; 5] = [
    "intended_start_ms",
    "start_ms",
    "first_byte_ms",
    "first_token_ms",
    "end_ms",
];

struct Shard {
    name: String,
    path: PathBuf,
    index: u32,
    count: u32,
    run_id: String,
    clock_sync: Value,
    /// The header record as written (with the recorder's `shard` object).
    header: Map<String, Value>,
    /// The header as the core reads it, and whether the shard's footer says it finished cleanly.
    parsed: Header,
    finished: bool,
    anchor_ms: f64,
    /// `shard.start_late_ms`: how far past `--start-at` the shard began.
    late_ms: Option<f64>,
}

/// Reads a whole stream with the core's reader, keeping nothing of the attempts: the same
/// checks, errors and warnings as loading the file, a repeated attempt id found on disk
/// ([`Duplicates`], beside `sort_dir`) so memory does not grow with the file.
fn check_stream(name: &str, path: &Path, sort_dir: &Path) -> Result<stream::Rest, String> {
    let file = File::open(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    let mut ids = Duplicates::new(sort_dir);
    let visited = stream::visit(
        name,
        BufReader::with_capacity(1 << 20, file),
        Ids::Caller,
        |_| Ok::<(), String>(()),
        |(), a, line| {
            ids.push(&a.id, 0, line)
                .map_err(|e| format!("cannot sort {name}'s attempt ids: {e}"))
        },
    );
    let mut repeat_before = |line: usize| -> Result<Option<String>, String> {
        let repeat = ids
            .first_repeat(false)
            .map_err(|e| format!("cannot sort {name}'s attempt ids: {e}"))?;
        Ok(repeat.filter(|d| d.again.1 < line).map(|d| {
            duplicate_id(&d.id, d.first.1, d.again.1)
                .in_file(name)
                .to_string()
        }))
    };
    match visited {
        Ok(Ok(((), rest))) => repeat_before(usize::MAX)?.map_or(Ok(rest), Err),
        Ok(Err(sort)) => Err(sort),
        Err(StreamError::Io(e)) => Err(format!("cannot read {name}: {e}")),
        Err(StreamError::Parse(e)) if e.message != stream::NOT_UTF8 => {
            Err(repeat_before(e.line.unwrap_or(usize::MAX))?.unwrap_or_else(|| e.to_string()))
        }
        Err(StreamError::Parse(e)) => Err(e.to_string()),
    }
}

/// The first non-blank line of a file, as JSON.
fn first_record(name: &str, path: &Path) -> Result<Value, String> {
    let reader = BufReader::new(File::open(path).map_err(|e| format!("cannot read {name}: {e}"))?);
    for line in reader.lines() {
        let line = line.map_err(|e| format!("cannot read {name}: {e}"))?;
        let line = line.trim_start_matches('\u{feff}');
        if !line.trim().is_empty() {
            return serde_json::from_str(line)
                .map_err(|_| format!("{name} line 1: the header is not a JSON object"));
        }
    }
    Err(format!("{name} is empty"))
}

fn load(path: &Path, sort_dir: &Path) -> Result<Shard, String> {
    let name = path.display().to_string();
    let rest = check_stream(&name, path, sort_dir)?;
    let Value::Object(header) = first_record(&name, path)? else {
        return Err(format!("{name} line 1: the header is not a JSON object"));
    };
    let Some(shard) = header.get("shard").and_then(Value::as_object) else {
        return Err(format!("{name}: the header has no `shard` field; only traces recorded with --shard I/N (or --shards N) can be merged"));
    };
    let int = |key: &str| {
        shard
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|v| u32::try_from(v).ok())
    };
    let (Some(index), Some(count), Some(run_id)) = (
        int("index"),
        int("count"),
        shard.get("run_id").and_then(Value::as_str),
    ) else {
        return Err(format!(
            "{name} line 1, field shard: needs `index`, `count` and `run_id`"
        ));
    };
    let anchor = rest.header.wall_clock_anchor_utc.as_deref().ok_or_else(|| {
        format!("{name} line 1: no wall_clock_anchor_utc, so this shard cannot be put on the others' timeline")
    })?;
    let anchor_ms = rfc3339_epoch_ms(anchor).ok_or_else(|| {
        format!("{name} line 1, field wall_clock_anchor_utc: `{anchor}` is not an RFC 3339 time")
    })?;
    Ok(Shard {
        name,
        path: path.to_path_buf(),
        index,
        count,
        run_id: run_id.to_string(),
        clock_sync: shard
            .get("clock_sync")
            .cloned()
            .unwrap_or(json!({"source": "unknown"})),
        header: header.clone(),
        parsed: rest.header,
        finished: Footer::finished(rest.footer),
        anchor_ms,
        late_ms: shard.get("start_late_ms").and_then(Value::as_f64),
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
            return Err(format!(
                "{} is one of {} shards, but {} were given: merge all of them",
                s.name,
                s.count,
                shards.len()
            ));
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
                format!(
                    "shard {} is given twice ({}): each shard once",
                    s.index, s.name
                )
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
    let name = args.output.display().to_string();
    crate::writer::refuse_overwrite(&args.output, args.force, "")?;
    let sort_dir = match args.output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut shards = args
        .shards
        .iter()
        .map(|p| load(p, &sort_dir))
        .collect::<Result<Vec<_>, _>>()?;
    check(&mut shards)?;
    let origin_ms = shards
        .iter()
        .map(|s| s.anchor_ms)
        .fold(f64::INFINITY, f64::min);
    let origin_anchor = shards
        .iter()
        .find(|s| s.anchor_ms == origin_ms)
        .and_then(|s| s.parsed.wall_clock_anchor_utc.clone())
        .unwrap_or_default();
    let telemetry = shards[0].parsed.capabilities.gpu_telemetry.clone();

    // Attempts by time, then shard, then line: the order one stable sort of every shard's lines
    // (in shard order) by time gives.
    let mut attempts = Spill::new(&sort_dir);
    // An id in two shards (each shard's own were checked as it was loaded).
    let mut ids = Duplicates::new(&sort_dir);
    let mut gpu: Vec<(f64, String)> = Vec::new();
    let mut engine: Vec<(f64, String)> = Vec::new();
    let mut clean = true;
    for (position, s) in shards.iter().enumerate() {
        clean &= s.finished;
        let offset = s.anchor_ms - origin_ms;
        // dcgm samples the same fleet from every shard: shard 0's are kept. Local telemetry is
        // each client's own GPUs: each shard's become the node of its index.
        let keep_gpu = s.parsed.capabilities.gpu_telemetry == telemetry
            && telemetry != GPU_UNSUPPORTED
            && (telemetry != "dcgm" || s.index == 0);
        let file = File::open(&s.path).map_err(|e| format!("cannot read {}: {e}", s.name))?;
        for (n, line) in BufReader::with_capacity(1 << 20, file).lines().enumerate() {
            let line = line.map_err(|e| format!("cannot read {}: {e}", s.name))?;
            let Ok(Value::Object(mut record)) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            match record.get("kind").and_then(Value::as_str) {
                Some("attempt") => {
                    let id = record.get("id").and_then(Value::as_str).unwrap_or_default();
                    ids.push(id, position, n + 1)
                        .map_err(|e| format!("cannot sort the attempt ids: {e}"))?;
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
                    let key = [spill::ordered(at), position as i64, n as i64];
                    attempts
                        .push(key, Value::Object(record).to_string())
                        .map_err(|e| format!("cannot sort the attempts: {e}"))?;
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
    if let Some(d) = ids
        .first_repeat(false)
        .map_err(|e| format!("cannot sort the attempt ids: {e}"))?
    {
        return Err(format!(
            "{} line {}: attempt `{}` is also in another shard; were the shards recorded with one --shard each?",
            shards[d.again.0].name, d.again.1, d.id
        ));
    }
    drop(ids);
    gpu.sort_by(|a, b| a.0.total_cmp(&b.0));
    engine.sort_by(|a, b| a.0.total_cmp(&b.0));

    let mut header = shards[0].header.clone();
    header.remove("shard");
    header.insert("wall_clock_anchor_utc".into(), json!(origin_anchor));
    header.remove("window");
    let windows: Option<Vec<(f64, f64)>> = shards
        .iter()
        .map(|s| {
            s.parsed
                .window
                .map(|w| (w.start_ms + s.anchor_ms - origin_ms, w.length_s))
        })
        .collect();
    if let Some(windows) = windows {
        // One fixed length for all (--window): kept, from the earliest start; else the envelope
        // of the shards' measured spans.
        let start = windows.iter().map(|w| w.0).fold(f64::INFINITY, f64::min);
        let fixed = windows.iter().all(|w| w.1 == windows[0].1);
        let length_s = if fixed {
            windows[0].1
        } else {
            let end = windows
                .iter()
                .map(|w| w.0 + w.1 * 1000.0)
                .fold(f64::NEG_INFINITY, f64::max);
            ((end - start) * 1000.0).round() / 1e6
        };
        header.insert(
            "window".into(),
            json!({"start_ms": (start * 1000.0).round() / 1000.0, "length_s": length_s}),
        );
    }
    // The recorders' own shares add up (counts, CPU); each timing error keeps the worst shard's
    // P50, P99 and max, so the merged bound is never below any shard's. A shard without one
    // (killed) leaves the run's share unknown.
    header.remove("client");
    let shares: Option<Vec<&ClientShare>> =
        shards.iter().map(|s| s.parsed.client.as_ref()).collect();
    if let Some(share) = shares.map(|all| merged_share(&all)) {
        header.insert(
            "client".into(),
            serde_json::to_value(share).map_err(|e| e.to_string())?,
        );
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
    merged.insert(
        "clock_sync".into(),
        Value::Array(shards.iter().map(|s| s.clock_sync.clone()).collect()),
    );
    // How late each shard began past --start-at (its attempts are that much later on the
    // merged timeline: a late shard's schedule was shifted, never compressed to catch up).
    let late: Vec<Option<f64>> = shards.iter().map(|s| s.late_ms).collect();
    merged.insert("start_late_ms".into(), json!(late));
    header.insert("merged".into(), Value::Object(merged));

    let tmp = args.output.with_extension("merging");
    let written = write_merged(
        &tmp,
        &Value::Object(header),
        &mut attempts,
        &gpu,
        &engine,
        clean,
    );
    drop(attempts);
    let attempts = match written {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    if let Err(e) = check_stream(&name, &tmp, &sort_dir) {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("the merged trace does not load (a bug): {e}"));
    }
    std::fs::rename(&tmp, &args.output).map_err(|e| format!("cannot write {name}: {e}"))?;
    if !args.quiet {
        let late: String = shards
            .iter()
            .filter_map(|s| {
                s.late_ms.filter(|ms| *ms >= 1000.0).map(|ms| {
                    format!(
                        "; shard {} began {:.1} s late (its requests shifted)",
                        s.index,
                        ms / 1000.0
                    )
                })
            })
            .collect();
        let align = match uncertainty {
            Some(u) => format!("aligned within ±{u} ms"),
            None => "alignment uncertainty unknown (no clock sync report)".into(),
        };
        crate::outln!(
            "Merged {} shards of run {} into {name}: {} attempts, {} GPU samples; {align}{late}{}",
            shards.len(),
            shards[0].run_id,
            attempts,
            gpu.len(),
            if clean {
                ""
            } else {
                "; at least one shard did not finish cleanly"
            }
        );
    }
    Ok(())
}

/// The merged trace: header, the attempts in time order, GPU and engine samples, footer.
/// Returns how many attempts it holds.
fn write_merged(
    path: &Path,
    header: &Value,
    attempts: &mut Spill,
    gpu: &[(f64, String)],
    engine: &[(f64, String)],
    clean: bool,
) -> Result<u64, String> {
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path).map_err(cannot)?);
    writeln!(out, "{header}").map_err(cannot)?;
    let mut count = 0u64;
    for item in attempts
        .sorted()
        .map_err(|e| format!("cannot sort the attempts: {e}"))?
    {
        let (_, line) = item.map_err(|e| format!("cannot sort the attempts: {e}"))?;
        writeln!(out, "{line}").map_err(cannot)?;
        count += 1;
    }
    for (_, line) in gpu.iter().chain(engine) {
        writeln!(out, "{line}").map_err(cannot)?;
    }
    let footer = Footer {
        finished_cleanly: clean,
        attempts: count,
        gpu_samples: gpu.len() as u64,
    };
    writeln!(out, "{}", write::footer_line(&footer)).map_err(cannot)?;
    out.flush().map_err(cannot)?;
    Ok(count)
}

/// The shards' shares as one run's (see where it is used).
fn merged_share(all: &[&ClientShare]) -> ClientShare {
    let sum = |f: fn(&ClientShare) -> u64| all.iter().map(|c| f(c)).sum::<u64>();
    let worst = |f: fn(&ClientTiming) -> Lateness| {
        let parts: Vec<Lateness> = all
            .iter()
            .filter_map(|c| c.timing.as_ref().map(f))
            .collect();
        Lateness {
            n: parts.iter().map(|l| l.n).sum(),
            p50_ms: parts.iter().map(|l| l.p50_ms).fold(0.0, f64::max),
            p99_ms: parts.iter().map(|l| l.p99_ms).fold(0.0, f64::max),
            max_ms: parts.iter().map(|l| l.max_ms).fold(0.0, f64::max),
            // The worst shard's bound, and none unless every shard has one: a shard too small
            // to bound its P99 leaves the merged run without a bound it could vouch for.
            p99_bound_ms: parts
                .iter()
                .map(|l| l.p99_bound_ms)
                .try_fold(0.0, |worst: f64, b| b.map(|b| worst.max(b)))
                .filter(|_| !parts.is_empty()),
        }
    };
    let timing = all
        .iter()
        .find_map(|c| c.timing.as_ref())
        .map(|t| ClientTiming {
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
