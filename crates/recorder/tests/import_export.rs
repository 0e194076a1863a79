//! `tracelab import`, `tracelab export` and `tracelab report` on the peer fixtures, run as the
//! built binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_tracelab");

/// A real peer result file, read in place (never copied here) through the test kit.
fn peers(name: &str) -> PathBuf {
    tracelab_testkit::fixture(&format!("peers/{name}"))
}

/// A fresh, empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tracelab-cli-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn tracelab(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run tracelab")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok(args: &[&str]) -> String {
    let out = tracelab(args);
    assert!(
        out.status.success(),
        "tracelab {args:?} failed: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn fails(args: &[&str]) -> String {
    let out = tracelab(args);
    assert_eq!(
        out.status.code(),
        Some(1),
        "tracelab {args:?} should fail: {}",
        text(&out.stdout)
    );
    text(&out.stderr)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn import_writes_a_trace_and_never_overwrites_without_force() {
    let dir = scratch("import");
    let out = dir.join("vllm.jsonl");
    let vllm = peers("vllm_bench_serving_llama33_70b_tp8_qps04.json");
    let stdout = ok(&["import", s(&vllm), "--output", s(&out)]);
    assert!(stdout.contains("imported 200 attempts"), "{stdout}");
    assert!(stdout.contains("vLLM bench serve"), "{stdout}");
    let written = std::fs::read_to_string(&out).unwrap();
    let trace = tracelab_core::parse::parse_jsonl("vllm.jsonl", &written).unwrap();
    assert_eq!(trace.attempts.len(), 200);
    assert_eq!(
        trace.header.source.unwrap().figures.read().unwrap().len(),
        20,
        "16 latency figures and rates, 2 token totals, total token throughput, duration"
    );
    assert!(
        !written.contains("Entrepreneurial Operating System"),
        "generated text is never kept"
    );

    std::fs::write(&out, "keep me").unwrap();
    let err = fails(&["import", s(&vllm), "--output", s(&out)]);
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me");
    ok(&["import", s(&vllm), "--output", s(&out), "--force"]);
    let rewritten = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        tracelab_core::parse::parse_jsonl("vllm.jsonl", &rewritten)
            .unwrap()
            .attempts
            .len(),
        200
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn aggregate_only_files_are_refused_and_nothing_is_written() {
    let dir = scratch("aggregates");
    let out = dir.join("x.jsonl");
    for (file, hint) in [
        (
            "vllm_bench_serve_v0251_all_requests_failed.json",
            "--save-detailed",
        ),
        (
            "aiperf_gptoss20b_c100_cancel_profile_export_aiperf.json",
            "profile_export.jsonl",
        ),
        (
            "genaiperf_gptoss20b_c1_profile_export_genai_perf.json",
            "profile_export.json",
        ),
        (
            "llmperf_yi34b_vllm_c8_summary.json",
            "_individual_responses.json",
        ),
    ] {
        let err = fails(&["import", s(&peers(file)), "--output", s(&out)]);
        assert!(err.contains(hint), "{file}: {err}");
        assert!(
            err.contains(file),
            "{file}: the error names the file: {err}"
        );
        assert!(!out.exists(), "{file}: nothing written");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_file_with_several_benchmarks_needs_a_choice() {
    let dir = scratch("benchmarks");
    let original =
        std::fs::read_to_string(peers("guidellm050_qwen3_4b_concurrent_benchmarks.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&original).unwrap();
    let second = v["benchmarks"][0].clone();
    v["benchmarks"].as_array_mut().unwrap().push(second);
    let two = dir.join("benchmarks.json");
    std::fs::write(&two, v.to_string()).unwrap();
    let out = dir.join("b.jsonl");
    let err = fails(&["import", s(&two), "--output", s(&out)]);
    assert!(
        err.contains("holds 2 benchmarks") && err.contains("--benchmark N"),
        "{err}"
    );
    assert!(
        err.contains("2: benchmark 2: concurrent, 4 streams (4 attempts)"),
        "{err}"
    );
    let err = fails(&["import", s(&two), "--output", s(&out), "--benchmark", "3"]);
    assert!(err.contains("no benchmark 3"), "{err}");
    let stdout = ok(&["import", s(&two), "--output", s(&out), "--benchmark", "2"]);
    assert!(stdout.contains("imported 4 attempts"), "{stdout}");
    let help = ok(&["import", "--help"]);
    assert!(
        help.contains("--benchmark") && help.contains("several benchmarks"),
        "{help}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_summary_keeps_the_tools_figures_and_the_card_sets_them_beside_ours() {
    let dir = scratch("summary");
    let out = dir.join("aiperf.jsonl");
    let records = peers("aiperf_gptoss20b_c100_cancel_profile_export.jsonl");
    let summary = peers("aiperf_gptoss20b_c100_cancel_profile_export_aiperf.json");
    let stdout = ok(&[
        "import",
        s(&records),
        "--summary",
        s(&summary),
        "--output",
        s(&out),
    ]);
    assert!(
        stdout.contains("89 complete successes, 11 failures (11 cancelled)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("kept 64 of the tool's own figures"),
        "{stdout}"
    );
    let md = ok(&["export", s(&out), "--format", "card-md"]);
    assert!(
        md.contains("## NVIDIA AIPerf's own figures, recomputed"),
        "{md}"
    );
    assert_eq!(md.matches("| ✓ |").count(), 64, "{md}");
    // The wrong summary is refused.
    let llmperf = peers("llmperf_yi34b_vllm_c8_summary.json");
    let err = fails(&[
        "import",
        s(&records),
        "--summary",
        s(&llmperf),
        "--output",
        s(&dir.join("y.jsonl")),
    ]);
    assert!(err.contains("cannot describe the same run"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn export_writes_every_format_from_peer_files_and_traces() {
    let dir = scratch("export");
    let llmperf = peers("llmperf_yi34b_vllm_c8_individual_responses.json");
    let csv = ok(&["export", s(&llmperf), "--format", "csv"]);
    let back = tracelab_core::parse::parse_csv("x.csv", &csv).unwrap();
    assert_eq!(back.attempts.len(), 104);
    assert!(csv
        .lines()
        .any(|l| l.starts_with("id,business_id,attempt,phase,outcome")));

    let guidellm = peers("guidellm050_qwen3_4b_concurrent_benchmarks.json");
    let json = ok(&[
        "export",
        s(&guidellm),
        "--format",
        "card-json",
        "--threshold",
        "0.1",
    ]);
    let card: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(card["settings"]["ttft_threshold_s"], 0.1);
    // Every choice the figures depend on is written, so they can be recomputed from the file.
    let population = &card["settings"]["population"];
    assert_eq!(
        (
            population["quality"].as_str(),
            population["first_token"].as_str()
        ),
        (Some("required"), Some("content")),
        "{}",
        card["settings"]
    );
    // report --json writes the same choices flat.
    let report: serde_json::Value = serde_json::from_str(&ok(&[
        "report",
        s(&guidellm),
        "--json",
        "--threshold",
        "0.1",
    ]))
    .unwrap();
    let settings = &report["settings"];
    assert_eq!(
        (
            settings["quality"].as_str(),
            settings["first_token"].as_str(),
            settings["ttft_threshold_s"].as_f64()
        ),
        (Some("required"), Some("content"), Some(0.1)),
        "{settings}"
    );
    assert_eq!(card["imported_from"]["tool"], "guidellm");

    let aiperf = peers("aiperf_gptoss20b_c100_cancel_profile_export.jsonl");
    let trace_json = dir.join("aiperf.perfetto.json");
    ok(&[
        "export",
        s(&aiperf),
        "--format",
        "perfetto",
        "--output",
        s(&trace_json),
    ]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace_json).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    assert_eq!(events.iter().filter(|e| e["cat"] == "attempt").count(), 100);
    let err = fails(&[
        "export",
        s(&aiperf),
        "--format",
        "perfetto",
        "--output",
        s(&trace_json),
    ]);
    assert!(err.contains("--force"), "{err}");

    let md = ok(&[
        "export",
        s(&guidellm),
        "--format",
        "card-md",
        "--lang",
        "zh",
    ]);
    assert!(md.starts_with("# 指标口径卡"), "{md}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn report_reads_peer_files_too() {
    let vllm = peers("vllm_bench_serving_llama33_70b_tp8_qps04.json");
    let card = ok(&["report", s(&vllm)]);
    assert!(card.contains("Attempts: 200 counted"), "{card}");
    let json = ok(&["report", s(&vllm), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["attempts"], 200);
    let err = fails(&[
        "report",
        s(&peers("vllm_bench_serve_v0251_all_requests_failed.json")),
    ]);
    assert!(err.contains("--save-detailed"), "{err}");
}

#[test]
fn report_json_carries_the_readers_warnings() {
    let dir = scratch("report-warnings");
    let sample =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../public/samples/ten-requests.jsonl");
    let text = std::fs::read_to_string(&sample).unwrap();
    // The last record cut off mid-line, as when the recorder is killed while writing.
    let cut = dir.join("cut.jsonl");
    std::fs::write(&cut, &text.trim_end()[..text.trim_end().len() - 10]).unwrap();
    let json = ok(&["report", s(&cut), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let warnings = v["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings in {json}"));
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("cut off")),
        "{json}"
    );
    // A whole file has none.
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["report", s(&sample), "--json"])).unwrap();
    assert_eq!(v["warnings"], serde_json::json!([]));
    let _ = std::fs::remove_dir_all(dir);
}

/// A JSON Lines trace is exported as a stream; `--in-memory` reads it whole as the lab does.
/// Both write the same bytes in every format, on every sample, on imported peer files (one with
/// the tool's own figures, which the cards recompute from the whole trace) and under other
/// settings. Perfetto's sort runs are made tiny so the streamed side merges many runs from disk.
#[test]
fn streamed_exports_equal_the_whole_trace_exports() {
    let dir = scratch("streamed");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut traces: Vec<PathBuf> = Vec::new();
    for folder in ["public/samples", "public/samples/sweep-demo"] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        found.sort();
        traces.extend(found);
    }
    for (name, peer, summary) in [
        (
            "vllm.jsonl",
            "vllm_bench_serving_llama33_70b_tp8_qps04.json",
            None,
        ),
        (
            "aiperf.jsonl",
            "aiperf_gptoss20b_c100_cancel_profile_export.jsonl",
            Some("aiperf_gptoss20b_c100_cancel_profile_export_aiperf.json"),
        ),
    ] {
        let out = dir.join(name);
        let mut args = vec![
            "import".to_string(),
            s(&peers(peer)).to_string(),
            "--output".into(),
            s(&out).to_string(),
        ];
        if let Some(summary) = summary {
            args.extend(["--summary".to_string(), s(&peers(summary)).to_string()]);
        }
        ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
        traces.push(out);
    }
    assert!(traces.len() >= 15, "{traces:?}");
    let export = |trace: &Path, format: &str, settings: &[&str], whole: bool| -> Vec<u8> {
        let out = dir.join(format!("out.{format}"));
        let mut cmd = Command::new(BIN);
        cmd.args([
            "export",
            s(trace),
            "--format",
            format,
            "--force",
            "--output",
            s(&out),
        ])
        .args(settings);
        if whole {
            cmd.arg("--in-memory");
        } else {
            cmd.env("TRACELAB_SORT_RUN_BYTES", "4096");
        }
        let output = cmd.output().unwrap();
        assert!(
            output.status.success(),
            "{} {format}: {}",
            trace.display(),
            text(&output.stderr)
        );
        std::fs::read(&out).unwrap()
    };
    for trace in &traces {
        for format in ["csv", "card-md", "card-json", "perfetto", "parquet"] {
            for settings in [
                &[][..],
                &[
                    "--lang",
                    "zh",
                    "--threshold",
                    "0.5",
                    "--percentile",
                    "linear",
                ][..],
            ] {
                let (streamed, whole) = (
                    export(trace, format, settings, false),
                    export(trace, format, settings, true),
                );
                assert!(!streamed.is_empty());
                assert!(streamed == whole, "{} --format {format} {settings:?}: the streamed export differs from the whole-trace one", trace.display());
            }
        }
    }
    // Standard output too, and a refused trace leaves no file, partial or whole.
    let sample = root.join("public/samples/ten-requests.jsonl");
    assert_eq!(
        ok(&["export", s(&sample), "--format", "csv"]).into_bytes(),
        export(&sample, "csv", &[], true)
    );
    let bad = dir.join("bad.jsonl");
    let mut lines = std::fs::read_to_string(&sample).unwrap();
    lines.push_str("{\"kind\":\"attempt\"}\n");
    std::fs::write(&bad, lines).unwrap();
    let out = dir.join("bad.csv");
    let err = fails(&["export", s(&bad), "--format", "csv", "--output", s(&out)]);
    assert!(err.contains("field `id`"), "{err}");
    assert_eq!(
        std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("bad.csv"))
            .count(),
        0
    );

    // The streamed export checks the ids on disk: a repeated id is refused as the whole-file
    // reader refuses it, before a later bad line or a bad option, and after a bad line before it.
    let sample_text = std::fs::read_to_string(&sample).unwrap();
    let lines: Vec<&str> = sample_text.lines().collect();
    let repeat = lines[3].to_string();
    let broken = "{\"kind\":\"attempt\"}";
    for (case, body, extra) in [
        ("repeat", [&lines[..], &[repeat.as_str()]].concat(), &[][..]),
        (
            "repeat then a bad line",
            [&lines[..6], &[repeat.as_str(), broken], &lines[6..]].concat(),
            &[][..],
        ),
        (
            "a bad line then a repeat",
            [&lines[..5], &[broken], &lines[5..], &[repeat.as_str()]].concat(),
            &[][..],
        ),
        (
            "repeat and a bad option",
            [&lines[..], &[repeat.as_str()]].concat(),
            &["--threshold", "-1"][..],
        ),
    ] {
        let file = dir.join("dup.jsonl");
        std::fs::write(&file, body.join("\n") + "\n").unwrap();
        for format in ["csv", "perfetto", "parquet"] {
            let out = dir.join("dup.out");
            let run = |whole: bool| {
                let mut cmd = Command::new(BIN);
                cmd.args([
                    "export",
                    s(&file),
                    "--format",
                    format,
                    "--force",
                    "--output",
                    s(&out),
                ])
                .args(extra);
                if whole {
                    cmd.arg("--in-memory");
                }
                let output = cmd.output().unwrap();
                assert!(!output.status.success() && !out.exists(), "{case} {format}");
                text(&output.stderr)
            };
            assert_eq!(run(false), run(true), "{case}, --format {format}");
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}
