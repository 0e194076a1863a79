//! `tracelab compare` run as a process: the samples that agree and the one that changed, the exit
//! status a CI pipeline gates on, the JSON, and errors that say what and where.

use std::path::PathBuf;
use std::process::Output;

fn repo(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .to_str()
        .unwrap()
        .to_string()
}

fn tracelab(args: &[&str]) -> Output {
    tracelab_testkit::run(env!("CARGO_BIN_EXE_tracelab"), args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn row<'a>(v: &'a serde_json::Value, pair: usize, key: &str) -> &'a serde_json::Value {
    v["pairs"][pair]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == key)
        .unwrap()
}

#[test]
fn a_rerun_agrees_and_a_slower_run_is_slower_beyond_noise() {
    let (a, rerun, slower) = (
        repo("public/samples/baseline-a.jsonl"),
        repo("public/samples/baseline-rerun.jsonl"),
        repo("public/samples/baseline-slower.jsonl"),
    );
    let out = tracelab(&["compare", &a, &rerun]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(text.contains("Contract holds"), "{text}");
    assert!(
        !text.contains("beyond noise"),
        "a rerun must not differ beyond noise:\n{text}"
    );
    assert!(
        text.contains("bootstrap, 2,000 resamples, seed 42"),
        "{text}"
    );

    let out = tracelab(&["compare", &a, &slower, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pairs"][0]["contract"]["status"], "holds");
    for key in ["ttft_p50", "ttft_tail", "e2e_p50"] {
        assert_eq!(
            row(&v, 0, key)["verdict"]["en"],
            "slower beyond noise",
            "{key}"
        );
        assert_eq!(row(&v, 0, key)["method"]["kind"], "bootstrap");
    }
    assert_eq!(
        row(&v, 0, "joint_rate")["verdict"]["en"],
        "lower beyond noise (worse)"
    );
    assert_eq!(
        v["bootstrap"],
        serde_json::json!({"seed": 42, "resamples": 2000})
    );
    // The same seed repeats the same interval; the seed is an option.
    let again: serde_json::Value =
        serde_json::from_slice(&tracelab(&["compare", &a, &slower, "--json"]).stdout).unwrap();
    assert_eq!(
        row(&v, 0, "ttft_tail")["difference_interval"],
        row(&again, 0, "ttft_tail")["difference_interval"]
    );
    let other: serde_json::Value = serde_json::from_slice(
        &tracelab(&[
            "compare",
            &a,
            &slower,
            "--json",
            "--seed",
            "7",
            "--resamples",
            "500",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(
        other["bootstrap"],
        serde_json::json!({"seed": 7, "resamples": 500})
    );
}

#[test]
fn three_runs_check_the_reruns() {
    let (a, rerun) = (
        repo("public/samples/baseline-a.jsonl"),
        repo("public/samples/baseline-rerun.jsonl"),
    );
    let out = tracelab(&["compare", &a, &rerun, &a, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["reruns"]["runs"], 3);
    assert_eq!(v["reruns"]["p50"]["agree"], "agree");
    assert_eq!(v["reruns"]["tail"]["agree"], "agree");
    assert_eq!(v["pairs"].as_array().unwrap().len(), 2);
}

#[test]
fn a_broken_contract_exits_3_and_labels_every_row() {
    // The ten-request lesson table and the baseline sample differ in model prompt set, arrival, …
    let out = tracelab(&[
        "compare",
        &repo("public/samples/baseline-a.jsonl"),
        &repo("public/samples/ten-requests.jsonl"),
    ]);
    // Status 5, `Exit::ContractBroken`: its own, not `record`'s "every attempt failed" (3).
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(text.contains("CONTRACT BROKEN"), "{text}");
    assert!(
        text.contains("✗ prompt_set: base lesson-baseline · new lesson-table (must match)"),
        "{text}"
    );
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("(n=")).collect();
    assert_eq!(rows.len(), 8, "{text}");
    assert!(
        rows.iter().all(|l| l.contains("[contract broken]")),
        "every row labelled:\n{text}"
    );
    // Chinese output says the same.
    let zh = stdout(&tracelab(&[
        "compare",
        &repo("public/samples/baseline-a.jsonl"),
        &repo("public/samples/ten-requests.jsonl"),
        "--lang",
        "zh",
    ]));
    assert!(zh.contains("契约被破坏") && zh.contains("样本太少"), "{zh}");
}

#[test]
fn bad_input_is_an_error_with_the_place() {
    let out = tracelab(&[
        "compare",
        &repo("public/samples/baseline-a.jsonl"),
        "/nonexistent/run.jsonl",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/run.jsonl"));
    let out = tracelab(&["compare", &repo("public/samples/baseline-a.jsonl")]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "clap refuses a comparison with one run"
    );
}

/// Replications: three simulated runs a side (M/M/4, 2,000 requests each, only the seed
/// differs). The same server on both sides shows no change between the runs; a busier one
/// (`--vary load`) is slower beyond the runs' spread; every interval says it comes from
/// between the runs.
#[test]
fn replications_are_compared_between_runs() {
    let dir = std::env::temp_dir().join(format!("tracelab-replications-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sim = |name: &str, rate: &str, seed: &str| {
        let path = dir.join(name).to_str().unwrap().to_string();
        let o = tracelab(&[
            "simulate",
            "--slots",
            "4",
            "--service",
            "exponential:1",
            "--rate",
            rate,
            "--requests",
            "2000",
            "--seed",
            seed,
            "--output",
            &path,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        path
    };
    let a: Vec<String> = (1..=3)
        .map(|i| sim(&format!("a{i}.jsonl"), "2.5", &i.to_string()))
        .collect();
    let b: Vec<String> = (1..=3)
        .map(|i| sim(&format!("b{i}.jsonl"), "2.5", &(10 + i).to_string()))
        .collect();
    let c: Vec<String> = (1..=3)
        .map(|i| sim(&format!("c{i}.jsonl"), "3.5", &(20 + i).to_string()))
        .collect();
    let args = |side: &[String], other: &[String], extra: &[&str]| {
        let mut v: Vec<String> = vec!["compare".into()];
        v.extend(side.iter().cloned());
        v.push("--vs".into());
        v.extend(other.iter().cloned());
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run = |v: Vec<String>| tracelab(&v.iter().map(String::as_str).collect::<Vec<_>>());
    let same = run(args(&a, &b, &["--json"]));
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&same.stdout).unwrap();
    assert_eq!(v["kind"], "replications");
    let p50 = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["base"]["key"] == "ttft_p50")
        .unwrap();
    assert_eq!(p50["judgement"]["kind"], "no_evidence", "{p50}");
    assert_eq!(p50["base"]["runs"], 3);
    let busier = run(args(&a, &c, &["--vary", "load"]));
    assert_eq!(
        busier.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&busier.stderr)
    );
    let text = stdout(&busier);
    assert!(
        text.contains("Each interval comes from between the runs"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains("P50 TTFT") && l.ends_with("slower beyond the runs' spread")),
        "{text}"
    );
    // Without --vary, a different load breaks the contract: status 5, as for two runs.
    assert_eq!(run(args(&a, &c, &[])).status.code(), Some(5));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn latency_from_the_intended_start_sees_a_client_that_fell_behind() {
    // The base run again, except that every other measured request was sent 1.5 s after its
    // intended start: the same times once sent, so from the actual start nothing changed.
    let a = repo("public/samples/baseline-a.jsonl");
    let text = std::fs::read_to_string(&a).unwrap();
    let mut late = String::new();
    let mut k = 0;
    for line in text.lines() {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["kind"] == "attempt" && v["phase"] == "measure" {
            k += 1;
            let start = v["start_ms"].as_f64().unwrap();
            if k % 2 == 0 && start >= 1500.0 {
                v["intended_start_ms"] = serde_json::json!(start - 1500.0);
            }
        }
        late.push_str(&v.to_string());
        late.push('\n');
    }
    let dir = tracelab_testkit::scratch("compare", "latency-from");
    let late_path = dir.join("late-client.jsonl");
    std::fs::write(&late_path, late).unwrap();
    let late_path = late_path.to_str().unwrap();

    let json = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["compare", &a, late_path, "--json"];
        args.extend_from_slice(extra);
        let out = tracelab(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let actual = json(&[]);
    assert_eq!(actual["latency_from"], "actual");
    let ttft = |v: &serde_json::Value, key: &str| row(v, 0, key)["verdict"]["en"].clone();
    assert_ne!(ttft(&actual, "ttft_p50"), "slower beyond noise");
    assert_ne!(ttft(&actual, "ttft_tail"), "slower beyond noise");
    let intended = json(&["--latency-from", "intended"]);
    assert_eq!(intended["latency_from"], "intended");
    for key in ["ttft_p50", "ttft_tail", "e2e_p50"] {
        assert_eq!(ttft(&intended, key), "slower beyond noise", "{key}");
    }
    assert_eq!(
        row(&intended, 0, "joint_rate")["verdict"]["en"],
        "lower beyond noise (worse)"
    );
    let text = stdout(&tracelab(&[
        "compare",
        &a,
        late_path,
        "--latency-from",
        "intended",
    ]));
    assert!(
        text.contains("Latency measured: from the intended start"),
        "{text}"
    );
    assert!(
        text.contains("from the intended start)"),
        "each TTFT row names its origin:\n{text}"
    );
    let zh = stdout(&tracelab(&[
        "compare",
        &a,
        late_path,
        "--latency-from",
        "intended",
        "--lang",
        "zh",
    ]));
    assert!(zh.contains("时延的起点: 从计划开始时间算起"), "{zh}");
}
