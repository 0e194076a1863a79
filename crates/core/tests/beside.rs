//! Client lag and the GPU beside slow attempts: on hand-made traces, on the ten-request sample
//! (no telemetry: unverified), and on the constructed teaching sample
//! `public/samples/gpu-busy-users-slow.jsonl`, which this file also generates
//! (`TRACELAB_BLESS=1 cargo test -p tracelab-core --test beside` rewrites it).

use serde_json::{json, Map};
use tracelab_core::engine_beside::{engine_beside, EngineSummary};
use tracelab_core::gpu_beside::{gpu_beside, GpuBeside};
use tracelab_core::lag::client_lag;
use tracelab_core::parse::parse_trace;
use tracelab_core::simulate::{Arrival, Rng, Schedule};
use tracelab_core::trace::*;
use tracelab_core::{card, write, Index, Lang, Metrics, Settings};

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../public/samples/gpu-busy-users-slow.jsonl"
);
/// The same run with the engine's own signals scraped beside it (lesson 4, "GPU busy, queue
/// long, users slow").
const QUEUE_SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../public/samples/gpu-busy-queue-long.jsonl"
);

/// "GPU busy, users slow", constructed for teaching: one GPU, 8 slots, about 2.8 s of work per
/// request (so about 2.9 requests/s at most). For 90 s requests arrive at 0.8/s and are served
/// at once; then at 4/s, the queue grows, TTFT climbs with the start time, and requests that
/// would get no first token within 15 s time out (the client gives up; the server drops them).
/// Utilisation is 25 % + 9 % per busy slot, memory 16 GiB of weights + 7.75 GiB per busy slot.
fn gpu_busy_sample() -> String {
    teaching_sample(false)
}

/// [`gpu_busy_sample`] with the engine scraped every second as vLLM would report it: requests
/// waiting (arrived, not yet in a slot, not yet given up), running (busy slots), KV cache
/// (5 % + 11 % per busy slot), no preemptions, and its own TTFT histogram (the client's TTFT
/// less a constructed 3 ms of network and client).
fn queue_long_sample() -> String {
    teaching_sample(true)
}

