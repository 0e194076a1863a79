//! The seed's deliverables are produced by the learner and checked: the counter-evidence picked
//! from a trace's rows (against the core's GPU samples), the metric card holding both thresholds,
//! and the learner's own system map.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use tracelab_core::gpu_beside::{gpu_beside, GpuBeside};
use tracelab_core::parse::parse_trace;
use tracelab_core::Trace;
use tracelab_core::{Lang, Metrics, Settings};
use tracelab_course::{
    check, check_pick, pick_rows, refuting_rows, settings_for, Agreement, Answer, Audience,
    CardSnapshot, Course, ExerciseKind, Feedback, MapStep, MetricCard, Progress, SystemMap,
};

const COURSE: &str = include_str!("../../../lessons/course.json");
const PICK: &str = "gpu-busy-pick-rows";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sample(name: &str) -> Trace {
    let text = std::fs::read_to_string(root().join("public/samples").join(name)).unwrap();
    parse_trace(name, &text).unwrap()
}

fn course() -> Course {
    Course::parse(COURSE).unwrap()
}

/// The refuting rows recomputed here from the trace's own GPU samples: mean utilisation over the
/// samples inside each attempt's interval, and the core's slow flag.
fn recomputed(trace: &Trace, busy: f64) -> BTreeSet<String> {
    let settings = settings_for(&trace.header, &Default::default()).unwrap();
    let GpuBeside::Measured { attempts, .. } = gpu_beside(trace, &settings) else {
        panic!("the sample has GPU telemetry");
    };
    attempts
        .iter()
        .filter(|a| {
            let inside: Vec<f64> = trace
                .gpu
                .iter()
                .filter(|g| g.t_ms >= a.start_ms && g.t_ms <= a.end_ms)
                .map(|g| g.util_pct)
                .collect();
            a.slow && !inside.is_empty() && inside.iter().sum::<f64>() / inside.len() as f64 >= busy
        })
        .map(|a| a.id.clone())
        .collect()
}

#[test]
fn the_counter_evidence_is_a_pick_of_rows_checked_against_the_gpu_samples() {
    let c = course();
    let e = c.exercise(PICK).expect("lesson 1 asks for picked rows");
    let ExerciseKind::PickRows(p) = &e.kind else {
        panic!("`{PICK}` is a pick_rows exercise");
    };
    let trace = sample(&p.sample);
    let right = refuting_rows(e, &trace).unwrap();
    assert_eq!(right, recomputed(&trace, p.busy_pct));
    assert!(right.len() >= p.min_rows, "{} rows refute", right.len());
    assert!(right.len() < trace.attempts.len(), "not every row refutes");

    let pick: Vec<String> = right.iter().take(p.min_rows).cloned().collect();
    let f = check_pick(e, &pick, &trace, Audience::Learner);
    assert!(f.correct, "{}", f.message.en);

    // Too few rows: not yet, and the message lists no row of the answer.
    let f = check_pick(e, &pick[..1], &trace, Audience::Learner);
    assert!(!f.correct);
    for id in right.iter().filter(|id| **id != pick[0]) {
        assert!(!f.message.en.contains(id.as_str()), "{}", f.message.en);
    }

    // A row that does not refute is named with why: fast, or a GPU that was not busy.
    let rows = pick_rows(e, &trace).unwrap();
    let fast = rows
        .iter()
        .find(|r| !right.contains(&r.id) && r.util_pct.is_some_and(|u| u >= p.busy_pct))
        .expect("a fast row under a busy GPU");
    let idle_slow = rows.iter().find(|r| {
        !right.contains(&r.id)
            && r.util_pct.is_some_and(|u| u < p.busy_pct)
            && r.outcome != "success"
    });
    let mut wrong = pick.clone();
    wrong.push(fast.id.clone());
    let f = check_pick(e, &wrong, &trace, Audience::Learner);
    assert!(!f.correct);
    assert!(f.message.en.contains(&fast.id), "{}", f.message.en);
    assert!(f.message.en.contains("not slow"), "{}", f.message.en);
    assert!(f.message.zh.contains("并不慢"), "{}", f.message.zh);
    if let Some(r) = idle_slow {
        let f = check_pick(
            e,
            &[pick[0].clone(), pick[1].clone(), r.id.clone()],
            &trace,
            Audience::Learner,
        );
        assert!(!f.correct);
        assert!(f.message.en.contains("not a busy GPU"), "{}", f.message.en);
    }
    let f = check_pick(
        e,
        &[pick[0].clone(), pick[1].clone(), "R999".into()],
        &trace,
        Audience::Learner,
    );
    assert!(
        !f.correct && f.message.en.contains("R999"),
        "{}",
        f.message.en
    );

    // A teacher's page judges, but names no reason.
    let f = check_pick(e, &wrong, &trace, Audience::Teacher);
    assert!(
        !f.correct && !f.message.en.contains(&fast.id),
        "{}",
        f.message.en
    );

    // The answer round-trips through the progress file's JSON.
    let a = Answer::PickRows {
        chosen: pick.clone(),
    };
    let json = serde_json::to_string(&a).unwrap();
    assert_eq!(serde_json::from_str::<Answer>(&json).unwrap(), a);
    // Without the sample, the answer is not judged right.
    assert!(!check(e, &a, None).correct);
}

