//! Sharded runs: N local recorder processes started the way the Kubernetes Indexed Job starts
//! them (`--shards N` + `JOB_COMPLETION_INDEX`, one `--start-at`), merged with `tracelab merge`,
//! give the figures of one process at the same total load, within the tolerance stated here.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tracelab_core::{Index, Metrics, Settings, Trace};

use crate::server::{Script, ScriptedServer};
use crate::{load, prompts, run, temp_dir, tracelab, Record};

/// Percentile tolerance (ms) between the merged shards and one process: every request costs the
/// scripted server the same 40 ms + 3 × 5 ms, so what differs is scheduling noise on a shared
/// 2-core test machine.
const TOLERANCE_MS: f64 = 25.0;

fn server() -> ScriptedServer {
    ScriptedServer::start(|key| match key {
        k if k.starts_with("bad") => Script::status(500),
        _ => Script::ok(Duration::from_millis(40), Duration::from_millis(5), 4),
    })
}

fn rfc3339_in(seconds: f64) -> String {
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        + seconds;
    tracelab_recorder::clock::rfc3339(at.floor() as i64, ((at - at.floor()) * 1000.0) as u32)
}

/// `tracelab record` against `server` with the test's prompts, writing `out`.
fn record(server: &ScriptedServer, dir: &Path, args: &[&str], out: &Path) -> Record {
    Record::new(out)
        .server(server)
        .prompts(&dir.join("prompts.jsonl"))
        .args(["--quiet"])
        .args(args)
}

fn shard(
    server: &ScriptedServer,
    dir: &Path,
    load: &[&str],
    n: u32,
    i: u32,
    start_at: &str,
) -> (Child, PathBuf) {
    let out = dir.join(format!("shard-{i}.jsonl"));
    let mut args = vec![
        "--shards".to_string(),
        n.to_string(),
        "--start-at".into(),
        start_at.into(),
    ];
    args.extend(load.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = record(server, dir, &args, &out)
        .env("JOB_COMPLETION_INDEX", i.to_string())
        .spawn();
    (child, out)
}

/// Runs N shards at once and merges them; returns the merged trace and the shards' files.
fn sharded(server: &ScriptedServer, dir: &Path, load: &[&str], n: u32) -> (Trace, Vec<PathBuf>) {
    let start_at = rfc3339_in(2.0);
    let children: Vec<_> = (0..n)
        .map(|i| shard(server, dir, load, n, i, &start_at))
        .collect();
    let mut files = Vec::new();
    for (child, out) in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "shard failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        files.push(out);
    }
    let merged = dir.join("merged.jsonl");
    let output = run(tracelab()
        .arg("merge")
        .args(&files)
        .arg("--output")
        .arg(&merged));
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(&format!("Merged {n} shards")), "{stdout}");
    (load_file(&merged), files)
}

fn load_file(path: &Path) -> Trace {
    load(path)
}

fn single(server: &ScriptedServer, dir: &Path, load: &[&str]) -> Trace {
    let out = dir.join("single.jsonl");
    assert!(record(server, dir, load, &out).run().status.success());
    load_file(&out)
}

fn metrics(trace: &Trace) -> Metrics {
    let settings = Settings::from_header(&trace.header);
    Metrics::compute(
        &Index::build(&trace.attempts, settings.population),
        &settings,
    )
}

fn header_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

fn assert_same_figures(merged: &Trace, one: &Trace) {
    let (m, s) = (metrics(merged), metrics(one));
    let ids = |t: &Trace| {
        let mut v: Vec<String> = t
            .attempts
            .iter()
            .map(|a| format!("{} {:?}", a.id, a.phase))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        ids(merged),
        ids(one),
        "the shards' union is the single run's attempts, no more, no less"
    );
    assert_eq!(
        (m.attempts, m.successes, m.failures, m.warmup_excluded),
        (s.attempts, s.successes, s.failures, s.warmup_excluded)
    );
    assert_eq!(m.failure_rate.value, s.failure_rate.value);
    assert_eq!(m.failures_by_outcome, s.failures_by_outcome);
    for (name, a, b) in [
        ("TTFT P50", &m.ttft_p50, &s.ttft_p50),
        ("TTFT P95", &m.ttft_p95, &s.ttft_p95),
        ("E2E P50", &m.e2e_p50, &s.e2e_p50),
        ("E2E tail", &m.e2e_tail, &s.e2e_tail),
    ] {
        assert_eq!(a.n, b.n, "{name}: n");
        let (a, b) = (a.value.unwrap(), b.value.unwrap());
        assert!(
            (a - b).abs() <= TOLERANCE_MS,
            "{name}: merged {a} ms vs one process {b} ms (tolerance {TOLERANCE_MS} ms)"
        );
    }
}

