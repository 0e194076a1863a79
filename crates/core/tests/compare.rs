//! Comparing runs: every interval method against independently computed known answers, the
//! edge cases (0 of n, n of n, n = 1, all TTFTs equal, no successes), bootstrap determinism,
//! the contract check, the reruns rule, and properties that must hold for any sample.
//!
//! Where the expected values come from: `tests/known/intervals.py`, run with SciPy 1.17.1 and
//! statsmodels 0.15.0 installed from PyPI (`python3 -m venv /tmp/v && /tmp/v/bin/pip install scipy
//! statsmodels && /tmp/v/bin/python crates/core/tests/known/intervals.py`); its printed tuples
//! are pasted below unchanged. The order-statistic ranks were also checked there against SciPy's
//! own `quantile_test(...).confidence_interval()`, which picks the same order statistics.

use tracelab_core::compare::stats::{
    min_n_for_quantile, newcombe, poisson, quantile_interval, quantile_ranks, wilson, SplitMix64,
};
use tracelab_core::compare::*;
use tracelab_core::parse::parse_trace;
use tracelab_core::{Index, Lang, Metrics, Settings, Trace};

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: got {a}, expected {b}");
}

#[test]
fn wilson_matches_statsmodels() {
    // statsmodels proportion_confint(k, n, alpha=0.05, method="wilson")
    let known = [
        (0, 10, 0.0, 0.27753279986288926),
        (10, 10, 0.7224672001371106, 1.0),
        (1, 1, 0.2065493143772374, 1.0),
        (0, 1, 0.0, 0.7934506856227627),
        (3, 10, 0.10779126740630104, 0.6032218525388546),
        (7, 8, 0.5291118177871466, 0.9775825085499434),
        (45, 50, 0.7863976856252034, 0.9565242350681095),
    ];
    for (k, n, lo, hi) in known {
        let b = wilson(k, n).unwrap();
        close(b.lo.unwrap(), lo, 1e-12, &format!("wilson lo {k}/{n}"));
        close(b.hi.unwrap(), hi, 1e-12, &format!("wilson hi {k}/{n}"));
    }
    // 0 of 0: there is nothing to put an interval on.
    assert_eq!(wilson(0, 0), None);
}

#[test]
fn order_statistic_ranks_match_scipy() {
    // lo = max l with binom.cdf(l-1, n, q) <= 0.025, hi = min u with binom.sf(u-1, n, q) <= 0.025;
    // 0 = no lower bound, n + 1 = no upper bound (SciPy's quantile_test gives nan there).
    let known = [
        (0.95, 8, 6, 9),
        (0.5, 8, 1, 8),
        (0.5, 1, 0, 2),
        (0.5, 5, 0, 6),
        (0.5, 6, 1, 6),
        (0.95, 71, 63, 72),
        (0.95, 72, 64, 72),
        (0.95, 100, 90, 100),
        (0.5, 20, 6, 15),
        (0.99, 1000, 983, 997),
    ];
    for (q, n, lo, hi) in known {
        let r = quantile_ranks(q, n);
        assert_eq!((r.lo, r.hi), (lo, hi), "ranks of q = {q}, n = {n}");
    }
    // The smallest n with both bounds, from the same table: 72 for P95, 6 for P50.
    assert_eq!(min_n_for_quantile(0.95), 72);
    assert_eq!(min_n_for_quantile(0.5), 6);
}

#[test]
fn p95_from_eight_samples_is_open_above() {
    let sample: Vec<f64> = (1..=8).map(|i| i as f64 * 100.0).collect();
    let b = quantile_interval(&sample, 0.95);
    assert_eq!(b.lo, Some(600.0));
    assert_eq!(b.hi, None, "no upper bound exists for P95 from 8 samples");
}

#[test]
fn poisson_matches_scipy_chi2() {
    // chi2.ppf(0.025, 2k)/2 and chi2.ppf(0.975, 2k+2)/2
    let known = [
        (0, 0.0, 3.6888794541139354),
        (1, 0.025317807984289876, 5.571643390938898),
        (5, 1.6234863901184207, 11.66833207932267),
        (30, 20.240874021420915, 42.82686539480766),
        (1000, 938.9730184076952, 1063.952136016302),
    ];
    for (k, lo, hi) in known {
        let b = poisson(k);
        close(
            b.lo.unwrap(),
            lo,
            1e-9 * lo.max(1.0),
            &format!("poisson lo {k}"),
        );
        close(
            b.hi.unwrap(),
            hi,
            1e-9 * hi.max(1.0),
            &format!("poisson hi {k}"),
        );
    }
}

