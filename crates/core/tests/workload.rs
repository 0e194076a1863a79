//! The real workload files (Azure's 2023 LLM inference trace, Mooncake's FAST'25 traces), read
//! in place from `$TRACELAB_FIXTURES/workloads/` (else `../shared/fixtures/` beside the
//! repository): their counts, spans and token ranges as SOURCES.md states them, their sha256 as
//! `xtask/fixtures.tsv` pins it, and a replay window cut from them.

use tracelab_core::workload::{self, blocks_seen_before, Layout, Replay, MOONCAKE_BLOCK_TOKENS};

fn fixture(name: &str) -> (String, Vec<u8>) {
    let path = format!("workloads/{name}");
    let bytes = tracelab_testkit::read_fixture(&path);
    (
        tracelab_testkit::fixtures()
            .join(path)
            .display()
            .to_string(),
        bytes,
    )
}

/// The sha256 `xtask/fixtures.tsv` pins for `name`.
fn pinned_sha256(name: &str) -> String {
    let manifest = include_str!("../../../xtask/fixtures.tsv");
    manifest
        .lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|cols| cols.len() > 3 && cols[0] == "workloads" && cols[1] == name)
        .map(|cols| cols[3].to_string())
        .unwrap_or_else(|| panic!("{name} is not in xtask/fixtures.tsv"))
}

#[test]
fn azure_files_read_whole_with_their_stated_shape() {
    for (name, rows, span_s, min_in, max_in, min_out, max_out) in [
        (
            "AzureLLMInferenceTrace_conv.csv",
            19_366,
            3_501.72,
            2,
            14_050,
            7,
            1_000,
        ),
        (
            "AzureLLMInferenceTrace_code.csv",
            8_819,
            3_435.95,
            3,
            7_437,
            6,
            1_899,
        ),
    ] {
        let (path, bytes) = fixture(name);
        let w = workload::read(&path, &bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            w.file, name,
            "the header names the file without its directory"
        );
        assert_eq!(w.sha256, pinned_sha256(name));
        assert_eq!(w.layout, Layout::AzureCsv);
        assert_eq!(w.requests.len(), rows);
        assert!(
            (w.span_s() - span_s).abs() < 0.01,
            "{name}: span {} s",
            w.span_s()
        );
        assert_eq!(
            w.requests.iter().map(|r| r.input_tokens).min(),
            Some(min_in)
        );
        assert_eq!(
            w.requests.iter().map(|r| r.input_tokens).max(),
            Some(max_in)
        );
        assert_eq!(
            w.requests.iter().map(|r| r.output_tokens).min(),
            Some(min_out)
        );
        assert_eq!(
            w.requests.iter().map(|r| r.output_tokens).max(),
            Some(max_out)
        );
        // Every 7th digit in these files is 0: nothing finer than a microsecond was rounded.
        assert_eq!(w.sub_us_rounded, 0);
        assert!(w.requests.iter().all(|r| r.blocks.is_empty()));
    }
    // The first gap of the conversation trace, to the microsecond: 18:15:50.9951690 − 18:15:46.6805900.
    let (path, bytes) = fixture("AzureLLMInferenceTrace_conv.csv");
    let w = workload::read(&path, &bytes).unwrap();
    assert_eq!((w.requests[1].at_us, w.requests[1].line), (4_314_579, 3));
}

#[test]
fn inference_perf_sample_is_the_first_twenty_azure_rows() {
    // The same rows with LF line ends: the same requests, whatever the line ends.
    let (path, bytes) = fixture("inference_perf_trace_replay_sample.csv");
    let sample = workload::read(&path, &bytes).unwrap();
    let (path, bytes) = fixture("AzureLLMInferenceTrace_conv.csv");
    let conv = workload::read(&path, &bytes).unwrap();
    assert_eq!(sample.requests.len(), 20);
    assert_eq!(sample.requests[..], conv.requests[..20]);
}

