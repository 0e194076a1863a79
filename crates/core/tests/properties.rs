//! Properties that must hold for every trace and every setting, not just the lesson's.

use proptest::prelude::*;

use tracelab_core::parse::parse_trace;
use tracelab_core::percentile::{nearest_rank, percentile, PercentileMethod};
use tracelab_core::verdict::is_counted;
use tracelab_core::{
    verdict, write, Attempt, Comparison, FailureDenominator, Figure, Index, Metrics, MissingTtft,
    Outcome, Phase, Population, Quality, Settings, StreamEvent, Trace, WarmupPolicy,
};

// --- generators ---------------------------------------------------------------------------------

fn arb_outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        6 => Just(Outcome::Success),
        1 => Just(Outcome::TimeoutBeforeFirstToken),
        1 => Just(Outcome::TimeoutAfterFirstToken),
        1 => Just(Outcome::ConnectError),
        1 => prop::sample::select(vec![400u16, 429, 500, 503]).prop_map(|status| Outcome::HttpError { status }),
        1 => Just(Outcome::StreamBroken),
        1 => Just(Outcome::Cancelled),
    ]
}

fn arb_quality() -> impl Strategy<Value = Quality> {
    prop_oneof![4 => Just(Quality::Pass), 1 => Just(Quality::Fail), 1 => Just(Quality::NotEvaluated)]
}

/// A duration in whole microseconds: often on a coarse 10 ms grid (so ties with the threshold and
/// between attempts are common), otherwise anywhere up to 3 s.
fn arb_us() -> impl Strategy<Value = u64> {
    prop_oneof![(0u64..=300).prop_map(|k| k * 10_000), 0u64..=3_000_000]
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

prop_compose! {
    /// One attempt the parser accepts: the invariants of trace format v1 hold (no token for a
    /// timeout before the first token or a connection failure; token ≤ events ≤ end; a success
    /// with a clock has an end), and every time is a whole number of microseconds.
    fn arb_attempt()(
        outcome in arb_outcome(),
        quality in arb_quality(),
        phase in prop_oneof![5 => Just(Phase::Measure), 1 => Just(Phase::Warmup)],
        ttft in prop::option::weighted(0.85, arb_us()),
        tail_us in arb_us(),
        has_end in prop::bool::weighted(0.8),
        start in prop::option::weighted(0.7, 0u64..=7_200_000_000),
        intended_late in prop::option::of(0u64..=50_000),
        first_byte_gap in prop::option::of(0u64..=100_000),
        gaps in prop::collection::vec((1u64..=200_000, 1u32..=4), 0..6),
        business in 0usize..6,
        try_no in 1u32..=3,
        detail in prop::option::weighted(0.2, "[a-zA-Z0-9 连接失败\"\\\\,]{0,12}"),
        tokens in prop::option::of((0u32..=4096, 0u32..=2048)),
        usage in any::<bool>(),
        estimated in any::<bool>(),
    ) -> Attempt {
        let ttft = if matches!(outcome, Outcome::TimeoutBeforeFirstToken | Outcome::ConnectError) { None } else { ttft };
        let mut events = Vec::new();
        if let Some(t) = ttft {
            let mut at = t;
            events.push(StreamEvent { at_ms: ms(at), tokens: 1 });
            for (gap, n) in gaps {
                at += gap;
                events.push(StreamEvent { at_ms: ms(at), tokens: n });
            }
        }
        let last = events.last().map(|e| (e.at_ms * 1000.0).round() as u64).unwrap_or(0);
        let needs_end = outcome == Outcome::Success && start.is_some();
        let end = if has_end || needs_end { Some(last.max(ttft.unwrap_or(0)) + tail_us) } else { None };
        let mut a = Attempt::new(String::new(), outcome, ttft.map(ms), quality);
        a.business_id = format!("B{business}");
        a.attempt = try_no;
        a.phase = phase;
        a.start_ms = start.map(ms);
        a.intended_start_ms = match (start, intended_late) {
            (Some(s), Some(late)) => Some(ms(s.saturating_sub(late))),
            _ => None,
        };
        a.first_byte_ms = match (ttft, first_byte_gap) {
            (Some(t), Some(gap)) => Some(ms(t.saturating_sub(gap))),
            _ => None,
        };
        a.events = events;
        a.e2e_ms = end.map(ms);
        a.detail = detail;
        if let Some((input, output)) = tokens {
            a.input_tokens = Some(input);
            a.output_tokens = Some(output);
            a.tokens_from_usage = usage;
        }
        a.event_tokens_estimated = estimated;
        a
    }
}

fn arb_attempts() -> impl Strategy<Value = Vec<Attempt>> {
    prop::collection::vec(arb_attempt(), 0..60).prop_map(|mut attempts| {
        for (i, a) in attempts.iter_mut().enumerate() {
            a.id = format!("A{i}");
        }
        attempts
    })
}

fn arb_population() -> impl Strategy<Value = Population> {
    (
        prop::sample::select(FailureDenominator::ALL.to_vec()),
        prop::sample::select(MissingTtft::ALL.to_vec()),
        prop::sample::select(WarmupPolicy::ALL.to_vec()),
    )
        .prop_map(|(failure_denominator, missing_ttft, warmup)| Population {
            failure_denominator,
            missing_ttft,
            warmup,
            ..Population::default()
        })
}

fn arb_comparison() -> impl Strategy<Value = Comparison> {
    prop_oneof![Just(Comparison::Le), Just(Comparison::Lt)]
}

/// A threshold in seconds, on the same grids as the TTFTs.
fn arb_threshold_s() -> impl Strategy<Value = f64> {
    arb_us().prop_map(|us| us as f64 / 1e6)
}

fn arb_p() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(50.0),
        Just(90.0),
        Just(95.0),
        Just(99.0),
        Just(99.9),
        Just(100.0),
        0.01f64..=100.0
    ]
}

