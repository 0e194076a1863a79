//! Coverage: how often a run's 95 % interval holds the truth, where the truth is known.
//!
//! M/M/c with μ = 1/s and the first-token share at 0, so a request's TTFT is its wait in the
//! queue: P(W > t) = C(c, λ/μ)·e^{−(cμ−λ)t} (Erlang C). At the critical load λ*, where
//! P(W > 0.5 s) = 5 %, the true P95 TTFT is 0.5 s and (every answer passing quality) the true
//! joint qualification rate under TTFT ≤ 0.5 s is 95 %. Runs on the simulator, each with its own
//! seed, give the share of runs whose interval holds each truth, and pairs of runs of the same
//! server (A/A) the share that `compare` calls "beyond noise". Requests queue behind each other,
//! so the attempts of one run are correlated, more so the busier the server (M/M/16 at λ* is
//! 84 % busy): intervals that treat them as independent draws cover far less than 95 %.
//!
//! The CI study is small (fixed seeds); `cargo test --release -p tracelab-core --test coverage
//! -- --ignored --nocapture` runs the larger one the README quotes.

use tracelab_core::compare::stats::{newcombe, wilson};
use tracelab_core::compare::{diff_rows, quantile, Bootstrap, Bounds, Intervals, Judgement, Run};
use tracelab_core::simulate::theory::erlang_c;
use tracelab_core::simulate::*;
use tracelab_core::{Index, Metrics, Quality, Settings, Trace};

const T: f64 = 0.5;
const LATE: f64 = 0.05;

/// λ* for c slots: P(W > T) = 5 %, by bisection.
fn critical_load(c: u32) -> f64 {
    let p_late = |lambda: f64| erlang_c(c, lambda, 1.0).map_or(1.0, |pc| pc * (-(c as f64 - lambda) * T).exp());
    let (mut lo, mut hi) = (1e-6, c as f64 - 1e-6);
    for _ in 0..80 {
        let mid = (lo + hi) / 2.0;
        if p_late(mid) > LATE {
            hi = mid
        } else {
            lo = mid
        }
    }
    lo
}

/// One run at λ*: `warmup` requests marked warm-up (the simulator starts empty), then `n`.
fn run(c: u32, n: u32, warmup: u32, seed: u64) -> Trace {
    let p = Params {
        slots: c,
        service: Service::Exponential { mean_s: 1.0 },
        first_token_share: 0.0,
        load: Load::Open { rate_per_s: critical_load(c), arrival: ArrivalName::Poisson, burstiness: 1.0 },
        requests: n + warmup,
        seed,
        stall: None,
    };
    let mut trace = simulate(&p).unwrap();
    trace.attempts.iter_mut().for_each(|a| a.quality = Quality::Pass);
    let mut by_start: Vec<usize> = (0..trace.attempts.len()).collect();
    by_start.sort_by(|&a, &b| trace.attempts[a].start_ms.unwrap().total_cmp(&trace.attempts[b].start_ms.unwrap()));
    for &i in by_start.iter().take(warmup as usize) {
        trace.attempts[i].phase = tracelab_core::trace::Phase::Warmup;
    }
    trace
}

fn settings() -> Settings {
    Settings { ttft_threshold_s: T, ..Settings::default() }
}

struct Study {
    runs: usize,
    joint_covered: usize,
    p95_covered: usize,
    aa_pairs: usize,
    aa_joint: usize,
    aa_p95: usize,
    effective_joint: f64,
    mean_joint: f64,
    mean_p95: f64,
    low_misses: usize,
    /// The same, with the intervals for independent draws (Wilson, order statistics, Newcombe).
    exact_joint_covered: usize,
    exact_p95_covered: usize,
    exact_aa_joint: usize,
    /// Mean width ratio honest ÷ exact (joint, P95).
    width_joint: f64,
    width_p95: f64,
}