#[test]
fn newcombe_matches_statsmodels() {
    // confint_proportions_2indep(k_new, n_new, k_base, n_base, method="newcomb", compare="diff")
    let known = [
        (3, 10, 1, 10, -0.1597936015062252, 0.5141461574374272),
        (0, 10, 0, 10, -0.27753279986288926, 0.27753279986288926),
        (10, 10, 5, 10, 0.11736746745022197, 0.7634069094874361),
        (50, 100, 30, 100, 0.06422327745160022, 0.32576829087642145),
        (1, 1, 0, 1, -0.12210872068194178, 1.0),
        (10, 10, 0, 10, 0.6075093504305241, 1.0),
    ];
    for (a, b, c, d, lo, hi) in known {
        let i = newcombe(a, b, c, d).unwrap();
        close(
            i.lo.unwrap(),
            lo,
            1e-12,
            &format!("newcombe lo {a}/{b} vs {c}/{d}"),
        );
        close(
            i.hi.unwrap(),
            hi,
            1e-12,
            &format!("newcombe hi {a}/{b} vs {c}/{d}"),
        );
    }
    assert_eq!(newcombe(1, 0, 1, 10), None, "no attempts on one side");
}

#[test]
fn splitmix64_matches_the_reference_sequence() {
    // The reference algorithm written out in Python (tests/known/intervals.py).
    let mut g = SplitMix64::new(0);
    assert_eq!(
        [g.next_u64(), g.next_u64(), g.next_u64()],
        [0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f]
    );
    let mut g = SplitMix64::new(42);
    assert_eq!(
        [g.next_u64(), g.next_u64(), g.next_u64()],
        [0xbdd732262feb6e95, 0x28efe333b266f103, 0x47526757130f9f52]
    );
}

/// A classroom CSV with the given TTFTs (s) as successes passing quality, plus `failures` timeouts.
fn run_csv(ttfts: &[f64], failures: usize) -> String {
    let mut s = String::from("# window_s: 10\nid,outcome,ttft_s,quality,e2e_s\n");
    for (i, t) in ttfts.iter().enumerate() {
        s.push_str(&format!("R{i},success,{t},pass,{}\n", t + 0.5));
    }
    for i in 0..failures {
        s.push_str(&format!(
            "F{i},timeout_before_first_token,,not_evaluated,\n"
        ));
    }
    s
}

fn run(name: &str, ttfts: &[f64], failures: usize) -> Run {
    let trace = parse_trace(&format!("{name}.csv"), &run_csv(ttfts, failures)).unwrap();
    let settings = Settings::from_header(&trace.header);
    Run::new(name, trace, settings)
}

fn row<'a>(r: &'a Report, key: &str) -> &'a DiffRow {
    r.pairs[0]
        .rows
        .iter()
        .find(|x| x.key == key)
        .unwrap_or_else(|| panic!("no row {key}"))
}

/// A deterministic spread of TTFTs around `centre` seconds.
fn spread(n: usize, centre: f64, seed: u64) -> Vec<f64> {
    let mut g = SplitMix64::new(seed);
    (0..n)
        .map(|_| centre * (0.7 + 0.6 * (g.next_u64() >> 11) as f64 / (1u64 << 53) as f64))
        .collect()
}