prop_compose! {
    fn arb_settings()(
        ttft_threshold_s in arb_threshold_s(),
        comparison in arb_comparison(),
        slo_comparison in arb_comparison(),
        window_s in prop::option::of(prop_oneof![Just(10.0), 0.001f64..=3600.0]),
        window_cost in prop::option::of(prop_oneof![Just(0.0), Just(0.02), 0.0f64..=1000.0]),
        percentile in prop::sample::select(PercentileMethod::ALL.to_vec()),
        p in arb_p(),
        population in arb_population(),
    ) -> Settings {
        Settings { ttft_threshold_s, comparison, slo_comparison, window_s, window_cost, currency: "CNY".into(), percentile, p, population }
    }
}

fn arb_sorted_samples() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        prop_oneof![(0u32..50).prop_map(|k| f64::from(k) * 10.0), 0.0f64..1e6],
        1..200,
    )
    .prop_map(|mut v| {
        v.sort_by(f64::total_cmp);
        v
    })
}

fn compute(attempts: &[Attempt], s: &Settings) -> Metrics {
    Metrics::compute(&Index::build(attempts, s.population), s)
}

fn all_figures(m: &Metrics) -> Vec<&Figure> {
    vec![
        &m.failure_rate,
        &m.ttft_p50,
        &m.ttft_p95,
        &m.ttft_tail,
        &m.quality_pass_rate,
        &m.joint_rate,
        &m.goodput,
        &m.cost_per_1000_qualified,
        &m.e2e_p50,
        &m.e2e_tail,
        &m.itl_p50,
        &m.itl_tail,
        &m.output_tokens_per_s,
        &m.business_success_rate,
    ]
}

