//! How fast the core is where the lab needs it to be:
//!
//! * `index_build/1M`: building the [`Index`] for 1,000,000 attempts (done once per trace and per
//!   population choice);
//! * `recompute_after_threshold_edit/1M`: every figure after the learner moves the threshold
//!   (the interactive path; the target is ≤ 1 ms);
//! * `parse_jsonl/100k`: reading a ~100,000-attempt JSON Lines trace, reported as throughput.
//!
//! The data is synthetic and deterministic (a small LCG, no `rand`). Sample sizes are kept at
//! criterion's minimum so the whole run takes a couple of minutes on two cores:
//! `cargo bench -p tracelab-core --bench metrics`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use tracelab_core::parse::parse_jsonl;
use tracelab_core::{
    write, Attempt, Footer, Index, Metrics, Outcome, Phase, Population, Quality, Settings,
    StreamEvent, Trace,
};

/// Knuth's MMIX linear congruential generator; the high bits are good enough for test data.
struct Lcg(u64);

impl Lcg {
    fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 32) as u32
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        f64::from(self.next_u32()) / 4_294_967_296.0
    }

    fn below(&mut self, n: u32) -> u32 {
        self.next_u32() % n
    }
}

/// `n` attempts, about 5 % failures, 10 % quality fails, 1 % warm-up, a heavy-ish TTFT tail and
/// `events` stream events per success; one attempt every 10 ms of run time, times in whole µs.
fn synthetic(n: usize, events: usize, seed: u64) -> Vec<Attempt> {
    let mut rng = Lcg(seed);
    let mut out = Vec::with_capacity(n);
    let us = |v: f64| (v * 1000.0).round() / 1000.0;
    for i in 0..n {
        let roll = rng.below(1000);
        let outcome = match roll {
            0..=19 => Outcome::TimeoutBeforeFirstToken,
            20..=29 => Outcome::ConnectError,
            30..=39 => Outcome::HttpError {
                status: if rng.below(2) == 0 { 429 } else { 503 },
            },
            40..=49 => Outcome::StreamBroken,
            _ => Outcome::Success,
        };
        // TTFT: 150 ms + exponential(mean 300 ms), so P95 sits around 1 s.
        let ttft = 150.0 - 300.0 * (1.0 - rng.unit()).ln();
        let has_token = !matches!(
            outcome,
            Outcome::TimeoutBeforeFirstToken | Outcome::ConnectError
        );
        let quality = match rng.below(10) {
            0 => Quality::Fail,
            _ if outcome.is_success() => Quality::Pass,
            _ => Quality::NotEvaluated,
        };
        let mut a = Attempt::new(
            format!("a{i}"),
            outcome,
            has_token.then(|| us(ttft)),
            quality,
        );
        // Every 20th request is retried once under the same business id.
        a.business_id = format!("b{}", i - (i % 20 == 1) as usize);
        a.attempt = 1 + (i % 20 == 1) as u32;
        a.phase = if i < n / 100 {
            Phase::Warmup
        } else {
            Phase::Measure
        };
        a.start_ms = Some(us(i as f64 * 10.0));
        a.intended_start_ms = a.start_ms;
        if has_token {
            a.first_byte_ms = Some(us(ttft * 0.9));
            let mut at = ttft;
            for _ in 0..events {
                a.events.push(StreamEvent {
                    at_ms: us(at),
                    tokens: 1 + rng.below(3),
                });
                at += 10.0 + 40.0 * rng.unit();
            }
            a.e2e_ms = Some(us(at));
        } else {
            a.e2e_ms = Some(us(if outcome == Outcome::ConnectError {
                3.0
            } else {
                30_000.0
            }));
        }
        if outcome.is_success() {
            a.input_tokens = Some(40 + rng.below(200));
            a.output_tokens = Some(64);
            a.tokens_from_usage = true;
        }
        out.push(a);
    }
    out
}

fn lesson_settings() -> Settings {
    Settings {
        window_s: Some(10_000.0),
        window_cost: Some(20.0),
        currency: "CNY".into(),
        ..Settings::default()
    }
}

fn bench_index_build(c: &mut Criterion) {
    let attempts = synthetic(1_000_000, 4, 1);
    let mut group = c.benchmark_group("index_build");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(attempts.len() as u64));
    group.bench_function("1M", |b| {
        b.iter(|| Index::build(black_box(&attempts), Population::default()))
    });
    group.finish();
}

fn bench_recompute(c: &mut Criterion) {
    let attempts = synthetic(1_000_000, 4, 2);
    let settings = lesson_settings();
    let index = Index::build(&attempts, settings.population);
    // Sanity: the figures are real, not all undefined.
    let m = Metrics::compute(&index, &settings);
    assert!(m.qualified > 0 && m.ttft_p95.value.is_some() && m.goodput.value.is_some());
    drop(attempts);

    let mut group = c.benchmark_group("recompute_after_threshold_edit");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    // Each iteration is one edit of the threshold slider (0.10 s … 2.99 s) and the full recompute.
    let mut step = 0u32;
    group.bench_function("1M", |b| {
        b.iter_batched(
            || {
                step = (step + 7) % 290;
                Settings {
                    ttft_threshold_s: 0.1 + f64::from(step) / 100.0,
                    ..settings.clone()
                }
            },
            |s| Metrics::compute(black_box(&index), &s),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn bench_parse(c: &mut Criterion) {
    let trace = {
        let attempts = synthetic(100_000, 6, 3);
        let footer = Footer {
            finished_cleanly: true,
            attempts: attempts.len() as u64,
            gpu_samples: 0,
        };
        Trace {
            attempts,
            footer: Some(footer),
            ..Trace::default()
        }
    };
    let text = write::to_jsonl(&trace);
    assert_eq!(
        parse_jsonl("bench.jsonl", &text)
            .expect("the synthetic trace parses")
            .attempts,
        trace.attempts
    );
    eprintln!(
        "parse_jsonl input: {} attempts, {:.1} MB",
        trace.attempts.len(),
        text.len() as f64 / 1e6
    );

    let mut group = c.benchmark_group("parse_jsonl");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("100k", |b| {
        b.iter(|| parse_jsonl("bench.jsonl", black_box(&text)).expect("parses"))
    });
    group.finish();
}

criterion_group!(benches, bench_index_build, bench_recompute, bench_parse);
criterion_main!(benches);