fn teaching_sample(with_engine: bool) -> String {
    let mut arrivals: Vec<f64> = Schedule::new(Arrival::Poisson, 0.8, 1.0, 1)
        .take_while(|&t| t < 90_000.0)
        .collect();
    arrivals.extend(
        Schedule::new(Arrival::Poisson, 4.0, 1.0, 2)
            .map(|t| t + 90_000.0)
            .take_while(|&t| t < 180_000.0),
    );
    let mut rng = Rng::new(2026);
    let timeout_ms = 15_000.0;
    let mut slots = [0.0_f64; 8];
    let mut busy: Vec<(f64, f64)> = Vec::new();
    let mut attempts = Vec::new();
    // (arrival, when a slot took it): the engine's queue between the two.
    let mut starts: Vec<(f64, f64)> = Vec::new();
    for (i, &at) in arrivals.iter().enumerate() {
        let prefill = 250.0 + rng.exponential(150.0);
        let tokens = 60 + rng.index(121) as u32;
        let decode = tokens as f64 * 20.0;
        let (slot, free) =
            slots
                .iter()
                .copied()
                .enumerate()
                .fold(
                    (0, f64::INFINITY),
                    |b, (i, f)| if f < b.1 { (i, f) } else { b },
                );
        let begin = at.max(free);
        let id = format!("R{:03}", i + 1);
        let mut a = if begin + prefill > at + timeout_ms {
            // Given up by the client at 15 s; a request already in a slot is aborted then.
            if begin < at + timeout_ms {
                slots[slot] = at + timeout_ms;
                busy.push((begin, at + timeout_ms));
            }
            let mut a = Attempt::new(
                id,
                Outcome::TimeoutBeforeFirstToken,
                None,
                Quality::NotEvaluated,
            );
            a.e2e_ms = Some(timeout_ms);
            a
        } else {
            let end = begin + prefill + decode;
            slots[slot] = end;
            busy.push((begin, end));
            let mut a = Attempt::new(
                id,
                Outcome::Success,
                Some(begin + prefill - at),
                Quality::Pass,
            );
            a.e2e_ms = Some(end - at);
            a.output_tokens = Some(tokens);
            a.tokens_from_usage = true;
            a
        };
        a.intended_start_ms = Some(at);
        a.start_ms = Some(at);
        attempts.push(a);
        starts.push((at, begin));
    }
    let last = attempts
        .iter()
        .map(|a| a.start_ms.unwrap() + a.e2e_ms.unwrap())
        .fold(0.0, f64::max);
    let gpu: Vec<GpuSample> = (0..=(last / 1000.0) as u32)
        .map(|s| {
            let t = s as f64 * 1000.0;
            let n = busy.iter().filter(|(b, e)| *b <= t && t < *e).count() as f64;
            let util = if n == 0.0 {
                rng.uniform() * 2.0
            } else {
                25.0 + 9.0 * n + (rng.uniform() - 0.5) * 3.0
            };
            let mem = 16_384.0 + 7_936.0 * n + rng.uniform() * 64.0;
            let r = |v: f64| (v * 10.0).round() / 10.0;
            GpuSample {
                t_ms: t,
                node: None,
                gpu: 0,
                util_pct: r(util.min(100.0)),
                mem_used_mib: r(mem),
                mem_total_mib: 81_559.0,
            }
        })
        .collect();
    let engine: Vec<engine::EngineSample> = if !with_engine {
        Vec::new()
    } else {
        let bounds = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0];
        (0..=(last / 1000.0) as u32)
            .map(|s| {
                let t = s as f64 * 1000.0;
                let running = busy.iter().filter(|(b, e)| *b <= t && t < *e).count() as f64;
                let waiting = starts
                    .iter()
                    .filter(|(at, begin)| *at <= t && t < begin.min(at + timeout_ms))
                    .count() as f64;
                // The engine's first tokens so far, 3 ms before the client saw each.
                let served: Vec<f64> = attempts
                    .iter()
                    .filter_map(|a| {
                        Some((a.start_ms? + a.ttft_ms? - 3.0, (a.ttft_ms? - 3.0) / 1000.0))
                    })
                    .filter(|(at, _)| *at <= t)
                    .map(|(_, ttft_s)| ttft_s)
                    .collect();
                let ttft = engine::EngineHistogram {
                    count: served.len() as f64,
                    sum_s: (served.iter().sum::<f64>() * 1e6).round() / 1e6,
                    buckets: bounds
                        .iter()
                        .map(|b| [*b, served.iter().filter(|v| **v <= *b).count() as f64])
                        .collect(),
                };
                engine::EngineSample {
                    t_ms: t,
                    source: 0,
                    engine: "vllm".into(),
                    waiting: Some(waiting),
                    running: Some(running),
                    kv_cache: Some(((0.05 + 0.11 * running) * 1000.0).round() / 1000.0),
                    preemptions_per_s: Some(0.0),
                    queue_time: None,
                    ttft: Some(ttft),
                }
            })
            .collect()
    };
    let header = Header {
        tool: Tool {
            name: "constructed for teaching".into(),
            version: "1".into(),
        },
        engine_metrics: with_engine.then(|| engine::EngineScrape {
            sources: 1,
            interval_ms: 1000.0,
            engines: vec![Some("vllm".into())],
            signals: [
                "waiting",
                "running",
                "kv_cache",
                "preemptions_per_s",
                "ttft",
            ]
            .map(String::from)
            .to_vec(),
        }),
        conditions: Conditions {
            model: Some("teaching-sample (constructed, not measured)".into()),
            prompt_set: Some(
                if with_engine {
                    "gpu-busy-queue-long"
                } else {
                    "gpu-busy-users-slow"
                }
                .into(),
            ),
            arrival: Some("poisson".into()),
            seed: Some(1),
            timeout_s: Some(60.0),
            first_token_timeout_s: Some(15.0),
            ..Conditions::default()
        },
        capabilities: Capabilities {
            workload_executed: true,
            inference_benchmark: true,
            gpu_telemetry: "constructed".into(),
        },
        window: Some(Window {
            start_ms: 0.0,
            length_s: 180.0,
        }),
        defaults: Some(HeaderDefaults {
            ttft_threshold_s: Some(2.0),
            comparison: Some(tracelab_core::Comparison::Le),
        }),
        ..Header::default()
    };
    let mut note = Map::new();
    note.insert(
        "note".into(),
        json!(if with_engine {
            "Constructed for teaching (lesson 4, “GPU busy, queue long, users slow”), not measured: the run of gpu-busy-users-slow.jsonl with the engine's own signals as vLLM would report them every second (waiting, running, KV cache, its TTFT histogram, 3 ms below the client's). Generated by crates/core/tests/beside.rs."
        } else {
            "Constructed for teaching (lesson 4, “GPU busy, users slow”), not measured: 90 s at 0.8 requests/s, then 90 s at 4/s against a server that finishes about 2.9/s. Generated by crates/core/tests/beside.rs."
        }),
    );
    let mut out = write::header_line_with(&header, &note) + "\n";
    for a in &attempts {
        out += &(write::attempt_line(a) + "\n");
    }
    for g in &gpu {
        out += &(write::gpu_line(g) + "\n");
    }
    for e in &engine {
        out += &(write::engine_line(e) + "\n");
    }
    out += &(write::footer_line(&Footer {
        finished_cleanly: true,
        attempts: attempts.len() as u64,
        gpu_samples: gpu.len() as u64,
    }) + "\n");
    out
}

