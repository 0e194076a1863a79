//! `tracelab report` run as a process, as a user would from a terminal.

use std::path::PathBuf;
use std::process::{Command, Output};

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn tracelab(args: &[&str]) -> Output {
    tracelab_testkit::run(env!("CARGO_BIN_EXE_tracelab"), args)
}

fn report_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = tracelab(&all);
    assert!(
        out.status.success(),
        "tracelab {all:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn the_card_shows_the_lessons_figures_with_their_parts() {
    let sample = repo("public/samples/ten-requests.jsonl");
    let out = tracelab(&["report", sample.to_str().unwrap()]);
    assert!(out.status.success());
    let card = String::from_utf8(out.stdout).unwrap();
    for expected in [
        "failures / all attempts = 2 / 10",
        "quality passes / complete successes = 7 / 8",
        "= 5 / 10",
        "0.5 /s",
        "4 CNY",
        "⌈95·8/100⌉ = 8 of 8",
        "unsupported — not verified",
    ] {
        assert!(
            card.contains(expected),
            "the card lacks {expected:?}:\n{card}"
        );
    }
}

#[test]
fn json_at_one_second_and_at_half_a_second() {
    for sample in [
        "public/samples/ten-requests.jsonl",
        "public/samples/ten-requests.csv",
    ] {
        let path = repo(sample);
        let path = path.to_str().unwrap();
        let v = report_json(&[path]);
        assert_eq!(v["attempts"], 10, "{sample}");
        assert_eq!(v["successes"], 8);
        assert_eq!(v["failures"], 2);
        assert_eq!(v["failure_rate"], 0.2);
        assert_eq!(v["ttft_samples"], 8);
        assert_eq!(v["ttft_p50_s"], 0.5);
        assert_eq!(v["ttft_p95_s"], 2.0);
        assert_eq!(v["quality_pass_rate"], 0.875);
        assert_eq!(v["qualified"], 5);
        assert_eq!(v["joint_rate"], 0.5);
        assert_eq!(v["goodput_per_s"], 0.5);
        assert_eq!(v["cost_per_1000_qualified"], 4.0);

        let v = report_json(&[path, "--threshold", "0.5"]);
        assert_eq!(v["qualified"], 4);
        assert_eq!(v["goodput_per_s"], 0.4);
        assert_eq!(v["cost_per_1000_qualified"], 5.0);
        assert_eq!(v["failure_rate"], 0.2);
        assert_eq!(v["ttft_p95_s"], 2.0);

        let v = report_json(&[path, "--threshold", "0.5", "--comparison", "lt"]);
        assert_eq!(v["qualified"], 3, "R4 sits exactly on 0.5 s");
    }
}

#[test]
fn options_override_the_header_and_undefined_is_null() {
    let path = repo("public/samples/ten-requests.jsonl");
    let path = path.to_str().unwrap();
    let v = report_json(&[path, "--window", "20", "--cost", "0.1"]);
    assert_eq!(v["goodput_per_s"], 0.25);
    assert_eq!(v["cost_per_1000_qualified"], 20.0);
    // Nothing qualifies at 0.1 s: cost per qualified is undefined, not infinity.
    let v = report_json(&[path, "--threshold", "0.1"]);
    assert_eq!(v["qualified"], 0);
    assert!(v["cost_per_1000_qualified"].is_null());
    // numpy's default linear interpolation gives another P95 from the same 8 samples.
    let v = report_json(&[path, "--percentile", "linear"]);
    let p95 = v["ttft_p95_s"].as_f64().unwrap();
    assert!((p95 - 1.72).abs() < 1e-9, "linear P95 = {p95}");
}

