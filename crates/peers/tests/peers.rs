//! The importers on the real peer files in `../shared/fixtures/peers/` (read in place; see
//! SOURCES.md there; files taken from public repositories are never copied into the project): each
//! fixture imports, its counts match the file, and with the tool's method we reproduce the tool's
//! own figures to floating-point rounding (relative 1e-9), then see what moves under the lesson.

use tracelab_core::parse::parse_jsonl;
use tracelab_core::{write, Outcome, Phase, Settings, Trace};
use tracelab_peers::import::{
    self, attach_summary, detect, load_any, peer_figures_from_aggregate, reproduce, Content,
    PeerTool, Quantity, ReproRow, ReproSummary, Reproducibility, Stat,
};

const VLLM: &str = "vllm_bench_serving_llama33_70b_tp8_qps04.json";
const VLLM_AGGREGATES: &str = "vllm_bench_serve_v0251_all_requests_failed.json";
const AIPERF: &str = "aiperf_gptoss20b_c100_cancel_profile_export.jsonl";
const AIPERF_AGGREGATE: &str = "aiperf_gptoss20b_c100_cancel_profile_export_aiperf.json";
const GENAI_PERF: &str = "genaiperf_gptoss20b_c1_profile_export_genai_perf.json";
const GUIDELLM: &str = "guidellm050_qwen3_4b_concurrent_benchmarks.json";
const LLMPERF: &str = "llmperf_yi34b_vllm_c8_individual_responses.json";
const LLMPERF_SUMMARY: &str = "llmperf_yi34b_vllm_c8_summary.json";

mod common;

fn fixture(name: &str) -> String {
    common::shared(&format!("peers/{name}"))
}

fn single(name: &str) -> Trace {
    load_any(name, &fixture(name))
        .unwrap_or_else(|e| panic!("{e}"))
        .single(name)
        .unwrap()
}

fn with_summary(name: &str, summary: &str) -> Trace {
    let mut trace = single(name);
    let s =
        peer_figures_from_aggregate(summary, &fixture(summary)).unwrap_or_else(|e| panic!("{e}"));
    attach_summary(&mut trace, &s).unwrap();
    trace
}

fn rows(trace: &Trace) -> Vec<ReproRow> {
    reproduce(
        trace,
        &import::figures(trace),
        &Settings::from_header(&trace.header),
    )
}

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / b.abs().max(f64::MIN_POSITIVE)
    }
}

/// Every exactly reproducible figure equals the tool's to relative 1e-9; returns how many.
fn assert_reproduced(trace: &Trace) -> usize {
    let rows = rows(trace);
    assert!(!rows.is_empty(), "no figures to reproduce");
    let mut checked = 0;
    for r in &rows {
        if r.reproducibility != Reproducibility::Exact {
            continue;
        }
        let ours = r
            .tool_method
            .unwrap_or_else(|| panic!("{} ({}) was not recomputed", r.key, r.tool_key));
        assert!(
            rel(ours, r.tool_said) <= 1e-9,
            "{} ({}): the tool said {}, we recompute {} (relative {:e})",
            r.key,
            r.tool_key,
            r.tool_said,
            ours,
            rel(ours, r.tool_said)
        );
        assert_eq!(r.matches, Some(true), "{}", r.key);
        checked += 1;
    }
    checked
}

fn row<'a>(rows: &'a [ReproRow], key: &str) -> &'a ReproRow {
    rows.iter().find(|r| r.key == key).unwrap_or_else(|| {
        panic!(
            "no row {key}: {:?}",
            rows.iter().map(|r| &r.key).collect::<Vec<_>>()
        )
    })
}

fn count(trace: &Trace, outcome: Outcome) -> usize {
    trace
        .attempts
        .iter()
        .filter(|a| a.outcome == outcome)
        .count()
}

// --- recognition ----------------------------------------------------------------------------

#[test]
fn every_fixture_is_recognised_from_its_content() {
    let expected = [
        (
            VLLM,
            PeerTool::Vllm,
            Content::PerRequest,
            "vllm-benchmark-serving-save-result",
        ),
        (
            VLLM_AGGREGATES,
            PeerTool::Vllm,
            Content::AggregateOnly,
            "vllm-bench-serve-save-result-aggregates",
        ),
        (
            AIPERF,
            PeerTool::Aiperf,
            Content::PerRequest,
            "aiperf-jsonl-ttft",
        ),
        (
            AIPERF_AGGREGATE,
            PeerTool::Aiperf,
            Content::AggregateOnly,
            "aiperf-aggregate-records",
        ),
        (
            GENAI_PERF,
            PeerTool::GenaiPerf,
            Content::AggregateOnly,
            "genai-perf-aggregate",
        ),
        (
            GUIDELLM,
            PeerTool::Guidellm,
            Content::PerRequest,
            "guidellm-benchmarks",
        ),
        (
            LLMPERF,
            PeerTool::Llmperf,
            Content::PerRequest,
            "llmperf-individual-responses",
        ),
        (
            LLMPERF_SUMMARY,
            PeerTool::Llmperf,
            Content::AggregateOnly,
            "llmperf-summary",
        ),
    ];
    for (name, tool, content, layout) in expected {
        let d = detect(&fixture(name));
        assert_eq!(
            (d.tool, d.content, d.layout.as_str()),
            (tool, content, layout),
            "{name}: {}",
            d.evidence
        );
    }
    assert_eq!(
        detect(&fixture(GUIDELLM)).version.as_deref(),
        Some("0.5.0.dev0")
    );
    // The name plays no part: a per-request file under a misleading name still imports.
    let imported = load_any("results.csv", &fixture(VLLM)).unwrap();
    assert_eq!(imported.detected.tool, PeerTool::Vllm);
}

#[test]
fn our_own_formats_still_load_through_load_any() {
    let jsonl = concat!(
        r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"tracelab","version":"0.1.0"}}"#,
        "\n",
        r#"{"kind":"attempt","id":"R1","phase":"measure","start_ms":0,"first_token_ms":200,"end_ms":500,"outcome":"success","quality":"pass"}"#,
        "\n"
    );
    let imported = load_any("t.jsonl", jsonl).unwrap();
    assert_eq!(imported.detected.tool, PeerTool::TraceLab);
    assert_eq!(
        imported.single("t.jsonl").unwrap().attempts[0].ttft_ms,
        Some(200.0)
    );
    let csv = "id,outcome,ttft_s,quality\nR1,success,0.2,pass\n";
    let trace = load_any("t.csv", csv).unwrap().single("t.csv").unwrap();
    assert_eq!(trace.attempts.len(), 1);
    // `import` is for peers only: our own trace is not "imported".
    let err = import::import("t.jsonl", jsonl).unwrap_err();
    assert!(err.message.contains("already a Trace Lab trace"), "{err}");
    // Our own reader still gives its precise errors.
    let err = load_any("t.jsonl", "{\"kind\":\"header\",\"schema\":\"x\",\"version\":1,\"tool\":{\"name\":\"t\",\"version\":\"1\"}}\n").unwrap_err();
    assert_eq!(err.field.as_deref(), Some("schema"), "{err}");
}