fn study(c: u32, n: u32, warmup: u32, runs: usize, first_seed: u64) -> Study {
    let s = settings();
    let traces: Vec<Trace> = (0..runs).map(|i| run(c, n, warmup, first_seed + i as u64)).collect();
    let mut st = Study { runs, joint_covered: 0, p95_covered: 0, aa_pairs: 0, aa_joint: 0, aa_p95: 0, effective_joint: 0.0, mean_joint: 0.0, mean_p95: 0.0, low_misses: 0, exact_joint_covered: 0, exact_p95_covered: 0, exact_aa_joint: 0, width_joint: 0.0, width_p95: 0.0 };
    for t in &traces {
        let ix = Index::build(&t.attempts, s.population);
        let m = Metrics::compute(&ix, &s);
        let iv = Intervals::compute(&ix, &s, &m);
        let joint = iv.get("joint_rate").unwrap();
        st.joint_covered += joint.bounds.contains(1.0 - LATE) as usize;
        st.p95_covered += iv.get(&m.ttft_p95.key).unwrap().bounds.contains(T) as usize;
        st.effective_joint += joint.dependence.as_ref().unwrap().effective_n / runs as f64;
        st.mean_joint += m.joint_rate.value.unwrap() / runs as f64;
        st.mean_p95 += m.ttft_p95.value.unwrap() / runs as f64;
        st.low_misses += joint.bounds.hi.is_some_and(|h| h < 1.0 - LATE) as usize;
        let exact_joint = wilson(m.qualified as u64, m.joint_rate.denominator.unwrap() as u64).unwrap();
        let exact_p95 = quantile("p95", ix.ttft_sample_ms(), 95.0).unwrap().bounds;
        st.exact_joint_covered += exact_joint.contains(1.0 - LATE) as usize;
        st.exact_p95_covered += exact_p95.contains(T) as usize;
        let width = |b: &Bounds| b.hi.zip(b.lo).map(|(h, l)| h - l);
        st.width_joint += width(&joint.bounds).zip(width(&exact_joint)).map_or(f64::NAN, |(a, b)| a / b) / runs as f64;
        st.width_p95 += width(&iv.get(&m.ttft_p95.key).unwrap().bounds).zip(width(&exact_p95)).map_or(f64::NAN, |(a, b)| a / b) / runs as f64;
        if std::env::var_os("COVERAGE_DEBUG").is_some() && !joint.bounds.contains(1.0 - LATE) {
            let d = joint.dependence.as_ref().unwrap();
            let series: Vec<f64> = ix.joint_series(T * 1000.0, tracelab_core::Comparison::Le).iter().map(|&b| b as u8 as f64).collect();
            let r1 = tracelab_core::compare::dependence::autocorrelation(&series, 1);
            println!("  miss c={c}: p̂ {:.4} {:?} {:?} τ̂ {:.2} τ {:.2} b {} lag1 {:.2} raw r1 {:?}", m.joint_rate.value.unwrap(), joint.bounds, d.verdict, d.measured_inflation, d.inflation, d.batches, d.batch_lag1, r1);
        }
    }
    let boot = Bootstrap { seed: 1, resamples: 400 };
    for pair in traces.chunks(2).filter(|p| p.len() == 2) {
        let a = Run::new("a", pair[0].clone(), s.clone());
        let b = Run::new("b", pair[1].clone(), s.clone());
        let rows = diff_rows(&side(&a), &side(&b), boot, false);
        let beyond = |key: &str| rows.iter().any(|r| r.key == key && matches!(r.judgement, Judgement::Up | Judgement::Down));
        st.aa_pairs += 1;
        let parts = |r: &Run| (r.metrics.qualified as u64, r.metrics.joint_rate.denominator.unwrap() as u64);
        let ((ka, na), (kb, nb)) = (parts(&a), parts(&b));
        let exact = newcombe(kb, nb, ka, na).unwrap();
        st.exact_aa_joint += !exact.contains(0.0) as usize;
        st.aa_joint += beyond("joint_rate") as usize;
        st.aa_p95 += beyond(&a.metrics.ttft_p95.key) as usize;
    }
    st
}

fn side(r: &Run) -> tracelab_core::compare::Side<'_> {
    tracelab_core::compare::Side { index: &r.index, settings: &r.settings, metrics: &r.metrics, intervals: &r.intervals }
}

fn pct(k: usize, n: usize) -> f64 {
    100.0 * k as f64 / n as f64
}