#[test]
fn closed_loop_shards_merge_to_the_single_process_figures() {
    let server = server();
    let dir = temp_dir("shards-closed");
    prompts(&dir, &["p1", "p2", "bad1", "p3", "p4", "p5"]);
    let load = ["--concurrency", "4", "--repetitions", "3", "--warmup", "1"];
    let one = single(&server, &dir, &load);
    let (merged, files) = sharded(&server, &dir, &load, 2);
    assert_same_figures(&merged, &one);

    // Each shard says which it is and of which run, and nothing about the machine.
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    let mut run_ids = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let h = header_json(file);
        assert_eq!(
            (h["shard"]["index"].as_u64(), h["shard"]["count"].as_u64()),
            (Some(i as u64), Some(2))
        );
        assert!(h["shard"]["clock_sync"]["source"].is_string(), "{h}");
        assert_eq!(
            h["conditions"]["concurrency"], 4,
            "the header states the run's total load"
        );
        run_ids.push(h["shard"]["run_id"].as_str().unwrap().to_string());
        let text = std::fs::read_to_string(file).unwrap();
        assert!(
            host.trim().is_empty() || !text.contains(host.trim()),
            "the hostname is never written"
        );
        assert!(!text.contains("127.0.0.1"));
    }
    assert_eq!(
        run_ids[0], run_ids[1],
        "shards started alike derive one run id"
    );

    // Durations are each shard's own: identical after the merge.
    let shards: Vec<Trace> = files.iter().map(|f| load_file(f)).collect();
    for a in &merged.attempts {
        let src = shards
            .iter()
            .flat_map(|t| &t.attempts)
            .find(|b| b.id == a.id)
            .unwrap();
        assert_eq!(
            (a.ttft_ms, a.e2e_ms, a.first_byte_ms),
            (src.ttft_ms, src.e2e_ms, src.first_byte_ms),
            "{}",
            a.id
        );
        let gaps = |x: &tracelab_core::Attempt| x.event_gaps_ms().collect::<Vec<_>>();
        assert_eq!(gaps(a), gaps(src));
    }
    // They overlapped: both began at the --start-at instant.
    let anchors: Vec<f64> = files
        .iter()
        .map(|f| {
            tracelab_recorder::shard::rfc3339_epoch_ms(
                header_json(f)["wall_clock_anchor_utc"].as_str().unwrap(),
            )
            .unwrap()
        })
        .collect();
    assert!(
        (anchors[0] - anchors[1]).abs() < 100.0,
        "shards started {} ms apart",
        (anchors[0] - anchors[1]).abs()
    );
    let h = header_json(&dir.join("merged.jsonl"));
    assert_eq!(h["merged"]["run_id"].as_str(), Some(run_ids[0].as_str()));
    assert_eq!(h["merged"]["shards"], 2);
    // The recorders' own shares add up: the merged run's is not one shard's.
    let share = merged
        .header
        .client
        .as_ref()
        .expect("both shards stated their share");
    let measured = merged
        .attempts
        .iter()
        .filter(|a| a.phase == tracelab_core::Phase::Measure)
        .count() as u64;
    assert_eq!(share.measured, measured, "{share:?}");
    assert!(h.get("shard").is_none());
    let sync_known = shards.len() == 2
        && h["merged"]["clock_sync"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["source"] == "chrony");
    assert_eq!(
        h["merged"]["alignment_uncertainty_ms"].is_number(),
        sync_known,
        "{h}"
    );
}