// --- vLLM -----------------------------------------------------------------------------------

#[test]
fn vllm_imports_every_request_with_its_stream_events() {
    let text = fixture(VLLM);
    let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    let trace = single(VLLM);
    assert_eq!(trace.attempts.len(), 200);
    assert_eq!(count(&trace, Outcome::Success), 200);
    let source = trace.header.source.as_ref().unwrap();
    assert_eq!(source.tool, "vLLM bench serve");
    assert_eq!(
        source.version, None,
        "the file does not record vLLM's version"
    );
    assert!(
        source
            .definitions
            .iter()
            .any(|d| d.contains("one gap per SSE event, not per token")),
        "{:?}",
        source.definitions
    );
    assert_eq!(
        trace.header.conditions.model.as_deref(),
        Some("meta-llama/Llama-3.3-70B-Instruct")
    );
    assert_eq!(trace.header.conditions.rate_per_s, Some(4.0));
    assert_eq!(trace.header.conditions.arrival.as_deref(), Some("poisson"));
    assert_eq!(
        trace.header.window.unwrap().length_s,
        raw["duration"].as_f64().unwrap()
    );
    for (i, a) in trace.attempts.iter().enumerate() {
        let itls = raw["itls"][i].as_array().unwrap();
        assert_eq!(
            a.events.len(),
            itls.len() + 1,
            "attempt {i}: TTFT plus one event per gap"
        );
        assert_eq!(a.ttft_ms, Some(raw["ttfts"][i].as_f64().unwrap() * 1000.0));
        assert_eq!(
            a.e2e_ms,
            Some(a.events.last().unwrap().at_ms),
            "E2E taken at the last stream event"
        );
        assert_eq!(a.start_ms, None, "no start_times in this file: no timeline");
        assert_eq!(
            a.output_tokens,
            Some(raw["output_lens"][i].as_u64().unwrap() as u32)
        );
        assert_eq!(
            a.input_tokens,
            Some(raw["input_lens"][i].as_u64().unwrap() as u32)
        );
    }
    // 25 requests have fewer events than output tokens: tokens per event are estimates.
    assert_eq!(
        trace
            .attempts
            .iter()
            .filter(|a| a.event_tokens_estimated)
            .count(),
        25
    );
}

#[test]
fn vllm_reproduces_its_own_figures() {
    let trace = single(VLLM);
    let checked = assert_reproduced(&trace);
    assert_eq!(
        checked, 15,
        "attempts, completed, TTFT and ITL mean/median/p99/std, request, output and total token throughput, input and output totals"
    );
    let rows = rows(&trace);
    assert_eq!(row(&rows, "input_tokens_sum").tool_method, Some(42659.0));
    assert_eq!(
        row(&rows, "total_token_throughput").tool_said,
        1351.170924879084
    );
    // The run's duration is the window every rate divides by: shown, not recomputed.
    assert!(matches!(
        row(&rows, "duration").reproducibility,
        Reproducibility::Not(_)
    ));
    // The lab's summary line: every exactly recomputed figure matches; TPOT (approximate) is not counted.
    assert_eq!(
        ReproSummary::of(&rows),
        ReproSummary {
            recomputed: 15,
            matching: 15
        }
    );
    for key in [
        "ttft_mean",
        "ttft_p50",
        "ttft_p99",
        "ttft_std",
        "event_gap_mean",
        "event_gap_p50",
        "event_gap_p99",
    ] {
        assert_eq!(row(&rows, key).matches, Some(true), "{key}");
    }
    // TPOT needs each request's latency, which this file does not save: approximate, and said so.
    let tpot = row(&rows, "time_per_output_token_p99");
    assert!(matches!(
        tpot.reproducibility,
        Reproducibility::Approximate(_)
    ));
    assert!(rel(tpot.tool_method.unwrap(), tpot.tool_said) < 1e-6);
    // The lesson's view: nearest-rank picks a real sample instead of interpolating.
    let p99 = row(&rows, "ttft_p99");
    assert_eq!(p99.lesson, Some(67.54475900015677));
    assert_ne!(p99.lesson, p99.tool_method);
    // How the lesson picks it, in the reader's language: the Chinese names the glossary's 最近秩.
    assert!(
        p99.how_lesson.en.starts_with("nearest-rank: ⌈99·"),
        "{}",
        p99.how_lesson.en
    );
    assert!(
        p99.how_lesson.zh.starts_with("最近秩：⌈99·") && !p99.how_lesson.zh.contains("nearest"),
        "{}",
        p99.how_lesson.zh
    );
    assert_eq!(
        row(&rows, "ttft_mean").lesson,
        None,
        "the lesson reports no mean"
    );
}

#[test]
fn vllm_without_per_request_arrays_is_refused_with_save_detailed() {
    let err = load_any(VLLM_AGGREGATES, &fixture(VLLM_AGGREGATES)).unwrap_err();
    assert!(err.message.contains("--save-detailed"), "{err}");
    assert!(err.message.contains("completed 0, failed 8"), "{err}");
    assert!(err.message.contains("`ttfts`"), "{err}");
    assert_eq!(err.file, VLLM_AGGREGATES);
}

const VLLM_WITH_ERRORS: &str = r#"{"date":"20250101-000000","backend":"openai-chat","model_id":"m","num_prompts":4,
"request_rate":"inf","burstiness":1.0,"max_concurrency":2,"duration":2.0,"completed":1,"failed":3,"request_goodput:":null,
"input_lens":[10,11,12,13],"output_lens":[3,0,0,2],"ttfts":[0.1,0.0,0.0,0.2],"itls":[[0.01,0.02],[],[],[0.05]],
"start_times":[100.0,100.5,101.0,101.2],"generated_texts":["the secret answer","","",""],
"errors":["","Too Many Requests","Traceback (most recent call last):\n  File \"x\", line 1\naiohttp.client_exceptions.ClientConnectorError: Cannot connect to host","Response ended prematurely"],
"mean_ttft_ms":100.0,"median_ttft_ms":100.0,"p99_ttft_ms":100.0,"std_ttft_ms":0.0,"mean_itl_ms":15.0}"#;

