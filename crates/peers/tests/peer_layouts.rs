//! The layouts users bring beyond the first fixtures: aggregate-only files refused with what to
//! upload or which flag to rerun with, binary files, SGLang's per-request output, vLLM's burst
//! arrival, LLMPerf's failed records and guidellm's samples, older layout, zeros and window
//! edges. Real files are read in place from `../shared/fixtures/peers/`; the files in
//! `tests/data/constructed/` are our own, written from the tools' source (see SOURCES.md there).

mod common;

use tracelab_core::{Outcome, Phase, Settings, Trace};
use tracelab_peers::import::{
    self, detect, load_any, load_any_bytes, reproduce, Content, PeerTool, Reproducibility,
};

fn real(name: &str) -> String {
    common::shared(&format!("peers/{name}"))
}

fn constructed(name: &str) -> String {
    let path = format!(
        "{}/tests/data/constructed/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn refused(name: &str, text: &str) -> String {
    load_any(name, text)
        .map(|i| i.labels())
        .expect_err("refused")
        .to_string()
}

// --- refusals -------------------------------------------------------------------------------

#[test]
fn aiperf_aggregate_csv_is_refused_naming_the_per_record_file() {
    let name = "aiperf_gptoss20b_c100_cancel_profile_export_aiperf.csv";
    let text = real(name);
    let d = detect(&text);
    assert_eq!(
        (d.tool, d.content),
        (PeerTool::Aiperf, Content::AggregateOnly)
    );
    let err = refused(name, &text);
    assert!(
        err.contains("profile_export.jsonl") && err.contains("summary statistics only"),
        "{err}"
    );
    assert!(
        !err.contains("id` column"),
        "not read as a classroom CSV: {err}"
    );
    let as_summary = import::peer_figures_from_aggregate(name, &text)
        .unwrap_err()
        .to_string();
    assert!(
        as_summary.contains("profile_export_aiperf.json"),
        "{as_summary}"
    );
}

#[test]
fn sglang_aggregate_only_output_is_refused_with_output_details() {
    let name = "sglang_bench_serving_llama33_70b_online_aggregate_only.jsonl";
    let text = real(name);
    let d = detect(&text);
    assert_eq!(
        (d.tool, d.content),
        (PeerTool::Sglang, Content::AggregateOnly),
        "{d:?}"
    );
    let err = refused(name, &text);
    assert!(
        err.contains("--output-details") && err.contains("7 runs"),
        "{err}"
    );
    // One of its lines alone is refused the same way, not taken for vLLM's aggregates.
    let line = text.lines().next().unwrap();
    let err = refused("one.json", line);
    assert!(
        err.contains("SGLang") && err.contains("--output-details"),
        "{err}"
    );
}

#[test]
fn vllm_sweep_summary_is_refused_naming_the_run_files() {
    let name = "vllm_bench_sweep_summary.json";
    let err = refused(name, &constructed(name));
    assert!(
        err.contains("bench sweep")
            && err.contains("run=0.json")
            && err.contains("--save-detailed"),
        "{err}"
    );
    assert!(!err.contains("no supported tool"), "{err}");
}

#[test]
fn hf_inference_benchmarker_results_are_refused_with_what_keeps_each_request() {
    let name = "hf_inference_benchmarker_results.json";
    let text = constructed(name);
    assert_eq!(detect(&text).tool, PeerTool::HfInferenceBenchmarker);
    let err = refused(name, &text);
    assert!(
        err.contains("inference-benchmarker")
            && err.contains("tracelab record")
            && err.contains("--save-detailed"),
        "{err}"
    );
}

#[test]
fn a_binary_file_is_not_a_text_file() {
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0";
    let err = load_any_bytes("picture.jsonl", png)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not a text file") && err.contains("PNG"),
        "{err}"
    );
    // What the lab's lossy read hands over: the same answer, not a CSV header error.
    let err = load_any("picture.jsonl", &String::from_utf8_lossy(png))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not a text file") && !err.contains("header"),
        "{err}"
    );
    // A stray invalid byte deep in a text file still names its line.
    let err = load_any_bytes("x.json", b"{\"ttfts\": [\xff]}")
        .unwrap_err()
        .to_string();
    assert!(err.contains("not UTF-8"), "{err}");
}

// --- SGLang with per-request details --------------------------------------------------------

fn rows(trace: &Trace) -> Vec<import::ReproRow> {
    reproduce(
        trace,
        &import::figures(trace),
        &Settings::from_header(&trace.header),
    )
}

