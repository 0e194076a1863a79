//! Writes a large synthetic trace for the `tracelab report` memory benchmark (see
//! docs/trace-format.md, "Reading large traces"): an open-loop run with GPU telemetry, so every
//! part of the card is computed, about 1.1 KB per attempt with 48 stream events per success.
//! Deterministic (a fixed-seed LCG), written line by line, so it never holds the trace.
//!
//! ```text
//! cargo run --release -p tracelab-recorder --example synthetic_trace -- 10000000 /work/bench-10m/trace.jsonl
//! ```

use std::io::{BufWriter, Write};

use tracelab_core::trace::{Capabilities, Conditions};
use tracelab_core::{
    write, Attempt, Footer, GpuSample, Header, Outcome, Phase, Quality, StreamEvent,
};

/// Knuth's MMIX LCG; the high bits are good enough for test data.
struct Lcg(u64);

impl Lcg {
    fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 32) as u32
    }
    fn unit(&mut self) -> f64 {
        f64::from(self.next_u32()) / 4_294_967_296.0
    }
    fn below(&mut self, n: u32) -> u32 {
        self.next_u32() % n
    }
}

const EVENTS: usize = 48;
const GAP_MS: f64 = 10.0;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(n), Some(out)) = (
        args.get(1).and_then(|n| n.parse::<usize>().ok()),
        args.get(2),
    ) else {
        eprintln!("usage: synthetic_trace ATTEMPTS OUT.jsonl");
        std::process::exit(2);
    };
    let us = |v: f64| (v * 1000.0).round() / 1000.0;
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(out)?);
    let header = Header {
        conditions: Conditions {
            model: Some("synthetic".into()),
            arrival: Some("poisson".into()),
            rate_per_s: Some(1000.0 / GAP_MS),
            max_tokens: Some(128),
            ..Conditions::default()
        },
        capabilities: Capabilities {
            gpu_telemetry: "nvml".into(),
            ..Capabilities::default()
        },
        ..Header::default()
    };
    writeln!(w, "{}", write::header_line(&header))?;
    let mut rng = Lcg(10);
    let mut next_gpu_ms = 0.0;
    let mut gpu_samples = 0u64;
    for i in 0..n {
        let intended = i as f64 * GAP_MS;
        // A GPU sample every 100 ms of run time, written in time order between the attempts.
        while next_gpu_ms <= intended {
            let sample = GpuSample {
                t_ms: us(next_gpu_ms),
                node: None,
                gpu: 0,
                util_pct: f64::from(rng.below(101)),
                mem_used_mib: f64::from(40_000 + rng.below(30_000)),
                mem_total_mib: 81_920.0,
            };
            writeln!(w, "{}", write::gpu_line(&sample))?;
            gpu_samples += 1;
            next_gpu_ms += 100.0;
        }
        let outcome = match rng.below(1000) {
            0..=19 => Outcome::TimeoutBeforeFirstToken,
            20..=29 => Outcome::ConnectError,
            30..=39 => Outcome::HttpError {
                status: if rng.below(2) == 0 { 429 } else { 503 },
            },
            40..=49 => Outcome::StreamBroken,
            _ => Outcome::Success,
        };
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
        a.business_id = format!("b{}", i - (i % 20 == 1) as usize);
        a.attempt = 1 + (i % 20 == 1) as u32;
        a.phase = if i < n / 1000 {
            Phase::Warmup
        } else {
            Phase::Measure
        };
        a.intended_start_ms = Some(us(intended));
        a.start_ms = Some(us(intended + 0.2 * rng.unit()));
        if has_token {
            a.first_byte_ms = Some(us(ttft * 0.9));
            let mut at = ttft;
            let events = if outcome.is_success() {
                EVENTS
            } else {
                EVENTS / 4
            };
            for _ in 0..events {
                a.events.push(StreamEvent {
                    at_ms: us(at),
                    tokens: 1 + rng.below(3),
                });
                at += 10.0 + 40.0 * rng.unit();
            }
            a.e2e_ms = Some(us(at));
        } else {
            a.e2e_ms = Some(if outcome == Outcome::ConnectError {
                3.0
            } else {
                30_000.0
            });
        }
        if outcome.is_success() {
            a.input_tokens = Some(40 + rng.below(200));
            a.output_tokens = Some(a.events.iter().map(|e| e.tokens).sum());
            a.tokens_from_usage = true;
        }
        writeln!(w, "{}", write::attempt_line(&a))?;
    }
    writeln!(
        w,
        "{}",
        write::footer_line(&Footer {
            finished_cleanly: true,
            attempts: n as u64,
            gpu_samples
        })
    )?;
    w.flush()
}