#[test]
fn vllm_errors_become_failures_with_their_message_and_start_times_a_timeline() {
    let trace = load_any("v.json", VLLM_WITH_ERRORS)
        .unwrap()
        .single("v.json")
        .unwrap();
    let a = &trace.attempts;
    assert_eq!(a[0].outcome, Outcome::Success);
    assert_eq!(
        a[0].events.iter().map(|e| e.at_ms).collect::<Vec<_>>(),
        vec![100.0, 110.0, 130.0]
    );
    assert_eq!(a[0].e2e_ms, Some(130.0));
    assert_eq!(
        a[1].outcome,
        Outcome::HttpError { status: 429 },
        "a reason phrase names the status"
    );
    assert_eq!(
        a[1].ttft_ms, None,
        "vLLM's 0 for no token becomes missing, not 0"
    );
    assert_eq!(a[1].detail.as_deref(), Some("Too Many Requests"));
    assert_eq!(a[2].outcome, Outcome::ConnectError);
    assert_eq!(
        a[2].detail.as_deref(),
        Some("aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host"),
        "the traceback's last line"
    );
    assert_eq!(
        a[3].outcome,
        Outcome::StreamBroken,
        "a token came, then the stream failed"
    );
    assert_eq!(a[3].ttft_ms, Some(200.0));
    for (x, want) in a.iter().zip([0.0, 500.0, 1000.0, 1200.0]) {
        assert!(
            (x.start_ms.unwrap() - want).abs() < 1e-9,
            "{:?}",
            x.start_ms
        );
    }
    assert_eq!(
        trace.header.conditions.arrival.as_deref(),
        Some("closed"),
        "request_rate \"inf\" with max_concurrency"
    );
    assert_eq!(trace.header.conditions.rate_per_s, None);
    let jsonl = write::to_jsonl(&trace);
    assert!(
        !jsonl.contains("secret answer"),
        "response text is never kept"
    );
    assert!(trace.warnings.iter().any(|w| w.contains("generated_texts")));
    assert_eq!(parse_jsonl("v.jsonl", &jsonl).unwrap().attempts.len(), 4);
    let rows = rows(&trace);
    assert_eq!(row(&rows, "successes").tool_method, Some(1.0));
    assert_eq!(row(&rows, "failures").tool_method, Some(3.0));
    assert_eq!(row(&rows, "ttft_p99").matches, Some(true));
    assert_eq!(
        row(&rows, "event_gap_mean").matches,
        Some(true),
        "(10 + 20) / 2 ms over the success only"
    );
}

#[test]
fn vllm_with_no_success_writes_zero_and_the_lesson_leaves_it_undefined() {
    let text = r#"{"completed":0,"failed":1,"duration":1.0,"input_lens":[5],"output_lens":[0],"ttfts":[0.0],"itls":[[]],
        "errors":["Internal Server Error"],"mean_ttft_ms":0.0,"p99_ttft_ms":0.0}"#;
    let trace = load_any("v.json", text).unwrap().single("v.json").unwrap();
    assert_eq!(
        trace.attempts[0].outcome,
        Outcome::HttpError { status: 500 }
    );
    let rows = rows(&trace);
    let p99 = row(&rows, "ttft_p99");
    assert_eq!(
        (p99.tool_said, p99.tool_method, p99.lesson),
        (0.0, Some(0.0), None)
    );
    assert!(p99.note.as_ref().unwrap().en.contains("writes 0"));
}

// --- AIPerf ---------------------------------------------------------------------------------

#[test]
fn aiperf_imports_89_successes_and_11_cancellations() {
    let trace = single(AIPERF);
    assert_eq!(trace.attempts.len(), 100);
    assert_eq!(count(&trace, Outcome::Success), 89);
    assert_eq!(count(&trace, Outcome::Cancelled), 11);
    let cancelled = trace
        .attempts
        .iter()
        .find(|a| a.outcome == Outcome::Cancelled)
        .unwrap();
    assert!(
        cancelled
            .detail
            .as_deref()
            .unwrap()
            .contains("RequestCancellationError"),
        "{:?}",
        cancelled.detail
    );
    assert_eq!(cancelled.ttft_ms, None);
    // ns timestamps become offsets from the first request.
    let starts: Vec<f64> = trace.attempts.iter().map(|a| a.start_ms.unwrap()).collect();
    assert_eq!(starts.iter().copied().fold(f64::INFINITY, f64::min), 0.0);
    assert!(
        starts.iter().all(|s| *s >= 0.0 && *s < 100.0),
        "a burst of 100 within 0.1 s"
    );
    // The window spans every attempt; the cancellations (no latency) start within it, so here it
    // equals AIPerf's benchmark_duration.
    assert_eq!(trace.header.window.unwrap().length_s, 9.317788951);
    let first = trace
        .attempts
        .iter()
        .find(|a| a.id == "1ed40a0d-e708-434d-bb8e-fb1b44cb8717")
        .unwrap();
    assert_eq!(first.ttft_ms, Some(1680.543782));
    assert_eq!(first.e2e_ms, Some(7936.968269));
    assert_eq!(first.events.len(), 193, "TTFT plus 192 inter-chunk gaps");
    assert_eq!(first.output_tokens, Some(193));
}

#[test]
fn aiperf_reproduces_its_aggregate() {
    let trace = with_summary(AIPERF, AIPERF_AGGREGATE);
    let checked = assert_reproduced(&trace);
    assert_eq!(
        checked, 64,
        "5 distributions × 12 statistics, 2 counts, 2 throughputs"
    );
    let rows = rows(&trace);
    assert_eq!(
        ReproSummary::of(&rows),
        ReproSummary {
            recomputed: 64,
            matching: 64
        }
    );
    assert_eq!(row(&rows, "ttft_p50").tool_said, 2369.317693);
    // serde_json's default float parser may land one ULP from Python's: equal to 1e-15.
    assert!(rel(row(&rows, "ttft_p99").tool_said, 3833.3894000399996) < 1e-15);
    // Lesson: with 89 samples nearest-rank P99 is the slowest request; the 11 cancellations stay
    // in the denominator; throughput becomes goodput, which needs a quality verdict.
    assert_eq!(row(&rows, "ttft_p99").lesson, Some(3853.857423));
    assert!(row(&rows, "successes")
        .note
        .as_ref()
        .unwrap()
        .en
        .contains("all 100 attempts"));
    assert!(row(&rows, "successes")
        .note
        .as_ref()
        .unwrap()
        .en
        .contains("11 %"));
    let throughput = row(&rows, "request_throughput");
    assert_eq!(throughput.lesson, Some(0.0));
    assert!(throughput
        .note
        .as_ref()
        .unwrap()
        .en
        .contains("89 successes carry no quality verdict"));
    // The summary filled what the per-record file does not say.
    assert_eq!(
        trace.header.conditions.model.as_deref(),
        Some("openai/gpt-oss-20b")
    );
    assert_eq!(trace.header.conditions.concurrency, Some(100));
    assert!(trace.warnings.is_empty(), "{:?}", trace.warnings);
}