#[test]
fn mooncake_files_read_whole_with_512_token_blocks() {
    for (name, rows, last_ms) in [
        ("mooncake_conversation_trace.jsonl", 12_031, 3_536_999),
        ("mooncake_synthetic_trace.jsonl", 3_993, 1_022_025),
    ] {
        let (path, bytes) = fixture(name);
        let w = workload::read(&path, &bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.sha256, pinned_sha256(name));
        assert_eq!(w.layout, Layout::MooncakeJsonl);
        assert_eq!(w.requests.len(), rows);
        assert_eq!(w.requests.last().unwrap().at_us, last_ms * 1000);
        // The reader checks each row's block count against the block size; here, the premise.
        assert!(w
            .requests
            .iter()
            .all(|r| r.blocks.len() == r.input_tokens.div_ceil(MOONCAKE_BLOCK_TOKENS) as usize));
    }
    // The conversation trace's first three requests share block 0: a real shared prefix.
    let (path, bytes) = fixture("mooncake_conversation_trace.jsonl");
    let w = workload::read(&path, &bytes).unwrap();
    let replayed = w
        .replay(&Replay {
            for_s: Some(0.001),
            ..Replay::default()
        })
        .unwrap();
    let seen = blocks_seen_before(&replayed.requests);
    assert_eq!(&seen[..3], [0, 1, 1]);
}

#[test]
fn a_replay_window_of_the_real_files() {
    let (path, bytes) = fixture("AzureLLMInferenceTrace_conv.csv");
    let w = workload::read(&path, &bytes).unwrap();
    let replay = Replay {
        speedup: 10.0,
        from_s: 60.0,
        for_s: Some(30.0),
        max_idle_s: Some(0.5),
    };
    let r = w.replay(&replay).unwrap();
    // The window's requests are exactly those of the file between 60 s and 90 s.
    let expected: Vec<usize> = w
        .requests
        .iter()
        .enumerate()
        .filter(|(_, q)| (60_000_000..90_000_000).contains(&q.at_us))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        r.requests.iter().map(|p| p.index).collect::<Vec<_>>(),
        expected
    );
    assert_eq!(r.requests[0].at_ms, 0.0);
    // Without a cap, every gap is the file's gap / 10, to the microsecond.
    let plain = w
        .replay(&Replay {
            max_idle_s: None,
            ..replay
        })
        .unwrap();
    for (pair, req) in plain.requests.windows(2).zip(expected.windows(2)) {
        let file_gap_ms = (w.requests[req[1]].at_us - w.requests[req[0]].at_us) as f64 / 1000.0;
        assert!((pair[1].at_ms - pair[0].at_ms - file_gap_ms / 10.0).abs() <= 0.001 + 1e-9);
    }
    // With it, no gap exceeds 0.5 s, and what was cut is accounted for.
    assert!(r
        .requests
        .windows(2)
        .all(|p| p[1].at_ms - p[0].at_ms <= 500.0 + 1e-6));
    let last = |x: &workload::Replayed| x.requests.last().unwrap().at_ms;
    assert!((last(&plain) - last(&r) - r.idle_cut_s * 1000.0).abs() < 0.01);
    let header = w.header_record(&replay, &r);
    assert_eq!(header["file"], "AzureLLMInferenceTrace_conv.csv");
    assert!(
        !header
            .values()
            .any(|v| v.as_str().is_some_and(|s| s.contains('/'))),
        "never a path"
    );
}