#[test]
fn sglang_output_details_import_one_trace_per_run_and_reproduce_its_figures() {
    let name = "sglang_bench_serving_output_details.jsonl";
    let imported = load_any(name, &constructed(name)).unwrap();
    assert_eq!(imported.detected.tool, PeerTool::Sglang);
    assert_eq!(imported.traces.len(), 2);
    assert_eq!(imported.traces[0].label, "line 1: request rate 4.0");
    let trace = &imported.traces[0].trace;
    assert_eq!(
        trace.header.source.as_ref().unwrap().tool,
        "SGLang bench_serving"
    );
    assert_eq!(trace.attempts.len(), 4);
    let failed = &trace.attempts[2];
    assert_eq!(failed.outcome, Outcome::StreamBroken);
    assert_eq!(
        failed.ttft_ms, None,
        "SGLang's 0 for a failure is missing, not 0"
    );
    assert!(failed
        .detail
        .as_deref()
        .unwrap()
        .contains("ServerDisconnectedError"));
    assert_eq!(trace.attempts[0].events.len(), 4, "TTFT plus 3 gaps");
    let rows = rows(trace);
    let mut checked = 0;
    for r in &rows {
        if let Some(ours) = r.tool_method {
            assert_eq!(
                r.matches,
                Some(true),
                "{} ({}): said {}, recomputed {ours}",
                r.key,
                r.tool_key,
                r.tool_said
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 21, "TTFT, TPOT, ITL: mean, median, std, p99; E2E mean, median; completed; 3 throughputs; concurrency; 2 token totals");
    assert!(rows
        .iter()
        .any(|r| r.tool_key == "mean_e2e_latency_ms" && r.matches == Some(true)));
    assert!(
        !tracelab_core::write::to_jsonl(trace).contains("constructed answer"),
        "response text is never kept"
    );
    let second = &imported.traces[1].trace.header.conditions;
    assert_eq!(
        (second.rate_per_s, second.concurrency),
        (Some(8.0), Some(16))
    );
}

// --- vLLM request_rate "inf" ------------------------------------------------------------------

#[test]
fn vllm_infinite_rate_without_a_concurrency_limit_is_a_burst() {
    let file = |limit: &str| {
        format!(
            r#"{{"request_rate": "inf", "burstiness": 1.0, {limit} "completed": 1, "duration": 1.0, "mean_ttft_ms": 100.0,
            "ttfts": [0.1], "itls": [[0.01]], "output_lens": [2], "errors": [""]}}"#
        )
    };
    let burst = load_any("r.json", &file("")).unwrap().single("r").unwrap();
    assert_eq!(burst.header.conditions.arrival.as_deref(), Some("burst"));
    let closed = load_any("r.json", &file(r#""max_concurrency": 8,"#))
        .unwrap()
        .single("r")
        .unwrap();
    assert_eq!(closed.header.conditions.arrival.as_deref(), Some("closed"));
}

// --- LLMPerf failed records -------------------------------------------------------------------

#[test]
fn llmperf_failed_records_drop_the_placeholder_output_token() {
    let text = r#"[{"error_code": 500, "error_msg": "Internal Server Error", "ttft_s": 0, "end_to_end_latency_s": 0,
        "inter_token_latency_s": 0, "number_input_tokens": 550, "number_output_tokens": 1},
        {"error_code": null, "error_msg": "", "ttft_s": 0.5, "end_to_end_latency_s": 2.0, "number_input_tokens": 550,
        "number_output_tokens": 1}]"#;
    let trace = load_any("x_individual_responses.json", text)
        .unwrap()
        .single("x")
        .unwrap();
    assert_eq!(
        trace.attempts[0].output_tokens, None,
        "the tokenizer's count of an empty text"
    );
    assert_eq!(
        trace.attempts[1].output_tokens,
        Some(1),
        "a success keeps its count"
    );
}

// --- guidellm -------------------------------------------------------------------------------

const GUIDELLM: &str = "guidellm050_qwen3_4b_concurrent_benchmarks.json";

fn guidellm_edited(edit: impl FnOnce(&mut serde_json::Value)) -> Trace {
    let mut v: serde_json::Value = serde_json::from_str(&real(GUIDELLM)).unwrap();
    edit(&mut v["benchmarks"][0]);
    load_any("g.json", &v.to_string())
        .unwrap()
        .single("g")
        .unwrap()
}