#[test]
fn the_teaching_sample_is_what_its_generator_writes() {
    for (path, generated) in [
        (SAMPLE, gpu_busy_sample()),
        (QUEUE_SAMPLE, queue_long_sample()),
    ] {
        if std::env::var_os("TRACELAB_BLESS").is_some() {
            std::fs::write(path, &generated).unwrap();
        }
        let on_disk = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{path}: {e} (TRACELAB_BLESS=1 writes it)"));
        assert!(
            on_disk == generated,
            "{path} differs from its generator; rerun with TRACELAB_BLESS=1 and review the diff"
        );
    }
}

#[test]
fn on_the_queue_sample_slow_attempts_waited_behind_a_long_queue() {
    let (trace, settings) = load(&std::fs::read_to_string(QUEUE_SAMPLE).unwrap());
    let EngineSummary::Measured {
        engine,
        slow,
        fast,
        server_ttft,
        separation,
    } = engine_beside(&trace, &settings)
    else {
        panic!("measured")
    };
    assert_eq!(engine, "vllm");
    let (sw, fw) = (slow.waiting.unwrap(), fast.waiting.unwrap());
    println!(
        "slow {} waited behind {sw} at {:?}; fast {} behind {fw} at {:?}",
        slow.attempts, slow.kv_cache, fast.attempts, fast.kv_cache
    );
    assert!(sw > 10.0 && fw < 2.0, "slow behind {sw}, fast behind {fw}");
    assert!(slow.kv_cache.unwrap() > 0.9 && fast.kv_cache.unwrap() < slow.kv_cache.unwrap());
    // The queue tells them apart: the line explains the slow attempts.
    let separation = separation.expect("signals in both groups");
    assert!(separation.separates(), "{separation:?}");
    let server = server_ttft.expect("the engine counts its own TTFT");
    let successes = trace
        .attempts
        .iter()
        .filter(|a| a.ttft_ms.is_some())
        .count() as f64;
    assert_eq!(
        server.count, successes,
        "every first token the engine served in the window"
    );
    let m = Metrics::compute(
        &Index::build(&trace.attempts, settings.population),
        &settings,
    );
    let text = card::render_text("s", &trace, &settings, &m, Lang::En);
    assert!(
        text.contains("Engine beside slow attempts (vllm;"),
        "{text}"
    );
    assert!(
        text.contains("The engine's own TTFT (vllm:time_to_first_token_seconds"),
        "{text}"
    );
    let zh = card::render_text("s", &trace, &settings, &m, Lang::Zh);
    assert!(zh.contains("慢请求旁的推理引擎（vllm；"), "{zh}");
}

