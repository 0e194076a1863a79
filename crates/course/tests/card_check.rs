//! The learner's card read back by the core: written first and checked against the lab, and a
//! classmate's card recomputed from the trace it names. Every expected figure here is the
//! ten-request sample's, which lessons 2 and 3 work out by hand.

use std::path::Path;

use tracelab_core::parse::parse_trace;
use tracelab_core::{Lang, Metrics, Settings, Trace};
use tracelab_course::{Agreement, CardReview, MetricCard};

fn ten() -> Trace {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../public/samples/ten-requests.jsonl");
    parse_trace(
        "ten-requests.jsonl",
        &std::fs::read_to_string(path).unwrap(),
    )
    .unwrap()
}

fn line<'a>(r: &'a CardReview, id: &str) -> &'a tracelab_course::CardLine {
    r.lines.iter().find(|l| l.id == id).unwrap_or_else(|| {
        panic!(
            "no line {id}: {:?}",
            r.lines.iter().map(|l| &l.id).collect::<Vec<_>>()
        )
    })
}

fn prefilled(trace: &Trace, settings: &Settings, lang: Lang) -> MetricCard {
    let m = Metrics::of(&trace.attempts, settings);
    MetricCard::prefill("ten-requests.jsonl", trace, settings, &m, lang)
}

#[test]
fn a_card_prefilled_from_the_lab_agrees_with_the_lab_line_by_line() {
    let trace = ten();
    let lab = Settings::from_header(&trace.header);
    for lang in [Lang::En, Lang::Zh] {
        let card = prefilled(&trace, &lab, lang);
        // The pre-fill states every choice it used, and each figure's interval.
        assert_eq!(
            card.choices.get("pm").map(String::as_str),
            Some("nearest-rank")
        );
        assert_eq!(card.choices.get("t").map(String::as_str), Some("1"));
        let p95 = card.results.iter().find(|r| r.key == "ttft_tail").unwrap();
        assert!(p95.interval.contains("95 %"), "{}", p95.interval);
        let r = card.check_against_lab(&trace, &lab);
        let bad: Vec<_> = r
            .lines
            .iter()
            .filter(|l| l.agreement == Agreement::Differs || l.agreement == Agreement::NotWritten)
            .collect();
        assert!(bad.is_empty(), "{lang:?}: {bad:#?}");
        assert_eq!(
            r.count(Agreement::Agrees),
            13 + 2 + 7,
            "13 choices, 2 counts, 7 figures"
        );
    }
    // The zh card writes its percentile method in Chinese.
    let zh = prefilled(&trace, &lab, Lang::Zh);
    assert!(
        zh.percentile_method.contains("最近秩"),
        "{}",
        zh.percentile_method
    );
    assert!(
        !zh.percentile_method.contains("nearest"),
        "{}",
        zh.percentile_method
    );
    let p95 = zh.results.iter().find(|r| r.key == "ttft_tail").unwrap();
    assert!(
        p95.method.contains("最近秩") && p95.interval.contains("区间"),
        "{p95:?}"
    );
}

