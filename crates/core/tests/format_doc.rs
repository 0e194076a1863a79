//! docs/trace-format.md is checked against the parser: every JSON example in it must be a record
//! the core reads, assembled into a trace after each example header; the JSON Lines and CSV
//! examples must parse; and every field the writer produces must be in the document's tables.

use serde_json::{Map, Value};
use tracelab_core::parse::{parse_trace, OPTIONAL_COLUMNS, REQUIRED_COLUMNS};
use tracelab_core::trace::*;
use tracelab_core::{write, Metrics, Settings};

const DOC: &str = include_str!("../../../docs/trace-format.md");

/// The contents of every fenced block whose info string is exactly `lang`.
fn blocks(lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in DOC.lines() {
        let fence = line.trim_start();
        match &mut current {
            None => {
                if let Some(info) = fence.strip_prefix("```") {
                    if info.trim() == lang {
                        current = Some(String::new());
                    }
                }
            }
            Some(body) => {
                if fence.starts_with("```") {
                    out.push(std::mem::take(body));
                    current = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    assert!(current.is_none(), "an unclosed ```{lang} block");
    out
}

fn records() -> Vec<Map<String, Value>> {
    blocks("json")
        .iter()
        .map(|b| match serde_json::from_str::<Value>(b) {
            Ok(Value::Object(m)) => m,
            Ok(other) => panic!("a ```json block is not an object: {other}"),
            Err(e) => panic!("a ```json block is not JSON ({e}):\n{b}"),
        })
        .collect()
}

fn kind(record: &Map<String, Value>) -> &str {
    record
        .get("kind")
        .and_then(Value::as_str)
        .expect("every example has a kind")
}

/// A record on one line, as in a file.
fn line(record: &Map<String, Value>) -> String {
    Value::Object(record.clone()).to_string()
}

#[test]
fn every_json_example_parses_after_each_header() {
    let all = records();
    let (headers, others): (Vec<_>, Vec<_>) = all.iter().partition(|r| kind(r) == "header");
    let count = |k: &str| others.iter().filter(|r| kind(r) == k).count();
    assert!(headers.len() >= 2, "a recorded and an imported header");
    assert!(count("attempt") >= 5, "examples of several attempts");
    assert_eq!(count("gpu"), 1);
    assert_eq!(count("footer"), 1);
    assert_eq!(
        others.len(),
        count("attempt") + count("gpu") + count("footer"),
        "only the four kinds"
    );

    for header in &headers {
        // The header with every other example: one complete, clean trace.
        let mut text = line(header) + "\n";
        for r in &others {
            text.push_str(&line(r));
            text.push('\n');
        }
        let trace = parse_trace("doc.jsonl", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(trace.attempts.len(), count("attempt"));
        assert_eq!(trace.gpu.len(), 1);
        assert!(!trace.is_incomplete());
        assert!(
            trace.warnings.is_empty(),
            "the footer's counts match the examples: {:?}",
            trace.warnings
        );
        let settings = Settings::from_header(&trace.header);
        settings
            .validate()
            .expect("the example header's settings are usable");

        // And each example on its own after the header.
        for r in &others {
            let text = format!("{}\n{}\n", line(header), line(r));
            parse_trace("one.jsonl", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        }
    }
}

#[test]
fn the_examples_mean_what_the_text_says() {
    let all = records();
    let header = all.iter().find(|r| kind(r) == "header").unwrap();
    let mut text = line(header) + "\n";
    for r in all.iter().filter(|r| kind(r) != "header") {
        text.push_str(&line(r));
        text.push('\n');
    }
    let trace = parse_trace("doc.jsonl", &text).unwrap();
    let find = |id: &str| {
        trace
            .attempts
            .iter()
            .find(|a| a.id == id)
            .unwrap_or_else(|| panic!("no attempt {id}"))
    };

    let warm = find("w-1");
    assert_eq!(warm.phase, Phase::Warmup);

    let limited = find("a-0007-1");
    assert_eq!(limited.outcome, Outcome::HttpError { status: 429 });
    let retry = find("a-0007-2");
    assert_eq!((retry.business_id.as_str(), retry.attempt), ("q-0007", 2));
    assert_eq!(limited.business_id, retry.business_id);
    assert_eq!(retry.ttft_ms, Some(309.125), "1811.25 − 1502.125");
    assert_eq!(retry.event_gaps_ms().collect::<Vec<_>>(), vec![30.75, 38.5]);
    assert!(retry.tokens_from_usage);

    let timeout = find("a-0008-1");
    assert_eq!(timeout.outcome, Outcome::TimeoutBeforeFirstToken);
    assert_eq!(timeout.ttft_ms, None, "missing, not 0");
    assert_eq!(timeout.e2e_ms, Some(30_000.0));

    let imported = find("imported-17");
    assert_eq!(imported.start_ms, None);
    assert_eq!(imported.ttft_ms, Some(412.0), "already a duration");
    assert_eq!(imported.business_id, "imported-17", "defaults to the id");

    let s = Settings::from_header(&trace.header);
    let m = Metrics::of(&trace.attempts, &s);
    assert_eq!(
        (m.attempts, m.warmup_excluded, m.successes, m.failures),
        (4, 1, 2, 2)
    );
    assert_eq!(m.qualified, 1, "only the retry passed quality within 1 s");
    assert_eq!(
        m.business_success_rate.value,
        Some(2.0 / 3.0),
        "q-0007 and imported-17 of three"
    );
}

#[test]
fn the_jsonl_example_parses() {
    let examples = blocks("jsonl");
    assert!(!examples.is_empty());
    for text in examples {
        let trace = parse_trace("doc.jsonl", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert!(trace.warnings.is_empty(), "{:?}", trace.warnings);
        assert!(!trace.is_incomplete());
        assert!(!trace.attempts.is_empty());
    }
}

#[test]
fn the_csv_example_parses_and_gives_the_lesson() {
    let examples = blocks("csv");
    assert_eq!(examples.len(), 1);
    let trace = parse_trace("doc.csv", &examples[0]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(trace.attempts.len(), 10);
    assert_eq!(
        trace.attempts[8].ttft_ms, None,
        "an empty ttft_s cell is missing"
    );
    let s = Settings::from_header(&trace.header);
    let m = Metrics::of(&trace.attempts, &s);
    // The figures the paragraph under the example states.
    assert_eq!(
        (m.failure_rate.numerator, m.failure_rate.denominator),
        (Some(2.0), Some(10.0))
    );
    assert_eq!(m.ttft_p95.value, Some(2.0));
    assert_eq!(m.ttft_p95.n, Some(8));
    assert_eq!(m.qualified, 5);
    assert_eq!(m.goodput.value, Some(0.5));
    assert_eq!(m.cost_per_1000_qualified.value, Some(4.0));
    // The same table as the shipped sample.
    let sample = parse_trace(
        "s.csv",
        include_str!("../../../public/samples/ten-requests.csv"),
    )
    .unwrap();
    assert_eq!(sample.attempts, trace.attempts);
    assert_eq!(sample.header, trace.header);
}

/// The document names `field` in a table row (`| `field` |`).
fn documented(field: &str) -> bool {
    DOC.contains(&format!("| `{field}` |"))
}

fn keys_of(value: &Value, prefix: &str, out: &mut Vec<String>) {
    if let Value::Object(m) = value {
        for (k, v) in m {
            out.push(k.clone());
            if prefix.is_empty() {
                keys_of(v, k, out);
            }
        }
    }
}

#[test]
fn every_written_field_is_documented() {
    // A header and an attempt with every field the core can write.
    let header = Header {
        wall_clock_anchor_utc: Some("2026-11-02T08:00:00Z".into()),
        conditions: Conditions {
            model: Some("m".into()),
            api: Some("chat".into()),
            max_tokens: Some(1),
            prompt_set: Some("p".into()),
            prompt_set_sha256: Some("0".into()),
            repetitions: Some(1),
            warmup: Some(1),
            arrival: Some("poisson".into()),
            concurrency: Some(1),
            rate_per_s: Some(1.0),
            burstiness: Some(1.0),
            seed: Some(1),
            timeout_s: Some(1.0),
            first_token_timeout_s: Some(1.0),
            connection: Some(tracelab_core::trace::ConnectionPolicy {
                protocol: "alpn".into(),
                tls_roots: Some("bundled".into()),
                keep_alive: true,
                pool_idle_timeout_s: 90.0,
                resend_unanswered_on_reused: 4,
                timing_includes_connect: true,
            }),
            runtime: Some(tracelab_core::trace::Runtime {
                engine: Some("llama.cpp".into()),
                engine_version: Some("b1".into()),
                model_id: Some("m.gguf".into()),
                model_revision: Some("r".into()),
                max_context: Some(1),
                system_fingerprint: Some("b1-x".into()),
                asked: vec!["/v1/models 200".into()],
                note: Some("n".into()),
            }),
            prefix_reuse: Some(tracelab_core::trace::PrefixReuse {
                by_design: true,
                before_run: "unknown".into(),
            }),
        },
        window: Some(Window {
            start_ms: 0.0,
            length_s: 1.0,
        }),
        window_cost: Some(Money {
            amount: 1.0,
            currency: "CNY".into(),
        }),
        defaults: Some(HeaderDefaults {
            ttft_threshold_s: Some(1.0),
            comparison: Some(tracelab_core::Comparison::Le),
        }),
        simulation: Some(tracelab_core::simulate::SimulationRecord::of(
            &tracelab_core::simulate::Simulation {
                slots: 1,
                service: tracelab_core::simulate::ServiceRecord::Fixed { s: 1.0 },
                first_token_share: Some(0.2),
                load: tracelab_core::simulate::Load::Closed {
                    clients: 1,
                    think_s: 0.0,
                },
                requests: 1,
                seed: 1,
                stall: Some(tracelab_core::simulate::Stall {
                    at_s: 1.0,
                    for_s: 1.0,
                }),
                tokens: None,
                sessions: Some(tracelab_core::simulate::SessionsRecord {
                    sessions: 1,
                    turns: 1,
                    think_s: 0.0,
                    new_tokens: 1,
                    output_tokens: 1,
                    base_s: 0.1,
                    per_uncached_token_s: 0.0,
                    per_output_token_s: 0.0,
                    jitter: tracelab_core::simulate::SessionJitter::None,
                    cache_tokens: 0,
                    quality_assumed_pass: true,
                }),
            },
        )),
        ..Header::default()
    };
    let mut attempt = Attempt::new(
        "a",
        Outcome::HttpError { status: 500 },
        Some(1.0),
        Quality::Fail,
    );
    attempt.intended_start_ms = Some(0.0);
    attempt.start_ms = Some(0.0);
    attempt.first_byte_ms = Some(0.5);
    attempt.events = vec![StreamEvent {
        at_ms: 1.0,
        tokens: 1,
    }];
    attempt.e2e_ms = Some(2.0);
    attempt.detail = Some("d".into());
    attempt.input_tokens = Some(1);
    attempt.output_tokens = Some(1);
    attempt.event_tokens_estimated = true;
    attempt.reasoning = Some(tracelab_core::ReasoningStart {
        first_reasoning_ms: 1.0,
        first_content_ms: Some(1.5),
    });
    attempt.prompt = Some(tracelab_core::PromptSend {
        index: 0,
        repetition: 1,
        repeat: false,
        cached_tokens: Some(0),
    });
    attempt.session = Some(tracelab_core::SessionTurn {
        session_id: "s".into(),
        turn: 1,
        history_tokens: Some(0),
        cached_tokens: None,
    });
    let gpu = GpuSample {
        t_ms: 0.0,
        node: Some(0),
        gpu: 0,
        util_pct: 1.0,
        mem_used_mib: 1.0,
        mem_total_mib: 1.0,
    };
    let footer = Footer {
        finished_cleanly: true,
        attempts: 1,
        gpu_samples: 1,
    };

    let mut fields = Vec::new();
    for text in [
        write::header_line(&header),
        write::attempt_line(&attempt),
        write::gpu_line(&gpu),
        write::footer_line(&footer),
    ] {
        keys_of(&serde_json::from_str(&text).unwrap(), "", &mut fields);
    }
    // The fields of the source object, which the header above leaves out.
    fields.extend(
        [
            "source",
            "tool",
            "version",
            "definitions",
            "layout",
            "figures",
        ]
        .map(String::from),
    );
    for field in &fields {
        assert!(
            documented(field),
            "`{field}` is written by the core but has no row in docs/trace-format.md"
        );
    }
    // And every field in the examples is one the tables describe.
    for record in records() {
        let mut keys = Vec::new();
        keys_of(&Value::Object(record), "", &mut keys);
        for key in keys {
            assert!(
                documented(&key),
                "the example field `{key}` has no row in the tables"
            );
        }
    }
}

#[test]
fn every_outcome_and_csv_column_is_documented() {
    for name in Outcome::NAMES {
        assert!(
            documented(name),
            "outcome `{name}` has no row in the outcomes table"
        );
    }
    for column in REQUIRED_COLUMNS.iter().chain(OPTIONAL_COLUMNS.iter()) {
        assert!(
            DOC.contains(&format!("`{column}`")),
            "CSV column `{column}` is not described"
        );
    }
    for key in [
        "window_s",
        "window_cost",
        "currency",
        "ttft_threshold_s",
        "comparison",
        "model",
    ] {
        assert!(
            DOC.contains(&format!("`{key}`")),
            "CSV `# {key}:` line is not described"
        );
    }
}