/// The real run with 5 of its cancellations turned into timeouts that start 200 s after the last
/// response and keep their own ends (`request_start_ns`/`request_end_ns`, as AIPerf 0.8 writes on
/// error records): AIPerf's benchmark_duration still spans the records without an error, so its
/// throughputs reproduce; the lesson's window spans the timeouts too, and the card says that this is
/// a definition difference, not two runs.
fn aiperf_with_late_timeouts() -> String {
    let lines: Vec<serde_json::Value> = fixture(AIPERF)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last_response = lines
        .iter()
        .filter_map(|v| v["metrics"]["max_response_timestamp"]["value"].as_u64())
        .max()
        .unwrap();
    let mut moved = 0;
    let lines: Vec<String> = lines
        .into_iter()
        .map(|mut v| {
            if moved < 5 && v["error"]["type"] == "RequestCancellationError" {
                moved += 1;
                let start = last_response + 200_000_000_000 + moved * 1_000_000;
                v["metadata"]["request_start_ns"] = serde_json::json!(start);
                v["metadata"]["request_end_ns"] = serde_json::json!(start + 2_500_000_000u64);
                v["error"] = serde_json::json!({"code": null, "type": "TimeoutError", "message": "Request timed out"});
            }
            v.to_string()
        })
        .collect();
    assert_eq!(moved, 5);
    lines.join("\n") + "\n"
}

#[test]
fn aiperf_throughput_divides_by_the_span_of_the_records_without_an_error() {
    let mut trace = load_any(AIPERF, &aiperf_with_late_timeouts())
        .unwrap()
        .single(AIPERF)
        .unwrap();
    assert_eq!(count(&trace, Outcome::TimeoutBeforeFirstToken), 5);
    assert_eq!(count(&trace, Outcome::Cancelled), 6);
    let window = trace.header.window.unwrap().length_s;
    assert!(
        window > 200.0,
        "the lesson's window spans the timeouts too: {window}"
    );
    let summary =
        peer_figures_from_aggregate(AIPERF_AGGREGATE, &fixture(AIPERF_AGGREGATE)).unwrap();
    attach_summary(&mut trace, &summary).unwrap();
    assert_eq!(assert_reproduced(&trace), 64, "throughputs included");
    let rows = rows(&trace);
    for key in ["request_throughput", "output_throughput"] {
        assert!(
            rel(
                row(&rows, key).tool_method.unwrap(),
                row(&rows, key).tool_said
            ) <= 1e-9,
            "{key}"
        );
    }
    assert_eq!(trace.warnings.len(), 1, "{:?}", trace.warnings);
    assert!(
        trace.warnings[0].starts_with("a definition difference, not a mismatch"),
        "{:?}",
        trace.warnings
    );
    assert!(
        trace.warnings[0].contains("9.317788951 s"),
        "{:?}",
        trace.warnings
    );
    // After the JSON Lines round trip (each end kept to the microsecond) it still matches.
    let back = parse_jsonl("t.jsonl", &write::to_jsonl(&trace)).unwrap();
    let back_rows = reproduce(
        &back,
        &import::figures(&back),
        &Settings::from_header(&back.header),
    );
    assert_eq!(row(&back_rows, "request_throughput").matches, Some(true));
}

#[test]
fn a_summary_of_another_run_is_a_genuine_mismatch() {
    let mut trace = single(AIPERF);
    let mut aggregate: serde_json::Value =
        serde_json::from_str(&fixture(AIPERF_AGGREGATE)).unwrap();
    aggregate["records"]["benchmark_duration"]["avg"] = serde_json::json!(12.5);
    let summary = peer_figures_from_aggregate(AIPERF_AGGREGATE, &aggregate.to_string()).unwrap();
    attach_summary(&mut trace, &summary).unwrap();
    assert_eq!(trace.warnings.len(), 1, "{:?}", trace.warnings);
    assert!(
        trace.warnings[0].contains("do not describe the same run"),
        "{:?}",
        trace.warnings
    );
    assert!(!trace.warnings[0].contains("definition difference"));
    // A figure of another run: the summary line counts it as recomputed, not matching.
    aggregate["records"]["ttft"]["p50"] = serde_json::json!(1.5);
    let mut trace = single(AIPERF);
    attach_summary(
        &mut trace,
        &peer_figures_from_aggregate(AIPERF_AGGREGATE, &aggregate.to_string()).unwrap(),
    )
    .unwrap();
    let rows = rows(&trace);
    assert_eq!(row(&rows, "ttft_p50").matches, Some(false));
    assert_eq!(
        ReproSummary::of(&rows),
        ReproSummary {
            recomputed: 64,
            matching: 63
        }
    );
}

#[test]
fn aiperf_aggregate_alone_is_refused_naming_the_per_record_file() {
    let err = load_any(AIPERF_AGGREGATE, &fixture(AIPERF_AGGREGATE)).unwrap_err();
    assert!(err.message.contains("profile_export.jsonl"), "{err}");
    assert!(err.message.contains("summary statistics only"), "{err}");
}