/// `tracelab simulate --workload`'s core: a real file's replayed arrivals through the simulator
/// at exactly their times (to the microsecond, through the written file), the same seed the same
/// trace, and a one-slot fixed server queueing them as worked by hand.
#[test]
fn simulated_replay_arrives_at_the_files_times() {
    use tracelab_core::parse::parse_trace;
    use tracelab_core::simulate::{simulate_at, Load, Params, Service};
    for (name, replay) in [
        (
            "AzureLLMInferenceTrace_conv.csv",
            Replay {
                speedup: 10.0,
                from_s: 60.0,
                for_s: Some(120.0),
                max_idle_s: Some(0.5),
            },
        ),
        (
            "mooncake_conversation_trace.jsonl",
            Replay {
                speedup: 5.0,
                from_s: 0.0,
                for_s: Some(60.0),
                max_idle_s: None,
            },
        ),
    ] {
        let (path, bytes) = fixture(name);
        let planned = workload::read(&path, &bytes)
            .unwrap()
            .replay(&replay)
            .unwrap();
        let at: Vec<f64> = planned.requests.iter().map(|p| p.at_ms).collect();
        assert!(
            at.len() >= 50,
            "{name}: a window worth checking ({} requests)",
            at.len()
        );
        let params = |seed| Params {
            slots: 4,
            service: Service::Exponential { mean_s: 0.5 },
            first_token_share: 0.2,
            load: Load::Closed {
                clients: 1,
                think_s: 0.0,
            },
            requests: 1,
            seed,
            stall: None,
        };
        let trace = simulate_at(&params(7), &at).unwrap();
        let text = tracelab_core::write::to_jsonl(&trace);
        let read = parse_trace("sim.jsonl", &text).unwrap();
        assert_eq!(read.attempts.len(), at.len());
        let worst = read
            .attempts
            .iter()
            .zip(&at)
            .map(|(a, t)| (a.intended_start_ms.unwrap() - t).abs())
            .fold(0.0, f64::max);
        eprintln!("{name}: {} simulated arrivals over {:.3} s, worst |intended start − file time| {worst:.6} ms", at.len(), at.last().unwrap() / 1000.0);
        assert!(
            worst <= 0.0005,
            "{name}: arrivals at the file's times to the microsecond, worst {worst} ms"
        );
        assert!(
            read.attempts
                .iter()
                .zip(&at)
                .all(|(a, t)| (a.start_ms.unwrap() - t).abs() <= 0.0005),
            "an open loop sends on time"
        );
        let sim = read.header.simulation.as_ref().unwrap().read().unwrap();
        assert_eq!(
            sim.load,
            Load::Workload {
                requests: at.len() as u32,
                span_s: (at.last().unwrap() - at[0]) / 1000.0
            }
        );
        assert_eq!(read.header.conditions.arrival.as_deref(), Some("workload"));
        assert_eq!(
            text,
            tracelab_core::write::to_jsonl(&simulate_at(&params(7), &at).unwrap()),
            "{name}: same seed, same trace"
        );
        assert_ne!(
            text,
            tracelab_core::write::to_jsonl(&simulate_at(&params(8), &at).unwrap()),
            "{name}: the seed draws the service"
        );
    }
    // One slot, 1 s fixed service, arrivals 0, 0.5, 3 s: the second waits 0.5 s, the third none.
    let one = Params {
        slots: 1,
        service: Service::Fixed { s: 1.0 },
        first_token_share: 0.0,
        load: Load::Closed {
            clients: 1,
            think_s: 0.0,
        },
        requests: 1,
        seed: 0,
        stall: None,
    };
    let t = simulate_at(&one, &[0.0, 500.0, 3000.0]).unwrap();
    let e2e: Vec<f64> = t.attempts.iter().map(|a| a.e2e_ms.unwrap()).collect();
    assert_eq!(e2e, [1000.0, 1500.0, 1000.0]);
    let e = simulate_at(&one, &[0.0, 500.0, 400.0]).unwrap_err();
    assert_eq!(e.field, "workload");
    assert!(e.message.contains("arrival 3 at 400 ms"), "{e}");
    assert_eq!(simulate_at(&one, &[]).unwrap_err().field, "workload");
    assert_eq!(
        tracelab_core::simulate::simulate(&Params {
            load: Load::Workload {
                requests: 3,
                span_s: 3.0
            },
            ..one
        })
        .unwrap_err()
        .field,
        "workload"
    );
}