#[test]
fn bootstrap_is_deterministic_for_a_seed_and_reports_it() {
    let (a, b) = (spread(200, 0.4, 1), spread(200, 0.5, 2));
    let runs = [run("a", &a, 0), run("b", &b, 0)];
    let boot = Bootstrap {
        seed: 7,
        resamples: 500,
    };
    let one = Report::build(&runs, boot);
    let two = Report::build(&runs, boot);
    assert_eq!(
        row(&one, "ttft_tail").difference_interval,
        row(&two, "ttft_tail").difference_interval
    );
    assert_eq!(
        row(&one, "ttft_tail").method,
        Some(IntervalMethod::Bootstrap {
            seed: 7,
            resamples: 500
        })
    );
    let other = Report::build(
        &runs,
        Bootstrap {
            seed: 8,
            resamples: 500,
        },
    );
    assert_ne!(
        row(&one, "ttft_tail").difference_interval,
        row(&other, "ttft_tail").difference_interval
    );
    let text = one.render_text(Lang::En);
    assert!(text.contains("bootstrap, 500 resamples, seed 7"), "{text}");
    let json = serde_json::to_value(&one).unwrap();
    assert_eq!(json["bootstrap"]["seed"], 7);
    assert_eq!(json["bootstrap"]["resamples"], 500);
}

#[test]
fn a_real_slowdown_is_slower_beyond_noise() {
    let base = spread(200, 0.4, 1);
    let slower: Vec<f64> = spread(200, 0.4, 2).iter().map(|t| t + 0.3).collect();
    let r = Report::build(
        &[run("base", &base, 2), run("new", &slower, 2)],
        Bootstrap::default(),
    );
    for key in ["ttft_p50", "ttft_tail", "e2e_p50"] {
        assert_eq!(row(&r, key).judgement, Judgement::Up, "{key}");
        assert_eq!(row(&r, key).verdict.en, "slower beyond noise");
    }
    // The failure rate did not change.
    assert_eq!(row(&r, "failure_rate").judgement, Judgement::NoEvidence);
    let faster = Report::build(
        &[run("new", &slower, 2), run("base", &base, 2)],
        Bootstrap::default(),
    );
    assert_eq!(row(&faster, "ttft_p50").verdict.en, "faster beyond noise");
}

#[test]
fn failures_beyond_noise_are_higher_and_worse() {
    let t = spread(100, 0.4, 3);
    let r = Report::build(
        &[run("base", &t, 0), run("new", &t, 40)],
        Bootstrap::default(),
    );
    let f = row(&r, "failure_rate");
    assert_eq!(f.judgement, Judgement::Up);
    assert_eq!(f.verdict.en, "higher beyond noise (worse)");
    assert_eq!(
        row(&r, "joint_rate").verdict.en,
        "lower beyond noise (worse)"
    );
}

#[test]
fn identical_traces_always_show_no_evidence_of_a_change() {
    for (n, failures) in [(1, 0), (3, 1), (8, 2), (30, 0), (150, 5)] {
        let t = spread(n, 0.6, n as u64);
        let r = Report::build(
            &[run("a", &t, failures), run("b", &t, failures)],
            Bootstrap::default(),
        );
        for row in &r.pairs[0].rows {
            if row.base.is_some() {
                assert_eq!(row.judgement, Judgement::NoEvidence, "n = {n}, {}", row.key);
            }
        }
    }
}

#[test]
fn p95_from_eight_is_too_few_to_tell_with_the_n_needed() {
    let a = spread(8, 0.4, 1);
    let b: Vec<f64> = a.iter().map(|t| t * 3.0).collect();
    let r = Report::build(&[run("a", &a, 0), run("b", &b, 0)], Bootstrap::default());
    let tail = row(&r, "ttft_tail");
    assert_eq!(tail.judgement, Judgement::TooFew { needed: 72 });
    assert_eq!(
        tail.verdict.en,
        "too few samples to tell (needs n ≥ 72 per run)"
    );
    assert!(tail.verdict.zh.contains("72"));
    assert_eq!(tail.difference_interval, None, "no interval is invented");
    // The run's own interval says why.
    let iv = tail.base_interval.as_ref().unwrap();
    assert_eq!(iv.bounds.hi, None);
    assert!(
        iv.note.as_ref().unwrap().en.contains("n ≥ 72"),
        "{:?}",
        iv.note
    );
    // P50 from 8 has both bounds; tripled TTFTs are slower beyond noise.
    assert_eq!(row(&r, "ttft_p50").judgement, Judgement::Up);
}