#[test]
fn guidellm_zeros_without_a_token_are_missing() {
    let trace = guidellm_edited(|b| {
        let mut errored = b["requests"]["successful"][0].clone();
        errored["request_id"] = serde_json::json!("errored-no-token");
        errored["info"]["error"] = serde_json::json!("Internal Server Error");
        for k in [
            "first_token_iteration",
            "last_token_iteration",
            "first_request_iteration",
            "last_request_iteration",
        ] {
            errored["info"]["timings"][k] = serde_json::Value::Null;
        }
        for k in [
            "time_to_first_token_ms",
            "inter_token_latency_ms",
            "time_per_output_token_ms",
        ] {
            errored[k] = serde_json::json!(0.0);
        }
        b["requests"]["errored"] = serde_json::json!([errored]);
    });
    let a = trace
        .attempts
        .iter()
        .find(|a| a.id == "errored-no-token")
        .unwrap();
    assert_eq!(a.outcome, Outcome::HttpError { status: 500 });
    assert_eq!(
        (a.ttft_ms, a.last_token_ms),
        (None, None),
        "0.0 where no token came is missing"
    );
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.contains("0.0") && w.contains("missing")),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn guidellm_requests_straddling_the_window_are_measured_and_said() {
    let trace = guidellm_edited(|b| {
        let first = b["requests"]["successful"][0]["request_start_time"]
            .as_f64()
            .unwrap();
        b["scheduler_metrics"]["measure_start_time"] = serde_json::json!(first + 1.0);
    });
    assert_eq!(trace.warmup_count(), 0);
    assert!(trace.attempts.iter().all(|a| a.phase == Phase::Measure));
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.contains("4 requests straddle")),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn guidellm_sampled_requests_make_the_figures_not_reproducible_with_the_counts() {
    let trace = guidellm_edited(|b| {
        b["metrics"]["request_totals"] =
            serde_json::json!({"successful": 10, "errored": 0, "incomplete": 0, "total": 10});
    });
    let rows = rows(&trace);
    let ttft = rows.iter().find(|r| r.key == "ttft_p99").unwrap();
    match &ttft.reproducibility {
        Reproducibility::Not(why) => {
            assert!(why.contains("the file keeps 4 of 10 requests"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(ttft.matches, None, "not shown as ✗");
    assert!(rows
        .iter()
        .filter(|r| r.reproducibility.is_exact())
        .all(|r| r.matches == Some(true)));
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.contains("kept 4 of its 10 successful")),
        "{:?}",
        trace.warnings
    );
}

/// guidellm ≤ 0.3 keeps `request_totals` beside the metrics, not under them.
#[test]
fn guidellm_older_layout_reads_its_counts_beside_the_metrics() {
    let trace = guidellm_edited(|b| {
        let totals = b["metrics"]["request_totals"].take();
        b["metrics"]
            .as_object_mut()
            .unwrap()
            .remove("request_totals");
        let mut totals = totals;
        totals["successful"] = serde_json::json!(6);
        totals["total"] = serde_json::json!(6);
        b["request_totals"] = totals;
    });
    let rows = rows(&trace);
    let successes = rows.iter().find(|r| r.key == "successes").unwrap();
    assert_eq!(successes.tool_key, "request_totals.successful");
    assert!(
        matches!(&successes.reproducibility, Reproducibility::Not(w) if w.contains("keeps 4 of 6")),
        "{:?}",
        successes.reproducibility
    );
}

// --- GenAI-Perf per-request export ------------------------------------------------------------

#[test]
fn genai_perf_profile_export_imports_each_request_and_skips_empty_chunks() {
    let name = "genai_perf_profile_export.json";
    let imported = load_any(name, &constructed(name)).unwrap();
    assert_eq!(
        (imported.detected.tool, imported.detected.content),
        (PeerTool::GenaiPerf, Content::PerRequest)
    );
    assert_eq!(imported.traces[0].label, "experiment 1: concurrency 2");
    let trace = &imported.traces[0].trace;
    let ok = &trace.attempts[0];
    assert_eq!(ok.outcome, Outcome::Success);
    assert_eq!(
        ok.ttft_ms,
        Some(120.0),
        "the role-only chunk at 30 ms is not the first token"
    );
    assert_eq!(
        ok.events.iter().map(|e| e.at_ms).collect::<Vec<_>>(),
        vec![120.0, 150.0, 185.0]
    );
    assert_eq!(ok.e2e_ms, Some(191.0), "the stream ends at [DONE]");
    let failed = &trace.attempts[1];
    assert_eq!(
        (failed.outcome, failed.start_ms, failed.ttft_ms),
        (Outcome::StreamBroken, Some(5.0), None)
    );
    assert_eq!(trace.header.conditions.concurrency, Some(2));
    let jsonl = tracelab_core::write::to_jsonl(trace);
    assert!(
        !jsonl.contains("constructed answer") && !jsonl.contains("constructed prompt"),
        "text is never kept"
    );
}

/// Found by fuzzing: a response timestamp earlier than the one before it made a first token
/// after the stream's end, which the trace reader then refused. The importer names it instead.
#[test]
fn genai_perf_response_timestamps_that_go_back_in_time_are_refused_with_the_field() {
    let name = "genai_perf_profile_export.json";
    let mut file: serde_json::Value = serde_json::from_str(&constructed(name)).unwrap();
    let stamps = file["experiments"][0]["requests"][0]["response_timestamps"]
        .as_array_mut()
        .unwrap();
    let last = stamps.last().unwrap().as_u64().unwrap();
    stamps[1] = serde_json::json!(last + 1_000_000);
    let err = load_any(name, &file.to_string()).unwrap_err().to_string();
    assert!(
        err.contains("go back in time") && err.contains("requests[0].response_timestamps[2]"),
        "{err}"
    );
}

// --- constructed runs with failures: every printed figure reproduced or explained --------------
//
// `tests/data/constructed/make_failing_runs.py` wrote these files and computed each tool's printed
// figures from the per-request records with the tool's own rules (numpy/pandas); see SOURCES.md.

/// Checks every row: an exact one equals the tool's figure to relative 1e-9, an approximate one is
/// recomputed and within `approx_ms` (its unit) of it, a not-reproducible one is not recomputed and
/// says why. Returns (exact, approximate, not reproducible).
fn account_for_every_row(rows: &[import::ReproRow], approx_within: f64) -> (usize, usize, usize) {
    let (mut exact, mut approx, mut not) = (0, 0, 0);
    for r in rows {
        match &r.reproducibility {
            Reproducibility::Exact => {
                let ours = r
                    .tool_method
                    .unwrap_or_else(|| panic!("{} ({}) was not recomputed", r.key, r.tool_key));
                let rel = (ours - r.tool_said).abs() / r.tool_said.abs().max(f64::MIN_POSITIVE);
                assert!(
                    ours == r.tool_said || rel <= 1e-9,
                    "{}: the tool said {}, we recompute {ours}",
                    r.tool_key,
                    r.tool_said
                );
                assert_eq!(r.matches, Some(true), "{}", r.tool_key);
                exact += 1;
            }
            Reproducibility::Approximate(why) => {
                let ours = r
                    .tool_method
                    .unwrap_or_else(|| panic!("{} was not recomputed", r.tool_key));
                assert!(
                    (ours - r.tool_said).abs() <= approx_within,
                    "{}: said {}, stand-in gives {ours}",
                    r.tool_key,
                    r.tool_said
                );
                assert!(
                    why.contains("stand-in") || why.contains("saves no per-request latency"),
                    "{why}"
                );
                approx += 1;
            }
            Reproducibility::Not(why) => {
                assert_eq!(r.tool_method, None, "{}", r.tool_key);
                assert_eq!(r.matches, None, "{}", r.tool_key);
                assert!(why.len() > 20, "{}: a reason, not `{why}`", r.tool_key);
                not += 1;
            }
        }
    }
    (exact, approx, not)
}

/// The numeric top-level keys of a JSON object, less the ones that are settings, not results.
fn printed_keys(text: &str, settings: &[&str]) -> Vec<String> {
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text).unwrap();
    let mut keys: Vec<String> = map
        .iter()
        .filter(|(k, v)| {
            !settings.contains(&k.as_str())
                && (v.is_number() || v.as_str().is_some_and(|s| s.parse::<f64>().is_ok()))
        })
        .map(|(k, _)| k.clone())
        .collect();
    keys.sort();
    keys
}

fn row_keys(rows: &[import::ReproRow]) -> Vec<String> {
    let mut keys: Vec<String> = rows.iter().map(|r| r.tool_key.clone()).collect();
    keys.sort();
    keys
}

#[test]
fn vllm_run_with_failures_reproduces_every_printed_figure_or_says_why() {
    let name = "vllm_bench_serve_with_failures.json";
    let text = constructed(name);
    let trace = load_any(name, &text).unwrap().single(name).unwrap();
    assert_eq!(trace.attempts.len(), 12);
    let outcomes: Vec<Outcome> = trace.attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(outcomes.iter().filter(|o| o.is_success()).count(), 9);
    assert_eq!(
        outcomes[2],
        Outcome::HttpError { status: 429 },
        "aiohttp's ClientResponseError: 429"
    );
    assert_eq!(
        outcomes[5],
        Outcome::StreamBroken,
        "server disconnected after two tokens"
    );
    assert_eq!(outcomes[8], Outcome::TimeoutBeforeFirstToken);
    assert_eq!(
        trace.header.conditions.arrival.as_deref(),
        Some("closed"),
        "max_concurrency 4 with rate inf"
    );
    assert!(
        trace.attempts.iter().all(|a| a.start_ms.is_some()),
        "start_times place every request"
    );
    let rows = rows(&trace);
    // Every figure the file prints is a row (its settings are not figures).
    let printed = printed_keys(&text, &["request_rate", "burstiness", "max_concurrency"]);
    assert_eq!(row_keys(&rows), printed);
    // TPOT and E2EL: the file keeps no per-request latency, so the stand-in (the last token) is
    // 2 ms short of the stream's end in this run.
    let (exact, approx, not) = account_for_every_row(&rows, 2.5);
    assert_eq!(
        (exact, approx, not),
        (20, 12, 1),
        "{:?}",
        rows.iter()
            .map(|r| (&r.tool_key, &r.reproducibility))
            .collect::<Vec<_>>()
    );
    let duration = rows.iter().find(|r| r.tool_key == "duration").unwrap();
    assert!(
        matches!(&duration.reproducibility, Reproducibility::Not(why) if why.contains("window"))
    );
    // Throughput divides by vLLM's duration (the trace's window): 9 successes / 0.735 s.
    let tput = rows
        .iter()
        .find(|r| r.tool_key == "request_throughput")
        .unwrap();
    assert_eq!(tput.tool_method, Some(9.0 / 0.735));
    assert_eq!(
        tput.lesson,
        Some(0.0),
        "no attempt is judged for quality: goodput is 0 under the lesson"
    );
}

#[test]
fn llmperf_run_with_failures_reproduces_every_printed_figure_or_says_why() {
    let individual = constructed("llmperf_with_failures_individual_responses.json");
    let summary_text = constructed("llmperf_with_failures_summary.json");
    let mut trace = load_any("c_individual_responses.json", &individual)
        .unwrap()
        .single("c")
        .unwrap();
    let summary =
        import::peer_figures_from_aggregate("llmperf_with_failures_summary.json", &summary_text)
            .unwrap();
    import::attach_summary(&mut trace, &summary).unwrap();
    assert_eq!(trace.attempts.len(), 14);
    let http = trace
        .attempts
        .iter()
        .filter(|a| a.outcome == Outcome::HttpError { status: 429 })
        .collect::<Vec<_>>();
    assert_eq!(http.len(), 3);
    assert!(http.iter().all(|a| a.output_tokens.is_none()
        && a.ttft_ms.is_none()
        && a.detail.as_deref() == Some("error_code 429")));
    let short = trace
        .attempts
        .iter()
        .filter(|a| a.outcome == Outcome::StreamBroken)
        .collect::<Vec<_>>();
    assert_eq!(short.len(), 2);
    assert_eq!(
        short[0].detail.as_deref(),
        Some("error_code -100: Output too few tokens 62")
    );
    assert_eq!(
        (short[0].ttft_ms, short[0].output_tokens),
        (Some(380.0), Some(62)),
        "a rejected answer keeps what it measured"
    );
    let rows = rows(&trace);
    // Every figure printed is a row; the error-code histogram gives one row per code.
    let mut printed = printed_keys(
        &summary_text,
        &[
            "mean_input_tokens",
            "stddev_input_tokens",
            "mean_output_tokens",
            "stddev_output_tokens",
            "num_concurrent_requests",
            "timestamp",
        ],
    );
    printed.extend([
        "results_error_code_frequency[-100]".to_string(),
        "results_error_code_frequency[429]".to_string(),
    ]);
    printed.sort();
    assert_eq!(row_keys(&rows), printed);
    let (exact, approx, not) = account_for_every_row(&rows, 0.0);
    // ITL and the chunk rate are reproduced over the values LLMPerf kept per request (issue 26).
    assert_eq!(
        (exact, approx, not),
        (66, 0, 2),
        "4 counts, 2 codes, TTFT/E2E/input/output/ITL/chunk rate × 10; 2 run rates"
    );
    let code = |c: &str| {
        rows.iter()
            .find(|r| r.tool_key == format!("results_error_code_frequency[{c}]"))
            .unwrap()
            .tool_method
    };
    assert_eq!((code("429"), code("-100")), (Some(3.0), Some(2.0)));
    // The two run rates are not reproducible (no run time is saved), but they imply one duration,
    // and our successes' output tokens over it give LLMPerf's output throughput: the placeholder
    // tokens of the failed records are not counted.
    let said = |k: &str| rows.iter().find(|r| r.tool_key == k).unwrap().tool_said;
    let run_s = said("results_num_completed_requests")
        / said("results_num_completed_requests_per_min")
        * 60.0;
    let out: u32 = trace
        .attempts
        .iter()
        .filter(|a| a.outcome.is_success())
        .filter_map(|a| a.output_tokens)
        .sum();
    let rel = (f64::from(out) / run_s - said("results_mean_output_throughput_token_per_s")).abs()
        / said("results_mean_output_throughput_token_per_s");
    assert!(rel < 1e-12, "{out} tokens / {run_s} s");
}

#[test]
fn sglang_output_details_every_printed_figure_is_a_row() {
    let name = "sglang_bench_serving_output_details.jsonl";
    let text = constructed(name);
    let imported = load_any(name, &text).unwrap();
    for (line, t) in text.lines().zip(&imported.traces) {
        let rows = rows(&t.trace);
        let settings = [
            "request_rate",
            "max_concurrency",
            "sharegpt_output_len",
            "random_input_len",
            "random_output_len",
            "random_range_ratio",
        ];
        assert_eq!(
            row_keys(&rows),
            printed_keys(line, &settings),
            "{}",
            t.label
        );
        let (exact, approx, not) = account_for_every_row(&rows, 5.0);
        assert_eq!(not, 2, "duration, retokenized output: {}", t.label);
        assert!(
            exact >= 14 && approx >= 7,
            "{}: {exact} exact, {approx} approximate",
            t.label
        );
    }
}

/// Every statistic of every entry of a GenAI-Perf aggregate (`name.stat`), less the entries that
/// are not request figures.
fn genai_perf_printed(text: &str) -> Vec<String> {
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text).unwrap();
    let mut keys: Vec<String> = map
        .iter()
        .filter(|(k, _)| !["input_config", "telemetry_stats"].contains(&k.as_str()))
        .flat_map(|(k, v)| {
            v.as_object()
                .unwrap()
                .keys()
                .filter(|s| *s != "unit")
                .map(move |s| format!("{k}.{s}"))
        })
        .collect();
    keys.sort();
    keys
}

