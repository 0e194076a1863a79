//! The exports: Perfetto / chrome://tracing trace-event JSON checked structurally, the attempts
//! CSV read back by our own CSV reader, and the metric card as Markdown and JSON.

use std::collections::HashMap;

use serde_json::Value;
use tracelab_core::export::{attempts_csv, card_json, card_markdown, csv_columns, perfetto};
use tracelab_core::parse::{parse_csv, parse_trace};
use tracelab_core::{Lang, Metrics, Settings, Trace};
use tracelab_peers::import::{attach_summary, load_any, peer_figures_from_aggregate};

const TEN_JSONL: &str = include_str!("../../../public/samples/ten-requests.jsonl");

mod common;

/// A real peer result file, read in place from `../shared/fixtures/peers/` (never copied here).
fn fixture(name: &str) -> String {
    common::shared(&format!("peers/{name}"))
}

fn peer(name: &str) -> Trace {
    load_any(name, &fixture(name))
        .unwrap()
        .single(name)
        .unwrap()
}

fn aiperf_with_summary() -> Trace {
    let mut t = peer("aiperf_gptoss20b_c100_cancel_profile_export.jsonl");
    let name = "aiperf_gptoss20b_c100_cancel_profile_export_aiperf.json";
    attach_summary(
        &mut t,
        &peer_figures_from_aggregate(name, &fixture(name)).unwrap(),
    )
    .unwrap();
    t
}

/// Every trace the tests export: the four peers, the lesson's sample, one with GPU telemetry.
fn traces() -> Vec<(&'static str, Trace)> {
    vec![
        (
            "vllm",
            peer("vllm_bench_serving_llama33_70b_tp8_qps04.json"),
        ),
        ("aiperf", aiperf_with_summary()),
        (
            "guidellm",
            peer("guidellm050_qwen3_4b_concurrent_benchmarks.json"),
        ),
        (
            "llmperf",
            peer("llmperf_yi34b_vllm_c8_individual_responses.json"),
        ),
        ("ten", parse_trace("ten-requests.jsonl", TEN_JSONL).unwrap()),
        ("gpu", with_gpu()),
    ]
}

fn with_gpu() -> Trace {
    let text = concat!(
        r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"tracelab","version":"0.1.0"},"capabilities":{"workload_executed":true,"inference_benchmark":true,"gpu_telemetry":"nvml"}}"#,
        "\n",
        r#"{"kind":"attempt","id":"A","phase":"measure","start_ms":0,"first_token_ms":300,"events":[[300,1],[400,2]],"end_ms":500,"outcome":"success","quality":"pass"}"#,
        "\n",
        r#"{"kind":"attempt","id":"B","phase":"measure","start_ms":100,"first_token_ms":1500,"end_ms":1600,"outcome":"success","quality":"pass"}"#,
        "\n",
        r#"{"kind":"attempt","id":"C","phase":"warmup","start_ms":600,"end_ms":700,"outcome":"http_error","http_status":503,"quality":"not_evaluated"}"#,
        "\n",
        r#"{"kind":"gpu","t_ms":0,"gpu":0,"util_pct":10,"mem_used_mib":1000,"mem_total_mib":80000}"#,
        "\n",
        r#"{"kind":"gpu","t_ms":500,"gpu":0,"util_pct":90,"mem_used_mib":40000,"mem_total_mib":80000}"#,
        "\n",
        r#"{"kind":"footer","finished_cleanly":true,"attempts":3,"gpu_samples":2}"#,
        "\n"
    );
    parse_trace("gpu.jsonl", text).unwrap()
}

