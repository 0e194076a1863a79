//! The lesson's numbers, computed from the shipped samples in both formats.
//!
//! The ten-request table: eight complete successes with TTFT 0.2, 0.3, 0.4, 0.5, 0.6 (quality
//! fail), 0.8, 1.2 and 2.0 s, one timeout before the first token and one connection failure;
//! a 10 s window costing 0.02 CNY.

use tracelab_core::parse::{parse_trace, parse_trace_bytes};
use tracelab_core::percentile::{self, nearest_rank, percentile, PercentileMethod};
use tracelab_core::{
    write, Comparison, FailureDenominator, Figure, Index, Lang, Metrics, MissingTtft, Outcome,
    Population, Settings, Trace, Unit, WarmupPolicy,
};

const TEN_JSONL: &str = include_str!("../../../public/samples/ten-requests.jsonl");
const TEN_CSV: &str = include_str!("../../../public/samples/ten-requests.csv");
const STREAMING: &str = include_str!("../../../public/samples/streaming-example.jsonl");

fn both() -> [(&'static str, Trace); 2] {
    [
        (
            "ten-requests.jsonl",
            parse_trace("ten-requests.jsonl", TEN_JSONL).expect("the JSONL sample parses"),
        ),
        (
            "ten-requests.csv",
            parse_trace("ten-requests.csv", TEN_CSV).expect("the CSV sample parses"),
        ),
    ]
}

fn metrics(trace: &Trace, settings: &Settings) -> Metrics {
    settings.validate().expect("valid settings");
    let index = Index::build(&trace.attempts, settings.population);
    Metrics::compute(&index, settings)
}

#[track_caller]
fn close(actual: Option<f64>, expected: f64, what: &str) {
    let v = actual.unwrap_or_else(|| panic!("{what}: expected {expected}, got undefined"));
    assert!(
        (v - expected).abs() < 1e-9,
        "{what}: expected {expected}, got {v}"
    );
}

#[track_caller]
fn parts(f: &Figure, num: f64, den: f64) {
    assert_eq!(f.numerator, Some(num), "{}: numerator", f.key);
    assert_eq!(f.denominator, Some(den), "{}: denominator", f.key);
}

#[test]
fn both_samples_carry_the_lesson_settings() {
    for (name, trace) in both() {
        let s = Settings::from_header(&trace.header);
        assert_eq!(s.ttft_threshold_s, 1.0, "{name}");
        assert_eq!(s.comparison, Comparison::Le, "{name}");
        assert_eq!(s.slo_comparison, Comparison::Le, "{name}");
        assert_eq!(s.window_s, Some(10.0), "{name}");
        assert_eq!(s.window_cost, Some(0.02), "{name}");
        assert_eq!(s.currency, "CNY", "{name}");
        assert_eq!(s.percentile, PercentileMethod::NearestRank, "{name}");
        assert!(
            s.mistakes().is_empty(),
            "{name}: the defaults are the right choices"
        );
        assert_eq!(trace.attempts.len(), 10, "{name}");
        assert!(!trace.is_incomplete(), "{name}");
        assert!(trace.warnings.is_empty(), "{name}: {:?}", trace.warnings);
    }
}

#[test]
fn lesson_figures_at_one_second() {
    for (name, trace) in both() {
        let s = Settings::from_header(&trace.header);
        let m = metrics(&trace, &s);
        assert_eq!((m.attempts, m.successes, m.failures), (10, 8, 2), "{name}");

        // Nearest-rank over the 8 success TTFTs: P95 = ⌈0.95·8⌉ = 8th = 2 s, P50 = ⌈0.5·8⌉ = 4th.
        close(m.ttft_p95.value, 2.0, "P95");
        assert_eq!(m.ttft_p95.n, Some(8), "{name}");
        assert!(
            m.ttft_p95.note.is_some(),
            "{name}: with 8 samples P95 is the maximum, and the card says so"
        );
        close(m.ttft_p50.value, 0.5, "P50");
        assert_eq!(m.ttft_p50.n, Some(8), "{name}");
        assert_eq!(
            m.ttft_tail,
            Figure {
                key: "ttft_tail".into(),
                ..m.ttft_p95.clone()
            },
            "{name}: tail = P95 by default"
        );

        close(m.failure_rate.value, 0.2, "failure rate");
        parts(&m.failure_rate, 2.0, 10.0);
        assert_eq!(m.failure_rate.unit, Unit::Ratio);

        close(m.quality_pass_rate.value, 0.875, "quality pass rate");
        parts(&m.quality_pass_rate, 7.0, 8.0);

        assert_eq!(m.qualified, 5, "{name}: R1–R4 and R6");
        close(m.joint_rate.value, 0.5, "joint rate");
        parts(&m.joint_rate, 5.0, 10.0);

        close(m.goodput.value, 0.5, "goodput");
        parts(&m.goodput, 5.0, 10.0);

        close(
            m.cost_per_1000_qualified.value,
            4.0,
            "cost per 1000 qualified",
        );
        assert_eq!(m.cost_per_1000_qualified.denominator, Some(5.0), "{name}");
        assert_eq!(
            m.cost_per_1000_qualified.unit,
            Unit::MoneyPer1000("CNY".into())
        );

        let mut outcomes = m.failures_by_outcome.clone();
        outcomes.sort();
        assert_eq!(
            outcomes,
            vec![
                ("connect_error".to_string(), 1),
                ("timeout_before_first_token".to_string(), 1)
            ],
            "{name}"
        );
    }
}

#[test]
fn lesson_figures_at_half_a_second() {
    for (name, trace) in both() {
        let mut s = Settings::from_header(&trace.header);
        let before = metrics(&trace, &s);
        s.ttft_threshold_s = 0.5;
        let m = metrics(&trace, &s);
        assert_eq!(
            m.qualified, 4,
            "{name}: R1–R4, with R4 exactly at 0.5 s counted under ≤"
        );
        close(m.goodput.value, 0.4, "goodput");
        close(m.cost_per_1000_qualified.value, 5.0, "cost");
        close(m.joint_rate.value, 0.4, "joint rate");
        // The threshold does not touch the failure rate or the percentiles.
        assert_eq!(m.failure_rate, before.failure_rate, "{name}");
        assert_eq!(m.ttft_p95, before.ttft_p95, "{name}");
        assert_eq!(m.ttft_p50, before.ttft_p50, "{name}");
        assert_eq!(m.quality_pass_rate, before.quality_pass_rate, "{name}");
    }
}

#[test]
fn le_versus_lt_at_the_edge() {
    for (name, trace) in both() {
        let mut s = Settings::from_header(&trace.header);
        s.ttft_threshold_s = 0.5;
        s.comparison = Comparison::Lt;
        let m = metrics(&trace, &s);
        assert_eq!(
            m.qualified, 3,
            "{name}: R4 (exactly 0.5 s) is no longer within under <"
        );
        close(m.goodput.value, 0.3, "goodput under <");

        let mistakes = s.mistakes();
        let comparison = mistakes.iter().find(|m| m.setting == "comparison");
        let comparison =
            comparison.unwrap_or_else(|| panic!("{name}: < against a ≤ SLO must be flagged"));
        assert!(!comparison.label.en.is_empty() && !comparison.label.zh.is_empty());
        assert!(
            !comparison.false_conclusion.en.is_empty()
                && !comparison.false_conclusion.zh.is_empty()
        );

        // Not a mistake when the SLO itself is written with <.
        s.slo_comparison = Comparison::Lt;
        assert!(
            s.mistakes().iter().all(|m| m.setting != "comparison"),
            "{name}"
        );
        // Nor when the comparison matches the ≤ SLO.
        s.slo_comparison = Comparison::Le;
        s.comparison = Comparison::Le;
        assert!(s.mistakes().is_empty(), "{name}");
    }
}

/// The course's third classic mistake, one click away like the other two: quality left out of
/// the joint condition counts R5 (fast, failed the rubric) as qualified: 6 at 1 s, not 5.
#[test]
fn quality_left_out_counts_r5() {
    for (name, trace) in both() {
        let mut s = Settings::from_header(&trace.header);
        s.ttft_threshold_s = 1.0;
        assert_eq!(metrics(&trace, &s).qualified, 5, "{name}");
        let mut wrong = s.clone();
        assert!(wrong.apply_pairs([("qr", "ignored")]).is_empty());
        let m = metrics(&trace, &wrong);
        assert_eq!(m.qualified, 6, "{name}: R5 now counts");
        close(m.goodput.value, 0.6, "goodput with quality ignored");
        assert!(
            m.joint_rate
                .numerator_label
                .as_ref()
                .unwrap()
                .en
                .contains("quality ignored (wrong)"),
            "{name}"
        );
        flagged(&wrong, "quality");
        let r5 = trace.attempts.iter().find(|a| a.id == "R5").unwrap();
        assert_eq!(
            tracelab_core::verdict(r5, &s).reason,
            Some(tracelab_core::Reason::Quality)
        );
        assert!(tracelab_core::verdict(r5, &wrong).qualified);
        // The permalink carries it both ways, and the right rule is the default.
        assert!(wrong.to_pairs().contains(&("qr", "ignored".to_string())));
        assert!(s.mistakes().is_empty(), "{name}");
    }
}

#[track_caller]
fn flagged(s: &Settings, setting: &str) {
    let mistakes = s.mistakes();
    let m = mistakes
        .iter()
        .find(|m| m.setting == setting)
        .unwrap_or_else(|| panic!("`{setting}` should be listed in mistakes(), got {mistakes:?}"));
    for text in [&m.label, &m.false_conclusion] {
        assert!(
            !text.get(Lang::En).trim().is_empty(),
            "`{setting}`: English text"
        );
        assert!(
            !text.get(Lang::Zh).trim().is_empty(),
            "`{setting}`: Chinese text"
        );
        assert_ne!(text.en, text.zh, "`{setting}`: both languages written");
        assert!(
            text.zh
                .chars()
                .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "`{setting}`: zh is Chinese"
        );
    }
}

#[test]
fn wrong_denominator_successes() {
    for (name, trace) in both() {
        let mut s = Settings::from_header(&trace.header);
        s.population.failure_denominator = FailureDenominator::Successes;
        let m = metrics(&trace, &s);
        close(m.failure_rate.value, 0.25, "failures / successes");
        parts(&m.failure_rate, 2.0, 8.0);
        assert_eq!(m.attempts, 10, "{name}: nothing is deleted");
        flagged(&s, "failure_denominator");
    }
}

#[test]
fn wrong_failed_rows_deleted() {
    for (name, trace) in both() {
        let mut s = Settings::from_header(&trace.header);
        s.population.failure_denominator = FailureDenominator::FailedRowsDeleted;
        let m = metrics(&trace, &s);
        assert_eq!(m.attempts, 8, "{name}");
        assert_eq!(m.failures, 0, "{name}");
        assert_eq!(m.failed_rows_deleted, 2, "{name}");
        close(
            m.failure_rate.value,
            0.0,
            "failure rate with the failures deleted",
        );
        parts(&m.failure_rate, 0.0, 8.0);
        assert_eq!(m.qualified, 5, "{name}");
        close(m.joint_rate.value, 5.0 / 8.0, "joint rate over 8");
        parts(&m.joint_rate, 5.0, 8.0);
        flagged(&s, "failure_denominator");
    }
}

#[test]
fn wrong_missing_ttft_as_zero() {
    for (name, trace) in both() {
        let mut s = Settings::from_header(&trace.header);
        s.population.missing_ttft = MissingTtft::TreatAsZero;
        let m = metrics(&trace, &s);
        assert_eq!(
            m.ttft_p50.n,
            Some(10),
            "{name}: the two failures enter the sort"
        );
        // Sorted: 0, 0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.2, 2.0. Nearest-rank P50 is the
        // ⌈0.5·10⌉ = 5th smallest, 0.4 s (numpy's `inverted_cdf`, the same method, agrees);
        // the right P50 is 0.5 s, so the fake zeros pull it down.
        close(m.ttft_p50.value, 0.4, "P50 with missing as 0");
        close(m.ttft_p95.value, 2.0, "P95 with missing as 0");
        // The zeros are not successes, so they never qualify.
        assert_eq!(m.qualified, 5, "{name}");
        flagged(&s, "missing_ttft");
    }
}

#[test]
fn wrong_warmup_included() {
    let mut trace = parse_trace("t", TEN_JSONL).unwrap();
    trace.attempts[7].phase = tracelab_core::Phase::Warmup; // R8, the 2 s one
    let mut s = Settings::from_header(&trace.header);
    let m = metrics(&trace, &s);
    assert_eq!((m.attempts, m.warmup_excluded), (9, 1));
    close(m.ttft_p95.value, 1.2, "P95 without the warm-up");
    s.population.warmup = WarmupPolicy::Include;
    let m = metrics(&trace, &s);
    assert_eq!((m.attempts, m.warmup_excluded), (10, 0));
    close(m.ttft_p95.value, 2.0, "P95 with the warm-up mixed in");
    flagged(&s, "warmup");
}

#[test]
fn every_wrong_choice_is_flagged_together() {
    let s = Settings {
        comparison: Comparison::Lt,
        population: Population {
            failure_denominator: FailureDenominator::FailedRowsDeleted,
            missing_ttft: MissingTtft::TreatAsZero,
            warmup: WarmupPolicy::Include,
            ..Population::default()
        },
        ..Settings::default()
    };
    let mut settings: Vec<_> = s.mistakes().iter().map(|m| m.setting).collect();
    settings.sort();
    assert_eq!(
        settings,
        [
            "comparison",
            "failure_denominator",
            "missing_ttft",
            "warmup"
        ]
    );
}

#[test]
fn cost_undefined_when_nothing_qualifies() {
    for (name, trace) in both() {
        let mut s = Settings::from_header(&trace.header);
        s.ttft_threshold_s = 0.1;
        let m = metrics(&trace, &s);
        assert_eq!(m.qualified, 0, "{name}");
        let cost = &m.cost_per_1000_qualified;
        assert_eq!(cost.value, None, "{name}: not infinity, not 0");
        assert!(cost.undefined.is_some(), "{name}: the reason is given");
        assert_eq!(cost.denominator, Some(0.0), "{name}");
        assert_eq!(tracelab_core::format::value(cost, Lang::En), "undefined");
        // Goodput is still defined: 0 qualified per second.
        close(m.goodput.value, 0.0, "goodput with nothing qualified");
        close(m.joint_rate.value, 0.0, "joint rate with nothing qualified");
    }
}

#[test]
fn goodput_undefined_without_window() {
    for (name, trace) in both() {
        let mut s = Settings::from_header(&trace.header);
        s.window_s = None;
        let m = metrics(&trace, &s);
        assert_eq!(m.goodput.value, None, "{name}");
        assert!(m.goodput.undefined.is_some(), "{name}");
        assert_eq!(
            m.qualified, 5,
            "{name}: qualification does not need a window"
        );
        s.window_cost = None;
        let m = metrics(&trace, &s);
        assert_eq!(m.cost_per_1000_qualified.value, None, "{name}");
        assert!(m.cost_per_1000_qualified.undefined.is_some(), "{name}");
    }
}

#[test]
fn streaming_example() {
    let trace = parse_trace("streaming-example.jsonl", STREAMING).unwrap();
    assert_eq!(trace.attempts.len(), 1);
    let a = &trace.attempts[0];
    assert_eq!(a.outcome, Outcome::Success);
    assert_eq!(a.ttft_ms, Some(700.0));
    assert_eq!(a.e2e_ms, Some(1000.0));
    assert_eq!(a.first_byte_ms, Some(650.0));
    let gaps: Vec<f64> = a.event_gaps_ms().collect();
    assert_eq!(gaps, vec![100.0, 150.0]);

    let s = Settings::from_header(&trace.header);
    let m = metrics(&trace, &s);
    close(m.ttft_p50.value, 0.7, "TTFT");
    close(m.e2e_p50.value, 1.0, "E2E");
    assert_eq!(m.itl_p50.n, Some(2), "two gaps between three events");
    close(m.itl_p50.value, 0.1, "ITL P50 (nearest-rank: 1st of 2)");
    close(m.itl_tail.value, 0.15, "ITL P95 (2nd of 2)");
    assert_eq!(m.qualified, 1);
    assert_eq!(m.output_tokens_per_s.value, None, "no window, so no rate");
}

// --- percentiles -------------------------------------------------------------------------------

/// The lesson's success TTFTs, in seconds.
const LESSON: [f64; 8] = [0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.2, 2.0];
/// A second data set with ties and an odd length (sorted).
const ODD: [f64; 11] = [1.0, 1.0, 2.0, 3.0, 3.0, 4.0, 5.0, 5.0, 5.0, 6.0, 9.0];

#[track_caller]
fn pct(data: &[f64], p: f64, method: PercentileMethod, expected: f64) {
    let v = percentile(data, p, method).expect("non-empty");
    assert!(
        (v - expected).abs() < 1e-12,
        "{} P{p} of {data:?}: expected {expected}, got {v}",
        method.code()
    );
}

#[test]
fn percentiles_match_numpy() {
    // Expected values from numpy 2.4.6, obtained with
    //   np.percentile(data, p, method=m)
    // for m in linear (numpy's default), lower, higher and inverted_cdf (numpy's name for
    // nearest-rank), printed with repr() and rounded here to the digits shown.
    use PercentileMethod::*;
    // np.percentile(LESSON, 95) = 1.7199999999999995; 50 → 0.55; 99 → 1.9439999999999997; 25 → 0.375
    pct(&LESSON, 95.0, Linear, 1.72);
    pct(&LESSON, 50.0, Linear, 0.55);
    pct(&LESSON, 99.0, Linear, 1.944);
    pct(&LESSON, 25.0, Linear, 0.375);
    pct(&LESSON, 90.0, Linear, 1.44);
    // lower: 50 → 0.5, 95 → 1.2, 25 → 0.3; higher: 50 → 0.6, 95 → 2.0, 25 → 0.4
    pct(&LESSON, 50.0, Lower, 0.5);
    pct(&LESSON, 95.0, Lower, 1.2);
    pct(&LESSON, 25.0, Lower, 0.3);
    pct(&LESSON, 50.0, Higher, 0.6);
    pct(&LESSON, 95.0, Higher, 2.0);
    pct(&LESSON, 25.0, Higher, 0.4);
    // inverted_cdf: 50 → 0.5, 95 → 2.0, 25 → 0.3, 99 → 2.0
    pct(&LESSON, 50.0, NearestRank, 0.5);
    pct(&LESSON, 95.0, NearestRank, 2.0);
    pct(&LESSON, 25.0, NearestRank, 0.3);
    pct(&LESSON, 99.0, NearestRank, 2.0);

    // ODD = sorted([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]):
    // linear 50 → 4.0, 95 → 7.5, 99 → 8.700000000000001, 90 → 6.0, 25 → 2.5, 10 → 1.0
    pct(&ODD, 50.0, Linear, 4.0);
    pct(&ODD, 95.0, Linear, 7.5);
    pct(&ODD, 99.0, Linear, 8.7);
    pct(&ODD, 90.0, Linear, 6.0);
    pct(&ODD, 25.0, Linear, 2.5);
    pct(&ODD, 10.0, Linear, 1.0);
    // lower 95 → 6.0, 25 → 2.0; higher 95 → 9.0, 25 → 3.0; inverted_cdf 95 → 9.0, 25 → 2.0, 50 → 4.0
    pct(&ODD, 95.0, Lower, 6.0);
    pct(&ODD, 25.0, Lower, 2.0);
    pct(&ODD, 95.0, Higher, 9.0);
    pct(&ODD, 25.0, Higher, 3.0);
    pct(&ODD, 95.0, NearestRank, 9.0);
    pct(&ODD, 25.0, NearestRank, 2.0);
    pct(&ODD, 50.0, NearestRank, 4.0);

    // Edges: one sample, and p = 100.
    for m in PercentileMethod::ALL {
        pct(&[0.7], 50.0, m, 0.7);
        pct(&[0.7], 95.0, m, 0.7);
        pct(&LESSON, 100.0, m, 2.0);
        assert_eq!(percentile(&[], 95.0, m), None);
    }
}

#[test]
fn linear_through_the_metrics() {
    // Same numbers through Index + Metrics (which hold ms): numpy on the ms values gives
    // 1719.9999999999995 for P95 and 550.0 for P50.
    let trace = parse_trace("t", TEN_JSONL).unwrap();
    let mut s = Settings::from_header(&trace.header);
    s.percentile = PercentileMethod::Linear;
    let m = metrics(&trace, &s);
    close(m.ttft_p95.value, 1.72, "linear P95");
    close(m.ttft_p50.value, 0.55, "linear P50");
    assert!(
        m.ttft_p95.note.is_none(),
        "the 'P95 is the maximum' note is for nearest-rank only"
    );
}

#[test]
fn nearest_rank_ranks() {
    assert_eq!(
        nearest_rank(95.0, 20),
        19,
        "95·20/100 is exactly 19, not 19.000000000000004"
    );
    assert_eq!(nearest_rank(95.0, 8), 8);
    assert_eq!(nearest_rank(50.0, 8), 4);
    assert_eq!(nearest_rank(50.0, 10), 5);
    assert_eq!(nearest_rank(99.0, 100), 99);
    assert_eq!(nearest_rank(99.9, 1000), 999);
    assert_eq!(nearest_rank(100.0, 7), 7);
    assert_eq!(nearest_rank(0.001, 7), 1);
    assert_eq!(nearest_rank(95.0, 0), 0);
    // numpy inverted_cdf over 1..=20: P95 → 19.0, P50 → 10.0, P5 → 1.0
    let one_to_twenty: Vec<f64> = (1..=20).map(f64::from).collect();
    pct(&one_to_twenty, 95.0, PercentileMethod::NearestRank, 19.0);
    pct(&one_to_twenty, 50.0, PercentileMethod::NearestRank, 10.0);
    pct(&one_to_twenty, 5.0, PercentileMethod::NearestRank, 1.0);
    assert_eq!(tracelab_core::metrics::min_samples_for_tail(95.0), 20);
    assert!(percentile::describe(95.0, 8, PercentileMethod::NearestRank).contains("8 of 8"));
}

// --- write / parse round trips ----------------------------------------------------------------

#[test]
fn jsonl_round_trip_keeps_attempts() {
    for (name, trace) in both().into_iter().chain([(
        "streaming-example.jsonl",
        parse_trace("s", STREAMING).unwrap(),
    )]) {
        let text = write::to_jsonl(&trace);
        assert!(text.ends_with('\n'));
        let again = parse_trace("again.jsonl", &text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(again.attempts, trace.attempts, "{name}");
        assert_eq!(again.header, trace.header, "{name}");
        assert_eq!(again.footer, trace.footer, "{name}");
        assert_eq!(again.gpu, trace.gpu, "{name}");
        // And it is a fixed point: writing the re-read trace gives the same text.
        assert_eq!(write::to_jsonl(&again), text, "{name}");
        // The bytes entry point reads it the same.
        assert_eq!(
            parse_trace_bytes("b", text.as_bytes()).unwrap().attempts,
            trace.attempts,
            "{name}"
        );
    }
}

#[test]
fn csv_round_trip_keeps_metrics() {
    for (name, trace) in both() {
        let text = write::to_csv(&trace);
        let again =
            parse_trace("again.csv", &text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert_eq!(again.attempts.len(), trace.attempts.len(), "{name}");
        let s = Settings::from_header(&trace.header);
        assert_eq!(
            Settings::from_header(&again.header),
            s,
            "{name}: window, cost and SLO survive"
        );
        for threshold in [0.1, 0.3, 0.5, 0.8, 1.0, 1.2, 2.0] {
            for comparison in [Comparison::Le, Comparison::Lt] {
                for population in populations() {
                    let s = Settings {
                        ttft_threshold_s: threshold,
                        comparison,
                        population,
                        ..s.clone()
                    };
                    let (a, b) = (metrics(&trace, &s), metrics(&again, &s));
                    // The CSV form keeps no stream events or usage flag, so ITL and tokens/s
                    // are not carried; every figure of the metric card is.
                    assert_eq!(
                        a.card_figures(),
                        b.card_figures(),
                        "{name} at {threshold} {comparison:?} {population:?}"
                    );
                    assert_eq!(
                        (a.attempts, a.successes, a.failures, a.qualified),
                        (b.attempts, b.successes, b.failures, b.qualified)
                    );
                    assert_eq!(a.e2e_p50, b.e2e_p50, "{name}");
                    assert_eq!(a.business_success_rate, b.business_success_rate, "{name}");
                }
            }
        }
        if name.ends_with(".csv") {
            // From CSV to CSV nothing is lost at all.
            assert_eq!(again.attempts, trace.attempts, "{name}");
        }
    }
}

fn populations() -> Vec<Population> {
    let mut out = Vec::new();
    for failure_denominator in FailureDenominator::ALL {
        for missing_ttft in MissingTtft::ALL {
            for warmup in WarmupPolicy::ALL {
                out.push(Population {
                    failure_denominator,
                    missing_ttft,
                    warmup,
                    ..Population::default()
                });
            }
        }
    }
    out
}

#[test]
fn the_edge_holds_for_times_that_are_not_exact_in_binary() {
    // 4893.211 − 2232.211 is 2661.0000000000005 in floating point and 1.001 × 1000 is
    // 1000.9999999999999; a TTFT written as exactly the threshold must compare equal to it.
    let jsonl = format!(
        "{}\n{}\n{}\n",
        r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"t","version":"1"}}"#,
        r#"{"kind":"attempt","id":"A","phase":"measure","start_ms":2232.211,"first_token_ms":4893.211,"end_ms":5000,"outcome":"success","quality":"pass"}"#,
        r#"{"kind":"attempt","id":"B","phase":"measure","start_ms":3245.913,"first_token_ms":6003.913,"end_ms":7000,"outcome":"success","quality":"pass"}"#,
    );
    let trace = parse_trace("edge.jsonl", &jsonl).unwrap();
    assert_eq!(trace.attempts[0].ttft_ms, Some(2661.0));
    assert_eq!(trace.attempts[1].ttft_ms, Some(2758.0));
    for (threshold, le, lt) in [(2.661, 1, 0), (2.758, 2, 1)] {
        let mut s = Settings {
            ttft_threshold_s: threshold,
            ..Settings::default()
        };
        assert_eq!(metrics(&trace, &s).qualified, le, "≤ {threshold}");
        s.comparison = Comparison::Lt;
        assert_eq!(metrics(&trace, &s).qualified, lt, "< {threshold}");
    }

    let csv = "id,outcome,ttft_s,quality\nA,success,1.001,pass\nB,success,0.007,pass\n";
    let trace = parse_trace("edge.csv", csv).unwrap();
    for (threshold, le, lt) in [(1.001, 2, 1), (0.007, 1, 0)] {
        let mut s = Settings {
            ttft_threshold_s: threshold,
            ..Settings::default()
        };
        assert_eq!(metrics(&trace, &s).qualified, le, "≤ {threshold}");
        s.comparison = Comparison::Lt;
        assert_eq!(metrics(&trace, &s).qualified, lt, "< {threshold}");
    }
}

/// A learner types 2.007 s as the threshold and edits a row's TTFT to 2.007 s: the two are the
/// same time and the row is within under ≤ (not within under <). `2.007 × 1000` is
/// 2007.0000000000002 in floating point, so both must go through the core's one conversion.
#[test]
fn a_ttft_typed_as_the_threshold_is_within_it() {
    use tracelab_core::{units, verdict, Latency, RowEdit, WhatIf};
    let trace = parse_trace("ten-requests.jsonl", TEN_JSONL).unwrap();
    let settings = Settings::from_header(&trace.header)
        .with_typed("t", "2.007")
        .unwrap()
        .expect("a threshold was typed");
    assert_eq!(settings.ttft_threshold_s, 2.007);
    let r1 = trace.attempts.iter().position(|a| a.id == "R1").unwrap();
    let typed = units::parse_seconds_as_ms("2.007").unwrap();
    assert_eq!(
        typed,
        Some(2007.0),
        "not 2.007 × 1000 = {}",
        2.007_f64 * 1000.0
    );
    let mut w = WhatIf::default();
    w.edits.insert(
        r1,
        RowEdit {
            ttft_ms: Some(typed),
            ..RowEdit::default()
        },
    );
    let edited = w.apply(&trace.attempts);
    assert_eq!(
        verdict(&edited[r1], &settings).latency,
        Latency::Within,
        "2.007 s ≤ 2.007 s"
    );
    let lt = Settings {
        comparison: Comparison::Lt,
        ..settings.clone()
    };
    assert_eq!(
        verdict(&edited[r1], &lt).latency,
        Latency::Over,
        "2.007 s is not < 2.007 s"
    );
    // The index's binary search agrees with the single verdict: R1 still counts as qualified.
    let before = metrics(&trace, &settings).qualified;
    assert_eq!(
        metrics(
            &Trace {
                attempts: edited.clone(),
                ..trace.clone()
            },
            &settings
        )
        .qualified,
        before
    );
    assert_eq!(
        metrics(
            &Trace {
                attempts: edited,
                ..trace.clone()
            },
            &lt
        )
        .qualified,
        before - 1
    );
    // The number as written back into the box is the number typed.
    assert_eq!(units::s_from_ms(2007.0), 2.007);
}

#[test]
fn the_card_shows_the_lesson() {
    let trace = parse_trace("ten-requests.jsonl", TEN_JSONL).unwrap();
    let s = Settings::from_header(&trace.header);
    let m = metrics(&trace, &s);
    let card = tracelab_core::card::render_text("ten-requests.jsonl", &trace, &s, &m, Lang::En);
    assert!(card.contains("20 %"), "{card}");
    assert!(card.contains("2 / 10"), "{card}");
    assert!(card.contains("4 CNY"), "{card}");
    assert!(card.contains("0.5 /s"), "{card}");
    let zh = tracelab_core::card::render_text("ten-requests.jsonl", &trace, &s, &m, Lang::Zh);
    assert!(zh.contains("失败率"), "{zh}");
}

/// A what-if edit that turns a not-qualified row into a qualified one names its false
/// conclusion; counting R5 (a quality fail) as qualified is one of the lesson's three mistakes.
#[test]
fn a_what_if_edit_that_flips_a_verdict_names_the_false_conclusion() {
    use tracelab_core::{Quality, RowEdit, WhatIf};
    let trace = parse_trace("ten-requests.jsonl", TEN_JSONL).unwrap();
    let s = Settings::from_header(&trace.header);
    let r5 = trace
        .attempts
        .iter()
        .position(|a| a.id == "R5")
        .expect("R5 in the sample");
    let mut w = WhatIf::default();
    assert!(w.verdict_flips(&trace.attempts, &s).is_empty());
    w.edits.insert(
        r5,
        RowEdit {
            quality: Some(Quality::Pass),
            ..RowEdit::default()
        },
    );
    let flips = w.verdict_flips(&trace.attempts, &s);
    assert_eq!(flips.len(), 1, "{flips:?}");
    assert!(
        flips[0].label.en.contains("R5") && flips[0].label.en.contains("quality"),
        "{:?}",
        flips[0].label
    );
    assert!(
        flips[0].false_conclusion.en.contains("wrong answer"),
        "{:?}",
        flips[0].false_conclusion
    );
    assert_eq!(
        metrics(
            &Trace {
                attempts: w.apply(&trace.attempts),
                ..trace.clone()
            },
            &s
        )
        .qualified,
        6
    );
    assert_eq!(w.summary().en, "1 row edited");
    // An edit that changes nothing a verdict rests on is hypothetical but not a flip.
    let r1 = trace.attempts.iter().position(|a| a.id == "R1").unwrap();
    let mut w = WhatIf::default();
    w.edits.insert(
        r1,
        RowEdit {
            ttft_ms: Some(Some(250.0)),
            ..RowEdit::default()
        },
    );
    assert!(w.verdict_flips(&trace.attempts, &s).is_empty());
    // Deleting the edited row removes its flip.
    let mut w = WhatIf::default();
    w.edits.insert(
        r5,
        RowEdit {
            quality: Some(Quality::Pass),
            ..RowEdit::default()
        },
    );
    w.deleted.insert(r5);
    assert!(w.verdict_flips(&trace.attempts, &s).is_empty());
    assert_eq!(w.summary().en, "1 row edited, 1 deleted");
}

#[test]
fn the_percentile_method_line_is_written_in_both_languages() {
    let t = percentile::describe_text(50.0, 8, PercentileMethod::NearestRank);
    assert_eq!(t.en, "nearest-rank: ⌈50·8/100⌉ = 4 of 8");
    assert_eq!(t.zh, "最近秩：⌈50·8/100⌉ = 第 4 个（共 8 个）");
    let trace = parse_trace("ten-requests.jsonl", TEN_JSONL).unwrap();
    let m = metrics(&trace, &Settings::from_header(&trace.header));
    assert_eq!(
        m.ttft_p95.method_text.as_ref().map(|t| t.zh.as_str()),
        Some("最近秩：⌈95·8/100⌉ = 第 8 个（共 8 个）")
    );
    assert!(
        !m.quality_not_evaluated(),
        "the sample carries quality verdicts"
    );
    // Every place the core writes the method for a Chinese reader names it in Chinese: the
    // terminal card's settings line and figure details, and the Markdown card's.
    let settings = Settings::from_header(&trace.header);
    let zh =
        tracelab_core::card::render_text("ten-requests.jsonl", &trace, &settings, &m, Lang::Zh);
    assert!(zh.contains("分位数方法 最近秩"), "{zh}");
    assert!(
        zh.contains("失败率分母 全部尝试（正确）") && !zh.contains("all_attempts"),
        "the denominator in words: {zh}"
    );
    assert!(
        zh.contains("最近秩：⌈95·8/100⌉ = 第 8 个（共 8 个）, n = 8"),
        "{zh}"
    );
    assert!(
        !zh.contains("nearest-rank"),
        "English left in the Chinese card: {zh}"
    );
    let en =
        tracelab_core::card::render_text("ten-requests.jsonl", &trace, &settings, &m, Lang::En);
    assert!(
        en.contains("percentile nearest-rank")
            && en.contains("nearest-rank: ⌈95·8/100⌉ = 8 of 8, n = 8"),
        "{en}"
    );
}

/// A wrong choice is marked on the figures it moves and on no other (issue: "one idea per
/// interactive"): on the ten requests, failures ÷ successes moves the failure rate alone; `<` at
/// the 1 s threshold moves nothing (no TTFT is exactly 1 s), at 0.5 s it moves the qualified
/// count and everything built on it (R4's 0.5 s no longer qualifies); a deleted failure moves
/// the failure rate and the per-attempt rates, never P95 TTFT of the successes.
#[test]
fn each_mistake_is_marked_on_the_figures_it_moves_and_no_other() {
    use tracelab_core::whatif::{marked, WhatIf};
    for (name, trace) in both() {
        let marks = |s: &Settings, w: &WhatIf| -> Vec<(&'static str, Vec<String>)> {
            let working = w.apply(&trace.attempts);
            let now = Metrics::of(&working, s);
            marked(&trace.attempts, &working, w, s, &now)
                .into_iter()
                .map(|m| (m.setting, m.figures))
                .collect()
        };
        let none = WhatIf::default();
        // The trace's own window and cost, as the lab starts from.
        let lesson = Settings::from_header(&trace.header);
        let mut s = lesson.clone();
        assert!(
            marks(&s, &none).is_empty(),
            "{name}: the lesson's settings mark nothing"
        );

        s.population.failure_denominator = FailureDenominator::Successes;
        assert_eq!(
            marks(&s, &none),
            [("failure_denominator", vec!["failure_rate".to_string()])],
            "{name}"
        );

        let mut s = Settings {
            comparison: Comparison::Lt,
            ..lesson.clone()
        };
        assert_eq!(
            marks(&s, &none),
            [("comparison", Vec::<String>::new())],
            "{name}: < at 1 s moves nothing"
        );
        s.ttft_threshold_s = 0.5;
        let moved = &marks(&s, &none)[0].1;
        assert_eq!(
            moved,
            &[
                "qualified_count",
                "joint_rate",
                "goodput",
                "cost_per_1000_qualified"
            ],
            "{name}"
        );

        // Quality left out of the joint condition: R5 qualifies, so the qualified count and what
        // is built on it move; the quality pass rate itself does not.
        let mut s = lesson.clone();
        s.population.quality = tracelab_core::settings::QualityRule::Ignored;
        assert_eq!(
            marks(&s, &none),
            [(
                "quality",
                vec![
                    "qualified_count".to_string(),
                    "joint_rate".into(),
                    "goodput".into(),
                    "cost_per_1000_qualified".into()
                ]
            )],
            "{name}"
        );

        // R9 (a timeout) deleted: the failure rate and the rates over all attempts move.
        let mut w = WhatIf::default();
        w.deleted.insert(8);
        let m = marks(&lesson, &w);
        assert!(!m.is_empty(), "{name}: the deletion is named");
        for (_, figures) in &m {
            assert!(
                figures.contains(&"failure_rate".to_string())
                    && figures.contains(&"joint_rate".to_string()),
                "{name}: {figures:?}"
            );
            assert!(
                !figures.contains(&"ttft_p95".to_string())
                    && !figures.contains(&"quality_pass_rate".to_string()),
                "{name}: {figures:?}"
            );
        }
    }
}

/// The cost formula's numerator is money and says so: "= 20 CNY / 5", not "= 20 / 5".
#[test]
fn the_cost_formula_carries_the_currency_of_its_numerator() {
    for (name, trace) in both() {
        let m = metrics(&trace, &Settings::from_header(&trace.header));
        let en = tracelab_core::format::formula(&m.cost_per_1000_qualified, Lang::En).unwrap();
        assert!(en.ends_with("= 20 CNY / 5"), "{name}: {en}");
        let zh = tracelab_core::format::formula(&m.cost_per_1000_qualified, Lang::Zh).unwrap();
        assert!(zh.ends_with("= 20 CNY / 5"), "{name}: {zh}");
        // Other formulas keep plain numbers.
        let failures = tracelab_core::format::formula(&m.failure_rate, Lang::En).unwrap();
        assert!(failures.ends_with("= 2 / 10"), "{name}: {failures}");
    }
}

/// A learner's line says each row's outcome and quality in the reader's words: in Chinese no
/// trace name ("(success)", "pass", "not_evaluated") is left in English (#38).
#[test]
fn outcomes_and_quality_read_in_the_readers_words() {
    use tracelab_core::Quality;
    let latin = |s: &str| s.chars().any(|c| c.is_ascii_alphabetic());
    for o in [
        Outcome::Success,
        Outcome::TimeoutBeforeFirstToken,
        Outcome::TimeoutAfterFirstToken,
        Outcome::ConnectError,
        Outcome::StreamBroken,
        Outcome::Cancelled,
    ] {
        let zh = o.words(Lang::Zh);
        assert!(!latin(&zh), "{o}: {zh}");
        // The page's label keeps the trace's name beside it, to read with the file.
        assert!(o.label(Lang::Zh).contains(o.name()));
        assert_eq!(o.words(Lang::En), o.to_string());
    }
    assert_eq!(
        Outcome::HttpError { status: 503 }.words(Lang::Zh),
        "HTTP 错误 503"
    );
    for q in [Quality::Pass, Quality::Fail, Quality::NotEvaluated] {
        assert!(!latin(q.label(Lang::Zh)), "{}", q.label(Lang::Zh));
        assert!(
            q.label(Lang::En).starts_with("quality"),
            "{}",
            q.label(Lang::En)
        );
    }
    assert_eq!(Quality::Pass.label(Lang::Zh), "质量通过");
}