#[test]
fn genai_perf_run_with_failures_reproduces_every_printed_figure_or_says_why() {
    let export = constructed("genai_perf_with_failures_profile_export.json");
    let aggregate = constructed("genai_perf_with_failures_profile_export_genai_perf.json");
    let mut trace = load_any("profile_export.json", &export)
        .unwrap()
        .single("profile_export.json")
        .unwrap();
    let summary =
        import::peer_figures_from_aggregate("profile_export_genai_perf.json", &aggregate).unwrap();
    import::attach_summary(&mut trace, &summary).unwrap();
    assert!(
        !trace.warnings.iter().any(|w| w.contains("same run")),
        "{:?}",
        trace.warnings
    );
    assert_eq!(trace.attempts.len(), 10);
    let failed: Vec<usize> = (0..10)
        .filter(|&i| !trace.attempts[i].outcome.is_success())
        .collect();
    assert_eq!(
        failed,
        vec![3, 4, 6],
        "reasoning-only, role-only, no response at all"
    );
    for i in [3, 4] {
        let a = &trace.attempts[i];
        assert_eq!((a.outcome, a.ttft_ms), (Outcome::StreamBroken, None));
        assert!(
            a.detail
                .as_deref()
                .unwrap()
                .contains("no response carried answer content"),
            "{:?}",
            a.detail
        );
        assert!(a.e2e_ms.is_some(), "its stream still took time");
    }
    assert_eq!(
        trace.attempts[2].ttft_ms,
        Some(170.0),
        "reasoning chunks are not GenAI-Perf's first token"
    );
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.contains("2 requests got responses but none with answer content")),
        "{:?}",
        trace.warnings
    );
    let rows = rows(&trace);
    assert_eq!(
        row_keys(&rows),
        genai_perf_printed(&aggregate),
        "every printed figure is a row"
    );
    let (exact, approx, not) = account_for_every_row(&rows, 0.0);
    assert_eq!(
        (exact, approx, not),
        (41, 0, 53),
        "TTFT, TTST, latency × 13 and request_count, request_throughput; ITL, per-user rate, ISL, OSL × 13 and output rate"
    );
    // request_throughput: all 10 requests / (first timestamp → last response with content of the
    // 7 kept) = 10 / 0.77 s.
    let tput = rows
        .iter()
        .find(|r| r.tool_key == "request_throughput.avg")
        .unwrap();
    assert!(
        (tput.tool_method.unwrap() - 10.0 / 0.77).abs() < 1e-9,
        "{:?}",
        tput.tool_method
    );
    let latency = rows
        .iter()
        .find(|r| r.tool_key == "request_latency.max")
        .unwrap();
    assert_eq!(
        latency.tool_method,
        Some(233.0),
        "to the last response with content, not to [DONE] at 234 ms"
    );
    // Read back from JSON Lines, the figures still match (times kept to the microsecond).
    let back = load_any("t.jsonl", &tracelab_core::write::to_jsonl(&trace))
        .unwrap()
        .single("t")
        .unwrap();
    let back_rows = crate::rows(&back);
    assert_eq!(
        back_rows.iter().filter(|r| r.matches == Some(true)).count(),
        41
    );
}

