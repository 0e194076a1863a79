//! Inputs that once panicked, overflowed or turned a figure infinite: each is refused at the
//! parser with the field named, or read without a panic. Found by review and by fuzzing
//! (`cargo xtask fuzz`).

use tracelab_core::parse::parse_trace;
use tracelab_core::{Metrics, ParseError, Settings, Trace};

const HEADER: &str = r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"test","version":"1"}}"#;

fn header_with(extra: &str) -> String {
    format!(
        r#"{{"kind":"header","schema":"tracelab.trace","version":1,"tool":{{"name":"t","version":"1"}},{extra}}}"#
    )
}

#[track_caller]
fn refused(name: &str, text: &str, field: &str) -> ParseError {
    match parse_trace(name, text) {
        Ok(t) => panic!(
            "{name} should be refused, read {} attempts",
            t.attempts.len()
        ),
        Err(e) => {
            assert_eq!(e.field.as_deref(), Some(field), "field of: {e}");
            e
        }
    }
}

fn metrics(trace: &Trace, settings: &Settings) -> Metrics {
    Metrics::of(&trace.attempts, settings)
}

#[test]
fn prompt_set_hash_must_be_hex() {
    for bad in ["ééééééééééééé", "sha:9f2c", "", "9f 2c"] {
        let text = format!(
            "{}\n",
            header_with(&format!(
                r#""conditions":{{"prompt_set":"p","prompt_set_sha256":"{bad}"}}"#
            ))
        );
        let e = refused("h.jsonl", &text, "conditions.prompt_set_sha256");
        assert_eq!(e.line, Some(1), "{e}");
        assert!(e.message.contains("hexadecimal"), "{e}");
    }
    let good = format!(
        "{}\n",
        header_with(r#""conditions":{"prompt_set":"p","prompt_set_sha256":"9F2c4e0b1d7a3c5e"}"#)
    );
    parse_trace("h.jsonl", &good).unwrap();
}

mod common;
use common::shared;

#[test]
fn an_upload_is_read_once_as_traces_or_a_summary() {
    use tracelab_peers::import::{self, load_upload, Loaded, PeerTool};
    for (file, tool) in [
        (
            "peers/aiperf_gptoss20b_c100_cancel_profile_export_aiperf.json",
            PeerTool::Aiperf,
        ),
        (
            "peers/llmperf_yi34b_vllm_c8_summary.json",
            PeerTool::Llmperf,
        ),
    ] {
        let text = shared(file);
        match load_upload(file, &text).unwrap() {
            Loaded::Summary(s) => {
                assert_eq!(s.detected.tool, tool);
                assert_eq!(
                    *s,
                    import::peer_figures_from_aggregate(file, &text).unwrap()
                );
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
            Loaded::Traces(imported) => {
                assert_eq!(imported, import::load_any(file, &text).unwrap())
            }
            Loaded::Summary(_) => panic!("{file} is per-request"),
        }
    }
    // An aggregate no summary reader knows is refused as load_any refuses it.
    let file = "peers/vllm_bench_serve_v0251_all_requests_failed.json";
    let text = shared(file);
    assert_eq!(
        load_upload(file, &text).unwrap_err(),
        import::load_any(file, &text).unwrap_err()
    );
}

#[test]
fn detection_hands_importers_the_shape_they_read() {
    use tracelab_peers::import::load_any;
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
        let _ = tracelab_peers::import::load_upload("edge.json", text);
    }
}

#[test]
fn aiperf_jsonl_lines_are_capped_like_the_trace_parser() {
    let text = shared("peers/aiperf_gptoss20b_c100_cancel_profile_export.jsonl");
    let first = text.lines().next().unwrap();
    // A valid record padded past the cap (JSON allows the spaces) on line 2.
    let padded = format!(
        "{}{}}}",
        &first[..first.len() - 1],
        " ".repeat(tracelab_core::parse::MAX_LINE_BYTES)
    );
    let big = format!("{first}\n{padded}\n");
    let e = tracelab_peers::import::load_any("big.jsonl", &big).unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("8 MiB"), "{e}");
}

#[test]
fn min_samples_for_tail_agrees_with_counting() {
    use tracelab_core::metrics::min_samples_for_tail;
    use tracelab_core::percentile::nearest_rank;
    let counted = |p: f64| {
        (1..=1_000_000)
            .find(|&n| nearest_rank(p, n) < n)
            .unwrap_or(1_000_000)
    };
    for p in [
        0.5, 1.0, 10.0, 33.3, 50.0, 50.5, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99, 99.999,
        99.9999, 100.0,
    ] {
        assert_eq!(min_samples_for_tail(p), counted(p), "p = {p}");
    }
}