#[test]
fn the_engine_beside_slow_attempts_on_a_trace_whose_answer_is_known() {
    // Threshold 1 s. A (0–1 s) and C (3–4 s) are fast; B (1–3 s) and D (4–7 s) are slow. The
    // scrapes inside B read 14 queued at 97 %, inside D 12, 16, 14 at 95, 99, 97 % (mean 14,
    // 97 %); inside A and C 0 at 40 %. Slow: median of (14, 14) = 14 at 97 %; fast: 0 at 40 %.
    let mut trace = Trace::default();
    for (id, start, ttft, e2e) in [
        ("A", 0.0, 200.0, 1000.0),
        ("B", 1000.0, 1500.0, 2000.0),
        ("C", 3000.0, 300.0, 1000.0),
        ("D", 4000.0, 2500.0, 3000.0),
    ] {
        let mut a = Attempt::new(id, Outcome::Success, Some(ttft), Quality::Pass);
        a.start_ms = Some(start);
        a.e2e_ms = Some(e2e);
        trace.attempts.push(a);
    }
    for (t, w, k) in [
        (500.0, 0.0, 0.4),
        (1500.0, 14.0, 0.97),
        (2500.0, 14.0, 0.97),
        (3500.0, 0.0, 0.4),
        (4500.0, 12.0, 0.95),
        (5500.0, 16.0, 0.99),
        (6500.0, 14.0, 0.97),
    ] {
        trace.engine.push(engine::EngineSample {
            t_ms: t,
            source: 0,
            engine: "vllm".into(),
            waiting: Some(w),
            running: None,
            kv_cache: Some(k),
            preemptions_per_s: None,
            queue_time: None,
            ttft: None,
        });
    }
    trace.header.engine_metrics = Some(engine::EngineScrape::default());
    let settings = Settings::default();
    let summary = engine_beside(&trace, &settings);
    let lines = summary.card_lines(&settings, None, Lang::En);
    assert_eq!(
        lines,
        vec!["Engine beside slow attempts (vllm; TTFT over 1 s, a timeout, or the slowest 5 % E2E; median of each attempt's mean): \
              2 slow waited behind 14 queued, at 97 % KV cache (2 of 2 with a scrape inside); 2 fast behind 0 queued, at 40 % KV cache (2 of 2 with a scrape inside); \
              the queue separates slow from fast: higher for the slow attempt in 100 % of 4 slow–fast pairs"
            .to_string()]
    );
    assert_eq!(summary.separates(), Some(true));
    // Without a scrape the answer is "unverified", never a guess.
    let mut none = trace.clone();
    none.engine.clear();
    assert_eq!(engine_beside(&none, &settings), EngineSummary::Unverified);
    assert!(EngineSummary::Unverified.card_lines(&settings, None, Lang::Zh)[0].contains("未验证"));
}

fn load(text: &str) -> (Trace, Settings) {
    let trace = parse_trace("t.jsonl", text).unwrap();
    let settings = Settings::from_header(&trace.header);
    (trace, settings)
}

#[test]
fn on_the_teaching_sample_slow_attempts_ran_on_a_busy_gpu() {
    let (trace, settings) = load(&std::fs::read_to_string(SAMPLE).unwrap());
    let GpuBeside::Measured {
        slow,
        fast,
        attempts,
    } = gpu_beside(&trace, &settings)
    else {
        panic!("measured")
    };
    let (su, fu) = (slow.util_pct.unwrap(), fast.util_pct.unwrap());
    println!(
        "slow {} ({} sampled) at {su:.1} % and {:.1} GiB; fast {} ({} sampled) at {fu:.1} % and {:.1} GiB",
        slow.attempts,
        slow.with_samples,
        slow.mem_used_mib.unwrap() / 1024.0,
        fast.attempts,
        fast.with_samples,
        fast.mem_used_mib.unwrap() / 1024.0
    );
    assert!(su > 90.0 && fu < su - 20.0, "slow {su} %, fast {fu} %");
    // Every timeout is slow, and the rows that refute "busy, so fast" exist: slow at ≥ 95 %.
    let timeouts = trace
        .attempts
        .iter()
        .filter(|a| a.outcome == Outcome::TimeoutBeforeFirstToken)
        .count();
    assert!(timeouts >= 20, "{timeouts} timeouts");
    assert!(attempts.iter().filter(|a| a.slow).count() >= timeouts);
    let refuting = attempts
        .iter()
        .filter(|a| a.slow && a.util_pct.is_some_and(|u| u >= 95.0))
        .count();
    assert!(refuting > 100, "{refuting} refuting rows");
    let line = card::render_text(
        "s",
        &trace,
        &settings,
        &Metrics::compute(
            &Index::build(&trace.attempts, settings.population),
            &settings,
        ),
        Lang::En,
    );
    assert!(line.contains("GPU beside slow attempts (TTFT over 2 s, a timeout, or the slowest 5 % E2E; mean per GPU):"), "{line}");
    assert!(line.contains("GPU telemetry: constructed"), "{line}");
}