/// Every figure the importer reads from a guidellm 0.5 benchmark, as the file writes it: each
/// status of each metric with its mean, median, std_dev, min, max and p90–p99.9; the rates' and
/// concurrency's means; the request totals.
fn guidellm_printed(text: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    let metrics = v["benchmarks"][0]["metrics"].as_object().unwrap();
    let mut keys = Vec::new();
    for (name, by_status) in metrics {
        for (status, summary) in by_status.as_object().unwrap() {
            if name == "request_totals" {
                keys.push(format!("metrics.{name}.{status}"));
                continue;
            }
            for (stat, value) in summary.as_object().unwrap() {
                match (stat.as_str(), value) {
                    ("percentiles", serde_json::Value::Object(p)) => keys.extend(
                        p.keys()
                            .filter(|k| ["p90", "p95", "p99", "p999"].contains(&k.as_str()))
                            .map(|k| format!("metrics.{name}.{status}.percentiles.{k}")),
                    ),
                    ("mean" | "median" | "std_dev" | "min" | "max", _) => {
                        keys.push(format!("metrics.{name}.{status}.{stat}"))
                    }
                    _ => {}
                }
            }
        }
    }
    keys.sort();
    keys
}

#[test]
fn guidellm_run_with_errored_and_incomplete_requests_reproduces_every_figure_per_status() {
    let name = "guidellm050_with_failures_benchmarks.json";
    let text = constructed(name);
    let trace = load_any(name, &text).unwrap().single(name).unwrap();
    assert_eq!(trace.attempts.len(), 13);
    let outcome = |id: &str| trace.attempts.iter().find(|a| a.id == id).unwrap().outcome;
    assert_eq!(
        trace
            .attempts
            .iter()
            .filter(|a| a.outcome.is_success())
            .count(),
        8
    );
    assert_eq!(
        outcome("err-500"),
        Outcome::HttpError { status: 500 },
        "httpx's \"Server error '500 …'\""
    );
    assert_eq!(outcome("err-disconnect"), Outcome::StreamBroken);
    assert_eq!(outcome("err-timeout"), Outcome::TimeoutBeforeFirstToken);
    assert_eq!(
        (outcome("cut-tokens"), outcome("cut-early")),
        (Outcome::Cancelled, Outcome::Cancelled)
    );
    assert!(trace.attempts.iter().all(|a| a.phase == Phase::Measure));
    let rows = rows(&trace);
    assert_eq!(
        row_keys(&rows),
        guidellm_printed(&text),
        "every figure read is a row"
    );
    let (exact, approx, not) = account_for_every_row(&rows, 0.0);
    assert_eq!(
        (exact, approx, not),
        (7 * 9 * 4 + 4 + 4 + 4, 0, 0),
        "7 metrics × 9 statistics × 4 statuses; requests/s and concurrency per status; 4 totals"
    );
    let said = |k: &str| {
        rows.iter()
            .find(|r| r.tool_key == k)
            .unwrap_or_else(|| panic!("{k}"))
    };
    // ok-8 ends 50 ms after the window: counted in the totals, not in requests_per_second.
    assert_eq!(
        said("metrics.requests_per_second.successful.mean").tool_method,
        Some(7.0 / 6.0)
    );
    // guidellm's `or 0.0`: the two errored requests without a token count 0 ms in the errored TTFT.
    assert_eq!(
        said("metrics.time_to_first_token_ms.errored.min").tool_method,
        Some(0.0)
    );
    assert_eq!(
        said("metrics.request_totals.errored").tool_method,
        Some(3.0)
    );
    // The lesson does not summarise failures' latency: it counts them in its failure rate.
    assert_eq!(said("metrics.request_latency.errored.median").lesson, None);
}