#[test]
fn a_card_written_first_is_checked_figure_by_figure_and_a_wrong_value_is_explained() {
    let trace = ten();
    let lab = Settings::from_header(&trace.header);
    let mut card = MetricCard::blank(Lang::En);
    // Nothing written: every line says so, none is marked right or wrong.
    let r = card.check_against_lab(&trace, &lab);
    assert_eq!(
        r.count(Agreement::Agrees) + r.count(Agreement::Differs),
        0,
        "{:#?}",
        r.lines
    );
    assert!(
        line(&r, "choice:pm").why.en.contains("Not stated"),
        "{:?}",
        line(&r, "choice:pm").why
    );
    assert_eq!(
        line(&r, "figure:failure_rate").agreement,
        Agreement::NotWritten
    );

    // The learner writes what they worked out: the failure rate right, the P95 as linear
    // interpolation gives it (1.72 s) while stating nearest-rank, the attempts right.
    card.choices.insert("pm".into(), "nearest-rank".into());
    card.choices.insert("t".into(), "1".into());
    card.attempts = "10 attempts, 8 successes".into();
    let set = |card: &mut MetricCard, key: &str, v: &str| {
        card.results
            .iter_mut()
            .find(|r| r.key == key)
            .unwrap()
            .value = v.into()
    };
    set(&mut card, "failure_rate", "20 %");
    set(&mut card, "ttft_tail", "1.72 s");
    set(&mut card, "ttft_p50", "0.5 s");
    let r = card.check_against_lab(&trace, &lab);
    assert_eq!(line(&r, "figure:failure_rate").agreement, Agreement::Agrees);
    assert_eq!(line(&r, "field:attempts").agreement, Agreement::Agrees);
    let p95 = line(&r, "figure:ttft_tail");
    assert_eq!(p95.agreement, Agreement::Differs, "{p95:?}");
    assert!(
        p95.why.en.contains("linear"),
        "the why names the choice that gives 1.72 s: {}",
        p95.why.en
    );
    assert!(p95.why.zh.contains("线性插值"), "{}", p95.why.zh);
    // A value written to fewer digits agrees when it is the figure rounded.
    let p50 = line(&r, "figure:ttft_p50");
    assert_eq!(
        p50.agreement,
        Agreement::Agrees,
        "{p50:?} (the sample's P50 is 500 ms)"
    );
    // A choice the lab does not use is named as a difference.
    let mut lt = card.clone();
    lt.choices.insert("cmp".into(), "lt".into());
    let r = lt.check_against_lab(&trace, &lab);
    assert_eq!(line(&r, "choice:cmp").agreement, Agreement::Differs);
    assert!(
        line(&r, "choice:cmp").why.en.contains("< strictly below"),
        "{:?}",
        line(&r, "choice:cmp").why
    );
    // A value the choices cannot have.
    let mut bad = card.clone();
    bad.choices.insert("pm".into(), "median".into());
    let r = bad.check_against_lab(&trace, &lab);
    assert_eq!(r.refused, ["pm"]);
    assert!(
        line(&r, "choice:pm")
            .why
            .en
            .contains("`median` is not a value"),
        "{:?}",
        line(&r, "choice:pm").why
    );
    // Unreadable text is a difference that says how to write it.
    set(&mut card, "failure_rate", "about a fifth");
    let r = card.check_against_lab(&trace, &lab);
    assert!(
        line(&r, "figure:failure_rate").why.en.contains("20 %"),
        "{:?}",
        line(&r, "figure:failure_rate").why
    );
}

#[test]
fn a_classmates_card_is_recomputed_from_its_own_choices_and_survives_the_file() {
    let trace = ten();
    // The classmate chose < and a 0.5 s threshold (lesson 3's strict reading): 3 of 10 qualify.
    let mut theirs = Settings::from_header(&trace.header);
    theirs.apply_pairs([("cmp", "lt"), ("t", "0.5")]);
    let card = prefilled(&trace, &theirs, Lang::Zh);
    let file = MetricCard::from_json(&card.to_json()).unwrap();
    assert_eq!(file, card, "choices and intervals survive the file");
    let r = file.recompute(&trace, "ten-requests.jsonl");
    assert_eq!(
        r.settings.comparison,
        tracelab_core::settings::Comparison::Lt
    );
    assert_eq!(r.settings.ttft_threshold_s, 0.5);
    assert_eq!(r.count(Agreement::Differs), 0, "{:#?}", r.lines);
    assert_eq!(line(&r, "field:source").agreement, Agreement::Agrees);
    assert_eq!(line(&r, "figure:joint_rate").card_says.en, "30 %");

    // One figure altered by hand, and a card with no choices: what does not follow is marked,
    // and what was assumed is said.
    let mut altered = file.clone();
    altered
        .results
        .iter_mut()
        .find(|r| r.key == "joint_rate")
        .unwrap()
        .value = "40 %".into();
    altered.choices.clear();
    let r = altered.recompute(&trace, "other.csv");
    assert_eq!(line(&r, "field:source").agreement, Agreement::Differs);
    assert!(
        line(&r, "choice:cmp").why.en.contains("the trace's own"),
        "{:?}",
        line(&r, "choice:cmp").why
    );
    // Under the trace's own ≤ 1 s, 5 of 10 qualify: 40 % follows from nothing.
    let joint = line(&r, "figure:joint_rate");
    assert_eq!(joint.agreement, Agreement::Differs);
    assert!(joint.why.en.contains("50 %"), "{:?}", joint.why);
    assert!(r.unstated.contains(&"cmp") && r.unstated.contains(&"t"));
    // The Markdown card lists the choices, stated or not.
    let md = file.to_markdown(Lang::En);
    assert!(
        md.contains("| Comparison | < strictly below | `cmp=lt` |"),
        "{md}"
    );
    assert!(
        altered
            .to_markdown(Lang::Zh)
            .contains("| 比较方式 | 未写明 | — |"),
        "{}",
        altered.to_markdown(Lang::Zh)
    );
}

#[test]
fn a_card_file_with_a_bad_choice_names_the_field() {
    let e = MetricCard::from_json(
        r#"{"kind": "tracelab.learner_card", "version": 1, "choices": {"t": 1}}"#,
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("choices.t"), "{e}");
    let e = MetricCard::from_json(
        r#"{"kind": "tracelab.learner_card", "version": 1, "results": [{"interval": []}]}"#,
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("results[0].interval"), "{e}");
}