#[test]
fn aiperf_newer_layout_with_warmup_http_errors_and_cancellations() {
    let text = [
        r#"{"metadata":{"x_request_id":"w1","request_start_ns":1000000000000,"request_end_ns":1000500000000,"benchmark_phase":"warmup","was_cancelled":false},"metrics":{"time_to_first_token":{"value":100.0,"unit":"ms"},"request_latency":{"value":500.0,"unit":"ms"},"inter_chunk_latency":{"value":[200.0,200.0],"unit":"ms"},"output_sequence_length":{"value":3,"unit":"tokens"}},"error":null}"#,
        r#"{"metadata":{"x_request_id":"p1","request_start_ns":1000600000000,"request_end_ns":1000900000000,"benchmark_phase":"profiling","was_cancelled":false},"metrics":{"time_to_first_token":{"value":50.0,"unit":"ms"},"request_latency":{"value":300.0,"unit":"ms"},"inter_chunk_latency":{"value":[100.0],"unit":"ms"},"output_sequence_length":{"value":2,"unit":"tokens"},"input_sequence_length":{"value":7,"unit":"tokens"}},"error":null}"#,
        r#"{"metadata":{"x_request_id":"p2","request_start_ns":1000700000000,"request_end_ns":1000710000000,"benchmark_phase":"profiling","was_cancelled":false},"metrics":{"error_isl":{"value":5,"unit":"tokens"}},"error":{"code":500,"type":"InternalServerError","message":"boom"}}"#,
        r#"{"metadata":{"x_request_id":"p3","request_start_ns":1000800000000,"request_end_ns":1000800100000,"benchmark_phase":"profiling","was_cancelled":true,"cancellation_time_ns":1000800100000},"metrics":{"error_isl":{"value":5,"unit":"tokens"}},"error":{"code":499,"type":"RequestCancellationError","message":"Request was cancelled after 0.000 seconds"}}"#,
    ]
    .join("\n")
        + "\n";
    let imported = load_any("profile_export.jsonl", &text).unwrap();
    assert_eq!(imported.detected.layout, "aiperf-jsonl-time-to-first-token");
    let trace = imported.single("x").unwrap();
    let a = &trace.attempts;
    assert_eq!(a[0].phase, Phase::Warmup);
    assert_eq!(a[1].start_ms, Some(600.0));
    assert_eq!(
        a[1].events.iter().map(|e| e.at_ms).collect::<Vec<_>>(),
        vec![50.0, 150.0]
    );
    assert_eq!(a[1].input_tokens, Some(7));
    assert_eq!(a[2].outcome, Outcome::HttpError { status: 500 });
    assert_eq!(a[2].e2e_ms, Some(10.0), "request_end_ns − request_start_ns");
    assert_eq!(
        a[2].detail.as_deref(),
        Some("InternalServerError (code 500): boom")
    );
    assert_eq!(a[3].outcome, Outcome::Cancelled);
    let w = trace.header.window.unwrap();
    assert_eq!(
        (w.start_ms, w.length_s),
        (600.0, 0.3),
        "the profiling phase: first start → last end"
    );
    assert_eq!(trace.warmup_count(), 1);
}

// --- guidellm -------------------------------------------------------------------------------

#[test]
fn guidellm_imports_one_trace_per_benchmark() {
    let imported = load_any(GUIDELLM, &fixture(GUIDELLM)).unwrap();
    assert_eq!(imported.traces.len(), 1);
    assert_eq!(
        imported.traces[0].label,
        "benchmark 1: concurrent, 4 streams"
    );
    let trace = &imported.traces[0].trace;
    assert_eq!(trace.attempts.len(), 4);
    assert_eq!(count(trace, Outcome::Success), 4);
    let a = trace
        .attempts
        .iter()
        .find(|a| a.id == "0143bbb3-84af-4442-ba1f-267d69cfc573")
        .unwrap();
    assert_eq!(a.ttft_ms, Some(171.52166366577148));
    assert_eq!(a.e2e_ms, Some(24.90786051750183 * 1000.0));
    assert!(
        a.intended_start_ms.is_some(),
        "the schedule's targeted start"
    );
    assert_eq!((a.input_tokens, a.output_tokens), (Some(81), Some(1024)));
    assert_eq!(trace.header.conditions.concurrency, Some(4));
    assert_eq!(
        trace.header.conditions.model.as_deref(),
        Some("Qwen/Qwen3-4B-Thinking-2507")
    );
    assert_eq!(
        trace.header.source.as_ref().unwrap().version.as_deref(),
        Some("0.5.0.dev0")
    );
    let jsonl = write::to_jsonl(trace);
    assert!(
        !jsonl.contains("To solve the problem"),
        "response text is never kept"
    );
    assert!(!jsonl.contains("Define $f(x)"), "prompt text is never kept");
}

#[test]
fn guidellm_reproduces_its_own_figures() {
    let trace = single(GUIDELLM);
    let checked = assert_reproduced(&trace);
    assert_eq!(
        checked,
        264,
        "TTFT, latency, ITL, TPOT, prompt/output/total tokens: mean, median, p90, p95, p99, p99.9, min, max, std, per status \
         (successful, errored, incomplete, total: 7 × 9 × 4); requests/s and concurrency per status; 4 counts"
    );
    let rows = rows(&trace);
    // One of the 4 requests ends 48 µs after guidellm's measure_end_time: it counts in
    // request_totals (it overlaps the window) but not in requests_per_second (it ends outside).
    let rps = row(&rows, "request_throughput");
    assert_eq!(rps.tool_said, 0.12043527909470322);
    assert!(
        rel(rps.tool_method.unwrap(), 3.0 / 24.909644603729248) < 1e-12,
        "{:?}",
        rps.tool_method
    );
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.starts_with("1 requests straddle")),
        "{:?}",
        trace.warnings
    );
    assert!(matches!(
        row(&rows, "output_throughput").reproducibility,
        Reproducibility::Not(_)
    ));
    // The token rates of every status are rows too, not reproducible, each with its reason.
    let not: Vec<_> = rows
        .iter()
        .filter(|r| matches!(&r.reproducibility, Reproducibility::Not(w) if w.len() > 40))
        .collect();
    assert_eq!(
        not.len(),
        12,
        "output, total and prompt tokens per second × 4 statuses"
    );
    assert_eq!(rows.len(), 264 + 12);
    // guidellm's median of 4 is the 2nd value (cumulative share), not numpy's interpolation.
    assert_eq!(row(&rows, "ttft_p50").tool_said, 171.52166366577148);
}

