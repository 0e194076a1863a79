//! The lab reads our own formats itself and hands every other upload to the importers' bundle
//! (`pages/convert`). These tests hold that split to two promises, on every real peer file in
//! `../shared/fixtures/peers/`, every constructed fixture and every shipped sample:
//! - `is_ours` decides exactly as the importers' own detection does;
//! - an import handed across (`hand_over` → `receive`) is what `load_upload` gives directly.

use std::path::{Path, PathBuf};

use tracelab_core::{export, Settings};
use tracelab_peers::handoff::{self, Received};
use tracelab_peers::import::{attach_summary, detect, is_ours, load_upload, Loaded, PeerTool};

mod common;

fn files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dirs = [
        common::fixture_dir("peers"),
        common::fixture_dir("streams"),
        root.join("tests/data/constructed"),
        root.join("../../public/samples"),
    ];
    let mut out = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{} is missing ({e}): {}", dir.display(), common::MISSING));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_file() && path.extension().is_some_and(|e| e != "md" && e != "py") {
                out.push(path);
            }
        }
    }
    out.sort();
    assert!(
        out.len() > 20,
        "expected the fixtures and samples, found {}",
        out.len()
    );
    out
}

#[test]
fn is_ours_decides_as_detection_does() {
    for path in files() {
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let detected = detect(&text);
        assert_eq!(
            is_ours(&text),
            detected.tool == PeerTool::TraceLab,
            "{}: detected as {:?}",
            path.display(),
            detected
        );
    }
    // Edge cases a learner can produce.
    for (text, ours) in [
        ("", false),
        ("\u{feff}{\"kind\":\"header\"}\n", true),
        ("{\"kind\": broken\n", true),
        ("id,outcome\n1,success\n", true),
        (
            "Metric,avg,min,max,p1,p5,p25,p50,p75,p90,p95,p99,std\n",
            false,
        ),
        ("[1, 2]", false),
        ("\u{0}\u{0}PNG\r\n", false),
    ] {
        assert_eq!(is_ours(text), ours, "{text:?}");
        assert_eq!(
            detect(text).tool == PeerTool::TraceLab,
            ours,
            "{text:?} (detection)"
        );
    }
}

