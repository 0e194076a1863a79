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
//! -- --ignored --nocapture` runs the larger one.

use tracelab_core::compare::stats::newcombe;
use tracelab_core::compare::{
    diff_rows, quantile, Bootstrap, Bounds, Intervals, Judgement, Run, Side,
};
use tracelab_core::coverage::{critical_rate, run, simulated_run, Setup};
use tracelab_core::simulate::*;
use tracelab_core::{Index, Metrics, Quality, Settings};

const T: f64 = 0.5;
const LATE: f64 = 0.05;

fn setup(c: u32, runs: u32, seed: u64) -> Setup {
    Setup {
        slots: c,
        rate_per_s: critical_rate(c, T, LATE),
        threshold_s: T,
        runs,
        requests: 2_000,
        seed,
    }
}

fn pct(k: usize, n: usize) -> f64 {
    100.0 * k as f64 / n as f64
}

fn side(r: &Run) -> Side<'_> {
    Side {
        index: &r.index,
        settings: &r.settings,
        metrics: &r.metrics,
        intervals: &r.intervals,
    }
}

/// Coverage of both figures, both ways, and A/A pairs of consecutive runs, at λ* of `c` slots.
/// Returns what falls outside the bounds.
fn study(c: u32, runs: u32, seed: u64) -> Vec<String> {
    let st = setup(c, runs, seed);
    let cov = run(st).unwrap();
    assert!(
        (cov.truth.joint_rate - 0.95).abs() < 1e-9 && (cov.truth.ttft_p95_s - T).abs() < 1e-6,
        "{:?}",
        cov.truth
    );
    let s = Settings {
        ttft_threshold_s: T,
        ..Settings::default()
    };
    let (mut pairs, mut aa_joint, mut aa_p95, mut aa_joint_independent) = (0, 0, 0, 0);
    for i in (0..runs).step_by(2).filter(|i| i + 1 < runs) {
        let a = Run::new("a", simulated_run(&st, i).unwrap(), s.clone());
        let b = Run::new("b", simulated_run(&st, i + 1).unwrap(), s.clone());
        let rows = diff_rows(
            &side(&a),
            &side(&b),
            Bootstrap {
                seed: 1,
                resamples: 400,
            },
            false,
        );
        let beyond = |key: &str| {
            rows.iter()
                .any(|r| r.key == key && matches!(r.judgement, Judgement::Up | Judgement::Down))
        };
        pairs += 1;
        aa_joint += beyond("joint_rate") as usize;
        aa_p95 += beyond(&a.metrics.ttft_p95.key) as usize;
        let n = |r: &Run| (r.metrics.qualified as u64, r.metrics.attempts as u64);
        let ((ka, na), (kb, nb)) = (n(&a), n(&b));
        aa_joint_independent += !newcombe(kb, nb, ka, na).unwrap().contains(0.0) as usize;
    }
    let runs = runs as usize;
    println!(
        "M/M/{c} at λ* = {:.3} /s ({:.0} % busy), {runs} runs of 2,000: coverage joint {:.1} % (independent draws {:.1} %), P95 {:.1} % ({:.1} %); A/A beyond noise of {pairs} pairs: joint {:.1} % (Newcombe on independent draws {:.1} %), P95 {:.1} %; effective n: joint {:.0}, P95 {:.0}",
        st.rate_per_s,
        cov.truth.busy * 100.0,
        pct(cov.joint_rate.honest_covered, runs),
        pct(cov.joint_rate.independent_covered, runs),
        pct(cov.ttft_p95.honest_covered, runs),
        pct(cov.ttft_p95.independent_covered, runs),
        pct(aa_joint, pairs),
        pct(aa_joint_independent, pairs),
        pct(aa_p95, pairs),
        cov.joint_rate.mean_effective_n(),
        cov.ttft_p95.mean_effective_n(),
    );
    let mut wrong = Vec::new();
    for (what, k) in [
        ("joint rate", cov.joint_rate.honest_covered),
        ("P95 TTFT", cov.ttft_p95.honest_covered),
    ] {
        let cov = pct(k, runs);
        if !(92.0..=98.0).contains(&cov) {
            wrong.push(format!(
                "M/M/{c}: {what} covered in {cov:.1} % of runs, not 92–98 %"
            ));
        }
    }
    for (what, k) in [("joint rate", aa_joint), ("P95 TTFT", aa_p95)] {
        let share = pct(k, pairs);
        if share > 5.0 {
            wrong.push(format!(
                "M/M/{c}: A/A called {what} beyond noise in {share:.1} % of pairs"
            ));
        }
    }
    wrong
}