/// Lesson 05's corrected claim: guidellm's ITL and TPOT can be recomputed from the first and last
/// token times it keeps — (last − first) / (tokens − 1) and (last − start) / tokens per request,
/// the means weighted by tokens − 1 and tokens.
#[test]
fn guidellm_itl_and_tpot_are_recomputed_from_its_first_and_last_token_times() {
    let trace = single(GUIDELLM);
    assert!(trace
        .attempts
        .iter()
        .all(|a| a.events.is_empty() && a.last_token_ms.is_some()));
    let rows = rows(&trace);
    let itl = row(&rows, "itl_per_request_mean");
    let tpot = row(&rows, "tpot_from_start_mean");
    assert_eq!(
        itl.tool_key,
        "metrics.inter_token_latency_ms.successful.mean"
    );
    assert_eq!(
        tpot.tool_key,
        "metrics.time_per_output_token_ms.successful.mean"
    );
    assert!(
        (itl.tool_method.unwrap() - 24.17877651).abs() < 5e-9,
        "{:?}",
        itl.tool_method
    );
    assert!(
        (tpot.tool_method.unwrap() - 24.32290418).abs() < 5e-9,
        "{:?}",
        tpot.tool_method
    );
    assert_eq!((itl.matches, tpot.matches), (Some(true), Some(true)));
    // Weighted by tokens − 1 (4 × 1023), not by request: the median is a request's own value.
    assert_eq!(
        row(&rows, "itl_per_request_p50").tool_method,
        Some(24.178653868062757)
    );
    // The lesson has no per-request average; what cannot be recomputed is each gap.
    assert!(itl.lesson.is_none() && itl.note.is_some());
    // They survive the trace's JSON Lines round trip (to the microsecond it keeps).
    let back = parse_jsonl("g.jsonl", &write::to_jsonl(&trace)).unwrap();
    let back_rows = reproduce(
        &back,
        &import::figures(&back),
        &Settings::from_header(&back.header),
    );
    assert_eq!(row(&back_rows, "itl_per_request_mean").matches, Some(true));
}

/// The fixture with a second benchmark that has a warm-up, a cool-down, an error and a cancellation.
fn two_benchmarks() -> String {
    let mut v: serde_json::Value = serde_json::from_str(&fixture(GUIDELLM)).unwrap();
    let mut b = v["benchmarks"][0].clone();
    let reqs = b["requests"]["successful"].as_array().unwrap().clone();
    let start0 = reqs[0]["request_start_time"].as_f64().unwrap();
    let mut warm = reqs[0].clone();
    warm["request_end_time"] = serde_json::json!(start0 + 1.0);
    warm["request_latency"] = serde_json::json!(1.0);
    let mut cool = reqs[3].clone();
    cool["request_start_time"] = serde_json::json!(start0 + 21.0);
    let mut errored = reqs[2].clone();
    errored["info"]["error"] = serde_json::json!("Internal Server Error");
    errored["info"]["status"] = serde_json::json!("errored");
    let mut incomplete = reqs[1].clone();
    incomplete["request_id"] = serde_json::json!("cancelled-one");
    b["scheduler_metrics"]["measure_start_time"] = serde_json::json!(start0 + 2.0);
    b["scheduler_metrics"]["measure_end_time"] = serde_json::json!(start0 + 20.0);
    b["requests"]["successful"] = serde_json::json!([warm, reqs[1].clone(), cool]);
    b["requests"]["errored"] = serde_json::json!([errored]);
    b["requests"]["incomplete"] = serde_json::json!([incomplete]);
    b["config"]["strategy"] = serde_json::json!({"type_": "constant", "rate": 2.5});
    v["benchmarks"].as_array_mut().unwrap().push(b);
    v.to_string()
}

#[test]
fn guidellm_benchmarks_are_chosen_and_keep_warmup_and_cooldown_out_of_the_samples() {
    let text = two_benchmarks();
    let imported = load_any("b.json", &text).unwrap();
    assert_eq!(imported.traces.len(), 2);
    let err = imported.clone().single("b.json").unwrap_err();
    assert!(
        err.message.contains("2 benchmarks")
            && err.message.contains("2: benchmark 2: constant, 2.5 req/s"),
        "{err}"
    );
    assert!(imported
        .clone()
        .pick("b.json", 3)
        .unwrap_err()
        .message
        .contains("no benchmark 3"));
    let second = imported.pick("b.json", 2).unwrap();
    let t = &second.trace;
    assert_eq!(t.attempts.len(), 5);
    assert_eq!(t.header.conditions.arrival.as_deref(), Some("constant"));
    assert_eq!(t.header.conditions.rate_per_s, Some(2.5));
    assert_eq!(t.warmup_count(), 2, "one warm-up, one cool-down");
    let cool = t
        .attempts
        .iter()
        .find(|a| a.detail.as_deref().is_some_and(|d| d.contains("cool-down")))
        .unwrap();
    assert_eq!(cool.phase, Phase::Warmup);
    assert_eq!(count(t, Outcome::HttpError { status: 500 }), 1);
    let cancelled = t.attempts.iter().find(|a| a.id == "cancelled-one").unwrap();
    assert_eq!(cancelled.outcome, Outcome::Cancelled);
    assert!(t.warnings.iter().any(|w| w.contains("cool-down")));
    assert_eq!(
        parse_jsonl("b.jsonl", &write::to_jsonl(t))
            .unwrap()
            .attempts
            .len(),
        5
    );
}

// --- LLMPerf --------------------------------------------------------------------------------

#[test]
fn llmperf_imports_attempts_without_a_timeline() {
    let trace = single(LLMPERF);
    assert_eq!(trace.attempts.len(), 104);
    assert_eq!(count(&trace, Outcome::Success), 104);
    let a = &trace.attempts[0];
    assert_eq!(a.start_ms, None);
    assert!(a.events.is_empty());
    assert_eq!(a.ttft_ms, Some(4.292722194999442 * 1000.0));
    assert_eq!(a.e2e_ms, Some(12.438038329999472 * 1000.0));
    assert_eq!((a.input_tokens, a.output_tokens), (Some(550), Some(154)));
}