#[test]
fn without_telemetry_the_gpu_is_unverified() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../public/samples/ten-requests.jsonl"
    ))
    .unwrap();
    let (trace, settings) = load(&text);
    let beside = gpu_beside(&trace, &settings);
    assert_eq!(beside, GpuBeside::Unverified);
    assert_eq!(
        beside.card_line(&settings, Lang::En),
        "GPU beside slow attempts: unverified — this trace has no GPU telemetry"
    );
    assert!(beside.card_line(&settings, Lang::Zh).contains("未验证"));
    // Telemetry declared but no sample: still unverified, not "0 %".
    let mut declared = trace.clone();
    declared.header.capabilities.gpu_telemetry = "nvml".into();
    assert_eq!(gpu_beside(&declared, &settings), GpuBeside::Unverified);
}

/// An open-loop trace at `rate`/s whose attempt `i` started `lag(i)` ms late.
fn open_loop(rate: f64, n: usize, lag: impl Fn(usize) -> f64) -> Trace {
    let mut trace = Trace::default();
    trace.header.conditions.arrival = Some("constant".into());
    trace.header.conditions.rate_per_s = Some(rate);
    for i in 0..n {
        let mut a = Attempt::new(
            format!("a{i}"),
            Outcome::Success,
            Some(100.0),
            Quality::Pass,
        );
        let at = i as f64 * 1000.0 / rate;
        a.intended_start_ms = Some(at);
        a.start_ms = Some(at + lag(i));
        a.e2e_ms = Some(200.0);
        trace.attempts.push(a);
    }
    trace
}

#[test]
fn client_lag_percentiles_and_the_warning() {
    // 10/s (100 ms gap): lags 0, 1, …, 19 ms. Nearest rank over 20: P50 = 10th = 9, P95 = 19th = 18.
    let lag = client_lag(&open_loop(10.0, 20, |i| i as f64)).unwrap();
    assert_eq!(
        (lag.n, lag.p50_ms, lag.p95_ms, lag.max_ms),
        (20, 9.0, 18.0, 19.0)
    );
    // The limit is 10 % of the gap: 10 ms. 18 ms is over it.
    assert_eq!(lag.limit_ms, 10.0);
    assert!(lag.behind);
    let lines = lag.card_lines(Lang::En);
    assert_eq!(lines[0], "Client lag (actual − intended start, n = 20, nearest-rank): P50 9 ms · P95 18 ms · max 19 ms");
    assert!(lines[1].starts_with("⚠ The client could not keep its schedule: P95 lag 18 ms is over 10 % of the 100 ms mean gap (10 ms)"), "{}", lines[1]);
    assert!(lag.card_lines(Lang::Zh)[1].contains("测的是客户端"));
    assert!(
        lag.card_lines(Lang::Zh)[0]
            .starts_with("客户端滞后（实际开始 − 计划开始，n = 20，最近秩）"),
        "{}",
        lag.card_lines(Lang::Zh)[0]
    );
    // At 1/s the same lags are well inside 100 ms: no warning, one line.
    let calm = client_lag(&open_loop(1.0, 20, |i| i as f64)).unwrap();
    assert!(!calm.behind);
    assert_eq!(calm.card_lines(Lang::En).len(), 1);
    // A closed loop has no schedule to keep; neither has a trace without intended starts.
    let mut closed = open_loop(1.0, 5, |_| 0.0);
    closed.header.conditions.arrival = Some("closed".into());
    assert_eq!(client_lag(&closed), None);
    let mut bare = open_loop(1.0, 5, |_| 0.0);
    bare.attempts
        .iter_mut()
        .for_each(|a| a.intended_start_ms = None);
    assert_eq!(client_lag(&bare), None);
}

#[test]
fn a_lag_warning_under_the_floor_does_not_call_the_floor_ten_percent() {
    // 2,000/s: a 0.5 ms mean gap, whose 10 % (0.05 ms) is below the 1 ms floor.
    let lag = client_lag(&open_loop(2000.0, 20, |i| i as f64)).unwrap();
    assert_eq!(lag.limit_ms, 1.0);
    assert!(lag.behind && lag.limit_is_floor());
    let en = &lag.card_lines(Lang::En)[1];
    assert!(
        en.contains("over the 1 ms floor") && en.contains("0.5 ms mean gap is less"),
        "{en}"
    );
    assert!(
        !en.contains("over 10 % of"),
        "the floor is not 10 % of the gap: {en}"
    );
    let zh = &lag.card_lines(Lang::Zh)[1];
    assert!(zh.contains("下限") && !zh.contains("的 10 %（"), "{zh}");
}