#[test]
fn a_pick_rows_exercise_is_validated_against_its_sample() {
    let text = |sample: &str, min_rows: usize, busy: f64| {
        format!(
            r#"{{"version": 1, "lessons": [{{"id": "l", "number": 1, "title": {{"en": "L", "zh": "课"}},
            "text": {{"en": "01-system-path.en.md", "zh": "01-system-path.zh.md"}},
            "exercises": [{{"id": "{PICK}", "kind": "pick_rows", "prompt": {{"en": "Pick", "zh": "选"}},
              "sample": "{sample}", "busy_pct": {busy}, "min_rows": {min_rows}}}]}}]}}"#
        )
    };
    let verify = |c: &Course| {
        c.verify(|name| {
            std::fs::read_to_string(root().join("public/samples").join(name))
                .ok()
                .and_then(|t| parse_trace(name, &t).ok())
        })
    };
    let ok = Course::parse(&text("gpu-busy-users-slow.jsonl", 3, 90.0)).unwrap();
    assert!(verify(&ok).is_empty(), "{:?}", verify(&ok));
    let no_gpu = Course::parse(&text("ten-requests.jsonl", 3, 90.0)).unwrap();
    assert!(
        verify(&no_gpu).iter().any(|p| p.contains("no GPU samples")),
        "{:?}",
        verify(&no_gpu)
    );
    let too_many = Course::parse(&text("gpu-busy-users-slow.jsonl", 100_000, 90.0)).unwrap();
    assert!(verify(&too_many)
        .iter()
        .any(|p| p.contains("fewer than `min_rows`")));
    let bad = Course::parse(&text("gpu-busy-users-slow.jsonl", 0, 140.0)).unwrap();
    let problems = bad.validate(|_| Some(String::new()), &["gpu-busy-users-slow.jsonl"]);
    assert!(
        problems.iter().any(|p| p.contains("`busy_pct`")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.contains("`min_rows`")),
        "{problems:?}"
    );
    // A field of another kind is refused, naming it.
    let stray = text("gpu-busy-users-slow.jsonl", 3, 90.0)
        .replace("\"min_rows\"", "\"min_chars\": 1, \"min_rows\"");
    let err = Course::parse(&stray).unwrap_err().to_string();
    assert!(err.contains("min_chars"), "{err}");
}

fn with_second(trace: &Trace, lang: Lang) -> (MetricCard, Settings) {
    let lab = Settings::from_header(&trace.header);
    let m = Metrics::of(&trace.attempts, &lab);
    let mut card = MetricCard::prefill("ten-requests.jsonl", trace, &lab, &m, lang);
    let mut half = lab.clone();
    assert!(half.apply_pairs([("t", "0.5")]).is_empty());
    card.second = Some(CardSnapshot::prefill(trace, &card.choices, &half, lang));
    (card, lab)
}