#[test]
fn edge_cases_zero_of_n_n_of_n_one_sample_all_equal_no_successes() {
    // 0 of n failures vs n of n failures.
    let none_fail = run("ok", &[0.2; 10], 0);
    let all_fail = run("down", &[], 10);
    let r = Report::build(&[none_fail, all_fail], Bootstrap::default());
    let f = row(&r, "failure_rate");
    let i = f.difference_interval.unwrap();
    // 10/10 vs 0/10 by statsmodels' newcomb (last tuple of the script's Newcombe table).
    close(i.lo.unwrap(), 0.6075093504305241, 1e-12, "10/10 vs 0/10");
    close(i.hi.unwrap(), 1.0, 1e-12, "10/10 vs 0/10");
    // No successes: no TTFT percentile, too few to tell, nothing made up.
    let p50 = row(&r, "ttft_p50");
    assert_eq!(p50.new, None);
    assert_eq!(p50.judgement, Judgement::TooFew { needed: 6 });
    assert_eq!(
        row(&r, "quality_pass_rate").judgement,
        Judgement::TooFew { needed: 1 }
    );
    // The run with no successes has no percentile interval, and a goodput interval from 0 counts.
    let down = run("down", &[], 10);
    assert!(down.intervals.get("ttft_p50").is_none());
    let g = down.intervals.get("goodput").unwrap();
    assert_eq!(g.bounds.lo, Some(0.0));
    close(
        g.bounds.hi.unwrap(),
        3.6888794541139354 / 10.0,
        1e-10,
        "goodput 0 in 10 s",
    );

    // n = 1: P50's interval has no bound at all.
    let one = run("one", &[0.3], 0);
    let b = one.intervals.get("ttft_p50").unwrap().bounds;
    assert_eq!((b.lo, b.hi), (None, None));
    let w = one.intervals.get("failure_rate").unwrap().bounds;
    assert_eq!(w.lo, Some(0.0));
    close(w.hi.unwrap(), 0.7934506856227627, 1e-12, "wilson 0/1");

    // All TTFTs equal: the interval collapses to that value; a different constant is a change.
    let flat = run("flat", &[0.25; 100], 0);
    let b = flat.intervals.get("ttft_tail").unwrap().bounds;
    assert_eq!((b.lo, b.hi), (Some(0.25), Some(0.25)));
    let r = Report::build(
        &[run("flat", &[0.25; 100], 0), run("flat2", &[0.35; 100], 0)],
        Bootstrap::default(),
    );
    let d = row(&r, "ttft_tail");
    assert_eq!(d.judgement, Judgement::Up);
    let i = d.difference_interval.unwrap();
    close(i.lo.unwrap(), 0.1, 1e-12, "constant shift");
    close(i.hi.unwrap(), 0.1, 1e-12, "constant shift");
}

#[test]
fn intervals_contain_the_estimate_and_widen_as_n_shrinks() {
    for seed in 1..20u64 {
        let big = spread(400, 0.5, seed);
        let mut last_width = [0.0f64; 3];
        for n in [400, 200, 100] {
            let r = run("r", &big[..n], n / 20);
            for (j, key) in ["ttft_p50", "ttft_tail", "failure_rate"]
                .into_iter()
                .enumerate()
            {
                let fig_value = match key {
                    "ttft_p50" => r.metrics.ttft_p50.value,
                    "ttft_tail" => r.metrics.ttft_tail.value,
                    _ => r.metrics.failure_rate.value,
                }
                .unwrap();
                let b = r.intervals.get(key).unwrap().bounds;
                assert!(
                    b.contains(fig_value),
                    "seed {seed} n {n} {key}: {fig_value} outside {b:?}"
                );
                if key == "failure_rate" {
                    let width = b.hi.unwrap() - b.lo.unwrap();
                    assert!(width > last_width[j], "{key} narrower at smaller n");
                    last_width[j] = width;
                }
            }
        }
    }
    // Wilson widens strictly as n shrinks at the same share.
    let mut last = 0.0;
    for n in [1000u64, 100, 10] {
        let b = wilson(n / 5, n).unwrap();
        let w = b.hi.unwrap() - b.lo.unwrap();
        assert!(w > last);
        last = w;
    }
}

fn header_trace(conditions: &str) -> Trace {
    let text = format!(
        "{{\"kind\":\"header\",\"schema\":\"tracelab.trace\",\"version\":1,\"tool\":{{\"name\":\"tracelab\",\"version\":\"0.1.0\"}},\"conditions\":{conditions}}}\n"
    );
    parse_trace("h.jsonl", &text).unwrap()
}