// --- Python's non-finite tokens (issue 26) ----------------------------------------------------

#[test]
fn sglang_writes_infinity_for_its_default_rate_and_the_file_is_read() {
    let name = "sglang_bench_serving_request_rate_infinity.jsonl";
    let text = constructed(name);
    assert!(
        text.contains("\"request_rate\": Infinity"),
        "the constructed file keeps SGLang's bare token"
    );
    let imported = load_any(name, &text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(imported.detected.tool, PeerTool::Sglang);
    let trace = &imported.traces[0].trace;
    let c = &trace.header.conditions;
    assert_eq!(
        (c.arrival.as_deref(), c.rate_per_s, c.concurrency),
        (Some("closed"), None, Some(2)),
        "an infinite rate under a limit"
    );
    let warning = trace
        .warnings
        .iter()
        .find(|w| w.contains("json.dumps"))
        .expect("the token is said");
    assert!(
        warning.contains("`Infinity` at `request_rate` (line 1)"),
        "{warning}"
    );
    // Its figures are read as on the same run written with a finite rate.
    let rows = rows(trace);
    let matched = rows.iter().filter(|r| r.matches == Some(true)).count();
    assert_eq!(matched, 21, "{rows:#?}");
    // The same run without --output-details is refused as SGLang's aggregate, not as bad JSON.
    let line = text.lines().next().unwrap();
    let mut map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&line.replace("Infinity", "\"Infinity\"")).unwrap();
    for key in [
        "input_lens",
        "output_lens",
        "ttfts",
        "itls",
        "generated_texts",
        "errors",
    ] {
        map.remove(key);
    }
    let aggregate = serde_json::Value::Object(map)
        .to_string()
        .replace("\"Infinity\"", "Infinity");
    let err = refused("agg.jsonl", &aggregate);
    assert!(
        err.contains("SGLang")
            && err.contains("--output-details")
            && !err.contains("not valid JSON"),
        "{err}"
    );
}

#[test]
fn a_bare_nan_where_the_tool_never_writes_one_is_refused_naming_that_tool() {
    // AIPerf writes its records with orjson, which writes null for a non-finite number.
    let record = r#"{"metadata":{"x_request_id":"r1","timestamp_ns":1000,"credit_phase":"profiling"},"metrics":{"ttft":{"value":NaN,"unit":"ms"}}}"#;
    let err = load_any("profile_export.jsonl", record)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`NaN` (at `value`)")
            && err.contains("json.dumps")
            && err.contains("NVIDIA AIPerf"),
        "{err}"
    );
    assert!(
        !err.contains("vLLM bench serve result") && err.contains("line 1"),
        "never the wrong tool: {err}"
    );
    // A file no tool claims: still not JSON, with the position, and no tool named as its writer.
    let err = load_any("x.json", "{\"a\": [1, NaN]}")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not valid JSON") && err.contains("no tool Trace Lab knows"),
        "{err}"
    );
}