// --- properties ---------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn counts_are_consistent(attempts in arb_attempts(), s in arb_settings()) {
        prop_assert!(s.validate().is_ok());
        let m = compute(&attempts, &s);
        prop_assert!(m.qualified <= m.successes, "qualified {} > successes {}", m.qualified, m.successes);
        prop_assert!(m.successes <= m.attempts);
        prop_assert_eq!(m.failures + m.successes, m.attempts);
        prop_assert_eq!(m.attempts + m.warmup_excluded + m.failed_rows_deleted, attempts.len());
        prop_assert_eq!(m.failures_by_outcome.iter().map(|(_, n)| n).sum::<usize>(), m.failures);
        if s.population.failure_denominator == FailureDenominator::FailedRowsDeleted {
            prop_assert_eq!(m.failures, 0);
        }
    }

    #[test]
    fn nearest_rank_is_always_a_sample(sorted in arb_sorted_samples(), p in arb_p()) {
        let v = percentile(&sorted, p, PercentileMethod::NearestRank).unwrap();
        prop_assert!(sorted.contains(&v), "{v} is not one of the samples");
        let rank = nearest_rank(p, sorted.len());
        prop_assert!((1..=sorted.len()).contains(&rank));
        prop_assert_eq!(v, sorted[rank - 1]);
        // Lower and higher are samples too; every method stays within the data.
        for m in PercentileMethod::ALL {
            let v = percentile(&sorted, p, m).unwrap();
            prop_assert!(sorted[0] <= v && v <= sorted[sorted.len() - 1], "{} P{p} = {v} outside the data", m.code());
            if m != PercentileMethod::Linear {
                prop_assert!(sorted.contains(&v));
            }
        }
    }

    #[test]
    fn p50_never_above_p95(sorted in arb_sorted_samples()) {
        for m in PercentileMethod::ALL {
            let (p50, p95) = (percentile(&sorted, 50.0, m).unwrap(), percentile(&sorted, 95.0, m).unwrap());
            prop_assert!(p50 <= p95, "{}: P50 {p50} > P95 {p95}", m.code());
        }
    }

    #[test]
    fn percentiles_are_monotone_in_p(sorted in arb_sorted_samples(), p1 in arb_p(), p2 in arb_p()) {
        let (lo, hi) = if p1 <= p2 { (p1, p2) } else { (p2, p1) };
        for m in PercentileMethod::ALL {
            prop_assert!(percentile(&sorted, lo, m).unwrap() <= percentile(&sorted, hi, m).unwrap(), "{}", m.code());
        }
    }

    #[test]
    fn metric_p50_never_above_p95(attempts in arb_attempts(), s in arb_settings()) {
        let m = compute(&attempts, &s);
        if let (Some(p50), Some(p95)) = (m.ttft_p50.value, m.ttft_p95.value) {
            prop_assert!(p50 <= p95, "TTFT P50 {p50} > P95 {p95}");
        }
        if let (Some(p50), Some(tail)) = (m.e2e_p50.value, m.e2e_tail.value) {
            prop_assert!(s.p < 50.0 || p50 <= tail);
        }
    }

    #[test]
    fn lt_never_qualifies_more_than_le(attempts in arb_attempts(), s in arb_settings()) {
        let le = compute(&attempts, &Settings { comparison: Comparison::Le, ..s.clone() });
        let lt = compute(&attempts, &Settings { comparison: Comparison::Lt, ..s });
        prop_assert!(lt.qualified <= le.qualified, "< {} > ≤ {}", lt.qualified, le.qualified);
    }

    #[test]
    fn qualified_is_monotone_in_the_threshold(
        attempts in arb_attempts(), s in arb_settings(), t1 in arb_threshold_s(), t2 in arb_threshold_s()
    ) {
        let (lo, hi) = if t1 <= t2 { (t1, t2) } else { (t2, t1) };
        let index = Index::build(&attempts, s.population);
        let at = |t: f64| Metrics::compute(&index, &Settings { ttft_threshold_s: t, ..s.clone() }).qualified;
        prop_assert!(at(lo) <= at(hi), "qualified at {lo} s = {} > at {hi} s = {}", at(lo), at(hi));
    }

    #[test]
    fn index_agrees_with_per_attempt_verdicts(attempts in arb_attempts(), s in arb_settings()) {
        let m = compute(&attempts, &s);
        let counted: Vec<&Attempt> = attempts.iter().filter(|a| is_counted(a, &s.population)).collect();
        let by_verdict = counted.iter().filter(|a| verdict(a, &s).qualified).count();
        prop_assert_eq!(m.qualified, by_verdict);
        prop_assert_eq!(m.attempts, counted.len());
        prop_assert_eq!(m.successes, counted.iter().filter(|a| a.outcome.is_success()).count());
        // Every non-qualified attempt has a reason, every qualified one none.
        for a in &counted {
            let v = verdict(a, &s);
            prop_assert_eq!(v.qualified, v.reason.is_none());
        }
    }

    #[test]
    fn no_figure_is_nan_or_infinite(attempts in arb_attempts(), s in arb_settings()) {
        let m = compute(&attempts, &s);
        for f in all_figures(&m) {
            for (what, v) in [("value", f.value), ("numerator", f.numerator), ("denominator", f.denominator)] {
                if let Some(v) = v {
                    prop_assert!(v.is_finite(), "{} {what} is {v}", f.key);
                }
            }
            // A figure without a value always says why.
            if f.value.is_none() {
                prop_assert!(f.undefined.is_some(), "{} is undefined without a reason", f.key);
            }
        }
        let json = m.summary_json(&s).to_string();
        prop_assert!(!json.contains("NaN") && !json.contains("inf"));
    }

    #[test]
    fn jsonl_round_trip_preserves_attempts(attempts in arb_attempts()) {
        let footer = tracelab_core::Footer { finished_cleanly: true, attempts: attempts.len() as u64, gpu_samples: 0 };
        let trace = Trace { attempts, footer: Some(footer), ..Trace::default() };
        let text = write::to_jsonl(&trace);
        let again = parse_trace("round.jsonl", &text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&again.attempts, &trace.attempts);
        prop_assert_eq!(&again.header, &trace.header);
        prop_assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    }

    #[test]
    fn csv_round_trip_preserves_the_card(attempts in arb_attempts(), s in arb_settings()) {
        let trace = Trace { attempts, ..Trace::default() };
        let text = write::to_csv(&trace);
        let again = parse_trace("round.csv", &text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        // The classroom CSV keeps no clock, so no schedule: the card it gives is the card of
        // the attempts without their intended starts (the figures' names then do not say where
        // latency starts, since no attempt was sent late).
        let mut unscheduled = trace.attempts.clone();
        for a in &mut unscheduled {
            a.intended_start_ms = None;
        }
        let (a, b) = (compute(&unscheduled, &s), compute(&again.attempts, &s));
        prop_assert_eq!(a.card_figures(), b.card_figures());
        prop_assert_eq!(&a.e2e_p50, &b.e2e_p50);
        prop_assert_eq!(&a.business_success_rate, &b.business_success_rate);
    }
}