#[test]
fn open_loop_shards_split_one_schedule() {
    let server = server();
    let dir = temp_dir("shards-open");
    prompts(&dir, &["p1", "p2", "p3", "bad1", "p4", "p5", "p6", "p7"]);
    let load = [
        "--rate",
        "40",
        "--seed",
        "7",
        "--repetitions",
        "2",
        "--warmup",
        "0",
    ];
    let one = single(&server, &dir, &load);
    let (merged, _) = sharded(&server, &dir, &load, 3);
    assert_same_figures(&merged, &one);
    // The superposition is the requested process: the same intended instants, from each run's
    // own start, within the alignment of the shards' starts.
    let offsets = |t: &Trace| {
        let first = t
            .attempts
            .iter()
            .filter_map(|a| a.intended_start_ms)
            .fold(f64::INFINITY, f64::min);
        let mut v: Vec<(String, f64)> = t
            .attempts
            .iter()
            .map(|a| (a.id.clone(), a.intended_start_ms.unwrap() - first))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    for ((id, a), (_, b)) in offsets(&merged).iter().zip(offsets(&one).iter()) {
        assert!(
            (a - b).abs() < TOLERANCE_MS,
            "{id}: intended {a} ms after the first vs {b} ms in one process"
        );
    }
}

#[test]
fn merge_refuses_what_is_not_one_whole_run() {
    let server = server();
    let dir = temp_dir("shards-refuse");
    prompts(&dir, &["p1", "p2"]);
    let rec = |name: &str, extra: &[&str]| {
        let out = dir.join(name);
        let mut args = vec!["--repetitions", "1", "--warmup", "0", "--concurrency", "2"];
        args.extend_from_slice(extra);
        assert!(
            record(&server, &dir, &args, &out).run().status.success(),
            "{name}"
        );
        out
    };
    let a0 = rec("a0.jsonl", &["--shard", "0/2", "--run-id", "a"]);
    let a1 = rec("a1.jsonl", &["--shard", "1/2", "--run-id", "a"]);
    let b1 = rec("b1.jsonl", &["--shard", "1/2", "--run-id", "b"]);
    let c1 = rec(
        "c1.jsonl",
        &["--shard", "1/2", "--run-id", "a", "--max-tokens", "7"],
    );
    let plain = rec("plain.jsonl", &[]);
    let merge = |files: &[&PathBuf]| {
        let out = dir.join("m.jsonl");
        let _ = std::fs::remove_file(&out);
        let output = tracelab()
            .arg("merge")
            .args(files)
            .arg("--output")
            .arg(&out)
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
            out,
        )
    };
    for (files, expected) in [
        (vec![&a0, &b1], "belongs to run"),
        (vec![&a0], "merge all of them"),
        (vec![&a0, &a0], "given twice"),
        (vec![&a0, &c1], "different contracts"),
        (vec![&a0, &plain], "no `shard` field"),
    ] {
        let (ok, stderr, out) = merge(&files);
        assert!(
            !ok && stderr.contains(expected),
            "{files:?}: expected `{expected}` in {stderr}"
        );
        assert!(!out.exists(), "nothing written");
    }
    let (ok, stderr, out) = merge(&[&a1, &a0]);
    assert!(ok, "{stderr}");
    assert_eq!(load(&out).attempts.len(), 2);
    // A shard without a run id or a start instant cannot be merged safely: refused up front.
    let output = Record::new(Path::new("x.jsonl"))
        .base_url("http://h/v1")
        .args(["--shard", "0/2"])
        .run();
    assert!(String::from_utf8_lossy(&output.stderr).contains("--start-at"));
}

/// A sample trace dealt into `n` shards of one run, as a recorder writes them: attempt k to
/// shard k mod n, each shard's attempts last started first (in the order they finished, not
/// started), shard i anchored 1.25·i s after shard 0, every shard with the sample's GPU samples.
pub fn shards_of_sample(dir: &Path, sample: &Path, n: usize) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(sample).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let attempts: Vec<&serde_json::Value> =
        records.iter().filter(|r| r["kind"] == "attempt").collect();
    let gpu: Vec<&serde_json::Value> = records.iter().filter(|r| r["kind"] == "gpu").collect();
    let mut files = Vec::new();
    for i in 0..n {
        let mut header = records[0].clone();
        header["shard"] = serde_json::json!({"index": i, "count": n, "run_id": "sorted", "clock_sync": {"source": "chrony", "offset_ms": 0.0, "error_bound_ms": 0.5}});
        header["wall_clock_anchor_utc"] = format!("2026-12-01T05:00:0{}.{:03}Z", i, 250 * i).into();
        let mut mine: Vec<&serde_json::Value> =
            attempts.iter().copied().skip(i).step_by(n).collect();
        mine.reverse();
        let mut lines = vec![header.to_string()];
        lines.extend(mine.iter().map(|a| a.to_string()));
        lines.extend(gpu.iter().map(|g| g.to_string()));
        lines.push(serde_json::json!({"kind": "footer", "finished_cleanly": true, "attempts": mine.len(), "gpu_samples": gpu.len()}).to_string());
        let file = dir.join(format!("shard-{i}.jsonl"));
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        files.push(file);
    }
    files
}

