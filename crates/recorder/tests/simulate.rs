//! `tracelab simulate` run as a process with the flags; its output read back by
//! `report` and `export`, and every bad flag refused before anything is written.

use std::path::PathBuf;
use std::process::{Command, Output};

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

fn tracelab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracelab")).args(args).output().expect("run tracelab")
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tracelab-simulate-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok(args: &[&str]) -> Output {
    let out = tracelab(args);
    assert!(out.status.success(), "tracelab {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
fn open_and_closed_runs_load_in_report_and_export() {
    let dir = temp("loads");
    let open = dir.join("open.jsonl").display().to_string();
    let closed = dir.join("closed.jsonl").display().to_string();
    let common = ["--slots", "8", "--service", "exponential:1", "--requests", "1000", "--seed", "11", "--stall", "60:20"];
    let mut args = vec!["simulate", "--rate", "3.2", "--arrival", "poisson", "--burstiness", "1", "--output", &open];
    args.extend_from_slice(&common);
    ok(&args);
    let mut args = vec!["simulate", "--closed", "16", "--think", "4", "--output", &closed];
    args.extend_from_slice(&common);
    ok(&args);

    let card = String::from_utf8(ok(&["report", &open]).stdout).unwrap();
    assert!(card.contains("Attempts: 1000 counted"), "{card}");
    assert!(
        card.contains("Simulated, not measured: 8 slots · service exponential, mean 1 s · open loop, poisson 3.2/s, burstiness 1 · 1000 requests · seed 11; stall at 60 s for 20 s"),
        "{card}"
    );
    let zh = String::from_utf8(ok(&["report", &closed, "--lang", "zh"]).stdout).unwrap();
    assert!(zh.contains("模拟结果，不是测量") && zh.contains("闭环 16 个客户端"), "{zh}");

    // The stall shows in the open loop's tail and hides in the closed loop's.
    let e2e_p95 = |file: &str| -> f64 {
        let json: serde_json::Value = serde_json::from_slice(&ok(&["report", file, "--json"]).stdout).unwrap();
        json["e2e_p95_s"].as_f64().unwrap_or_else(|| panic!("no e2e_p95_s in {json}"))
    };
    let (open_p95, closed_p95) = (e2e_p95(&open), e2e_p95(&closed));
    assert!(open_p95 > 10.0 && closed_p95 < 5.0, "open {open_p95} s, closed {closed_p95} s");

    let csv = String::from_utf8(ok(&["export", &open, "--format", "csv"]).stdout).unwrap();
    assert_eq!(csv.lines().filter(|l| l.starts_with("sim-")).count(), 1000);
}

#[test]
fn the_same_flags_write_the_same_file() {
    let dir = temp("seed");
    let a = dir.join("a.jsonl").display().to_string();
    let b = dir.join("b.jsonl").display().to_string();
    let c = dir.join("c.jsonl").display().to_string();
    let base = ["simulate", "--slots", "2", "--service", "fixed:0.5", "--rate", "3", "--requests", "50"];
    for (out, seed) in [(&a, "1"), (&b, "1"), (&c, "2")] {
        let mut args = base.to_vec();
        args.extend_from_slice(&["--seed", seed, "--output", out]);
        ok(&args);
    }
    let read = |p: &str| std::fs::read_to_string(p).unwrap();
    assert_eq!(read(&a), read(&b));
    assert_ne!(read(&a), read(&c));
    let header: serde_json::Value = serde_json::from_str(read(&a).lines().next().unwrap()).unwrap();
    assert_eq!(header["simulation"]["seed"], 1);
    assert_eq!(header["simulation"]["service"], serde_json::json!({"kind": "fixed", "s": 0.5}));
    assert_eq!(header["simulation"]["load"]["arrival"], "poisson");
}

#[test]
fn service_from_a_trace_draws_its_successes() {
    let dir = temp("trace");
    let out = dir.join("sim.jsonl").display().to_string();
    let sample = repo("public/samples/ten-requests.jsonl").display().to_string();
    let service = format!("trace:{sample}");
    ok(&["simulate", "--slots", "4", "--service", &service, "--closed", "4", "--requests", "40", "--seed", "3", "--output", &out]);
    let text = std::fs::read_to_string(&out).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["simulation"]["service"]["kind"], "trace");
    assert_eq!(header["simulation"]["service"]["successes"], 8);
    // The sample's own threshold comes with it.
    assert_eq!(header["defaults"]["ttft_threshold_s"], 1.0);
    let card = String::from_utf8(ok(&["report", &out]).stdout).unwrap();
    assert!(card.contains("drawn from 8 successes of"), "{card}");
}

#[test]
fn bad_flags_are_refused_and_nothing_is_written() {
    let dir = temp("bad");
    let out = dir.join("sim.jsonl");
    let path = out.display().to_string();
    let missing = dir.join("missing.jsonl").display().to_string();
    let missing_service = format!("trace:{missing}");
    let base = ["simulate", "--slots", "2", "--requests", "10", "--seed", "1", "--output", path.as_str()];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--service", "fixed:1"], "--closed"),
        (vec!["--service", "fixed:1", "--closed", "2", "--rate", "1"], "cannot be used with"),
        (vec!["--service", "fixed:1", "--rate", "1", "--think", "2"], "--closed"),
        (vec!["--service", "fixed:1", "--closed", "2", "--arrival", "poisson"], "--rate"),
        (vec!["--service", "fixed:1", "--rate", "1", "--arrival", "constant", "--burstiness", "2"], "--arrival poisson"),
        (vec!["--service", "normal:1", "--rate", "1"], "--service: unknown service `normal`"),
        (vec!["--service", "fixed:0", "--rate", "1"], "--service"),
        (vec!["--service", "fixed:1", "--rate", "0"], "--rate: the arrival rate must be above 0"),
        (vec!["--service", "fixed:1", "--rate", "1", "--burstiness", "0"], "--burstiness"),
        (vec!["--service", "fixed:1", "--closed", "0"], "--closed: a closed loop needs at least 1 client"),
        (vec!["--service", "fixed:1", "--closed", "1", "--stall", "5"], "--stall: `5` is not AT_S:FOR_S"),
        (vec!["--service", "fixed:1", "--closed", "1", "--first-token-share", "2"], "--first-token-share"),
        (vec!["--service", missing_service.as_str(), "--closed", "1"], "missing.jsonl"),
    ];
    for (extra, expected) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(&extra);
        let o = tracelab(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{extra:?} should be refused");
        assert!(stderr.contains(expected), "{extra:?}: expected `{expected}` in\n{stderr}");
        assert!(!out.exists(), "{extra:?}: nothing written");
    }
    // Slots 0 too.
    let o = tracelab(&["simulate", "--slots", "0", "--service", "fixed:1", "--closed", "1", "--requests", "1", "--seed", "1", "--output", &path]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--slots: the server needs at least 1 slot"));
    // An existing file is kept without --force.
    std::fs::write(&out, "keep me\n").unwrap();
    let mut args = base.to_vec();
    args.extend_from_slice(&["--service", "fixed:1", "--closed", "1"]);
    let o = tracelab(&args);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me\n");
    args.push("--force");
    ok(&args);
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 12);
}