/// The largest number of attempts running at one moment (half-open intervals, whole µs).
fn peak_concurrency(trace: &Trace) -> usize {
    let mut edges: Vec<(i64, i32)> = Vec::new();
    for a in &trace.attempts {
        let Some(start) = a.start_ms else { continue };
        let extent = a
            .e2e_ms
            .or_else(|| {
                [a.ttft_ms, a.first_byte_ms, a.events.last().map(|e| e.at_ms)]
                    .into_iter()
                    .flatten()
                    .reduce(f64::max)
            })
            .unwrap_or(0.0);
        let s = (start * 1000.0).round() as i64;
        let e = s + (extent * 1000.0).round() as i64;
        if e > s {
            edges.push((s, 1));
            edges.push((e, -1));
        }
    }
    edges.sort(); // an end (-1) sorts before a start (+1) at the same moment
    let (mut now, mut peak) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        peak = peak.max(now);
    }
    peak.max(1) as usize
}

struct Checked {
    slots: usize,
    attempt_slices: usize,
    counters: usize,
    names: Vec<String>,
}

/// Structural validation of Chrome trace-event JSON, as Perfetto and chrome://tracing read it.
fn check_trace_events(text: &str) -> Checked {
    let v: Value = serde_json::from_str(text).expect("valid JSON");
    let events = v["traceEvents"].as_array().expect("a traceEvents array");
    assert_eq!(v["displayTimeUnit"], "ms");
    let mut slices: HashMap<(u64, u64), Vec<(i64, i64)>> = HashMap::new();
    let mut named_threads: Vec<(u64, u64)> = Vec::new();
    let mut checked = Checked {
        slots: 0,
        attempt_slices: 0,
        counters: 0,
        names: Vec::new(),
    };
    for e in events {
        let ph = e["ph"].as_str().expect("ph");
        let pid = e["pid"].as_u64().expect("pid");
        let name = e["name"].as_str().expect("name");
        match ph {
            "M" => {
                assert!(
                    [
                        "process_name",
                        "process_sort_index",
                        "thread_name",
                        "thread_sort_index"
                    ]
                    .contains(&name),
                    "{name}"
                );
                assert!(e["args"].is_object());
                if name == "thread_name" {
                    named_threads.push((pid, e["tid"].as_u64().unwrap()));
                    if pid == 1 {
                        checked.slots += 1;
                    }
                }
            }
            "X" => {
                let ts = e["ts"].as_i64().expect("ts in whole µs");
                let dur = e["dur"].as_i64().expect("dur in whole µs");
                assert!(ts >= 0 && dur >= 0, "{e}");
                let tid = e["tid"].as_u64().expect("tid");
                slices.entry((pid, tid)).or_default().push((ts, dur));
                if e["cat"] == "attempt" {
                    checked.attempt_slices += 1;
                    assert!(e["cname"].is_string());
                    assert!(e["args"]["id"].is_string());
                    checked.names.push(name.to_string());
                }
            }
            "i" => {
                assert_eq!(e["s"], "t");
                assert!(e["ts"].as_i64().unwrap() >= 0);
                assert!(e["tid"].is_u64());
            }
            "C" => {
                checked.counters += 1;
                assert!(e["ts"].as_i64().unwrap() >= 0);
                let args = e["args"].as_object().unwrap();
                assert!(
                    !args.is_empty() && args.values().all(Value::is_number),
                    "{e}"
                );
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    // Slices on one thread must nest properly (Perfetto drops or splits overlapping ones).
    for (thread, mut list) in slices {
        assert!(
            named_threads.contains(&thread),
            "thread {thread:?} has no name"
        );
        list.sort_by_key(|(ts, dur)| (*ts, -dur));
        let mut open: Vec<i64> = Vec::new();
        for (ts, dur) in list {
            while open.last().is_some_and(|&end| end <= ts) {
                open.pop();
            }
            if let Some(&end) = open.last() {
                assert!(
                    ts + dur <= end,
                    "slice [{ts}, {}] overlaps its parent ending at {end} on {thread:?}",
                    ts + dur
                );
            }
            open.push(ts + dur);
        }
    }
    checked
}

#[test]
fn perfetto_export_is_valid_trace_event_json() {
    for (name, trace) in traces() {
        let settings = Settings::from_header(&trace.header);
        let checked = check_trace_events(&perfetto(&trace, &settings));
        assert_eq!(
            checked.attempt_slices,
            trace.attempts.len(),
            "{name}: one slice per attempt"
        );
        let timed = trace
            .attempts
            .iter()
            .filter(|a| a.start_ms.is_some())
            .count();
        if timed > 0 {
            assert_eq!(
                checked.slots,
                peak_concurrency(&trace),
                "{name}: one track per concurrent slot"
            );
        }
    }
}

#[test]
fn perfetto_colours_by_verdict_and_draws_gpu_counters() {
    let trace = with_gpu();
    let settings = Settings::from_header(&trace.header);
    let text = perfetto(&trace, &settings);
    let checked = check_trace_events(&text);
    assert_eq!(
        checked.counters, 4,
        "utilisation and memory, two samples each"
    );
    assert!(
        checked.names.contains(&"qualified".to_string()),
        "{:?}",
        checked.names
    );
    assert!(
        checked
            .names
            .contains(&"not qualified: TTFT over 1 s".to_string()),
        "{:?}",
        checked.names
    );
    assert!(
        checked
            .names
            .contains(&"warm-up · failure: http_error 503".to_string()),
        "{:?}",
        checked.names
    );
    assert_eq!(checked.slots, 2, "A and B overlap; C starts after A ended");
    let v: Value = serde_json::from_str(&text).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let stream_events = events.iter().filter(|e| e["cat"] == "stream_event").count();
    assert_eq!(stream_events, 2);
    let ttft = events
        .iter()
        .find(|e| e["cat"] == "ttft" && e["args"]["id"] == "B")
        .unwrap();
    assert_eq!(
        (ttft["ts"].as_i64(), ttft["dur"].as_i64()),
        (Some(100_000), Some(1_400_000)),
        "TTFT 1.4 s from its own start"
    );
    // A trace without clock positions is laid out separately, and says so.
    let untimed = peer("llmperf_yi34b_vllm_c8_individual_responses.json");
    let text = perfetto(&untimed, &Settings::from_header(&untimed.header));
    assert!(text.contains("laid end to end, not their real timing"));
}

#[test]
fn attempts_csv_round_trips_through_our_csv_reader() {
    for (name, trace) in traces() {
        let mut settings = Settings::from_header(&trace.header);
        settings.ttft_threshold_s = 0.5;
        let csv = attempts_csv(&trace, &settings);
        let back = parse_csv(name, &csv).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back.attempts.len(), trace.attempts.len(), "{name}");
        assert_eq!(
            back.header.defaults.as_ref().unwrap().ttft_threshold_s,
            Some(0.5),
            "{name}"
        );
        assert_eq!(
            back.header.window.map(|w| w.length_s),
            settings.window_s,
            "{name}"
        );
        let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => (a - b).abs() <= 0.0005 + 1e-9,
            (None, None) => true,
            _ => false,
        };
        for (a, b) in trace.attempts.iter().zip(&back.attempts) {
            assert_eq!(
                (&a.id, &a.business_id, a.attempt, a.phase),
                (&b.id, &b.business_id, b.attempt, b.phase),
                "{name}"
            );
            assert_eq!(
                (a.outcome, a.quality, &a.detail),
                (b.outcome, b.quality, &b.detail),
                "{name} {}",
                a.id
            );
            assert_eq!(
                (a.input_tokens, a.output_tokens),
                (b.input_tokens, b.output_tokens),
                "{name} {}",
                a.id
            );
            for (x, y, what) in [
                (a.ttft_ms, b.ttft_ms, "ttft"),
                (a.e2e_ms, b.e2e_ms, "e2e"),
                (a.start_ms, b.start_ms, "start"),
                (a.first_byte_ms, b.first_byte_ms, "first byte"),
            ] {
                assert!(close(x, y), "{name} {} {what}: {x:?} vs {y:?}", a.id);
            }
        }
    }
}

#[test]
fn attempts_csv_verdicts_follow_the_settings() {
    let trace = parse_trace("ten-requests.jsonl", TEN_JSONL).unwrap();
    for threshold in [1.0, 0.5] {
        let mut settings = Settings::from_header(&trace.header);
        settings.ttft_threshold_s = threshold;
        let csv = attempts_csv(&trace, &settings);
        let header = csv.lines().find(|l| !l.starts_with('#')).unwrap();
        let columns = csv_columns();
        assert_eq!(header, columns.join(","));
        let column = |name: &str| columns.iter().position(|c| *c == name).unwrap();
        let rows: Vec<Vec<&str>> = csv
            .lines()
            .filter(|l| !l.starts_with('#'))
            .skip(1)
            .map(|l| l.split(',').collect())
            .collect();
        let qualified = rows
            .iter()
            .filter(|r| r[column("qualified")] == "true")
            .count();
        let metrics = Metrics::of(&trace.attempts, &settings);
        assert_eq!(qualified, metrics.qualified, "threshold {threshold}");
        let failures = rows
            .iter()
            .filter(|r| r[column("reason")] == "failure")
            .count();
        assert_eq!(failures, metrics.failures);
        assert!(csv.contains(&format!("# ttft_threshold_s: {threshold}")));
    }
}

#[test]
fn card_markdown_sets_the_tools_figures_beside_ours() {
    let trace = peer("vllm_bench_serving_llama33_70b_tp8_qps04.json");
    let settings = Settings::from_header(&trace.header);
    let metrics = Metrics::of(&trace.attempts, &settings);
    let md = card_markdown("vllm.json", &trace, &settings, &metrics, Lang::En);
    assert!(md.starts_with("# Metric card — vllm.json\n"), "{md}");
    assert!(md.contains("| P50 TTFT (successes) |"), "{md}");
    assert!(md.contains("## How vLLM bench serve defines its figures"));
    assert!(md.contains("## vLLM bench serve's own figures, recomputed"));
    let table: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.contains("own figures, recomputed"))
        .filter(|l| l.starts_with("| "))
        .collect();
    assert_eq!(table.len(), 1 + 20, "a header row and one row per figure");
    assert_eq!(table.iter().filter(|l| l.contains("| ✓ |")).count(), 15);
    let duration = table
        .iter()
        .find(|l| l.starts_with("| run duration |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        duration.contains("the tool times the run itself"),
        "{duration}"
    );
    assert_eq!(
        table.iter().filter(|l| l.contains("| ≈ |")).count(),
        4,
        "TPOT: no per-request latency in the file"
    );
    assert!(!md.contains("| ✗ |"));
    // Where the card compares, it says a converted trace keeps microseconds.
    assert!(
        md.contains("may differ from the tool's by less than 1 µs"),
        "{md}"
    );
    let zh = card_markdown("vllm.json", &trace, &settings, &metrics, Lang::Zh);
    assert!(zh.contains("自己的数字，重新计算") && zh.contains("指标口径卡"));
    assert!(zh.contains("相差不到 1 微秒"));
}

#[test]
fn card_json_carries_every_figure_with_its_formula_parts() {
    let trace = aiperf_with_summary();
    let settings = Settings::from_header(&trace.header);
    let metrics = Metrics::of(&trace.attempts, &settings);
    let v: Value =
        serde_json::from_str(&card_json("a.jsonl", &trace, &settings, &metrics, Lang::En)).unwrap();
    assert_eq!(v["kind"], "tracelab.metric_card");
    let figures = v["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 12);
    let failure_rate = figures.iter().find(|f| f["key"] == "failure_rate").unwrap();
    assert_eq!(
        (
            failure_rate["numerator"].as_f64(),
            failure_rate["denominator"].as_f64()
        ),
        (Some(11.0), Some(100.0))
    );
    assert_eq!(failure_rate["display"], "11 %");
    assert_eq!(failure_rate["name"]["zh"], "失败率");
    assert_eq!(v["imported_from"]["tool"], "NVIDIA AIPerf");
    let peer = v["peer_figures"].as_array().unwrap();
    assert_eq!(peer.len(), 64);
    assert!(
        peer.iter().all(|r| r["matches"] == true),
        "every AIPerf figure reproduced"
    );
    assert_eq!(
        v["attempts"]["failures_by_outcome"][0]["outcome"],
        "cancelled"
    );
}