#[test]
fn llmperf_reproduces_its_summary() {
    let trace = with_summary(LLMPERF, LLMPERF_SUMMARY);
    let checked = assert_reproduced(&trace);
    // ITL and the per-request output rate are reproduced over the values LLMPerf kept per request.
    assert_eq!(checked, 64, "TTFT, E2E, ITL, output rate, input and output tokens: 6 quantiles, mean, min, max, stddev; 4 counts");
    let rows = rows(&trace);
    // Every figure the summary prints is a row: reproduced, or not with the reason.
    let summary: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&fixture(LLMPERF_SUMMARY)).unwrap();
    let printed = summary
        .iter()
        .filter(|(k, v)| {
            k.starts_with("results_")
                && (v.is_number() || v.as_str().is_some_and(|s| s.parse::<f64>().is_ok()))
        })
        .count();
    assert_eq!(
        rows.len(),
        printed,
        "{:?}",
        rows.iter().map(|r| &r.tool_key).collect::<Vec<_>>()
    );
    let not: Vec<_> = rows
        .iter()
        .filter(|r| matches!(r.reproducibility, Reproducibility::Not(_)))
        .collect();
    assert_eq!(
        not.len(),
        2,
        "the two run rates (LLMPerf saves no run time)"
    );
    assert!(not.iter().all(|r| r.tool_method.is_none()));
    let std = rows
        .iter()
        .find(|r| r.tool_key == "results_ttft_s_stddev")
        .unwrap();
    assert_eq!(std.key, "ttft_std");
    let itl = rows
        .iter()
        .find(|r| r.tool_key == "results_inter_token_latency_s_mean")
        .unwrap();
    assert_eq!(
        (itl.reproducibility.is_exact(), itl.matches, itl.n),
        (true, Some(true), Some(104))
    );
    assert_eq!(
        row(&rows, "error_rate").lesson,
        Some(0.0),
        "LLMPerf's error rate already divides by every request"
    );
    assert_eq!(trace.header.conditions.concurrency, Some(8));
}

#[test]
fn llmperf_errors_become_failures() {
    let text = r#"[{"error_code": 429, "error_msg": "rate limited", "ttft_s": 0, "end_to_end_latency_s": 0,
        "inter_token_latency_s": 0, "number_input_tokens": 550, "number_output_tokens": 0},
        {"error_code": -1, "error_msg": "ReadTimeout", "ttft_s": 0, "end_to_end_latency_s": 0},
        {"error_code": null, "error_msg": "", "ttft_s": 1.0, "end_to_end_latency_s": 3.0, "generated_text": "an answer"}]"#;
    let trace = load_any("x_individual_responses.json", text)
        .unwrap()
        .single("x")
        .unwrap();
    assert_eq!(
        trace.attempts[0].outcome,
        Outcome::HttpError { status: 429 }
    );
    assert_eq!(trace.attempts[0].ttft_ms, None);
    assert_eq!(
        trace.attempts[0].detail.as_deref(),
        Some("error_code 429: rate limited")
    );
    assert_eq!(trace.attempts[1].outcome, Outcome::TimeoutBeforeFirstToken);
    assert_eq!(trace.attempts[2].outcome, Outcome::Success);
    assert!(!write::to_jsonl(&trace).contains("an answer"));
}

#[test]
fn llmperf_summary_alone_is_refused_naming_the_individual_responses() {
    let err = load_any(LLMPERF_SUMMARY, &fixture(LLMPERF_SUMMARY)).unwrap_err();
    assert!(
        err.message
            .contains("01-ai-Yi-1-5-34B-Chat_550_150_individual_responses.json"),
        "{err}"
    );
}

// --- aggregate-only and summaries -----------------------------------------------------------

#[test]
fn genai_perf_aggregate_is_refused_naming_what_to_upload() {
    let err = load_any(GENAI_PERF, &fixture(GENAI_PERF)).unwrap_err();
    assert!(err.message.contains("GenAI-Perf"), "{err}");
    assert!(err.message.contains("profile_export.json"), "{err}");
    assert!(err.message.contains("per-request export"), "{err}");
    assert!(err.message.contains("added beside it"), "{err}");
}

/// The real aggregate reads as GenAI-Perf's own figures: every request figure is one, with how
/// GenAI-Perf computes it, and the token-based ones say why they cannot be recomputed.
#[test]
fn genai_perf_aggregate_reads_as_its_own_figures() {
    let s = peer_figures_from_aggregate(GENAI_PERF, &fixture(GENAI_PERF)).unwrap();
    assert_eq!(s.detected.tool, PeerTool::GenaiPerf);
    assert_eq!((s.successes, s.attempts), (Some(35), None));
    assert_eq!(s.conditions.model.as_deref(), Some("openai/gpt-oss-20b"));
    assert_eq!(s.conditions.concurrency, Some(1));
    // 7 distributions (TTFT, TTST, latency, ITL, per-user rate, ISL, OSL) × 13 statistics, and 3
    // single values; GPU telemetry is not a request figure.
    assert_eq!(s.figures.len(), 7 * 13 + 3);
    assert!(s
        .figures
        .iter()
        .all(|f| !f.tool_key.starts_with("telemetry_stats")));
    let by_key = |k: &str| {
        s.figures
            .iter()
            .find(|f| f.tool_key == k)
            .unwrap_or_else(|| panic!("{k}"))
    };
    for k in [
        "time_to_first_token.p99",
        "time_to_second_token.avg",
        "request_latency.std",
        "request_count.avg",
        "request_throughput.avg",
    ] {
        assert!(by_key(k).reproducibility.is_exact(), "{k}");
    }
    for k in [
        "inter_token_latency.p50",
        "output_sequence_length.avg",
        "input_sequence_length.max",
        "output_token_throughput.avg",
    ] {
        assert!(
            matches!(&by_key(k).reproducibility, Reproducibility::Not(w) if w.contains("tokenizer")),
            "{k}"
        );
    }
    // The file shows GenAI-Perf's request_throughput counting the requests it dropped: the
    // output rate implies the run's duration (Σ output tokens / rate), and request_throughput ×
    // that duration is 100 — perf_analyzer's request count in its config — while request_count
    // (the requests with content) is 35.
    let tokens = by_key("output_sequence_length.avg").value * by_key("request_count.avg").value;
    let duration = tokens / by_key("output_token_throughput.avg").value;
    let sent = by_key("request_throughput.avg").value * duration;
    assert!((sent - 100.0).abs() < 1e-9, "{sent}");
}

#[test]
fn a_summary_only_attaches_to_its_own_tool() {
    let mut trace = single(AIPERF);
    let llmperf = peer_figures_from_aggregate(LLMPERF_SUMMARY, &fixture(LLMPERF_SUMMARY)).unwrap();
    let err = attach_summary(&mut trace, &llmperf).unwrap_err();
    assert!(
        err.message.contains("NVIDIA AIPerf") && err.message.contains("Ray LLMPerf"),
        "{err}"
    );
    let err = peer_figures_from_aggregate(AIPERF, &fixture(AIPERF)).unwrap_err();
    assert!(err.message.contains("expected a tool's summary"), "{err}");
    // A summary of another run is accepted but flagged.
    let mut small = single(AIPERF);
    small.attempts.truncate(50);
    let s = peer_figures_from_aggregate(AIPERF_AGGREGATE, &fixture(AIPERF_AGGREGATE)).unwrap();
    attach_summary(&mut small, &s).unwrap();
    assert!(
        small.warnings.iter().any(|w| w.contains("same run")),
        "{:?}",
        small.warnings
    );
}