#[test]
fn a_handed_over_import_is_the_direct_import() {
    let mut handed = 0;
    for path in files() {
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        if is_ours(&text) {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        match load_upload(&name, &text) {
            Ok(direct) => {
                let over = handoff::hand_over(&name, &text).unwrap();
                let received =
                    handoff::receive(&name, &over).unwrap_or_else(|e| panic!("{name}: {e}"));
                same(&name, &received, &direct);
                handed += 1;
            }
            Err(direct) => {
                let over = handoff::hand_over(&name, &text).unwrap_err();
                assert_eq!(over.to_string(), direct.to_string(), "{name}");
            }
        }
    }
    assert!(handed >= 8, "only {handed} peer files were imported");
}

/// A summary is set beside the open trace in the importers' bundle; the lab gets the new header,
/// which must be what attaching it directly gives.
#[test]
fn a_summary_attached_across_is_the_direct_attach() {
    let peers = common::fixture_dir("peers");
    for (per_request, summary) in [
        (
            "aiperf_gptoss20b_c100_cancel_profile_export.jsonl",
            "aiperf_gptoss20b_c100_cancel_profile_export_aiperf.json",
        ),
        (
            "llmperf_yi34b_vllm_c8_individual_responses.json",
            "llmperf_yi34b_vllm_c8_summary.json",
        ),
    ] {
        let read = |f: &str| {
            std::fs::read_to_string(peers.join(f))
                .unwrap_or_else(|e| panic!("{}: {e}: {}", peers.join(f).display(), common::MISSING))
        };
        let (trace_text, summary_text) = (read(per_request), read(summary));
        // The trace as the lab holds it: handed over from the importers.
        let Received::Traces(mut traces) = handoff::receive(
            per_request,
            &handoff::hand_over(per_request, &trace_text).unwrap(),
        )
        .unwrap() else {
            panic!("{per_request}: not a trace")
        };
        let trace = traces.remove(0).0.trace;
        assert_eq!(
            handoff::receive(
                summary,
                &handoff::hand_over(summary, &summary_text).unwrap()
            )
            .unwrap(),
            Received::Summary
        );
        let line = handoff::attach_handed(summary, &summary_text, trace.clone()).unwrap();
        let header = handoff::received_header(summary, &line).unwrap();
        let Ok(Loaded::Summary(direct_summary)) = load_upload(summary, &summary_text) else {
            panic!("{summary}: not a summary")
        };
        let mut direct = trace.clone();
        attach_summary(&mut direct, &direct_summary).unwrap();
        assert_eq!(header, direct.header, "{summary}");
        assert!(
            !header.source.as_ref().unwrap().figures.is_empty(),
            "{summary}: no figures attached"
        );
    }
    // A trace file offered as a summary is refused, naming the file.
    let e = handoff::attach_handed("x.json", "[{\"error_code\": null, \"ttft_s\": 0.5, \"end_to_end_latency_s\": 1.0, \"number_output_tokens\": 2}]", Default::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.json"), "{e}");
}

/// The handed-over import is the direct one read back from trace format v1: every time within
/// the microsecond the format keeps, everything else equal, and every comparison with the
/// tool's own figures (✓ / ≈ / ✗) the same.
fn same(name: &str, received: &Received, direct: &Loaded) {
    let (r, d) = match (received, direct) {
        (Received::Traces(r), Loaded::Traces(d)) => (r, &d.traces),
        (Received::Summary, Loaded::Summary(_)) => return,
        _ => panic!("{name}: received {received:?}"),
    };
    assert_eq!(r.len(), d.len(), "{name}: traces");
    let near = |a: Option<f64>, b: Option<f64>, what: &str, i: usize| match (a, b) {
        (Some(a), Some(b)) => assert!(
            (a - b).abs() <= 1e-3 + 1e-12 * b.abs(),
            "{name}: attempt {i} {what}: {a} vs {b}"
        ),
        (a, b) => assert_eq!(a.is_some(), b.is_some(), "{name}: attempt {i} {what}"),
    };
    for ((r, text), d) in r.iter().zip(d) {
        // The text it came with reads back to the same trace (what the lab sends on).
        assert_eq!(
            &text.read().unwrap(),
            &r.trace,
            "{name}: the handed text reads back to the trace"
        );
        assert_eq!(r.label, d.label, "{name}");
        assert_eq!(r.trace.header, d.trace.header, "{name}: header");
        assert_eq!(r.trace.warnings, d.trace.warnings, "{name}: warnings");
        assert_eq!(r.trace.footer, d.trace.footer, "{name}: footer");
        assert_eq!(r.trace.gpu.len(), d.trace.gpu.len(), "{name}: gpu");
        assert_eq!(
            r.trace.attempts.len(),
            d.trace.attempts.len(),
            "{name}: attempts"
        );
        for (i, (ra, da)) in r.trace.attempts.iter().zip(&d.trace.attempts).enumerate() {
            let mut ra2 = ra.clone();
            for (what, a, b) in [
                (
                    "intended_start_ms",
                    ra.intended_start_ms,
                    da.intended_start_ms,
                ),
                ("start_ms", ra.start_ms, da.start_ms),
                ("first_byte_ms", ra.first_byte_ms, da.first_byte_ms),
                ("ttft_ms", ra.ttft_ms, da.ttft_ms),
                ("last_token_ms", ra.last_token_ms, da.last_token_ms),
                ("e2e_ms", ra.e2e_ms, da.e2e_ms),
            ] {
                near(a, b, what, i);
            }
            assert_eq!(
                ra.events.len(),
                da.events.len(),
                "{name}: attempt {i} events"
            );
            for (re, de) in ra.events.iter().zip(&da.events) {
                near(Some(re.at_ms), Some(de.at_ms), "event", i);
                assert_eq!(re.tokens, de.tokens, "{name}: attempt {i} event tokens");
            }
            (
                ra2.intended_start_ms,
                ra2.start_ms,
                ra2.first_byte_ms,
                ra2.ttft_ms,
                ra2.last_token_ms,
                ra2.e2e_ms,
                ra2.events,
            ) = (
                da.intended_start_ms,
                da.start_ms,
                da.first_byte_ms,
                da.ttft_ms,
                da.last_token_ms,
                da.e2e_ms,
                da.events.clone(),
            );
            assert_eq!(&ra2, da, "{name}: attempt {i}");
        }
        let settings = Settings::from_header(&d.trace.header);
        let marks = |t: &tracelab_core::Trace| {
            export::peer_rows(t, &settings)
                .into_iter()
                .map(|row| (row.key, row.matches))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            marks(&r.trace),
            marks(&d.trace),
            "{name}: the comparison with the tool's figures"
        );
    }
}

#[test]
fn an_unreadable_answer_is_an_error_not_an_empty_load() {
    let e = handoff::receive("run.json", "{\"traces\": [{\"label\": \"\"}]}")
        .unwrap_err()
        .to_string();
    assert!(e.contains("run.json") && e.contains("unreadable"), "{e}");
}

/// The lab does not read a peer tool's figures (its second bundle does); every native reader
/// refuses unreadable ones with the field, like any other bad header value.
#[test]
fn unreadable_peer_figures_are_refused_with_their_field() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../public/samples/ten-requests.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut header: serde_json::Value = serde_json::from_str(first).unwrap();
    header["source"] = serde_json::json!({"tool": "vLLM", "figures": [{"tool_key": "ttft_p50"}]});
    let e = tracelab_core::parse::parse_trace("bad.jsonl", &format!("{header}\n{rest}"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bad.jsonl") && e.contains("source.figures[0]"),
        "{e}"
    );
}
