//! Inputs that once panicked, overflowed or turned a figure infinite: each is refused at the
//! parser with the field named, or read without a panic. Found by review and by fuzzing
//! (`cargo xtask fuzz`).

use tracelab_core::parse::parse_trace;
use tracelab_core::{Index, Lang, MetricCard, Metrics, ParseError, Settings, Trace};

const HEADER: &str = r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"test","version":"1"}}"#;

fn header_with(extra: &str) -> String {
    format!(r#"{{"kind":"header","schema":"tracelab.trace","version":1,"tool":{{"name":"t","version":"1"}},{extra}}}"#)
}

#[track_caller]
fn refused(name: &str, text: &str, field: &str) -> ParseError {
    match parse_trace(name, text) {
        Ok(t) => panic!("{name} should be refused, read {} attempts", t.attempts.len()),
        Err(e) => {
            assert_eq!(e.field.as_deref(), Some(field), "field of: {e}");
            e
        }
    }
}

fn metrics(trace: &Trace, settings: &Settings) -> Metrics {
    let index = Index::build(&trace.attempts, settings.population);
    Metrics::compute(&index, settings)
}

#[test]
fn prompt_set_hash_must_be_hex() {
    for bad in ["ééééééééééééé", "sha:9f2c", "", "9f 2c"] {
        let text = format!("{}\n", header_with(&format!(r#""conditions":{{"prompt_set":"p","prompt_set_sha256":"{bad}"}}"#)));
        let e = refused("h.jsonl", &text, "conditions.prompt_set_sha256");
        assert_eq!(e.line, Some(1), "{e}");
        assert!(e.message.contains("hexadecimal"), "{e}");
    }
    let good = format!("{}\n", header_with(r#""conditions":{"prompt_set":"p","prompt_set_sha256":"9F2c4e0b1d7a3c5e"}"#));
    parse_trace("h.jsonl", &good).unwrap();
}

#[test]
fn card_shortens_a_multibyte_hash_without_panicking() {
    // A trace built in code (not through the parser) may still hold any string.
    let mut trace = parse_trace("t.jsonl", &format!("{HEADER}\n")).unwrap();
    trace.header.conditions.prompt_set = Some("p".into());
    trace.header.conditions.prompt_set_sha256 = Some("é".repeat(20));
    let settings = Settings::from_header(&trace.header);
    let m = metrics(&trace, &settings);
    let card = MetricCard::prefill("t.jsonl", &trace, &settings, &m, Lang::En);
    assert!(card.conditions.contains(&"é".repeat(12)), "{}", card.conditions);
    assert!(!card.conditions.contains(&"é".repeat(13)), "{}", card.conditions);
}

fn shared(path: &str) -> String {
    let full = format!("{}/../../../shared/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("the real fixture {full} is missing ({e})"))
}

#[test]
fn an_upload_is_read_once_as_traces_or_a_summary() {
    use tracelab_core::import::{self, load_upload, Loaded, PeerTool};
    for (file, tool) in [
        ("peers/aiperf_gptoss20b_c100_cancel_profile_export_aiperf.json", PeerTool::Aiperf),
        ("peers/llmperf_yi34b_vllm_c8_summary.json", PeerTool::Llmperf),
    ] {
        let text = shared(file);
        match load_upload(file, &text).unwrap() {
            Loaded::Summary(s) => {
                assert_eq!(s.detected.tool, tool);
                assert_eq!(*s, import::peer_figures_from_aggregate(file, &text).unwrap());
            }
            Loaded::Traces(_) => panic!("{file} is a summary"),
        }
    }
    for file in [
        "peers/llmperf_yi34b_vllm_c8_individual_responses.json",
        "peers/guidellm050_qwen3_4b_concurrent_benchmarks.json",
        "peers/vllm_bench_serving_llama33_70b_tp8_qps04.json",
        "peers/aiperf_gptoss20b_c100_cancel_profile_export.jsonl",
    ] {
        let text = shared(file);
        match load_upload(file, &text).unwrap() {
            Loaded::Traces(imported) => assert_eq!(imported, import::load_any(file, &text).unwrap()),
            Loaded::Summary(_) => panic!("{file} is per-request"),
        }
    }
    // An aggregate no summary reader knows is refused as load_any refuses it.
    let file = "peers/vllm_bench_serve_v0251_all_requests_failed.json";
    let text = shared(file);
    assert_eq!(load_upload(file, &text).unwrap_err(), import::load_any(file, &text).unwrap_err());
}

#[test]
fn detection_hands_importers_the_shape_they_read() {
    use tracelab_core::import::load_any;
    // Shapes near a detector's edge: each is read or refused with a message, never a panic.
    for text in [
        r#"{"benchmarks": [], "metadata": {"guidellm_version": "0.5"}}"#,
        r#"{"benchmarks": [1, 2], "metadata": {"guidellm_version": "0.5"}}"#,
        r#"{"experiments": [{"requests": [{"timestamp": 1, "response_timestamps": []}]}, 3]}"#,
        r#"[{"ttft_s": 0.5, "end_to_end_latency_s": 2.0}, 7]"#,
        r#"{"ttfts": 1, "itls": [], "output_lens": [], "errors": []}"#,
        r#"{"results_ttft_s_mean": 1}"#,
    ] {
        let _ = load_any("edge.json", text);
        let _ = tracelab_core::import::load_upload("edge.json", text);
    }
}

#[test]
fn aiperf_jsonl_lines_are_capped_like_the_trace_parser() {
    let text = shared("peers/aiperf_gptoss20b_c100_cancel_profile_export.jsonl");
    let first = text.lines().next().unwrap();
    // A valid record padded past the cap (JSON allows the spaces) on line 2.
    let padded = format!("{}{}}}", &first[..first.len() - 1], " ".repeat(tracelab_core::parse::MAX_LINE_BYTES));
    let big = format!("{first}\n{padded}\n");
    let e = tracelab_core::import::load_any("big.jsonl", &big).unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("8 MiB"), "{e}");
}