/// Shards as a recorder writes them: attempts in the order they finished, not started. The
/// merge sorts them on disk and merges every shard's runs; with runs of a few attempts it writes
/// the bytes one sort in memory gives: every attempt once, in time order, each moved by its
/// shard's anchor and its durations untouched.
#[test]
fn merge_sorts_out_of_order_shards_on_disk() {
    let dir = temp_dir("shards-sorted");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../public/samples/gpu-busy-users-slow.jsonl");
    let n = 3;
    let files = shards_of_sample(&dir, &sample, n);
    let gpu = load(&sample).gpu;
    let merge = |out: &str, run_bytes: Option<&str>| {
        let out = dir.join(out);
        let mut cmd = tracelab();
        cmd.arg("merge").args(&files).arg("--output").arg(&out);
        if let Some(bytes) = run_bytes {
            cmd.env("TRACELAB_SORT_RUN_BYTES", bytes);
        }
        assert!(run(&mut cmd).status.success());
        out
    };
    let (small, big) = (
        merge("small-runs.jsonl", Some("3000")),
        merge("one-run.jsonl", None),
    );
    assert!(
        std::fs::read(&small).unwrap() == std::fs::read(&big).unwrap(),
        "many runs on disk and one in memory write the same merge"
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        files.len() + 2,
        "the sort's runs are removed"
    );

    let merged = load_file(&small);
    let source = load(&sample);
    assert_eq!(merged.attempts.len(), source.attempts.len());
    let at = |a: &tracelab_core::Attempt| a.intended_start_ms.or(a.start_ms).unwrap();
    assert!(
        merged.attempts.windows(2).all(|w| at(&w[0]) <= at(&w[1])),
        "attempts in time order"
    );
    for (k, original) in source.attempts.iter().enumerate() {
        let shift = 1000.0 * (k % n) as f64 + 250.0 * (k % n) as f64;
        let a = merged
            .attempts
            .iter()
            .find(|a| a.id == original.id)
            .unwrap();
        assert!(
            (a.start_ms.unwrap() - original.start_ms.unwrap() - shift).abs() < 1e-6,
            "{}: moved by its shard's anchor",
            a.id
        );
        assert_eq!(
            (a.ttft_ms, a.e2e_ms),
            (original.ttft_ms, original.e2e_ms),
            "{}: durations untouched",
            a.id
        );
    }
    assert_eq!(
        merged.gpu.len(),
        gpu.len() * n,
        "each shard's GPUs become a node"
    );

    // An attempt in two shards is refused, at its second place (the ids are checked on disk).
    let taken = std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_string();
    let one = std::fs::read_to_string(&files[1]).unwrap();
    let mut lines: Vec<&str> = one.lines().collect();
    lines.insert(2, &taken);
    std::fs::write(&files[1], lines.join("\n") + "\n").unwrap();
    let output = tracelab()
        .arg("merge")
        .args(&files)
        .arg("--output")
        .arg(dir.join("twice.jsonl"))
        .env("TRACELAB_SORT_RUN_BYTES", "3000")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success()
            && stderr.contains("shard-1.jsonl line 3: attempt `")
            && stderr.contains("is also in another shard"),
        "{stderr}"
    );
}

