//! The session figures' intervals held to the truth on the simulator. With the prefix cache off
//! and a slot for every session, turns are independent: turn k's TTFT is its prefill alone,
//! (base + per-token × prompt_k) × Exp(1), so P(turn k qualifies) = 1 − exp(−threshold ÷ mean_k)
//! and the share of sessions that qualify is the product of those. Over 200 seeded runs the
//! measured share's 95 % interval (Wilson on sessions) must hold that product in 92–98 % of
//! them, as the core's coverage study asks of its intervals; the per-turn rate's cluster-robust
//! interval must hold the mean of the per-turn truths as often. A/A: two runs of one setting
//! (different seeds) differ by chance only, so Newcombe's interval of their difference holds 0
//! in about 95 % of pairs.

use tracelab_core::compare::stats::newcombe;
use tracelab_core::session::Sessions;
use tracelab_core::simulate::session::{simulate_sessions, SessionParams};
use tracelab_core::simulate::SessionJitter;
use tracelab_core::Settings;

const RUNS: u64 = 200;
const THRESHOLD_S: f64 = 1.5;

fn params(seed: u64) -> SessionParams {
    SessionParams {
        sessions: 200,
        turns: 4,
        session_rate_per_s: 2.0,
        think_s: 1.0,
        slots: 200,
        new_tokens: 100,
        output_tokens: 50,
        base_s: 0.1,
        per_uncached_token_s: 0.001,
        per_output_token_s: 0.002,
        jitter: SessionJitter::Exponential,
        cache_tokens: 0,
        seed,
    }
}

/// P(turn k qualifies) with no queue and no cache.
fn turn_truth(p: &SessionParams, k: u32) -> f64 {
    let prompt = p.history_tokens(k) as f64 + f64::from(p.new_tokens);
    let mean = p.base_s + p.per_uncached_token_s * prompt;
    1.0 - (-THRESHOLD_S / mean).exp()
}

fn settings() -> Settings {
    Settings {
        ttft_threshold_s: THRESHOLD_S,
        ..Settings::default()
    }
}

#[test]
fn the_session_share_interval_holds_the_product_of_independent_turns() {
    let p0 = params(0);
    let truths: Vec<f64> = (1..=p0.turns).map(|k| turn_truth(&p0, k)).collect();
    let product: f64 = truths.iter().product();
    let mean_turn = truths.iter().sum::<f64>() / truths.len() as f64;
    let (mut share_held, mut turn_held, mut predicted_sum, mut measured_sum) =
        (0u64, 0u64, 0.0, 0.0);
    let mut counts = Vec::new();
    for seed in 1..=RUNS {
        let trace = simulate_sessions(&params(seed)).unwrap();
        let s = Sessions::of(&trace.attempts, &settings()).unwrap();
        share_held += u64::from(s.session_share.interval.unwrap().contains(product));
        turn_held += u64::from(s.turn_rate.interval.unwrap().contains(mean_turn));
        predicted_sum += s.predicted_share.figure.value.unwrap();
        measured_sum += s.session_share.figure.value.unwrap();
        counts.push((
            s.session_share.figure.numerator.unwrap() as u64,
            s.sessions.figure.value.unwrap() as u64,
        ));
    }
    let share_coverage = share_held as f64 / RUNS as f64;
    let turn_coverage = turn_held as f64 / RUNS as f64;
    let predicted_mean = predicted_sum / RUNS as f64;
    println!(
        "truth: product {product:.4} (per turn {truths:?}); session-share interval held it in {share_held}/{RUNS} = {share_coverage:.3}; per-turn interval held {mean_turn:.4} in {turn_held}/{RUNS} = {turn_coverage:.3}; mean product prediction {predicted_mean:.4}, mean measured share {:.4}",
        measured_sum / RUNS as f64
    );
    assert!(
        (0.92..=0.98).contains(&share_coverage),
        "session share coverage {share_coverage}"
    );
    assert!(
        (0.92..=0.98).contains(&turn_coverage),
        "per-turn coverage {turn_coverage}"
    );
    // Independent turns: the product of the measured per-turn rates predicts the truth.
    assert!((predicted_mean - product).abs() < 0.01, "{predicted_mean}");

    // A/A: runs 2i − 1 and 2i are two runs of one setting.
    let pairs: Vec<_> = counts.chunks(2).collect();
    let held_zero = pairs
        .iter()
        .filter(|c| {
            let ((k1, n1), (k2, n2)) = (c[0], c[1]);
            newcombe(k1, n1, k2, n2).unwrap().contains(0.0)
        })
        .count();
    let aa = held_zero as f64 / pairs.len() as f64;
    println!(
        "A/A: Newcombe's interval of the difference held 0 in {held_zero}/{} pairs = {aa:.3}",
        pairs.len()
    );
    assert!(aa >= 0.9, "A/A {aa}");
}