#[test]
fn a_slow_attempt_is_judged_by_the_threshold_the_timeout_and_the_tail() {
    // Samples every 100 ms: 90 % from 0 to 1 s, 20 % after.
    let mut trace = open_loop(1.0, 0, |_| 0.0);
    trace.header.capabilities.gpu_telemetry = "nvml".into();
    trace.gpu = (0..30)
        .map(|i| GpuSample {
            t_ms: i as f64 * 100.0,
            node: None,
            gpu: 0,
            util_pct: if i <= 10 { 90.0 } else { 20.0 },
            mem_used_mib: 1024.0,
            mem_total_mib: 2048.0,
        })
        .collect();
    let mut add = |id: &str, start: f64, ttft: Option<f64>, e2e: f64, outcome: Outcome| {
        let mut a = Attempt::new(id, outcome, ttft, Quality::Pass);
        a.start_ms = Some(start);
        a.e2e_ms = Some(e2e);
        trace.attempts.push(a);
    };
    add("over", 0.0, Some(1500.0), 1000.0, Outcome::Success); // TTFT over 1 s
    add(
        "timeout",
        1500.0,
        None,
        500.0,
        Outcome::TimeoutBeforeFirstToken,
    );
    add("fast", 2000.0, Some(100.0), 500.0, Outcome::Success);
    add("blink", 2050.0, Some(10.0), 20.0, Outcome::Success); // no sample inside
    let mut settings = Settings::from_header(&trace.header);
    settings.ttft_threshold_s = 1.0;
    let GpuBeside::Measured {
        slow,
        fast,
        attempts,
    } = gpu_beside(&trace, &settings)
    else {
        panic!()
    };
    let slow_ids: Vec<&str> = attempts
        .iter()
        .filter(|a| a.slow)
        .map(|a| a.id.as_str())
        .collect();
    // "over" is also the slowest E2E (P95 of 4 = the 4th).
    assert_eq!(slow_ids, ["over", "timeout"]);
    assert_eq!((slow.attempts, slow.with_samples), (2, 2));
    // over: samples 0..=1000 ms → 11 at 90 %; timeout: 1500..=2000 ms → 6 at 20 %. Mean of means 55 %.
    assert_eq!(slow.util_pct, Some(55.0));
    assert_eq!(
        (fast.attempts, fast.with_samples, fast.util_pct),
        (2, 1, Some(20.0))
    );
    assert_eq!(
        attempts.iter().find(|a| a.id == "blink").unwrap().util_pct,
        None
    );
}