#[test]
fn contract_lists_each_difference_with_both_values() {
    let base = header_trace(
        r#"{"model":"m1","api":"chat","max_tokens":64,"prompt_set":"p","prompt_set_sha256":"aa","arrival":"closed","concurrency":4,"timeout_s":30,"first_token_timeout_s":5,"warmup":2,"repetitions":3}"#,
    );
    let same = header_trace(
        r#"{"model":"m1","api":"chat","max_tokens":64,"prompt_set":"p","prompt_set_sha256":"aa","arrival":"closed","concurrency":4,"timeout_s":30,"first_token_timeout_s":5,"warmup":2,"repetitions":5}"#,
    );
    let c = check_contract(&base.header, &same.header);
    assert_eq!(c.status, ContractStatus::Holds, "{c:?}");
    assert_eq!(c.differences.len(), 1);
    assert_eq!(
        (c.differences[0].field.as_str(), c.differences[0].strictness),
        ("repetitions", Strictness::Warn)
    );

    let other = header_trace(
        r#"{"model":"m2","api":"chat","max_tokens":128,"prompt_set":"p","prompt_set_sha256":"aa","arrival":"closed","concurrency":4,"timeout_s":30,"warmup":2}"#,
    );
    let c = check_contract(&base.header, &other.header);
    assert_eq!(c.status, ContractStatus::Broken);
    let fields: Vec<(&str, &str, &str)> = c
        .differences
        .iter()
        .map(|d| (d.field.as_str(), d.base.as_str(), d.new.as_str()))
        .collect();
    assert!(fields.contains(&("model", "m1", "m2")), "{fields:?}");
    assert!(fields.contains(&("max_tokens", "64", "128")));
    assert!(fields.contains(&("first_token_timeout_s", "5", "(not recorded)")));
    assert!(c
        .lines(Lang::En)
        .iter()
        .any(|l| l.contains("model: base m1 · new m2 (must match)")));

    let bare = header_trace("{}");
    let c = check_contract(&bare.header, &bare.header);
    assert_eq!(c.status, ContractStatus::Unverified);
    assert!(c.not_recorded.contains(&"model".to_string()));
}

#[test]
fn a_broken_contract_labels_every_figure() {
    let mut a = run("a", &spread(50, 0.4, 1), 0);
    let mut b = run("b", &spread(50, 0.4, 2), 0);
    a.trace.header.conditions.model = Some("other".into());
    // Recorded on one side only, a condition cannot be checked: unverified, not broken.
    let mut only_a = run("a", &spread(50, 0.4, 1), 0);
    only_a.trace.header.conditions.model = Some("other".into());
    let one_sided = Report::build(
        &[only_a, run("b", &spread(50, 0.4, 2), 0)],
        Bootstrap::default(),
    );
    assert!(!one_sided.contract_broken());
    assert_eq!(
        one_sided.pairs[0].contract.status,
        ContractStatus::Unverified
    );
    assert!(one_sided.pairs[0]
        .contract
        .lines(Lang::En)
        .iter()
        .any(|l| l.contains("? model: base other · new (not recorded) (recorded in one run only")));
    b.trace.header.conditions.model = Some("m".into());
    let r = Report::build(&[a, b], Bootstrap::default());
    assert!(r.contract_broken());
    for row in &r.pairs[0].rows {
        assert!(
            row.contract_broken && row.verdict.en.starts_with("[contract broken]"),
            "{}",
            row.key
        );
        assert!(row.verdict.zh.starts_with("［契约被破坏］"));
    }
}