fn report(c: u32, st: &Study) {
    println!(
        "M/M/{c} at λ* = {:.3} /s (ρ = {:.2}): coverage joint {:.1} %, P95 {:.1} % of {} runs; A/A beyond noise joint {:.1} %, P95 {:.1} % of {} pairs; effective n (joint) {:.0}; mean joint {:.4}, mean P95 {:.3} s, misses below {}",
        critical_load(c),
        critical_load(c) / c as f64,
        pct(st.joint_covered, st.runs),
        pct(st.p95_covered, st.runs),
        st.runs,
        pct(st.aa_joint, st.aa_pairs),
        pct(st.aa_p95, st.aa_pairs),
        st.aa_pairs,
        st.effective_joint,
        st.mean_joint,
        st.mean_p95,
        st.low_misses
    );
    println!(
        "  independent-draws intervals: coverage joint {:.1} %, P95 {:.1} %; A/A (Newcombe) joint beyond noise {:.1} %; honest ÷ independent width: joint {:.2}, P95 {:.2}",
        pct(st.exact_joint_covered, st.runs),
        pct(st.exact_p95_covered, st.runs),
        pct(st.exact_aa_joint, st.aa_pairs),
        st.width_joint,
        st.width_p95
    );
}

/// The CI study: 200 runs of 2,000 requests (after 200 of warm-up) at each load.
#[test]
fn intervals_cover_the_truth_at_the_critical_load() {
    let mut wrong = Vec::new();
    for (c, seed) in [(1u32, 1_000u64), (4, 2_000), (16, 3_000)] {
        let st = study(c, 2_000, 200, 200, seed);
        report(c, &st);
        for (what, k) in [("joint rate", st.joint_covered), ("P95 TTFT", st.p95_covered)] {
            let cov = pct(k, st.runs);
            if !(92.0..=98.0).contains(&cov) {
                wrong.push(format!("M/M/{c}: {what} covered in {cov:.1} % of runs, not 92–98 %"));
            }
        }
        for (what, k) in [("joint rate", st.aa_joint), ("P95 TTFT", st.aa_p95)] {
            let share = pct(k, st.aa_pairs);
            if share > 5.0 {
                wrong.push(format!("M/M/{c}: A/A called {what} beyond noise in {share:.1} % of pairs"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Independent requests (64 slots at 4 requests/s: nobody waits, each TTFT is its own draw):
/// the honest intervals are the exact ones, or within 10 % of their width.
#[test]
fn independent_requests_keep_their_exact_width() {
    let s = settings();
    let (mut joint, mut p95, runs) = (0.0, 0.0, 100);
    for seed in 0..runs {
        let p = Params {
            slots: 64,
            service: Service::Exponential { mean_s: 1.0 },
            first_token_share: 0.2,
            load: Load::Open { rate_per_s: 4.0, arrival: ArrivalName::Poisson, burstiness: 1.0 },
            requests: 2_000,
            seed: 7_000 + seed,
            stall: None,
        };
        let mut trace = simulate(&p).unwrap();
        trace.attempts.iter_mut().for_each(|a| a.quality = Quality::Pass);
        let ix = Index::build(&trace.attempts, s.population);
        let m = Metrics::compute(&ix, &s);
        let iv = Intervals::compute(&ix, &s, &m);
        let width = |b: &Bounds| b.hi.unwrap() - b.lo.unwrap();
        let exact_joint = wilson(m.qualified as u64, m.joint_rate.denominator.unwrap() as u64).unwrap();
        let exact_p95 = quantile("p95", ix.ttft_sample_ms(), 95.0).unwrap().bounds;
        joint += width(&iv.get("joint_rate").unwrap().bounds) / width(&exact_joint) / runs as f64;
        p95 += width(&iv.get(&m.ttft_p95.key).unwrap().bounds) / width(&exact_p95) / runs as f64;
    }
    println!("independent requests: honest ÷ exact width, joint {joint:.3}, P95 {p95:.3} (mean of {runs} runs)");
    assert!(joint <= 1.10, "joint rate {joint:.3} × the exact width");
    assert!(p95 <= 1.10, "P95 TTFT {p95:.3} × the exact width");
}