#[test]
fn the_lessons_refuting_rows_are_the_cores() {
    // Lesson 4's "which rows refute 'busy, so fast'": an option is right exactly when the core
    // calls that attempt slow and the GPU samples inside it average 95 % or more; its text quotes
    // the attempt's start, TTFT (or timeout) and utilisation as the core computes them.
    let course: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../lessons/course.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let exercise = course["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|l| l["exercises"].as_array().unwrap())
        .find(|e| e["id"] == "gpu-busy-rows")
        .expect("exercise gpu-busy-rows");
    assert_eq!(exercise["multiple"], true);
    let (trace, settings) = load(&std::fs::read_to_string(SAMPLE).unwrap());
    let GpuBeside::Measured { attempts, .. } = gpu_beside(&trace, &settings) else {
        panic!()
    };
    for option in exercise["options"].as_array().unwrap() {
        let id = option["id"].as_str().unwrap();
        let a = attempts
            .iter()
            .find(|a| a.id == id)
            .unwrap_or_else(|| panic!("{id} is not in the sample"));
        let util = a.util_pct.unwrap();
        let refutes = a.slow && util >= 95.0;
        assert_eq!(
            option["correct"].as_bool(),
            Some(refutes),
            "{id}: slow {}, {util:.1} %",
            a.slow
        );
        let text = option["text"]["en"].as_str().unwrap();
        let attempt = &trace.attempts[a.index];
        assert!(
            text.contains(&format!("started at {:.1} s", a.start_ms / 1000.0)),
            "{text}"
        );
        assert!(text.contains(&format!("GPU {} %", util.round())), "{text}");
        match attempt.ttft_ms {
            Some(t) => assert!(
                text.contains(&format!("TTFT {:.3} s", t / 1000.0)),
                "{text}"
            ),
            None => assert!(text.contains("timeout before first token"), "{text}"),
        }
    }
}

/// A run under steady queueing: 24 attempts started 1 s apart, the engine scraped every 250 ms
/// and always reading 8 queued, 4 running, 80 % KV cache; every third attempt is slow (TTFT
/// 1.2 s, over the 1 s threshold). Both groups waited behind the same queue, so the engine's
/// line explains nothing, and the baseline's fourth check must not pass on it.
fn steady_queue_trace() -> Trace {
    let mut trace = Trace::default();
    for i in 0..24u32 {
        let slow = i.is_multiple_of(3);
        let mut a = Attempt::new(
            format!("R{i}"),
            Outcome::Success,
            Some(if slow { 1200.0 } else { 300.0 }),
            Quality::Pass,
        );
        a.start_ms = Some(i as f64 * 1000.0);
        // The fast ones end sooner, so only the slow ones are among the slowest 5 % E2E.
        a.e2e_ms = Some(if slow { 1000.0 } else { 900.0 });
        trace.attempts.push(a);
    }
    for k in 0..96 {
        trace.engine.push(engine::EngineSample {
            t_ms: 125.0 + k as f64 * 250.0,
            source: 0,
            engine: "vllm".into(),
            waiting: Some(8.0),
            running: Some(4.0),
            kv_cache: Some(0.8),
            preemptions_per_s: None,
            queue_time: None,
            ttft: None,
        });
    }
    trace.header.engine_metrics = Some(engine::EngineScrape::default());
    trace
}

fn signals_check(trace: &Trace, engine: &EngineSummary) -> tracelab_core::baseline::BaselineCheck {
    use tracelab_core::baseline::{baseline_checks, OtherRuns, RunEvidence};
    let settings = Settings::default();
    let index = Index::build(&trace.attempts, settings.population);
    let metrics = Metrics::compute(&index, &settings);
    let intervals = tracelab_core::compare::Intervals::compute(&index, &settings, &metrics);
    let run = RunEvidence {
        header: &trace.header,
        warmup_attempts: 0,
        settings: &settings,
        metrics: &metrics,
        intervals: &intervals,
        gpu: &tracelab_core::gpu_beside::GpuSummary::Unverified,
        engine,
    };
    let checks = baseline_checks(&run, &OtherRuns::default()).checks;
    checks.into_iter().find(|c| c.key == "signals").unwrap()
}

#[test]
fn engine_signals_that_do_not_separate_slow_from_fast_do_not_pass_the_fourth_check() {
    use tracelab_core::baseline::CheckStatus;
    let trace = steady_queue_trace();
    let settings = Settings::default();
    let summary = engine_beside(&trace, &settings);
    let EngineSummary::Measured {
        slow, separation, ..
    } = &summary
    else {
        panic!("measured")
    };
    assert_eq!((slow.attempts, slow.waiting), (8, Some(8.0)));
    // Every (slow, fast) pair ties: a share of one half, no separation.
    let separation = separation.unwrap();
    assert_eq!((separation.share, separation.pairs), (0.5, 128));
    assert_eq!(summary.separates(), Some(false));
    let en = &summary.card_lines(&settings, None, Lang::En)[0];
    assert!(
        en.ends_with("; signals recorded, but they do not separate slow from fast (the best, the queue, is higher for the slow attempt in 50 % of 128 slow–fast pairs; separating takes 75 %)"),
        "{en}"
    );
    let zh = &summary.card_lines(&settings, None, Lang::Zh)[0];
    assert!(zh.contains("信号已记录，但区分不了慢与快"), "{zh}");
    let check = signals_check(&trace, &summary);
    assert_eq!(check.status, CheckStatus::Fail, "{check:?}");
    assert!(check.evidence.en.contains("do not separate slow from fast"));
    assert!(check.evidence.zh.contains("区分不了慢与快"));

    // The same run where the slow attempts waited behind a longer queue: the check passes.
    let mut queued = trace.clone();
    for s in &mut queued.engine {
        let attempt = (s.t_ms / 1000.0) as usize;
        if attempt.is_multiple_of(3) {
            s.waiting = Some(14.0);
        }
    }
    let summary = engine_beside(&queued, &settings);
    assert_eq!(summary.separates(), Some(true));
    assert!(summary.card_lines(&settings, None, Lang::En)[0]
        .ends_with("; the queue separates slow from fast: higher for the slow attempt in 100 % of 128 slow–fast pairs"));
    assert_eq!(signals_check(&queued, &summary).status, CheckStatus::Pass);
}