#[test]
fn one_card_holds_both_thresholds_each_checked_against_the_core() {
    let trace = sample("ten-requests.jsonl");
    for lang in [Lang::En, Lang::Zh] {
        let (card, lab) = with_second(&trace, lang);
        let second = card.second.as_ref().unwrap();
        assert_eq!(second.choices.get("t").map(String::as_str), Some("0.5"));
        assert_eq!(
            second.choices.len(),
            1,
            "only the threshold differs: {:?}",
            second.choices
        );
        let r = card.check_against_lab(&trace, &lab);
        let t = r
            .lines
            .iter()
            .find(|l| l.id == "second:choice:t")
            .expect("the second threshold is checked");
        assert_eq!(t.agreement, Agreement::Agrees, "{t:#?}");
        let figures: Vec<_> = r
            .lines
            .iter()
            .filter(|l| l.id.starts_with("second:figure:"))
            .collect();
        assert_eq!(figures.len(), 7);
        assert!(
            figures.iter().all(|l| l.agreement == Agreement::Agrees),
            "{figures:#?}"
        );
        // A classmate recomputes both snapshots from the trace the card names.
        let again = card.recompute(&trace, "ten-requests.jsonl");
        assert!(again
            .lines
            .iter()
            .filter(|l| l.id.starts_with("second:"))
            .all(|l| l.agreement == Agreement::Agrees));
    }

    // The 1 s figures copied into the 0.5 s snapshot do not follow from its threshold.
    let (mut card, lab) = with_second(&trace, Lang::En);
    let first = card.results.clone();
    let second = card.second.as_mut().unwrap();
    for (r, f) in second.results.iter_mut().zip(&first) {
        r.value = f.value.clone();
    }
    let r = card.check_against_lab(&trace, &lab);
    let qualified = r
        .lines
        .iter()
        .find(|l| l.id == "second:figure:joint_rate")
        .expect("joint rate line");
    assert_eq!(qualified.agreement, Agreement::Differs, "{qualified:#?}");

    // The same threshold twice is one threshold, not two.
    let (mut card, lab) = with_second(&trace, Lang::En);
    card.second
        .as_mut()
        .unwrap()
        .choices
        .insert("t".into(), "1".into());
    let r = card.check_against_lab(&trace, &lab);
    let t = r.lines.iter().find(|l| l.id == "second:choice:t").unwrap();
    assert_eq!(t.agreement, Agreement::Differs);
    assert!(t.why.en.contains("same threshold"), "{}", t.why.en);
    // Not stated: said, in both languages.
    card.second.as_mut().unwrap().choices.clear();
    let r = card.check_against_lab(&trace, &lab);
    let t = r.lines.iter().find(|l| l.id == "second:choice:t").unwrap();
    assert_eq!(t.agreement, Agreement::NotWritten);
    assert!(t.why.zh.contains("门槛"), "{}", t.why.zh);

    // A card without a second snapshot is reviewed as before: no second lines.
    let lone = MetricCard {
        second: None,
        ..card.clone()
    };
    assert!(lone
        .check_against_lab(&trace, &lab)
        .lines
        .iter()
        .all(|l| !l.id.starts_with("second:")));
}

#[test]
fn the_two_threshold_card_round_trips_and_older_cards_still_load() {
    let trace = sample("ten-requests.jsonl");
    let (card, _) = with_second(&trace, Lang::En);
    let json = card.to_json();
    assert!(json.contains("\"second\""), "{json}");
    assert_eq!(MetricCard::from_json(&json).unwrap(), card);
    let md = card.to_markdown(Lang::En);
    assert!(md.contains("Second snapshot"), "{md}");
    assert!(md.contains("`t=0.5`"), "{md}");
    assert!(card.to_markdown(Lang::Zh).contains("第二组设置"));

    // A card written before the second snapshot existed still loads, with none.
    let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
    old.as_object_mut().unwrap().remove("second");
    let back = MetricCard::from_json(&old.to_string()).unwrap();
    assert_eq!(back.second, None);
    assert_eq!(back.results, card.results);
    // A wrong type inside the second snapshot is named.
    let mut bad = serde_json::from_str::<serde_json::Value>(&json).unwrap();
    bad["second"]["results"][0]["value"] = serde_json::json!(3);
    let err = MetricCard::from_json(&bad.to_string())
        .unwrap_err()
        .to_string();
    assert!(err.contains("second.results[0].value"), "{err}");
    // A file that is not a card (no `kind`) is refused, saying so.
    old.as_object_mut().unwrap().remove("kind");
    let err = MetricCard::from_json(&old.to_string())
        .unwrap_err()
        .to_string();
    assert!(err.contains("kind"), "{err}");
}

fn step(name: &str, role: &str) -> MapStep {
    MapStep {
        name: name.into(),
        role: role.into(),
    }
}

