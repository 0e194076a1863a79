//! Files Trace Lab recognises but cannot open as attempts: summary-only layouts (each answered
//! with the file or flag that would work) and files that are not text at all.

use serde_json::{Map, Value};

use super::{Content, Detected, PeerTool};

pub(crate) use tracelab_core::parse::{binary_error, bytes_not_text, not_text};

/// AIPerf's `profile_export_aiperf.csv` and GenAI-Perf's `profile_export_genai_perf.csv`: a
/// `Metric,avg,min,max,…` table of summary statistics.
pub(super) fn aggregate_csv(first_line: &str) -> Option<(Detected, String)> {
    if !tracelab_core::handoff::is_summary_table(first_line) {
        return None;
    }
    let d = Detected::new(
        PeerTool::Aiperf,
        Content::AggregateOnly,
        "aiperf-aggregate-csv",
        "a `Metric,avg,min,max,p…` table of summary statistics (profile_export_aiperf.csv / profile_export_genai_perf.csv)",
    );
    let message = "this is AIPerf's profile_export_aiperf.csv (or GenAI-Perf's profile_export_genai_perf.csv): summary statistics \
         only, no attempts. Upload profile_export.jsonl from the same artifacts folder (one record per request) instead; \
         profile_export_aiperf.json, the same summary as JSON, can then be added beside it as AIPerf's own figures"
        .to_string();
    Some((d, message))
}

/// SGLang `bench_serving` results: `mean_e2e_latency_ms` and `total_output_tokens_retokenized`
/// are its own keys (vLLM writes `mean_e2el_ms` and has no retokenized count).
pub(super) fn is_sglang(map: &Map<String, Value>) -> bool {
    map.contains_key("total_output_tokens_retokenized")
        || map.contains_key("mean_e2e_latency_ms")
        || map.contains_key("median_e2e_latency_ms")
        || map
            .get("backend")
            .and_then(Value::as_str)
            .is_some_and(|b| b.starts_with("sglang"))
            && map.contains_key("completed")
}

pub(super) fn sglang_aggregate(runs: usize) -> (Detected, String) {
    let d = Detected::new(
        PeerTool::Sglang,
        Content::AggregateOnly,
        "sglang-bench-serving-aggregates",
        format!(
            "SGLang bench_serving results ({runs} run{}: `total_output_tokens_retokenized`, `median_ttft_ms`, …) without per-request lists",
            if runs == 1 { "" } else { "s" }
        ),
    );
    let message = format!(
        "this is SGLang bench_serving's --output-file with aggregates only ({runs} run{}): no `ttfts`, `itls` or `output_lens`, so \
         there are no attempts to show. Rerun `python -m sglang.bench_serving` with `--output-details` and upload that file",
        if runs == 1 { "" } else { "s, one line each" }
    );
    (d, message)
}

/// vLLM `bench sweep serve`'s `summary.json`: a JSON array with one `vllm bench serve` result per
/// run, each with its `run_number` and the swept parameters.
pub(super) fn vllm_sweep(first: &Map<String, Value>, runs: usize) -> Option<(Detected, String)> {
    let vllm_like = super::vllm::detect(first).is_some() || first.contains_key("run_number");
    if !vllm_like || is_sglang(first) {
        return None;
    }
    let d = Detected::new(
        PeerTool::Vllm,
        Content::AggregateOnly,
        "vllm-bench-sweep-summary",
        format!("a JSON array of {runs} `vllm bench serve` results with `run_number` (vLLM bench sweep summary.json)"),
    );
    let message = format!(
        "this is vLLM `bench sweep`'s summary.json: {runs} runs side by side, to compare configurations, not one run's attempts. \
         Upload one run's own file from the same folder (`run=0.json`, …); it holds the per-request lists only when \
         `--save-detailed` is part of `--bench-cmd` (the sweep adds `--save-result` itself)"
    );
    Some((d, message))
}

/// Hugging Face `inference-benchmarker`'s results JSON: `results[]` of per-benchmark aggregates
/// (`time_to_first_token_ms_p90`, `inter_token_latency_ms_avg`, `successful_requests`, …) beside
/// `config` and `system` (older versions write the bare array).
pub(super) fn hf_inference_benchmarker(value: &Value) -> Option<(Detected, String)> {
    let results = match value {
        Value::Object(map) => map.get("results")?.as_array()?,
        Value::Array(items) => items,
        _ => return None,
    };
    let first = results.first()?.as_object()?;
    let keys = [
        "time_to_first_token_ms_p90",
        "inter_token_latency_ms_avg",
        "e2e_latency_ms_p90",
        "executor_type",
    ];
    if keys.iter().filter(|k| first.contains_key(**k)).count() < 2 {
        return None;
    }
    let d = Detected::new(
        PeerTool::HfInferenceBenchmarker,
        Content::AggregateOnly,
        "hf-inference-benchmarker-results",
        format!(
            "`results` of {} benchmarks with `time_to_first_token_ms_p90`, `executor_type`, …",
            results.len()
        ),
    );
    let message = format!(
        "this is Hugging Face inference-benchmarker's results JSON: {} benchmarks of summary statistics (averages and P90/P95 \
         rounded to whole milliseconds), no attempts, and the tool writes none per request. To see the attempts, record the \
         same load with `tracelab record` against the same endpoint, or rerun with a tool that keeps each request: vLLM \
         `bench serve --save-result --save-detailed`, AIPerf (profile_export.jsonl), guidellm (benchmarks.json) or SGLang \
         bench_serving `--output-details`",
        results.len()
    );
    Some((d, message))
}