#[test]
fn first_byte_after_the_end_is_refused() {
    let a = r#"{"kind":"attempt","id":"a","phase":"measure","quality":"pass","start_ms":0,"first_byte_ms":900,"first_token_ms":200,"end_ms":500,"outcome":"success"}"#;
    let e = refused("fb.jsonl", &format!("{HEADER}\n{a}\n"), "first_byte_ms");
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("after the end"), "{e}");
}

#[test]
fn figures_never_become_infinite_inputs_past_the_limits_are_refused() {
    let attempt = |fields: &str| {
        format!(
            r#"{{"kind":"attempt","id":"a","phase":"measure","quality":"pass","outcome":"success",{fields}}}"#
        )
    };
    // TTFT of 1e306 ms; a start of 1e16 ms (overflowed the Perfetto export's µs); a gap of 1.7e305.
    for (fields, field) in [
        (
            r#""start_ms":0,"first_token_ms":1e306,"end_ms":2e306"#,
            "end_ms",
        ),
        (
            r#""start_ms":1e16,"first_token_ms":1e16,"end_ms":1e16"#,
            "start_ms",
        ),
        (
            r#""start_ms":0,"first_token_ms":1,"events":[[1,1],[1.7e305,1]],"end_ms":1.7e305"#,
            "end_ms",
        ),
    ] {
        let e = refused(
            "big.jsonl",
            &format!("{HEADER}\n{}\n", attempt(fields)),
            field,
        );
        assert!(e.message.contains("10^15 ms"), "{e}");
    }
    // A 5e-324 s window, a 1.8e308 cost, a 1e300 s threshold.
    let e = refused(
        "w.jsonl",
        &format!("{}\n", header_with(r#""window":{"length_s":5e-324}"#)),
        "window.length_s",
    );
    assert!(e.message.contains("1 µs"), "{e}");
    let e = refused(
        "c.jsonl",
        &format!(
            "{}\n",
            header_with(
                r#""window":{"length_s":10},"window_cost":{"amount":1.7e308,"currency":"USD"}"#
            )
        ),
        "window_cost.amount",
    );
    assert!(e.message.contains("10^12"), "{e}");
    refused(
        "t.jsonl",
        &format!(
            "{}\n",
            header_with(r#""defaults":{"ttft_threshold_s":1e300}"#)
        ),
        "defaults.ttft_threshold_s",
    );
    // The classroom CSV: a TTFT of 1e13 s, a 5e-324 s window.
    refused(
        "t.csv",
        "id,outcome,ttft_s,quality\nR1,success,1e13,pass\n",
        "ttft_s",
    );
    refused(
        "w.csv",
        "# window_s: 5e-324\nid,outcome,ttft_s,quality\nR1,success,0.2,pass\n",
        "window_s",
    );
    // At the limits every figure is still a number.
    let text = format!(
        "{}\n{}\n",
        header_with(r#""window":{"length_s":1e-6},"window_cost":{"amount":1e12,"currency":"USD"}"#),
        attempt(r#""start_ms":0,"first_token_ms":1e15,"events":[[0,1],[1e15,1]],"end_ms":1e15"#)
    );
    let trace = parse_trace("edge.jsonl", &text).unwrap();
    let mut settings = Settings::from_header(&trace.header);
    settings.ttft_threshold_s = 1e12;
    settings.validate().unwrap();
    let m = metrics(&trace, &settings);
    for f in tracelab_core::card::figures(&m) {
        assert!(
            f.value.is_none_or(f64::is_finite),
            "{}: {:?}",
            f.key,
            f.value
        );
    }
    for bad in [
        (1e13, None, None),
        (1.0, Some(1e-7), None),
        (1.0, Some(1.0), Some(1.7e308)),
    ] {
        let mut s = settings.clone();
        (s.ttft_threshold_s, s.window_s, s.window_cost) = bad;
        assert!(s.validate().is_err(), "{bad:?}");
    }
}

#[test]
fn perfetto_export_saturates_instead_of_overflowing() {
    // A trace built in code, past the parser's limits: the export must not overflow.
    let mut trace =
        parse_trace("t.csv", "id,outcome,ttft_s,quality\nR1,success,0.2,pass\n").unwrap();
    let a = &mut trace.attempts[0];
    a.start_ms = Some(1e16);
    a.ttft_ms = Some(1e13);
    a.first_byte_ms = Some(1e300);
    a.e2e_ms = Some(1e300);
    let settings = Settings::from_header(&trace.header);
    let text = tracelab_core::export::perfetto(&trace, &settings);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for e in v["traceEvents"].as_array().unwrap() {
        if let Some(dur) = e.get("dur") {
            assert!(dur.as_i64().unwrap() >= 0, "{e}");
        }
    }
}

#[test]
fn importers_never_suffix_an_id_into_a_duplicate() {
    let text = shared("peers/aiperf_gptoss20b_c100_cancel_profile_export.jsonl");
    let lines: Vec<&str> = text.lines().take(4).collect();
    let own = |line: &str| {
        line.split("\"x_request_id\":\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .to_string()
    };
    let file: String = ["x", "x", "x#2", "x"]
        .iter()
        .zip(&lines)
        .map(|(id, line)| format!("{}\n", line.replacen(&own(line), id, 1)))
        .collect();
    let trace = tracelab_peers::import::load_any("dup.jsonl", &file)
        .unwrap()
        .single("dup.jsonl")
        .unwrap();
    let ids: Vec<&str> = trace.attempts.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["x", "x#2", "x#2#2", "x#3"]);
}

#[test]
fn ids_details_and_spaces_survive_a_csv_export_and_import() {
    use tracelab_core::export::attempts_csv;
    let text = format!(
        "{}\n{}\n{}\n{}\n",
        header_with(r#""window":{"length_s":10},"window_cost":{"amount":2,"currency":"USD"}"#),
        r#"{"kind":"attempt","id":" a ","phase":"measure","quality":"pass","start_ms":0,"first_token_ms":200,"end_ms":500,"outcome":"success"}"#,
        r#"{"kind":"attempt","id":"a","phase":"measure","quality":"pass","start_ms":0,"first_token_ms":300,"end_ms":600,"outcome":"success"}"#,
        r#"{"kind":"attempt","id":"line\nbreak, \"quoted\"","phase":"measure","quality":"not_evaluated","start_ms":0,"end_ms":600,"outcome":"stream_broken","detail":"first line\r\nsecond, line"}"#,
    );
    let trace = parse_trace("t.jsonl", &text).unwrap();
    let settings = Settings::from_header(&trace.header);
    let csv = attempts_csv(&trace, &settings);
    let back = parse_trace("t.csv", &csv).unwrap_or_else(|e| panic!("{e}\n{csv}"));
    let ids: Vec<&str> = back.attempts.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, [" a ", "a", "line\nbreak, \"quoted\""]);
    assert_eq!(
        back.attempts[2].detail.as_deref(),
        Some("first line\r\nsecond, line")
    );
    // A line number after a quoted line break still counts the file's lines.
    let bad = format!(
        "{}R9,nonsense,0.1,pass\n",
        tracelab_core::write::to_csv(&back)
    );
    let e = parse_trace("bad.csv", &bad).unwrap_err();
    assert_eq!(e.line, Some(bad.lines().count()), "{e}");
}

#[test]
fn currency_with_a_line_break_is_refused() {
    let text = format!(
        "{}\n",
        header_with(r#""window":{"length_s":10},"window_cost":{"amount":2,"currency":"US\nD"}"#)
    );
    refused("c.jsonl", &text, "window_cost.currency");
}

#[test]
fn csv_header_names_a_column_once() {
    let e = refused(
        "d.csv",
        "id,outcome,ttft_s,quality,TTFT_S\nR1,success,0.2,pass,9\n",
        "ttft_s",
    );
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("twice"), "{e}");
}

mod round_trip {
    use proptest::prelude::*;
    use tracelab_core::export::attempts_csv;
    use tracelab_core::parse::parse_trace;
    use tracelab_core::write::to_jsonl;
    use tracelab_core::{Attempt, Outcome, Quality, Settings, Trace};

    fn arb_attempt() -> impl Strategy<Value = (String, String, Attempt)> {
        (
            "[ a\n\r\",#]{0,3}",
            "[ b\n\",]{0,3}",
            prop_oneof![
                Just(Outcome::Success),
                Just(Outcome::StreamBroken),
                Just(Outcome::ConnectError)
            ],
            prop::option::of(0u64..5_000_000),
            0u64..5_000_000,
            prop::option::of(0u64..7_200_000_000),
            prop::option::of("[ x\n\r,\"连]{0,8}"),
            any::<bool>(),
        )
            .prop_map(|(pre, post, outcome, ttft, tail, start, detail, pass)| {
                let ttft = if outcome == Outcome::ConnectError {
                    None
                } else {
                    ttft
                };
                let quality = if pass { Quality::Pass } else { Quality::Fail };
                let mut a = Attempt::new(
                    String::new(),
                    outcome,
                    ttft.map(|t| t as f64 / 1e3),
                    quality,
                );
                a.start_ms = start.map(|s| s as f64 / 1e3);
                a.e2e_ms = Some((ttft.unwrap_or(0) + tail) as f64 / 1e3);
                a.detail = detail.filter(|d| !d.is_empty());
                (pre, post, a)
            })
    }

    proptest! {
        /// JSON Lines → CSV export → trace: the same ids, details and figures, whatever the ids
        /// and details hold (line breaks, quotes, commas, surrounding spaces).
        #[test]
        fn jsonl_to_csv_to_trace_keeps_every_figure(
            attempts in prop::collection::vec(arb_attempt(), 0..40),
            threshold in 0u32..3000,
        ) {
            let attempts: Vec<Attempt> = attempts
                .into_iter()
                .enumerate()
                .map(|(i, (pre, post, mut a))| {
                    a.id = format!("{pre}{i}{post}");
                    a.business_id = a.id.clone();
                    a
                })
                .collect();
            let mut trace = Trace { attempts, ..Trace::default() };
            trace.header.window = Some(tracelab_core::trace::Window { start_ms: 0.0, length_s: 60.0 });
            trace.header.window_cost = Some(tracelab_core::trace::Money { amount: 1.5, currency: "CNY".into() });
            let jsonl = parse_trace("r.jsonl", &to_jsonl(&trace)).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut settings = Settings::from_header(&jsonl.header);
            settings.ttft_threshold_s = threshold as f64 / 1000.0;
            let csv_text = attempts_csv(&jsonl, &settings);
            let csv = parse_trace("r.csv", &csv_text).map_err(|e| TestCaseError::fail(format!("{e}\n{csv_text}")))?;
            let ids = |t: &Trace| t.attempts.iter().map(|a| (a.id.clone(), a.detail.clone())).collect::<Vec<_>>();
            prop_assert_eq!(ids(&jsonl), ids(&csv));
            let from_csv = Settings { ttft_threshold_s: settings.ttft_threshold_s, ..Settings::from_header(&csv.header) };
            prop_assert_eq!(&from_csv.window_s, &settings.window_s);
            prop_assert_eq!(&from_csv.window_cost, &settings.window_cost);
            let (a, b) = (super::metrics(&jsonl, &settings), super::metrics(&csv, &from_csv));
            prop_assert_eq!(a.card_figures(), b.card_figures());
            prop_assert_eq!(&a.e2e_p50, &b.e2e_p50);
            prop_assert_eq!(&a.goodput, &b.goodput);
        }
    }
}

#[test]
fn a_permalink_cannot_set_values_past_the_limits() {
    let mut s = Settings::default();
    let before = s.clone();
    let refused = s.apply_pairs([
        ("t", "1e300"),
        ("w", "5e-324"),
        ("cost", "1.7e308"),
        ("cur", "US\nD"),
    ]);
    assert_eq!(refused, ["t", "w", "cost", "cur"]);
    assert_eq!(s, before);
    assert!(s
        .apply_pairs([("w", "10"), ("cost", "2"), ("cur", "CNY")])
        .is_empty());
}

/// Found by the `exports` fuzz target (a mutant of the constructed guidellm run): an errored
/// request whose first iteration guidellm stamped after its end imported into a trace that did
/// not read back ("the first byte cannot come after the end"). The first byte is now dropped.
#[test]
fn a_guidellm_first_iteration_after_the_end_is_not_a_first_byte() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/constructed/fuzz_guidellm_first_byte_after_end.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let imported = tracelab_peers::import::load_any("run.json", &text).unwrap();
    for t in &imported.traces {
        for a in &t.trace.attempts {
            if let (Some(b), Some(e)) = (a.first_byte_ms, a.e2e_ms) {
                assert!(b <= e, "{}: first byte {b} after end {e}", a.id);
            }
        }
        let written = tracelab_core::write::to_jsonl(&t.trace);
        parse_trace("again.jsonl", &written)
            .unwrap_or_else(|e| panic!("the imported trace does not read back: {e}"));
    }
}