/// The CI study: 200 runs of 2,000 requests (after 200 of warm-up) at each critical load.
#[test]
fn intervals_cover_the_truth_at_the_critical_load() {
    let wrong: Vec<String> = [(1u32, 1_000u64), (4, 2_000), (16, 3_000)]
        .iter()
        .flat_map(|&(c, seed)| study(c, 200, seed))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The larger study the closing note quotes: 1,000 runs per load.
#[test]
#[ignore]
fn coverage_benchmark() {
    for (c, seed) in [(1u32, 10_000u64), (4, 20_000), (16, 30_000)] {
        study(c, 1_000, seed);
    }
}

/// Independent requests (64 slots at 4 requests/s: nobody waits, each TTFT is its own draw):
/// the honest intervals are the exact ones, or within 10 % of their width.
#[test]
fn independent_requests_keep_their_exact_width() {
    let s = Settings {
        ttft_threshold_s: T,
        ..Settings::default()
    };
    let (mut joint, mut p95, runs) = (0.0, 0.0, 100);
    for seed in 0..runs {
        let p = Params {
            slots: 64,
            service: Service::Exponential { mean_s: 1.0 },
            first_token_share: 0.2,
            load: Load::Open {
                rate_per_s: 4.0,
                arrival: ArrivalName::Poisson,
                burstiness: 1.0,
            },
            requests: 2_000,
            seed: 7_000 + seed,
            stall: None,
        };
        let mut trace = simulate(&p).unwrap();
        trace
            .attempts
            .iter_mut()
            .for_each(|a| a.quality = Quality::Pass);
        let ix = Index::build(&trace.attempts, s.population);
        let m = Metrics::compute(&ix, &s);
        let iv = Intervals::compute(&ix, &s, &m);
        let width = |b: &Bounds| b.hi.unwrap() - b.lo.unwrap();
        let exact_joint =
            tracelab_core::compare::stats::wilson(m.qualified as u64, m.attempts as u64).unwrap();
        let exact_p95 = quantile("p95", ix.ttft_sample_ms(), 95.0).unwrap().bounds;
        joint += width(&iv.get("joint_rate").unwrap().bounds) / width(&exact_joint) / runs as f64;
        p95 += width(&iv.get(&m.ttft_p95.key).unwrap().bounds) / width(&exact_p95) / runs as f64;
    }
    println!("independent requests: honest ÷ exact width, joint {joint:.3}, P95 {p95:.3} (mean of {runs} runs)");
    assert!(joint <= 1.10, "joint rate {joint:.3} × the exact width");
    assert!(p95 <= 1.10, "P95 TTFT {p95:.3} × the exact width");
}

/// A setup the experiment cannot run is refused, naming the field.
#[test]
fn an_unstable_or_empty_setup_is_refused() {
    let bad = Setup {
        slots: 4,
        rate_per_s: 4.0,
        threshold_s: T,
        runs: 10,
        requests: 2_000,
        seed: 1,
    };
    assert_eq!(run(bad).unwrap_err().field, "rate");
    assert_eq!(run(Setup { runs: 0, ..bad }).unwrap_err().field, "runs");
    assert_eq!(
        run(Setup {
            requests: 50,
            rate_per_s: 1.0,
            ..bad
        })
        .unwrap_err()
        .field,
        "requests"
    );
}