#[test]
fn a_small_prefix_cache_makes_turns_depend_and_the_product_mispredicts() {
    // Few slots and a cache that holds a few conversations: late turns whose history was
    // evicted prefill it all again, and a slow turn queues the next session's too. The
    // session share then departs from what independent turns would give, and the figures show
    // both side by side.
    let mut p = params(3);
    p.slots = 2;
    p.session_rate_per_s = 1.0;
    p.jitter = SessionJitter::None;
    p.base_s = 0.2;
    p.per_uncached_token_s = 0.0015;
    let mut warm = p.clone();
    warm.cache_tokens = 100_000_000;
    p.cache_tokens = 2_000;
    let judge = |p: &SessionParams| {
        let t = simulate_sessions(p).unwrap();
        Sessions::of(&t.attempts, &settings()).unwrap()
    };
    let (cold, warm) = (judge(&p), judge(&warm));
    let cached = |s: &Sessions| s.by_turn.last().unwrap().cached_share.unwrap();
    assert!(
        cached(&warm) > cached(&cold),
        "{} vs {}",
        cached(&warm),
        cached(&cold)
    );
    let share = |s: &Sessions| s.session_share.figure.value.unwrap();
    assert!(
        share(&warm) > share(&cold),
        "{} vs {}",
        share(&warm),
        share(&cold)
    );
    println!(
        "cache evicting: share {:.3} (product {:.3}); large cache: share {:.3} (product {:.3})",
        share(&cold),
        cold.predicted_share.figure.value.unwrap(),
        share(&warm),
        warm.predicted_share.figure.value.unwrap()
    );
}

/// A loaded server (4 slots, 300 sessions of 5 turns at 1 session a second): sessions that
/// overlap a busy stretch fail together, so sessions in start order are NOT independent draws.
/// Treated as independent (Newcombe on the session counts), 13 of these 20 A/A pairs were
/// called different beyond noise (measured while building this check); with the dependence
/// between sessions measured by batch means (the intervals on effective sessions), at most 2 of
/// 20 may be. The same comparison still finds the prefix cache switched off in every pair at
/// half that load.
fn loaded(seed: u64, rate: f64, cache_tokens: u64) -> SessionParams {
    SessionParams {
        sessions: 300,
        turns: 5,
        session_rate_per_s: rate,
        think_s: 2.0,
        slots: 4,
        new_tokens: 200,
        output_tokens: 100,
        base_s: 0.05,
        per_uncached_token_s: 0.0002,
        per_output_token_s: 0.005,
        jitter: SessionJitter::Exponential,
        cache_tokens,
        seed,
    }
}

#[test]
fn a_a_pairs_of_a_loaded_server_are_not_called_different_and_a_real_change_is() {
    use tracelab_core::session::compare_sessions;
    let of = |p: &SessionParams| {
        let mut t = simulate_sessions(p).unwrap();
        t.attempts
            .iter_mut()
            .for_each(|a| a.quality = tracelab_core::Quality::Pass);
        // The run's own window (session goodput needs it), judged at 0.5 s.
        let s = Settings {
            ttft_threshold_s: 0.5,
            ..Settings::from_header(&t.header)
        };
        Sessions::of(&t.attempts, &s).unwrap()
    };
    let (mut naive, mut flagged, mut widened) = ([0u32; 1], [0u32; 3], 0u32);
    for k in 0..20u64 {
        let (a, b) = (
            of(&loaded(2 * k + 1, 1.0, 200_000)),
            of(&loaded(2 * k + 2, 1.0, 200_000)),
        );
        widened += u32::from(a.dependence.widens()) + u32::from(b.dependence.widens());
        let count = |x: &Sessions| {
            (
                x.session_share.figure.numerator.unwrap() as u64,
                x.session_share.figure.denominator.unwrap() as u64,
            )
        };
        let ((ka, na), (kb, nb)) = (count(&a), count(&b));
        let d = newcombe(kb, nb, ka, na).unwrap();
        naive[0] += u32::from(d.lo.unwrap() > 0.0 || d.hi.unwrap() < 0.0);
        for (i, row) in compare_sessions(&a, &b).iter().enumerate() {
            flagged[i] += u32::from(row.direction != Some(0));
        }
    }
    println!("A/A, 20 pairs: naive Newcombe on sessions {naive:?}, share/turn/goodput {flagged:?}, runs widened {widened} of 40");
    assert!(
        naive[0] >= 10,
        "the loaded sessions are correlated: {naive:?}"
    );
    assert!(
        widened >= 30,
        "{widened} of 40 runs found their sessions correlated"
    );
    assert!(
        flagged[0] <= 2 && flagged[1] <= 3 && flagged[2] <= 2,
        "{flagged:?}"
    );

    // A real change: the cache off (every turn prefills its whole history) at half the load.
    let mut found = [0u32; 3];
    for k in 0..20u64 {
        let (a, b) = (
            of(&loaded(2 * k + 1, 0.5, 200_000)),
            of(&loaded(2 * k + 2, 0.5, 0)),
        );
        for (i, row) in compare_sessions(&a, &b).iter().enumerate() {
            found[i] += u32::from(row.direction == Some(-1));
        }
    }
    println!("cache off, 20 pairs: found lower beyond noise {found:?}");
    assert_eq!(found, [20, 20, 20]);
}