#[test]
fn reruns_follow_the_lessons_rule() {
    // Three reruns of 30: P50 agrees, the P95 interval has no upper bound → collect more.
    let runs: Vec<Run> = (1..=3)
        .map(|s| run(&format!("r{s}"), &spread(30, 0.5, s), 0))
        .collect();
    let r = Report::build(&runs, Bootstrap::default());
    let rr = r.reruns.as_ref().unwrap();
    assert_eq!(rr.p50.agree, Agreement::Agree);
    assert_eq!(rr.tail.agree, Agreement::TooFew);
    assert!(rr.verdict.en.contains("collect more"), "{}", rr.verdict.en);
    // Three reruns of 300 agree on both.
    let runs: Vec<Run> = (1..=3)
        .map(|s| run(&format!("r{s}"), &spread(300, 0.5, s), 0))
        .collect();
    let rr = Report::build(&runs, Bootstrap::default()).reruns.unwrap();
    assert_eq!(
        (rr.p50.agree, rr.tail.agree),
        (Agreement::Agree, Agreement::Agree),
        "{rr:?}"
    );
    // One rerun twice as slow: P50 moves.
    let mut runs: Vec<Run> = (1..=2)
        .map(|s| run(&format!("r{s}"), &spread(300, 0.5, s), 0))
        .collect();
    runs.push(run("slow", &spread(300, 1.0, 3), 0));
    let rr = Report::build(&runs, Bootstrap::default()).reruns.unwrap();
    assert_eq!(rr.p50.agree, Agreement::Disagree);
    assert!(rr.verdict.en.contains("P50 itself moves"));
    // Two runs are a comparison, not reruns.
    assert!(Report::build(&runs[..2], Bootstrap::default())
        .reruns
        .is_none());
}

#[test]
fn the_terminal_card_shows_each_interval_and_its_method() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../public/samples/ten-requests.jsonl"
    ))
    .unwrap();
    let trace = parse_trace("ten-requests.jsonl", &text).unwrap();
    let s = Settings::from_header(&trace.header);
    let ix = tracelab_core::Index::build(&trace.attempts, s.population);
    let m = tracelab_core::Metrics::compute(&ix, &s);
    let card = tracelab_core::card::render_text("ten-requests.jsonl", &trace, &s, &m, Lang::En);
    // Failure rate 2 of 10: Wilson 5.67 % … 50.98 % (statsmodels: 0.0566821 … 0.5098375).
    assert!(
        card.contains("95 % interval 5.67 % … 50.98 % (Wilson score)"),
        "{card}"
    );
    // P95 of 8 TTFTs has no upper bound, and the card says what n would give one.
    assert!(
        card.contains("no upper bound (order statistics X(6)…X(—) of 8"),
        "{card}"
    );
    assert!(card.contains("n ≥ 72"), "{card}");
    // Goodput 5 qualified in 10 s: exact Poisson 0.1623 … 1.1668 /s (chi2 table above, k = 5).
    assert!(
        card.contains("0.1623 /s … 1.1668 /s (exact Poisson count (Garwood))"),
        "{card}"
    );
    let zh = tracelab_core::card::render_text("ten-requests.jsonl", &trace, &s, &m, Lang::Zh);
    assert!(zh.contains("95 % 区间") && zh.contains("无上界"), "{zh}");
}