/// A per-token service (`simulate_listed` with a `TokenCost`): worked by hand on one slot, then
/// on a real file's window with more slots than requests in flight, where every request's time
/// in system is exactly its base + input × prefill + output × decode from the file's lengths
/// (to the microsecond), and its TTFT the base's share + the prefill. Refused on a trace's
/// measured service, and with no cost at all.
#[test]
fn a_per_token_service_follows_the_files_lengths() {
    use tracelab_core::simulate::{simulate_listed, Listed, Load, Params, Service, TokenCost};
    use tracelab_core::Lang;
    let one = Params {
        slots: 1,
        service: Service::Fixed { s: 0.1 },
        first_token_share: 0.5,
        load: Load::Closed {
            clients: 1,
            think_s: 0.0,
        },
        requests: 1,
        seed: 0,
        stall: None,
    };
    let cost = TokenCost {
        per_input_token_s: 0.001,
        per_output_token_s: 0.01,
    };
    // 0.1 + 100 × 0.001 + 20 × 0.01 = 0.4 s; the second arrives at 0.2 s, waits 0.2 s, then
    // 0.1 + 50 × 0.001 + 10 × 0.01 = 0.25 s.
    let listed = [
        Listed {
            at_ms: 0.0,
            input_tokens: 100,
            output_tokens: 20,
        },
        Listed {
            at_ms: 200.0,
            input_tokens: 50,
            output_tokens: 10,
        },
    ];
    let t = simulate_listed(&one, &listed, Some(cost)).unwrap();
    let e2e: Vec<f64> = t.attempts.iter().map(|a| a.e2e_ms.unwrap()).collect();
    let ttft: Vec<f64> = t.attempts.iter().map(|a| a.ttft_ms.unwrap()).collect();
    assert!(
        (e2e[0] - 400.0).abs() < 1e-9 && (e2e[1] - 450.0).abs() < 1e-9,
        "{e2e:?}"
    );
    assert!(
        (ttft[0] - 150.0).abs() < 1e-9 && (ttft[1] - 300.0).abs() < 1e-9,
        "{ttft:?}"
    );
    let sim = t.header.simulation.as_ref().unwrap().read().unwrap();
    assert_eq!(sim.tokens, Some(cost));
    assert!(
        sim.describe(Lang::En)
            .contains("fixed 0.1 s + 0.01 s per output token"),
        "{}",
        sim.describe(Lang::En)
    );
    assert!(sim.describe(Lang::Zh).contains("每个输出 token 0.01 秒"));

    let (path, bytes) = fixture("mooncake_conversation_trace.jsonl");
    let w = workload::read(&path, &bytes).unwrap();
    let planned = w
        .replay(&Replay {
            speedup: 1.0,
            from_s: 0.0,
            for_s: Some(30.0),
            max_idle_s: None,
        })
        .unwrap();
    let listed: Vec<Listed> = planned
        .requests
        .iter()
        .map(|p| Listed {
            at_ms: p.at_ms,
            input_tokens: p.input_tokens,
            output_tokens: p.output_tokens,
        })
        .collect();
    let wide = Params {
        slots: 100_000,
        service: Service::Fixed { s: 0.05 },
        first_token_share: 0.2,
        ..one.clone()
    };
    let decode_only = TokenCost {
        per_input_token_s: 0.0,
        per_output_token_s: 0.02,
    };
    let t = simulate_listed(&wide, &listed, Some(decode_only)).unwrap();
    let worst = t
        .attempts
        .iter()
        .zip(&planned.requests)
        .map(|(a, p)| {
            (a.e2e_ms.unwrap() - (50.0 + 20.0 * p.output_tokens as f64))
                .abs()
                .max((a.ttft_ms.unwrap() - 10.0).abs())
        })
        .fold(0.0, f64::max);
    eprintln!("{path}: {} requests, worst |e2e − (0.05 s + 0.02 s × output tokens)| or |TTFT − 0.01 s| {worst:.6} ms", listed.len());
    assert!(listed.len() >= 10 && worst < 0.001, "{worst}");
    let out: Vec<u32> = planned.requests.iter().map(|p| p.output_tokens).collect();
    assert!(
        out.iter().min() != out.iter().max(),
        "the window's output lengths differ, so the service does"
    );

    let e = simulate_listed(
        &one,
        &listed[..1],
        Some(TokenCost {
            per_input_token_s: 0.0,
            per_output_token_s: 0.0,
        }),
    )
    .unwrap_err();
    assert_eq!(e.field, "service-per-output-token");
    let e = simulate_listed(
        &one,
        &listed[..1],
        Some(TokenCost {
            per_input_token_s: -1.0,
            per_output_token_s: 0.1,
        }),
    )
    .unwrap_err();
    assert_eq!(e.field, "service-per-input-token");
}