// --- AIPerf: a run in which every request failed (issue 26) -----------------------------------

#[test]
fn an_aiperf_aggregate_of_an_all_failed_run_is_read_and_its_jsonl_still_imports() {
    let (jsonl, summary) = (
        "aiperf080_all_failed_profile_export.jsonl",
        "aiperf080_all_failed_profile_export_aiperf.json",
    );
    let text = constructed(summary);
    let d = detect(&text);
    assert_eq!(
        (d.tool, d.content, d.version.as_deref()),
        (PeerTool::Aiperf, Content::AggregateOnly, Some("0.8.0")),
        "{d:?}"
    );
    let err = refused(summary, &text);
    assert!(
        err.contains("profile_export.jsonl") && err.contains("Every request of this run failed"),
        "{err}"
    );
    assert!(
        err.contains("500 Internal Server Error × 4") && !err.contains("no supported tool"),
        "{err}"
    );
    let figures =
        import::peer_figures_from_aggregate(summary, &text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(figures.attempts, Some(4));
    let mut trace = load_any(jsonl, &constructed(jsonl))
        .unwrap()
        .single(jsonl)
        .unwrap();
    assert_eq!(
        trace
            .attempts
            .iter()
            .filter(|a| !a.outcome.is_success())
            .count(),
        4
    );
    import::attach_summary(&mut trace, &figures).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !trace.warnings.iter().any(|w| w.contains("same run")),
        "{:?}",
        trace.warnings
    );
    let rows = rows(&trace);
    let failures = rows
        .iter()
        .find(|r| r.tool_key == "error_request_count.avg")
        .expect("AIPerf's error count");
    assert_eq!((failures.tool_said, failures.matches), (4.0, Some(true)));
    // Uploaded alone, the lab reads it as AIPerf's figures, not as a file it cannot open.
    assert!(matches!(
        import::load_upload(summary, &text),
        Ok(import::Loaded::Summary(_))
    ));
}

// --- vLLM: a success with no output token (issue 26) ------------------------------------------

#[test]
fn a_vllm_success_without_a_token_has_no_ttft_and_vllms_figures_still_reproduce() {
    let name = "vllm_benchmark_serving_zero_token_success.json";
    let trace = load_any(name, &constructed(name))
        .unwrap()
        .single(name)
        .unwrap();
    assert_eq!(
        trace.header.source.as_ref().unwrap().layout.as_deref(),
        Some("vllm-benchmark-serving-save-result")
    );
    let empty = &trace.attempts[2];
    assert_eq!(
        empty.outcome,
        Outcome::Success,
        "vLLM counts it as a success"
    );
    assert_eq!(
        (empty.ttft_ms, empty.e2e_ms, empty.events.len()),
        (None, None, 0),
        "no invented event, TTFT or E2E"
    );
    let settings = Settings::from_header(&trace.header);
    let metrics = tracelab_core::Metrics::of(&trace.attempts, &settings);
    assert_eq!(metrics.successes_without_token, 1);
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.contains("got no output token")),
        "{:?}",
        trace.warnings
    );
    let rows = rows(&trace);
    for r in rows.iter().filter(|r| r.tool_method.is_some()) {
        assert_eq!(
            r.matches,
            Some(true),
            "{} ({}): said {}, recomputed {:?}",
            r.key,
            r.tool_key,
            r.tool_said,
            r.tool_method
        );
    }
    let median = rows
        .iter()
        .find(|r| r.tool_key == "median_ttft_ms")
        .unwrap();
    assert!(
        median.how_tool.contains("counted as 0"),
        "the reason is shown: {}",
        median.how_tool
    );
    // The lesson's column ranks the five TTFTs there are.
    assert!(
        median.lesson.is_some_and(|v| (v - 64.7).abs() < 1e-9),
        "{:?}",
        median.lesson
    );
    assert_eq!(median.n, Some(6), "the tool's sample: vLLM's 0.0 included");
}

// --- guidellm's percentile at a tie, and a std's float noise (issue 26) -----------------------