/// A shard that comes up after `--start-at` (a slow image pull) runs, late by as much as it says,
/// with every request of its schedule shifted by that lateness, never refused; its log says so
/// in the shards' line format, and the merge places its attempts that much later.
#[test]
fn a_late_shard_runs_shifted_not_refused() {
    let server = server();
    let dir = temp_dir("shards-late");
    prompts(&dir, &["p1", "p2", "p3", "p4"]);
    let load = [
        "--rate",
        "20",
        "--seed",
        "3",
        "--repetitions",
        "2",
        "--warmup",
        "0",
    ];
    let start_at = rfc3339_in(1.0);
    let (early, early_file) = shard(&server, &dir, &load, 2, 0, &start_at);
    std::thread::sleep(Duration::from_millis(3000));
    let late_file = dir.join("shard-1.jsonl");
    let mut args = vec!["--shards", "2", "--start-at", &start_at];
    args.extend(load);
    // Not --quiet: the log lines are what a pod's log shows.
    let late = Record::new(&late_file)
        .server(&server)
        .prompts(&dir.join("prompts.jsonl"))
        .args(args)
        .env("JOB_COMPLETION_INDEX", "1")
        .run();
    assert!(
        late.status.success(),
        "a late shard runs: {}",
        String::from_utf8_lossy(&late.stderr)
    );
    assert!(early.wait_with_output().unwrap().status.success());
    let log = String::from_utf8_lossy(&late.stderr);
    let start = log
        .lines()
        .find(|l| l.starts_with("tracelab start shard=1/2 run="))
        .unwrap_or_else(|| panic!("a start line: {log}"));
    let late_s: f64 = start
        .split(" late_s=")
        .nth(1)
        .and_then(|v| v.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!((1.5..4.0).contains(&late_s), "{start}");
    assert!(start.contains("shifted"), "{start}");
    assert!(
        log.lines()
            .any(|l| l.starts_with("tracelab done shard=1/2 ") && l.contains(" done=4/4 ")),
        "{log}"
    );

    let late_ms = header_json(&late_file)["shard"]["start_late_ms"]
        .as_f64()
        .unwrap();
    assert!(
        (late_ms - late_s * 1000.0).abs() < 50.0,
        "header {late_ms} ms vs log {late_s} s"
    );
    assert!(
        header_json(&early_file)["shard"]["start_late_ms"]
            .as_f64()
            .unwrap()
            < 500.0
    );

    let merged = dir.join("merged.jsonl");
    let output = run(tracelab()
        .arg("merge")
        .arg(&early_file)
        .arg(&late_file)
        .arg("--output")
        .arg(&merged));
    assert!(output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("shard 1 began"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let merged_trace = load_file(&merged);
    let own = load_file(&late_file);
    for a in &own.attempts {
        let m = merged_trace.attempts.iter().find(|b| b.id == a.id).unwrap();
        let shift = m.intended_start_ms.unwrap() - a.intended_start_ms.unwrap();
        assert!(
            (shift - late_ms).abs() < 250.0,
            "{}: moved {shift} ms on the merged timeline, late {late_ms} ms",
            a.id
        );
        assert!(
            m.start_ms.unwrap() - m.intended_start_ms.unwrap() < 200.0,
            "{}: sent on its shifted schedule, not in a burst to catch up",
            a.id
        );
    }
    assert_eq!(
        header_json(&merged)["merged"]["start_late_ms"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}

/// `--barrier`: the shards wait for the last one to be ready, then start together. Shard 2 comes
/// up 3 s after `--start-at`; shard 0 (listening) announces one instant once it is ready, so all
/// three begin together, none late, and the header's instant is the announced one.
#[test]
fn a_barrier_waits_for_the_last_shard() {
    let server = server();
    let dir = temp_dir("shards-barrier");
    prompts(&dir, &["p1", "p2", "p3"]);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let barrier = format!("--barrier=127.0.0.1:{port}");
    let start_at = rfc3339_in(1.0);
    let spawn = |i: u32| {
        let out = dir.join(format!("shard-{i}.jsonl"));
        let args = [
            "--shards",
            "3",
            "--start-at",
            &start_at,
            &barrier,
            "--rate",
            "20",
            "--seed",
            "5",
            "--repetitions",
            "1",
            "--warmup",
            "0",
        ];
        let child = Record::new(&out)
            .server(&server)
            .prompts(&dir.join("prompts.jsonl"))
            .args(args)
            .env("JOB_COMPLETION_INDEX", i.to_string())
            .spawn();
        (child, out)
    };
    let (first, second) = (spawn(0), spawn(1));
    std::thread::sleep(Duration::from_millis(3000));
    let third = spawn(2);
    let mut anchors = Vec::new();
    let mut logs = Vec::new();
    for (child, out) in [first, second, third] {
        let output = child.wait_with_output().unwrap();
        let log = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{log}");
        let h = header_json(&out);
        assert!(
            h["shard"]["start_late_ms"].as_f64().unwrap() < 300.0,
            "no shard is late: {}",
            h["shard"]
        );
        anchors.push(
            tracelab_recorder::shard::rfc3339_epoch_ms(
                h["wall_clock_anchor_utc"].as_str().unwrap(),
            )
            .unwrap(),
        );
        logs.push(log);
    }
    let spread = anchors.iter().cloned().fold(f64::MIN, f64::max)
        - anchors.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread < 300.0, "the shards began {spread} ms apart");
    let planned = tracelab_recorder::shard::rfc3339_epoch_ms(&start_at).unwrap();
    assert!(
        anchors[0] - planned > 1500.0,
        "they waited for shard 2, past --start-at: {} ms",
        anchors[0] - planned
    );
    assert!(
        logs[0].contains("tracelab barrier shard=0/3") && logs[0].contains("all 3 shards ready"),
        "{}",
        logs[0]
    );
}