#[test]
fn every_figure_says_how_the_tool_computes_it() {
    for trace in [
        single(VLLM),
        single(GUIDELLM),
        with_summary(AIPERF, AIPERF_AGGREGATE),
        with_summary(LLMPERF, LLMPERF_SUMMARY),
    ] {
        for f in import::figures(&trace) {
            assert!(!f.how.is_empty(), "{}", f.tool_key);
            if let Stat::Percentile { p, .. } = f.stat {
                assert!(p > 0.0 && p <= 100.0);
            }
            if f.quantity == Quantity::Goodput {
                assert!(matches!(f.reproducibility, Reproducibility::Not(_)));
            }
        }
    }
}

// --- bad input ------------------------------------------------------------------------------

#[test]
fn truncated_files_say_what_was_detected_and_where() {
    let text = fixture(VLLM);
    let err = load_any(VLLM, &text[..text.len() / 2]).unwrap_err();
    assert!(
        err.message.contains("vLLM") && err.message.contains("ends early"),
        "{err}"
    );
    assert_eq!(err.line, Some(1));
    let text = fixture(GUIDELLM);
    let err = load_any(GUIDELLM, &text[..text.len() / 3]).unwrap_err();
    assert!(
        err.message.contains("guidellm") && err.message.contains("cut off"),
        "{err}"
    );
    assert!(err.line.is_some());
    let text = fixture(LLMPERF);
    let err = load_any(LLMPERF, &text[..text.len() - 40]).unwrap_err();
    assert!(err.message.contains("LLMPerf"), "{err}");
    // AIPerf's JSON Lines: a cut-off last record is dropped with a note; the rest is kept.
    let text = fixture(AIPERF);
    let cut = &text[..text.trim_end().len() - 200];
    let trace = load_any(AIPERF, cut).unwrap().single(AIPERF).unwrap();
    assert_eq!(trace.attempts.len(), 99);
    assert!(trace.is_incomplete());
    assert!(
        trace.warnings[0].contains("line 100 is cut off"),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn corrupted_lines_and_fields_are_named() {
    let text = fixture(AIPERF);
    let mut lines: Vec<&str> = text.lines().collect();
    let broken = lines[49].replacen("\"metrics\":", "\"metrics\"", 1);
    lines[49] = &broken;
    let err = load_any(AIPERF, &lines.join("\n")).unwrap_err();
    assert_eq!(err.line, Some(50), "{err}");
    assert!(err.message.contains("AIPerf"), "{err}");

    let missing_itls = VLLM_WITH_ERRORS.replace("\"itls\":[[0.01,0.02],[],[],[0.05]],", "");
    let err = load_any("v.json", &missing_itls).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("itls"), "{err}");
    assert!(err.message.contains("is missing"), "{err}");
    let short = VLLM_WITH_ERRORS.replace(
        "\"itls\":[[0.01,0.02],[],[],[0.05]]",
        "\"itls\":[[0.01,0.02],[],[]]",
    );
    let err = load_any("v.json", &short).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("itls"));
    assert!(err.message.contains("3 entries but `ttfts` has 4"), "{err}");
    let bad_type = VLLM_WITH_ERRORS.replace("\"ttfts\":[0.1,", "\"ttfts\":[\"fast\",");
    let err = load_any("v.json", &bad_type).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("ttfts[0]"));

    let record = r#"{"metadata":{"x_request_id":"a","timestamp_ns":1},"metrics":{"something_new":{"value":1}},"error":null}"#;
    let err = load_any("p.jsonl", &format!("{record}\n")).unwrap_err();
    assert_eq!(
        (err.line, err.field.as_deref()),
        (Some(1), Some("metrics")),
        "{err}"
    );
    assert!(
        err.message.contains("layout this version does not know"),
        "{err}"
    );
}

#[test]
fn unknown_tools_are_refused_with_what_was_seen() {
    let err = load_any("x.json", r#"{"hello": 1, "world": [1, 2]}"#).unwrap_err();
    assert!(
        err.message.contains("`hello`") && err.message.contains("Supported"),
        "{err}"
    );
    assert_eq!(detect(r#"{"hello": 1}"#).tool, PeerTool::Unknown);
    let err = load_any("x.json", "[1, 2, 3]").unwrap_err();
    assert!(err.message.contains("not hold records"), "{err}");
    let err = load_any("x.json", "   \n").unwrap_err();
    assert!(err.message.contains("empty"), "{err}");
    let err = load_any("x.json", "{\"a\": tru}").unwrap_err();
    assert!(err.message.contains("not valid JSON"), "{err}");
    let err = load_any_bytes_invalid();
    assert!(err.message.contains("not UTF-8"), "{err}");
}

fn load_any_bytes_invalid() -> tracelab_core::ParseError {
    import::load_any_bytes("x.json", b"{\"ttfts\": [\xff]}").unwrap_err()
}

// --- round trip -----------------------------------------------------------------------------

#[test]
fn every_import_round_trips_through_json_lines_with_its_figures() {
    for trace in [
        single(VLLM),
        with_summary(AIPERF, AIPERF_AGGREGATE),
        single(GUIDELLM),
        with_summary(LLMPERF, LLMPERF_SUMMARY),
    ] {
        let text = write::to_jsonl(&trace);
        let back = parse_jsonl("back.jsonl", &text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.attempts.len(), trace.attempts.len());
        assert_eq!(
            back.header.source, trace.header.source,
            "tool, version, definitions and figures survive"
        );
        for (a, b) in trace.attempts.iter().zip(&back.attempts) {
            assert_eq!(
                (a.outcome, a.phase, &a.detail),
                (b.outcome, b.phase, &b.detail),
                "{}",
                a.id
            );
            assert_eq!(a.events.len(), b.events.len());
        }
        // The trace keeps microseconds, and the tool's figures still match to that resolution.
        let rows = rows(&back);
        let exact: Vec<_> = rows
            .iter()
            .filter(|r| r.reproducibility == Reproducibility::Exact)
            .collect();
        assert!(
            exact.iter().all(|r| r.matches == Some(true)),
            "{:?}",
            exact
                .iter()
                .filter(|r| r.matches != Some(true))
                .map(|r| &r.key)
                .collect::<Vec<_>>()
        );
    }
}