fn sample_run(name: &str) -> Run {
    let path = format!("{}/../../public/samples/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let trace = parse_trace(name, &text).unwrap();
    let settings = Settings::from_header(&trace.header);
    Run::new(name, trace, settings)
}

#[test]
fn the_baseline_lessons_compare_quiz_quotes_what_compare_computes() {
    let report = Report::build(
        &[
            sample_run("baseline-a.jsonl"),
            sample_run("baseline-rerun.jsonl"),
            sample_run("baseline-slower.jsonl"),
        ],
        Bootstrap::default(),
    );
    let course: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../lessons/course.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let quiz = course["lessons"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|l| l["exercises"].as_array().unwrap())
        .find(|e| e["id"] == "compare-verdict-quiz")
        .expect("the quiz is in the course");
    let (en, zh) = (
        quiz["prompt"]["en"].as_str().unwrap(),
        quiz["prompt"]["zh"].as_str().unwrap(),
    );
    let correct = quiz["options"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["correct"] == true)
        .unwrap();
    assert_eq!(correct["id"], "slower-only");
    for (pair, judgement) in [(0, Judgement::NoEvidence), (1, Judgement::Up)] {
        assert_eq!(report.pairs[pair].contract.status, ContractStatus::Holds);
        let tail = report.pairs[pair]
            .rows
            .iter()
            .find(|r| r.key == "ttft_tail")
            .unwrap();
        assert_eq!(tail.judgement, judgement, "pair {pair}");
        let (diff, interval) = (tail.difference_text(Lang::En), tail.interval_text(Lang::En));
        assert!(
            en.contains(&format!("{diff}, 95 % interval {interval}")),
            "the quiz quotes {diff} {interval}: {en}"
        );
        let zh_interval = interval.replace(" s", " 秒");
        assert!(zh.contains(&zh_interval), "zh quotes {zh_interval}: {zh}");
    }
}

#[test]
fn each_row_says_what_its_n_counts_and_the_verdict_rule_is_written_from_the_rows() {
    let base = spread(200, 0.4, 1);
    let r = Report::build(
        &[run("base", &base, 2), run("new", &spread(200, 0.4, 2), 2)],
        Bootstrap::default(),
    );
    // Goodput's n is the qualified count its exact Poisson interval rests on, not the attempts.
    let goodput = row(&r, "goodput");
    assert_eq!(
        (
            goodput.n_base,
            goodput.n_counts.en.as_str(),
            goodput.n_counts.zh.as_str()
        ),
        (200, "jointly qualified attempts", "联合合格的尝试")
    );
    assert_eq!(
        (
            row(&r, "failure_rate").n_base,
            row(&r, "failure_rate").n_counts.en.as_str()
        ),
        (202, "all attempts")
    );
    assert_eq!(
        row(&r, "quality_pass_rate").n_counts.en,
        "complete successes"
    );
    assert_eq!(
        (
            row(&r, "ttft_tail").n_base,
            row(&r, "ttft_tail").n_counts.en.as_str()
        ),
        (200, "TTFT samples ranked")
    );
    assert_eq!(row(&r, "e2e_p50").n_counts.zh, "参与排序的 E2E 样本");
    // The terminal's table says it too, under the table.
    let text = r.render_text(Lang::En);
    assert!(
        text.contains("n counts: ")
            && text.contains(&format!(
                "{}: jointly qualified attempts",
                row(&r, "goodput").name.en
            )),
        "{text}"
    );
    assert!(r
        .render_text(Lang::Zh)
        .contains(&format!("{}：联合合格的尝试", row(&r, "goodput").name.zh)));
    // The rule beside the table: the interval's level, and which way is worse for each figure,
    // read from the rows themselves.
    let rule = tracelab_core::compare::verdict_rule(&r.pairs[0].rows);
    let en: Vec<&str> = rule.iter().map(|t| t.en.as_str()).collect();
    assert!(
        en[0].contains("95 % interval of the difference new − base"),
        "{en:?}"
    );
    let name = |key: &str, lang: Lang| row(&r, key).name.get(lang).to_string();
    let (higher, lower) = en[2].split_once("; ").unwrap();
    assert!(
        higher.starts_with("Higher is worse for latencies")
            && higher.contains(&name("failure_rate", Lang::En)),
        "{en:?}"
    );
    for key in ["quality_pass_rate", "joint_rate", "goodput"] {
        assert!(
            lower.starts_with("lower is worse for")
                && lower.contains(&name(key, Lang::En))
                && !higher.contains(&name(key, Lang::En)),
            "{key}: {en:?}"
        );
        assert!(
            rule[2]
                .zh
                .split_once('；')
                .unwrap()
                .1
                .contains(&name(key, Lang::Zh)),
            "{key}: {}",
            rule[2].zh
        );
    }
    assert!(rule.iter().all(|t| !t.en.is_empty() && !t.zh.is_empty()));
}

/// Replications: three runs a side, each run's P50 one value. Runs that agree show no change;
/// a side shifted by 0.2 s is slower beyond the runs' spread; one run a side is too few.
#[test]
fn replications_compare_between_runs() {
    use tracelab_core::compare::replications::{compare_sides, ReplicatedRow};
    let metrics = |centre: f64| {
        let trace = parse_trace(
            "run.csv",
            &run_csv(&[centre - 0.1, centre, centre + 0.1], 0),
        )
        .unwrap();
        let s = Settings::default();
        Metrics::compute(&Index::build(&trace.attempts, s.population), &s)
    };
    let side = |centres: &[f64]| centres.iter().map(|c| metrics(*c)).collect::<Vec<_>>();
    let (base, same, slow) = (
        side(&[0.40, 0.42, 0.41]),
        side(&[0.41, 0.40, 0.43]),
        side(&[0.60, 0.62, 0.61]),
    );
    let p50 = |b: &[Metrics], n: &[Metrics]| -> ReplicatedRow {
        compare_sides(&b.iter().collect::<Vec<_>>(), &n.iter().collect::<Vec<_>>())
            .into_iter()
            .find(|r| r.base.key == "ttft_p50")
            .unwrap()
    };
    assert_eq!(p50(&base, &same).judgement, Judgement::NoEvidence);
    let slower = p50(&base, &slow);
    assert_eq!(slower.judgement, Judgement::Up, "{slower:?}");
    assert_eq!(slower.verdict.en, "slower beyond the runs' spread");
    // Mean 0.41 s, s = 0.01 s, t(2) = 4.3027: ± 0.02484 s.
    let b = slower.base.bounds.unwrap();
    assert!(
        (b.lo.unwrap() - (0.41 - 4.302_652_7 * 0.01 / 3f64.sqrt())).abs() < 1e-6,
        "{b:?}"
    );
    assert_eq!(
        p50(&base[..1], &slow).judgement,
        Judgement::TooFew { needed: 2 }
    );
}

/// A run of `n` attempts in start order with a stall a fifth of the way in (slow first tokens
/// and failures in a row, so the series are correlated and the intervals widen), from a seed.
fn stalled_run(n: usize, seed: u64) -> Vec<tracelab_core::trace::Attempt> {
    use tracelab_core::trace::{Attempt, Outcome, Phase, Quality};
    let mut rng = SplitMix64::new(seed);
    let mut uniform = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (0..n)
        .map(|i| {
            let stall = (n / 5..n / 5 + n / 10).contains(&i);
            let failed = uniform() < if stall { 0.2 } else { 0.02 };
            let outcome = if failed {
                Outcome::TimeoutBeforeFirstToken
            } else {
                Outcome::Success
            };
            let ttft = (!failed).then(|| {
                let base = 80.0 + 400.0 * uniform();
                ((if stall { base * 5.0 } else { base }) * 1000.0).round() / 1000.0
            });
            let quality = match (failed, uniform() < 0.1) {
                (true, _) => Quality::NotEvaluated,
                (false, true) => Quality::Fail,
                (false, false) => Quality::Pass,
            };
            let mut a = Attempt::new(format!("r{i}"), outcome, ttft, quality);
            a.phase = Phase::Measure;
            a.start_ms = Some(i as f64 * 10.0);
            a.e2e_ms = Some(ttft.map_or(30_000.0, |t| t + 500.0 + 300.0 * uniform()));
            a
        })
        .collect()
}

#[test]
fn intervals_from_kept_readings_equal_intervals_read_afresh_through_edits() {
    // The lab keeps an index's readings across edits of the threshold, the comparison, the
    // percentile, the window and the cost: every edit must give what a fresh reading gives.
    let attempts = stalled_run(5_000, 7);
    let s0 = Settings::default();
    let ix = Index::build(&attempts, s0.population);
    let kept = Readings::for_edits();
    let mut widened = false;
    for (k, threshold) in [0.3, 0.5, 0.3, 1.2, 0.15, 2.5].into_iter().enumerate() {
        let s = Settings {
            ttft_threshold_s: threshold,
            comparison: if k % 2 == 0 {
                tracelab_core::Comparison::Le
            } else {
                tracelab_core::Comparison::Lt
            },
            percentile: [
                tracelab_core::PercentileMethod::NearestRank,
                tracelab_core::PercentileMethod::Linear,
            ][k % 2],
            p: [95.0, 99.0, 90.0][k % 3],
            window_s: (k > 1).then_some(50.0),
            window_cost: (k > 2).then_some(3.0),
            ..s0.clone()
        };
        let m = Metrics::compute(&ix, &s);
        let fresh = Intervals::compute(&ix, &s, &m);
        assert_eq!(
            Intervals::compute_kept(&ix, &kept, &s, &m),
            fresh,
            "threshold {threshold} s, edit {k}"
        );
        widened |= fresh.items.iter().any(|i| {
            matches!(
                i.method,
                IntervalMethod::EffectiveWilson { .. }
                    | IntervalMethod::EffectiveOrderStatistics { .. }
            )
        });
    }
    // The run is correlated, so the kept readings did change intervals.
    assert!(widened, "the stalled run should widen some interval");
}