#[test]
fn bad_input_exits_non_zero_with_a_clear_message() {
    let dir = std::env::temp_dir().join(format!("tracelab-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "id,outcome,quality\nR1,success,pass\n").unwrap();
    let out = tracelab(&["report", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.csv") && err.contains("line 1") && err.contains("ttft_s"),
        "{err}"
    );

    let out = tracelab(&["report", dir.join("missing.jsonl").to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));

    let sample = repo("public/samples/ten-requests.jsonl");
    for args in [["--window", "0"], ["--cost", "-1"]] {
        let out = tracelab(&["report", sample.to_str().unwrap(), args[0], args[1]]);
        assert!(!out.status.success(), "{args:?} must be refused");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("setting"), "{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A JSON Lines trace is streamed; `--in-memory` reads it whole as the lab does. Same stdout,
/// same stderr, same exit status: on every sample, and on a file refused at a line and field.
#[test]
fn the_streamed_report_is_the_in_memory_report() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo("public/samples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl" || e == "csv"))
        .collect();
    files.sort();
    let dir = std::env::temp_dir().join(format!("tracelab-report-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.jsonl");
    let sample = std::fs::read_to_string(repo("public/samples/ten-requests.jsonl")).unwrap();
    let mut lines: Vec<&str> = sample.lines().collect();
    lines[4] = r#"{"kind":"attempt","id":"X","phase":"measure","quality":"pass","start_ms":5,"first_token_ms":3,"end_ms":9,"outcome":"success"}"#;
    std::fs::write(&bad, lines.join("\n")).unwrap();
    files.push(bad.clone());
    for file in &files {
        let path = file.to_str().unwrap();
        for extra in [
            &[][..],
            &["--json"],
            &["--lang", "zh", "--percentile", "linear", "--p", "99"],
            &["--window", "-1"],
        ] {
            let mut args = vec!["report", path];
            args.extend_from_slice(extra);
            let streamed = tracelab(&args);
            args.push("--in-memory");
            let whole = tracelab(&args);
            assert_eq!(streamed.status.code(), whole.status.code(), "{args:?}");
            assert_eq!(
                String::from_utf8_lossy(&streamed.stdout),
                String::from_utf8_lossy(&whole.stdout),
                "{args:?}"
            );
            assert_eq!(
                String::from_utf8_lossy(&streamed.stderr),
                String::from_utf8_lossy(&whole.stderr),
                "{args:?}"
            );
        }
    }
    let out = tracelab(&["report", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("line 5, field `first_token_ms`"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs tracelab with its standard output a pipe whose reader is already gone (`… | head` once
/// `head` has read enough): every write to it fails with EPIPE.
fn with_closed_stdout(args: &[&str]) -> Output {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tracelab"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tracelab");
    drop(child.stdout.take());
    child.wait_with_output().expect("wait for tracelab")
}

#[test]
fn a_closed_pipe_ends_every_printing_subcommand_quietly() {
    let dir = std::env::temp_dir().join(format!("tracelab-report-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sample = repo("public/samples/ten-requests.jsonl");
    let sample = sample.to_str().unwrap();
    let rerun = repo("public/samples/baseline-rerun.jsonl");
    let base = repo("public/samples/baseline-a.jsonl");
    let (rerun, base) = (rerun.to_str().unwrap(), base.to_str().unwrap());
    let out = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (probe, imported) = (out("probe.jsonl"), out("imported.jsonl"));
    let peer = repo("crates/peers/tests/data/constructed/vllm_bench_serve_with_failures.json");
    let peer = peer.to_str().unwrap();
    // `record` and `merge` print their summary through the same writer, after their trace is
    // written; they need a server or shards, so their own suites cover them.
    let runs: Vec<Vec<&str>> = vec![
        vec!["report", sample],
        vec!["report", sample, "--json"],
        vec!["report", sample, "--in-memory", "--lang", "zh"],
        vec!["report", peer, "--json"],
        vec!["compare", base, rerun],
        vec!["compare", base, rerun, "--json"],
        vec!["export", sample, "--format", "csv"],
        vec!["export", sample, "--format", "card-md"],
        vec!["import", peer, "--output", &imported, "--force"],
        vec!["probe", "--output", &probe, "--gpu", "off", "--force"],
    ];
    for args in &runs {
        let run = with_closed_stdout(args);
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(
            run.status.code() == Some(0) && err.is_empty(),
            "tracelab {args:?} on a closed pipe: {:?} {err}",
            run.status
        );
    }
    // The same runs with a reader print something, so the loop above did write into the pipe.
    for args in &runs {
        let run = tracelab(args);
        assert!(
            run.status.success() && !run.stdout.is_empty(),
            "tracelab {args:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Settings that cannot mean what they seem are said on the card: a threshold no TTFT can
/// meet, a window shorter than the run it counts over.
#[test]
fn the_card_warns_of_a_threshold_never_met_and_a_window_shorter_than_the_run() {
    let sample = repo("public/samples/ten-requests.jsonl");
    let card = |args: &[&str]| {
        let mut all = vec!["report", sample.to_str().unwrap()];
        all.extend_from_slice(args);
        let out = tracelab(&all);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let never = card(&["--threshold", "0", "--comparison", "lt"]);
    assert!(never.contains("TTFT < 0 s can never hold"), "{never}");
    assert!(!card(&["--threshold", "0"]).contains("can never hold"));
    // The sample's ten requests start over 9 s; a 5 s window counts all of them.
    let short = card(&["--window", "5"]);
    assert!(
        short.contains("the window (5 s) is shorter than the run"),
        "{short}"
    );
    assert!(!card(&[]).contains("shorter than the run"));
    assert!(card(&["--window", "5", "--lang", "zh"]).contains("窗口（5 秒）比运行短"));
}

/// Nothing qualified: cost per 1,000 qualified is undefined and has no upper bound, but the
/// most qualified requests the window could hold by chance give it a finite lower bound.
#[test]
fn cost_with_nothing_qualified_has_a_lower_bound() {
    let sample = repo("public/samples/ten-requests.jsonl");
    let v = report_json(&[sample.to_str().unwrap(), "--threshold", "0.01"]);
    assert_eq!(v["qualified"], 0);
    let iv = &v["intervals"]["cost_per_1000_qualified"];
    assert!(
        iv["lo"].as_f64().is_some_and(|lo| lo > 0.0) && iv["hi"].is_null(),
        "{iv}"
    );
    assert!(
        iv["note"]["en"]
            .as_str()
            .unwrap()
            .contains("no upper bound"),
        "{iv}"
    );
    // Goodput's interval starts at 0 qualified, and a small upper bound keeps its digits.
    let goodput = &v["intervals"]["goodput_per_s"];
    assert_eq!(goodput["lo"], 0.0);
}

/// An open loop at one request a second, every TTFT 300 ms: R3 was sent 900 ms after its
/// intended start (1.2 s from it), and R9 has no intended start (a closed-loop attempt).
fn late_open_loop_trace(dir: &std::path::Path) -> PathBuf {
    let mut text = String::from(
        r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"t","version":"1"},"conditions":{"arrival":"constant","rate_per_s":1.0},"defaults":{"ttft_threshold_s":1.0,"comparison":"le"}}"#,
    );
    text.push('\n');
    for i in 0..10u32 {
        let intended = f64::from(i) * 1000.0;
        let start = if i == 3 { intended + 900.0 } else { intended };
        let schedule = if i == 9 {
            String::new()
        } else {
            format!(r#""intended_start_ms":{intended},"#)
        };
        text.push_str(&format!(
            r#"{{"kind":"attempt","id":"R{i}","phase":"measure",{schedule}"start_ms":{start},"first_token_ms":{},"end_ms":{},"outcome":"success","quality":"pass"}}"#,
            start + 300.0,
            start + 500.0
        ));
        text.push('\n');
    }
    let path = dir.join("late.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn latency_from_the_intended_start_counts_the_clients_lag() {
    let dir = tracelab_testkit::scratch("report", "latency-from");
    let path = late_open_loop_trace(&dir);
    let path = path.to_str().unwrap();
    let actual = report_json(&[path]);
    let intended = report_json(&[path, "--latency-from", "intended"]);
    assert_eq!(
        (actual["qualified"].as_u64(), intended["qualified"].as_u64()),
        (Some(10), Some(9))
    );
    assert_eq!(actual["latency_from"], "actual");
    assert_eq!(intended["latency_from"], "intended");
    assert_eq!(intended["settings"]["latency_from"], "intended");
    assert_eq!(intended["latency_from_fallbacks"], 1);
    assert_eq!(actual["ttft_p95_s"], 0.3);
    assert_eq!(intended["ttft_p95_s"], 1.2);
    for in_memory in [false, true] {
        let mut args = vec!["report", path, "--latency-from", "intended"];
        if in_memory {
            args.push("--in-memory");
        }
        let en = String::from_utf8(tracelab(&args).stdout).unwrap();
        assert!(
            en.contains("latency from the intended start (1 attempt had no intended start: from its actual start)"),
            "{en}"
        );
        assert!(
            en.contains("P95 TTFT (successes, from the intended start)"),
            "{en}"
        );
        args.extend(["--lang", "zh"]);
        let zh = String::from_utf8(tracelab(&args).stdout).unwrap();
        assert!(
            zh.contains("时延从计划开始时间算起（1 个尝试没有计划开始时间，从实际开始时间算起）"),
            "{zh}"
        );
    }
    let card = String::from_utf8(tracelab(&["report", path]).stdout).unwrap();
    assert!(
        card.contains("P95 TTFT (successes, from the actual start)"),
        "{card}"
    );
    // A value the flag does not take is refused, naming the ones it does.
    let bad = tracelab(&["report", path, "--latency-from", "scheduled-ish"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("actual") && err.contains("intended"), "{err}");
}