/// A trace of `n` successes with these output token counts, carrying one figure of the tool's.
fn trace_with(tokens: &[u32], figure: import::PeerFigure) -> Trace {
    let records: Vec<String> = tokens
        .iter()
        .map(|t| format!(r#"{{"error_code": null, "error_msg": "", "ttft_s": 0.5, "end_to_end_latency_s": 2.0, "number_input_tokens": 10, "number_output_tokens": {t}}}"#))
        .collect();
    let mut trace = load_any("r.json", &format!("[{}]", records.join(",")))
        .unwrap()
        .single("r")
        .unwrap();
    trace.header.source.as_mut().unwrap().figures = import::PeerFigures::of(&[figure]);
    trace
}

fn figure(stat: import::Stat, value: f64) -> import::PeerFigure {
    import::PeerFigure {
        tool_key: "output_tokens".into(),
        quantity: import::Quantity::OutputTokens,
        stat,
        value,
        unit: import::PeerUnit::Count,
        how: "constructed".into(),
        empty_as_zero: false,
        reproducibility: Reproducibility::Exact,
        duration: Default::default(),
        error_code: None,
        over: Default::default(),
        missing_as_zero: false,
        sample: None,
    }
}

#[test]
fn guidellms_percentile_walks_its_cumulative_sum_one_sample_at_a_time() {
    // Nine 100s and one 200: 0.1 added nine times is 0.8999999999999999 < 0.9, so guidellm's
    // p90 (np.cumsum over the per-sample probabilities) is 200; 9/10 merged would be 100.
    let stat = import::Stat::Percentile {
        p: 90.0,
        method: import::PeerPercentile::CumulativeShare,
    };
    let mut tokens = vec![100; 9];
    tokens.push(200);
    let trace = trace_with(&tokens, figure(stat, 200.0));
    let row = &rows(&trace)[0];
    assert_eq!(
        (row.tool_method, row.matches),
        (Some(200.0), Some(true)),
        "{row:?}"
    );
}

#[test]
fn a_std_of_float_noise_matches_zero_within_the_stated_tolerance() {
    let trace = trace_with(
        &[150, 150, 150],
        figure(import::Stat::Std { ddof: 0 }, 5.684341886080802e-14),
    );
    let row = &rows(&trace)[0];
    assert_eq!(
        (row.tool_method, row.matches),
        (Some(0.0), Some(true)),
        "{row:?}"
    );
    // Beyond 1e-9 × the largest value it is a mismatch still.
    let trace = trace_with(
        &[150, 150, 150],
        figure(import::Stat::Std { ddof: 0 }, 1e-6),
    );
    assert_eq!(rows(&trace)[0].matches, Some(false));
    assert!(import::resolution_note()
        .en
        .contains("10⁻⁹ × the largest value"));
}

// --- guidellm ≤ 0.3: its own per-request ITL and TPOT, its own definitions (issue 26) ----------

/// The real 0.5 benchmark rewritten to the older layout: no `info.timings`, the first and last
/// token times as `first_token_time`/`last_token_time`, each request's ITL and TPOT kept.
fn guidellm_older() -> Trace {
    guidellm_edited(|b| {
        for status in ["successful", "errored", "incomplete"] {
            let Some(list) = b["requests"][status].as_array_mut() else {
                continue;
            };
            for r in list {
                let timings = r["info"]["timings"].take();
                r["first_token_time"] = timings["first_token_iteration"].clone();
                r["last_token_time"] = timings["last_token_iteration"].clone();
                r["info"].as_object_mut().unwrap().remove("timings");
            }
        }
    })
}

#[test]
fn guidellm_older_layout_reproduces_itl_and_tpot_from_each_requests_own_values() {
    let trace = guidellm_older();
    let source = trace.header.source.as_ref().unwrap();
    assert!(
        source.samples.contains_key("inter_token_latency_ms")
            && source.samples.contains_key("time_per_output_token_ms")
    );
    let rows = rows(&trace);
    let per_request: Vec<&import::ReproRow> = rows
        .iter()
        .filter(|r| {
            r.tool_key.contains("inter_token_latency_ms")
                || r.tool_key.contains("time_per_output_token_ms")
        })
        .collect();
    assert!(
        per_request.len() >= 18,
        "{} ITL/TPOT rows",
        per_request.len()
    );
    for r in &per_request {
        assert!(
            r.reproducibility.is_exact(),
            "{}: {:?}",
            r.tool_key,
            r.reproducibility
        );
        assert_eq!(
            r.matches,
            Some(true),
            "{}: said {}, recomputed {:?}",
            r.tool_key,
            r.tool_said,
            r.tool_method
        );
    }
    // Its definitions describe its own layout, not 0.5's.
    let definitions = source.definitions.join(" ");
    assert!(
        !definitions.contains("info.timings") && !definitions.contains("duplicates merged"),
        "{definitions}"
    );
    assert!(definitions.contains("older layout"), "{definitions}");
    // The trace keeps them through JSON Lines.
    let back =
        tracelab_core::parse::parse_trace("g.jsonl", &tracelab_core::write::to_jsonl(&trace))
            .unwrap();
    assert_eq!(back.header.source.as_ref().unwrap().samples, source.samples);
}

// --- LLMPerf: ITL and output rate over the values it kept per request (issue 26) --------------

#[test]
fn llmperf_per_request_itl_and_output_rate_are_reproduced_from_its_own_values() {
    let (records, summary) = (
        "llmperf_yi34b_vllm_c8_individual_responses.json",
        "llmperf_yi34b_vllm_c8_summary.json",
    );
    let mut trace = load_any(records, &real(records))
        .unwrap()
        .single(records)
        .unwrap();
    let figures = import::peer_figures_from_aggregate(summary, &real(summary)).unwrap();
    import::attach_summary(&mut trace, &figures).unwrap();
    let rows = rows(&trace);
    for metric in [
        "inter_token_latency_s",
        "request_output_throughput_token_per_s",
    ] {
        let these: Vec<&import::ReproRow> = rows
            .iter()
            .filter(|r| r.tool_key.starts_with(&format!("results_{metric}_")))
            .collect();
        assert_eq!(
            these.len(),
            10,
            "{metric}: quantiles p25–p99, mean, min, max, stddev"
        );
        for r in these {
            assert_eq!(
                r.matches,
                Some(true),
                "{}: said {}, recomputed {:?}",
                r.tool_key,
                r.tool_said,
                r.tool_method
            );
        }
    }
    // A trace without those values (imported before) says why, instead of a ✗.
    trace.header.source.as_mut().unwrap().samples.clear();
    import::attach_summary(&mut trace, &figures).unwrap();
    let itl = self::rows(&trace)
        .into_iter()
        .find(|r| r.tool_key == "results_inter_token_latency_s_mean")
        .unwrap();
    assert!(
        matches!(&itl.reproducibility, Reproducibility::Not(w) if w.contains("import the per-request file again")),
        "{itl:?}"
    );
    assert_eq!(itl.matches, None);
}