/// A map with every part the seed asks for.
fn whole_map() -> SystemMap {
    SystemMap {
        steps: vec![
            step("prompt and its tokens", "data"),
            step("client sends the request", "client"),
            step("gateway and queue", "queue"),
            step("prefill and decode on the GPU", "device"),
            step("tokens streamed back to the user", "output"),
        ],
        failure: Some(2),
        failure_note: "the queue is long: timeout before the first token".into(),
        sample: Some(1),
        clock: "client".into(),
        training: vec![
            step("cleaned, tokenised shards", "data"),
            step("forward, backward, update", "device"),
            step("checkpoint written", "checkpoint"),
        ],
    }
}

fn judge_map(map: SystemMap) -> Feedback {
    let c = course();
    let e = c
        .exercise("draw-system-map")
        .expect("lesson 1 asks for a drawn map");
    check(e, &Answer::Map { map }, None)
}

#[test]
fn the_learner_draws_the_system_map_and_each_missing_part_is_named() {
    let c = course();
    let (lesson, e) = c
        .exercises()
        .find(|(_, e)| e.id == "draw-system-map")
        .unwrap();
    assert_eq!(lesson.number, 1);
    assert!(matches!(&e.kind, ExerciseKind::DrawMap(d) if d.min_steps >= 4));
    let f = judge_map(whole_map());
    assert!(f.correct, "{}", f.message.en);

    let mut cases: Vec<(SystemMap, &str, &str)> = Vec::new();
    let mut m = whole_map();
    m.steps.remove(2);
    m.steps.remove(1);
    m.steps.push(step(" ", "other")); // a step without a name is no step
    cases.push((m, "at least 4", "至少画 4 个"));
    let mut m = whole_map();
    m.steps[0].role = "other".into();
    cases.push((m, "Mark a step as data", "标为“数据”"));
    let mut m = whole_map();
    m.steps[3].role = "queue".into();
    cases.push((m, "runs on the device", "设备上运行"));
    let mut m = whole_map();
    m.steps[4].role = "other".into();
    cases.push((m, "Mark a step as output", "标为“输出”"));
    let mut m = whole_map();
    m.steps.swap(3, 4);
    cases.push((m, "order does not hold", "顺序不对"));
    let mut m = whole_map();
    m.failure_note.clear();
    cases.push((m, "failure point", "失败点"));
    let mut m = whole_map();
    m.sample = Some(9);
    cases.push((m, "Mark where you sample", "在哪里采样"));
    let mut m = whole_map();
    m.clock = "server".into();
    cases.push((m, "client's clock", "客户端时钟"));
    let mut m = whole_map();
    m.training.pop();
    cases.push((m, "missing: checkpoint", "缺少：检查点"));
    for (map, en, zh) in cases {
        let f = judge_map(map.clone());
        assert!(!f.correct, "{map:?}");
        assert!(f.message.en.contains(en), "{en}: {}", f.message.en);
        assert!(f.message.zh.contains(zh), "{zh}: {}", f.message.zh);
        assert_eq!(
            map.problems(4).len(),
            1,
            "one part missing: {:?}",
            map.problems(4)
        );
    }
    // An empty map names every part at once.
    let parts: Vec<&str> = SystemMap::default()
        .problems(4)
        .iter()
        .map(|p| p.part)
        .collect();
    assert_eq!(
        parts,
        ["steps", "data", "device", "output", "failure", "sample", "clock", "training"]
    );
}

#[test]
fn the_map_is_exported_and_imported_like_the_card() {
    let map = whole_map();
    let json = map.to_json();
    assert!(json.contains("\"kind\": \"tracelab.system_map\""), "{json}");
    assert_eq!(SystemMap::from_json(&json).unwrap(), map);
    let mut bad: serde_json::Value = serde_json::from_str(&json).unwrap();
    bad["steps"][1]["name"] = serde_json::json!(7);
    let err = SystemMap::from_json(&bad.to_string())
        .unwrap_err()
        .to_string();
    assert!(err.contains("steps[1].name"), "{err}");
    let card = MetricCard::blank(Lang::En).to_json();
    let err = SystemMap::from_json(&card).unwrap_err().to_string();
    assert!(err.contains("kind"), "{err}");
    // Kept as the exercise's answer, it survives the progress file too.
    let c = course();
    let e = c.exercise("draw-system-map").unwrap();
    let answer = Answer::Map { map: map.clone() };
    let f = check(e, &answer, None);
    let mut progress = Progress::default();
    progress.record("draw-system-map", answer.clone(), &f);
    let back = Progress::from_json(&progress.to_json()).unwrap();
    assert_eq!(back.answers["draw-system-map"].answer, answer);
}
