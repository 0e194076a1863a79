//! The lessons page in headless Chromium: lesson 3's threshold exercise marked right by the core,
//! a step driving the lab beside it, the card pre-filled from the lab and exported, the language
//! switch on a lesson, and progress exported and imported as a file.
//! Run through `cargo xtask test` (it builds both pages and installs Chromium first).

mod support;

use serde_json::json;
use support::webdriver::Browser;
use support::{dist, screenshot_path, static_server};

fn lessons(lang: &str, query: &str) -> (Browser, String) {
    let base = static_server::serve(dist());
    let b = Browser::start(1500, 1100, lang);
    b.goto(&format!("{base}/lessons/{query}"));
    b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
    (b, base)
}

fn answer(b: &Browser, exercise: &str, value: &str) -> String {
    let at = format!("[data-testid=exercise-{exercise}]");
    b.execute(
        "document.querySelector(arguments[0]).scrollIntoView()",
        json!([at]),
    );
    b.replace_text(&format!("{at} [data-testid=answer]"), value);
    b.click(&format!("{at} [data-testid=check]"));
    b.wait_text(&format!("{at} [data-testid=feedback]"), |t| !t.is_empty())
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn lesson_three_threshold_exercise_is_checked_by_the_core_and_the_card_exports() {
    let (b, _) = lessons("en-US", "?lesson=denominators");
    assert!(b
        .text_of("[data-testid=lesson]")
        .contains("One trace, different denominators"));

    // At 1 s, then at 0.5 s: right answers are marked right; a classic mistake is explained.
    assert!(answer(&b, "t1-qualified", "5").starts_with("✓"));
    assert!(answer(&b, "t1-p95", "2").starts_with("✓"));
    let wrong = answer(&b, "t05-qualified", "3");
    assert!(wrong.starts_with("✗"), "{wrong}");
    let right = answer(&b, "t05-qualified", "4");
    assert!(right.starts_with("✓"), "{right}");
    assert!(answer(&b, "t05-goodput", "0.4").starts_with("✓"));
    assert!(answer(&b, "t05-cost", "5").starts_with("✓"));
    b.wait_text("[data-testid=solved]", |t| t.starts_with("5 "));

    // A step drives the lab beside the lesson through its permalink.
    b.click("[data-testid=step-ten-at-05s]");
    wait_for("the step's address in the frame", || {
        let src = frame_search(&b);
        src.contains("sample=ten-requests.jsonl") && src.contains("t=0.5")
    });
    // While the lesson's exercises are open the lab does not open in a tab of its own, where
    // nothing would be hidden.
    assert!(b.try_find("[data-testid=open-lab]").is_none());
    assert!(!b.text_of("[data-testid=open-lab-held]").is_empty());
    // The lab inside the frame shows the step's figures.
    let qualified = (0..100)
        .find_map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let v = b.execute(
                "const d = document.querySelector('[data-testid=lab-frame]').contentDocument; const e = d && d.querySelector('[data-testid=value-qualified_count]'); return e ? e.textContent : '';",
                json!([]),
            );
            v.as_str().filter(|t| *t == "4").map(str::to_string)
        })
        .expect("the lab in the frame shows 4 qualified at 0.5 s");
    assert_eq!(qualified, "4");

    // The card, pre-filled by the core from what the lab shows, then exported: the lesson's
    // other exercises opened first, since a pre-fill leaves what the lab hides to the learner.
    reveal_all(&b);
    b.execute(
        "document.querySelector('[data-testid=card-panel]').scrollIntoView()",
        json!([]),
    );
    // The learner's own attempt first (one figure), then the lab's answer.
    write(&b, "[data-testid=card-card_value-0]", "5");
    b.click("[data-testid=prefill]");
    let card = b.wait_text("[data-testid=card-preview]", |t| !t.is_empty());
    assert!(
        card.contains("TTFT ≤ 0.5 s"),
        "the card has the 0.5 s threshold: {card}"
    );
    let (_, r) = card_results(&b);
    assert_eq!(r["goodput"].0, "0.4 /s", "{r:?}");
    assert_eq!(r["cost_per_1000_qualified"].0, "5 CNY", "{r:?}");
    assert_eq!(r["joint_rate"].0, "40 %", "{r:?}");
    assert!(
        r["joint_rate"].1.ends_with("= 4") && r["joint_rate"].2.ends_with("= 10"),
        "{r:?}"
    );
    b.click("[data-testid=card-md]");
    let md = b.downloaded("metric-card.md");
    assert!(
        md.contains("TTFT ≤ 0.5 s")
            && md.contains("| Goodput | 0.4 /s |")
            && md.contains("| 5 CNY |"),
        "the exported card: {md}"
    );
    b.click("[data-testid=card-json]");
    let card: serde_json::Value =
        serde_json::from_str(&b.downloaded("metric-card.json")).expect("the card as JSON");
    assert!(card.is_object(), "{card}");
    b.screenshot(&screenshot_path("lessons-threshold-exercise"));
    let stored = b.execute(
        "return localStorage.getItem('tracelab.v1.lessons')",
        json!([]),
    );
    let stored: serde_json::Value = serde_json::from_str(stored.as_str().unwrap()).unwrap();
    assert_eq!(
        stored["answers"]["t05-qualified"]["correct"],
        json!(true),
        "{stored}"
    );
    assert!(stored["card"].is_object(), "the card is kept: {stored}");
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn a_lesson_switches_language_and_progress_survives_export_and_import() {
    let (b, base) = lessons("en-US", "?lesson=client-timeline");
    let en = b.text_of("[data-testid=lesson]");
    b.click("[data-testid=lang-switch]");
    b.wait_text("[data-testid=lesson]", |t| {
        t != en && t.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
    });
    // The lab in the frame follows the page's language, in place, and the link to it too.
    frame_shows(&b, "5");
    b.enter_frame("[data-testid=lab-frame]");
    b.wait_text("#metrics-h", |t| {
        t.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
    });
    b.leave_frame();
    // The lab opens in a tab of its own once nothing of it is hidden.
    reveal_all(&b);
    b.wait_text("[data-testid=open-lab]", |t| !t.is_empty());
    let link = b.execute(
        "return document.querySelector('[data-testid=open-lab]').getAttribute('href')",
        json!([]),
    );
    assert!(link.as_str().unwrap().ends_with("lang=zh"), "{link}");
    b.screenshot(&screenshot_path("lessons-zh"));

    // Self-check ticks are the learner's own; then the progress file goes round trip.
    b.execute(
        "document.querySelector('[data-testid=self-check]').scrollIntoView()",
        json!([]),
    );
    b.click("[data-testid=self-no-failure-deleted]");
    b.type_into("[data-testid=lesson-notes]", "E2E is not the sum of ITLs");
    b.click("[data-testid=export-progress]");
    let exported = b.downloaded("trace-lab-progress.json");
    assert!(
        exported.contains("no-failure-deleted") && exported.contains("E2E is not the sum"),
        "{exported}"
    );

    // A fresh browser: nothing yet; importing the file brings everything back.
    drop(b);
    let b = Browser::start(1500, 1100, "en-US");
    b.goto(&format!("{base}/lessons/?lesson=client-timeline"));
    b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
    let file = std::env::temp_dir().join(format!("tracelab-progress-{}.json", std::process::id()));
    std::fs::write(&file, "{\"kind\": \"tracelab.progress\", \"answers\": {\"x\": {\"answer\": {\"kind\": \"number\"}}}}").unwrap();
    b.type_into("[data-testid=import-progress]", file.to_str().unwrap());
    let err = b.wait_text("[data-testid=lesson-error]", |t| !t.is_empty());
    assert!(
        err.contains("tracelab-progress"),
        "a corrupt file is refused with its name: {err}"
    );
    std::fs::write(&file, &exported).unwrap();
    b.type_into("[data-testid=import-progress]", file.to_str().unwrap());
    b.wait_text("[data-testid=notice]", |t| t.contains("imported"));
    let ticked = b.execute(
        "return document.querySelector('[data-testid=self-no-failure-deleted]').checked",
        json!([]),
    );
    assert_eq!(ticked, json!(true));
    let notes = b.execute(
        "return document.querySelector('[data-testid=lesson-notes]').value",
        json!([]),
    );
    assert_eq!(notes, json!("E2E is not the sum of ITLs"));
    std::fs::remove_file(&file).ok();
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn teacher_mode_never_reveals_an_answer() {
    let (b, _) = lessons("en-US", "?lesson=denominators&teacher=1");
    assert!(!b.text_of("[data-testid=teacher]").is_empty());
    answer(&b, "t1-p95", "1");
    let second = answer(&b, "t1-p95", "1.5");
    assert!(second.starts_with("✗"));
    let expected = b.find_all("[data-testid=exercise-t1-p95] [data-testid=expected]");
    assert!(
        expected.is_empty(),
        "teacher mode hides the computed answer"
    );
    assert!(
        b.find_all("[data-testid=exercise-t1-p95] [data-testid=show-answer]")
            .is_empty(),
        "and offers no button for it"
    );
}

/// The positive control of teacher mode, and feedback that answers the answer shown: a hint
/// first, the core's figure after a second wrong try (or on request), nothing stale.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn feedback_gives_a_hint_first_and_never_goes_stale() {
    let (b, _) = lessons("en-US", "?lesson=denominators");
    let at = "[data-testid=exercise-t1-p95]";
    let first = answer(&b, "t1-p95", "1");
    assert!(first.starts_with("✗"), "{first}");
    assert!(
        !first.contains("The core computes"),
        "a hint first, not the answer: {first}"
    );
    assert!(b
        .find_all(&format!("{at} [data-testid=expected]"))
        .is_empty());
    assert_eq!(
        b.find_all(&format!("{at} [data-testid=show-answer]")).len(),
        1,
        "the answer is offered on request"
    );
    let second = answer(&b, "t1-p95", "1.5");
    assert!(
        second.contains("The core computes: 2"),
        "after a second wrong try, the core's figure: {second}"
    );

    // Right, then "abc" and Check: the tick does not stay beside an answer it did not judge.
    let right = answer(&b, "t1-qualified", "5");
    assert!(right.starts_with("✓"), "{right}");
    let q = "[data-testid=exercise-t1-qualified]";
    b.replace_text(&format!("{q} [data-testid=answer]"), "abc");
    assert_eq!(
        b.text_of(&format!("{q} [data-testid=feedback]")),
        "",
        "typing clears the old verdict"
    );
    b.click(&format!("{q} [data-testid=check]"));
    let said = b.wait_text(&format!("{q} [data-testid=not-a-number]"), |t| {
        !t.is_empty()
    });
    assert!(said.contains("Not a number"), "{said}");
    assert_eq!(b.text_of(&format!("{q} [data-testid=feedback]")), "");

    // Ratio parts: option values name only their position; the right label is found by text.
    let values = b.execute(
        "return [...document.querySelectorAll('[data-testid=exercise-parts-failure-rate] select option')].map(o => o.value)",
        json!([]),
    );
    let values: Vec<String> = serde_json::from_value(values).unwrap();
    assert!(values.len() > 6, "{values:?}");
    assert!(
        values
            .iter()
            .all(|v| v.is_empty() || v.starts_with("option-")),
        "neutral values: {values:?}"
    );
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn a_step_keeps_the_labs_baseline_so_what_changed_is_shown() {
    let (b, _) = lessons("en-US", "?lesson=denominators");
    reveal_all(&b);
    frame_shows(&b, "5");
    b.execute(
        "document.querySelector('[data-testid=step-ten-at-1s]').scrollIntoView()",
        json!([]),
    );
    b.click("[data-testid=step-ten-at-1s]");
    std::thread::sleep(std::time::Duration::from_millis(1200)); // the lab's figures settle
    b.execute(
        "document.querySelector('[data-testid=step-ten-at-05s]').scrollIntoView()",
        json!([]),
    );
    b.click("[data-testid=step-ten-at-05s]");
    frame_shows(&b, "4");
    b.enter_frame("[data-testid=lab-frame]");
    let changes = b.wait_text("[data-testid=changes]", |t| t.contains("qualified 5 → 4"));
    assert!(!changes.contains("P95"), "P95 does not move: {changes}");
    assert!(
        !changes.contains("Failure rate"),
        "nor the failure rate: {changes}"
    );
    let top = b.execute(
        "return document.getElementById('metrics-h').getBoundingClientRect().top",
        json!([]),
    );
    let height = b.execute("return window.innerHeight", json!([]));
    assert!(
        top.as_f64().unwrap() >= -1.0 && top.as_f64().unwrap() < height.as_f64().unwrap(),
        "the figures are in view (to a pixel): {top}"
    );
    b.leave_frame();
    b.screenshot(&screenshot_path("lessons-step-keeps-baseline"));
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_system_path_diagram_is_marked_by_clicking_its_parts() {
    let (b, _) = lessons("en-US", "?lesson=system-path");
    let id = b
        .execute(
            "const d = document.querySelector('[data-testid=diagram]'); return d ? d.closest('[data-testid^=exercise-]').dataset.testid : '';",
            json!([]),
        )
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!id.is_empty(), "lesson 1 has a diagram exercise");
    let at = format!("[data-testid={id}]");
    b.execute(
        "document.querySelector(arguments[0]).scrollIntoView()",
        json!([at]),
    );
    // Wait for the drawing, then click a sample point on it.
    let part = (0..100)
        .find_map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let v = b.execute(
                "const p = document.querySelector(arguments[0] + ' [data-testid=diagram] [data-kind=sample-point]'); return p ? p.id : '';",
                json!([at]),
            );
            v.as_str().filter(|s| !s.is_empty()).map(str::to_string)
        })
        .expect("the diagram's sample points are on the page");
    b.click(&format!("{at} [data-testid=diagram] [id='{part}']"));
    let pressed = b.execute(
        "return document.querySelector(arguments[0]).getAttribute('aria-pressed')",
        json!([format!("{at} [id='{part}']")]),
    );
    assert_eq!(pressed, json!("true"));
    let listed = b.execute(
        "const o = document.querySelector(arguments[0]); return o ? o.checked : null;",
        json!([format!("{at} [data-testid=option-{part}]")]),
    );
    assert_eq!(listed, json!(true), "the list below mirrors the drawing");
    b.click(&format!("{at} [data-testid=check]"));
    b.wait_text(&format!("{at} [data-testid=feedback]"), |t| !t.is_empty());
    b.screenshot(&screenshot_path("lessons-diagram"));
}

/// The lesson's exercise scrolled into view, and its selector.
fn exercise_at(b: &Browser, id: &str) -> String {
    let at = format!("[data-testid=exercise-{id}]");
    b.execute(
        "document.querySelector(arguments[0]).scrollIntoView()",
        json!([at]),
    );
    at
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_learner_picks_the_rows_that_refute_the_busy_gpu_claim() {
    let (b, _) = lessons("en-US", "?lesson=system-path");
    let at = exercise_at(&b, "gpu-busy-pick-rows");
    // The table is the sample's measured attempts, each with the GPU the core read inside it.
    let rows = (0..100)
        .map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(100));
            b.execute(
                "return [...document.querySelectorAll(arguments[0] + ' tbody tr')].map(r => [...r.children].map(c => c.textContent));",
                json!([at]),
            )
        })
        .find(|v| v.as_array().is_some_and(|a| a.len() > 100))
        .expect("the sample's rows are on the page");
    let rows: Vec<Vec<String>> = serde_json::from_value(rows).unwrap();
    // columns: pick, attempt, start, outcome, TTFT, E2E, GPU utilisation
    let util = |r: &Vec<String>| r[6].parse::<f64>().unwrap_or(0.0);
    let timed_out: Vec<&String> = rows
        .iter()
        .filter(|r| r[3] != "success" && util(r) >= 90.0)
        .map(|r| &r[1])
        .take(3)
        .collect();
    assert_eq!(timed_out.len(), 3, "timeouts under a busy GPU");
    let fast = rows
        .iter()
        .find(|r| {
            r[3] == "success" && util(r) >= 90.0 && r[4].parse::<f64>().is_ok_and(|t| t < 0.5)
        })
        .map(|r| r[1].clone());
    let pick = |id: &str| b.click(&format!("{at} [data-testid=pick-{id}]"));
    if let Some(fast) = &fast {
        pick(fast);
        b.click(&format!("{at} [data-testid=check]"));
        let f = b.wait_text(&format!("{at} [data-testid=feedback]"), |t| !t.is_empty());
        assert!(f.contains("Not yet") && f.contains(fast.as_str()), "{f}");
        pick(fast);
    }
    for id in &timed_out {
        pick(id);
    }
    b.click(&format!("{at} [data-testid=check]"));
    let f = b.wait_text(&format!("{at} [data-testid=feedback]"), |t| !t.is_empty());
    assert!(f.contains("Right"), "{f}");
    b.screenshot(&screenshot_path("lessons-pick-rows"));
    // In Chinese, the outcomes in words.
    let (b, _) = lessons("zh-CN", "?lesson=system-path");
    let at = exercise_at(&b, "gpu-busy-pick-rows");
    b.wait_text(&format!("{at} tbody"), |t| t.contains("首字前超时"));
    b.screenshot(&screenshot_path("lessons-pick-rows-zh"));
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_learner_draws_the_system_map_checked_part_by_part_and_exports_it() {
    let (b, _) = lessons("en-US", "?lesson=system-path");
    let at = exercise_at(&b, "draw-system-map");
    let steps = [
        ("prompt tokens", "data"),
        ("client sends", "client"),
        ("gateway and queue", "queue"),
        ("prefill and decode", "device"),
        ("tokens streamed back", "output"),
    ];
    b.click(&format!("{at} [data-testid=map-steps-add]"));
    for (i, (name, role)) in steps.iter().enumerate() {
        write(&b, &format!("{at} [data-testid=map-steps-name-{i}]"), name);
        b.select(&format!("{at} [data-testid=map-steps-role-{i}]"), role);
    }
    b.select(&format!("{at} [data-testid=map-failure]"), "2");
    write(
        &b,
        &format!("{at} [data-testid=map-failure-note]"),
        "timeout before the first token",
    );
    b.select(&format!("{at} [data-testid=map-sample]"), "1");
    b.select(&format!("{at} [data-testid=map-clock]"), "server");
    for (i, (name, role)) in [
        ("shards", "data"),
        ("forward and backward", "device"),
        ("checkpoint", "checkpoint"),
    ]
    .iter()
    .enumerate()
    {
        write(
            &b,
            &format!("{at} [data-testid=map-training-name-{i}]"),
            name,
        );
        b.select(&format!("{at} [data-testid=map-training-role-{i}]"), role);
    }
    b.click(&format!("{at} [data-testid=check]"));
    let f = b.wait_text(&format!("{at} [data-testid=feedback]"), |t| !t.is_empty());
    assert!(f.contains("Not yet") && f.contains("client's clock"), "{f}");
    b.select(&format!("{at} [data-testid=map-clock]"), "client");
    b.click(&format!("{at} [data-testid=check]"));
    let f = b.wait_text(&format!("{at} [data-testid=feedback]"), |t| !t.is_empty());
    assert!(f.contains("Right"), "{f}");
    b.click(&format!("{at} [data-testid=map-json]"));
    let file = b.downloaded("system-map.json");
    assert!(
        file.contains("tracelab.system_map") && file.contains("prefill and decode"),
        "{file}"
    );
    b.screenshot(&screenshot_path("lessons-system-map"));
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_card_holds_the_second_threshold_and_checks_both() {
    let (b, _) = lessons("en-US", "?lesson=denominators");
    reveal_all(&b);
    frame_shows(&b, "5");
    b.execute(
        "document.querySelector('[data-testid=card-panel]').scrollIntoView()",
        json!([]),
    );
    b.click("[data-testid=card-add-second]");
    write(&b, "[data-testid=card-second-t]", "0.5");
    prefill_keeping(&b);
    b.click("[data-testid=card-check-lab]");
    let lines = review(&b, "card-check");
    let (agreement, text) = &lines["second:choice:t"];
    assert_eq!(agreement, "agrees", "{text}");
    let second: Vec<_> = lines
        .iter()
        .filter(|(id, _)| id.starts_with("second:figure:"))
        .collect();
    assert_eq!(second.len(), 7, "{second:?}");
    assert!(second.iter().all(|(_, (a, _))| a == "agrees"), "{second:?}");
    assert!(b
        .text_of("[data-testid=card-preview]")
        .contains("Second snapshot"));
    b.execute(
        "document.querySelector('[data-testid=card-second]').scrollIntoView()",
        json!([]),
    );
    b.screenshot(&screenshot_path("lessons-card-two-thresholds"));
}

/// A pre-fill that keeps what the learner wrote beyond the card (its second snapshot).
fn prefill_keeping(b: &Browser) {
    write(b, "[data-testid=card-card_value-0]", "5");
    b.click("[data-testid=prefill]");
    for _ in 0..100 {
        let saved = b.execute("const p = JSON.parse(localStorage.getItem('tracelab.v1.lessons') || '{}'); return !!(p.card && p.card.source && p.card.second && p.card.second.results[0].value);", json!([]));
        if saved == json!(true) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the card was not pre-filled with its second snapshot");
}

/// The learner's card as the lessons page saved it, by figure key: (value, numerator, denominator).
fn card_results(
    b: &Browser,
) -> (
    serde_json::Value,
    std::collections::HashMap<String, (String, String, String)>,
) {
    let stored = b.execute(
        "return localStorage.getItem('tracelab.v1.lessons')",
        json!([]),
    );
    let stored: serde_json::Value =
        serde_json::from_str(stored.as_str().expect("progress is saved"))
            .expect("progress is JSON");
    let card = stored["card"].clone();
    let results = card["results"]
        .as_array()
        .unwrap_or_else(|| panic!("the card has results: {card}"))
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("key"), (s("value"), s("numerator"), s("denominator")))
        })
        .collect();
    (card, results)
}

fn prefill(b: &Browser) {
    b.execute("localStorage.removeItem('tracelab.v1.lessons')", json!([]));
    b.execute(
        "document.querySelector('[data-testid=card-panel]').scrollIntoView()",
        json!([]),
    );
    // The learner's own attempt first (one figure), then the lab's answer.
    write(b, "[data-testid=card-card_value-0]", "5");
    b.click("[data-testid=prefill]");
    // The card is saved once the pre-fill is written (a blank card is on the page before).
    for _ in 0..100 {
        let saved = b.execute("const p = JSON.parse(localStorage.getItem('tracelab.v1.lessons') || '{}'); return !!(p.card && p.card.source);", json!([]));
        if saved == json!(true) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!(
        "the card was not pre-filled: {}",
        b.text_of("[data-testid=lesson-error]")
    );
}

/// Types into a card field and leaves it, as a learner does (the field saves on change).
fn write(b: &Browser, css: &str, text: &str) {
    b.replace_text(css, text);
    b.press("\u{E004}");
}

/// The review's lines by id: (agreement, text).
fn review(b: &Browser, list: &str) -> std::collections::HashMap<String, (String, String)> {
    b.wait_text(&format!("[data-testid={list}]"), |t| !t.is_empty());
    let v = b.execute(
        "return [...document.querySelectorAll(`[data-testid=${arguments[0]}] li`)].map(l => [l.dataset.id, l.dataset.agreement, l.textContent]);",
        json!([list]),
    );
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l[0].as_str().unwrap().to_string(),
                (
                    l[1].as_str().unwrap().to_string(),
                    l[2].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_card_is_written_first_then_checked_and_a_classmates_card_is_recomputed() {
    let (b, _) = lessons("en-US", "?lesson=denominators");
    reveal_all(&b);
    frame_shows(&b, "5");
    b.execute(
        "document.querySelector('[data-testid=card-panel]').scrollIntoView()",
        json!([]),
    );
    // Every field is there before any pre-fill, its help written under it.
    let help = b.text_of("#card-help-percentile_method");
    assert!(!help.is_empty(), "the help stands under the field");
    assert_eq!(
        b.text_of("[data-testid=card-percentile_method]"),
        "",
        "nothing is written for the learner"
    );
    assert!(b
        .text_of("[data-testid=card-choice-pm]")
        .contains("not stated"));
    assert!(b.try_find("[data-testid=card-result-ttft_tail]").is_some());
    // Neither the check nor the pre-fill answers before the learner has written a figure.
    let disabled = |css: &str| {
        b.execute(
            "return document.querySelector(arguments[0]).disabled",
            json!([css]),
        )
    };
    assert_eq!(disabled("[data-testid=card-check-lab]"), json!(true));
    assert_eq!(disabled("[data-testid=prefill]"), json!(true));
    assert!(b
        .text_of("[data-testid=card-write-first]")
        .starts_with("Write at least one figure yourself first"));

    // The learner writes first: the attempts, the failure rate, and a P95 as linear
    // interpolation gives it while stating nearest-rank.
    write(&b, "[data-testid=card-attempts]", "10 attempts");
    b.select("[data-testid=card-choice-pm]", "nearest-rank");
    let results = b.execute(
        "return [...document.querySelectorAll('.card-result')].map(f => f.dataset.testid)",
        json!([]),
    );
    let index = |key: &str| {
        results
            .as_array()
            .unwrap()
            .iter()
            .position(|k| k.as_str() == Some(&format!("card-result-{key}")))
            .unwrap()
    };
    write(
        &b,
        &format!("[data-testid=card-card_value-{}]", index("failure_rate")),
        "20 %",
    );
    write(
        &b,
        &format!("[data-testid=card-card_value-{}]", index("ttft_tail")),
        "1.72 s",
    );
    assert_eq!(disabled("[data-testid=card-check-lab]"), json!(false));
    assert_eq!(disabled("[data-testid=prefill]"), json!(false));
    b.click("[data-testid=card-check-lab]");
    let r = review(&b, "card-check");
    assert_eq!(r["field:attempts"].0, "agrees", "{r:?}");
    assert_eq!(r["figure:failure_rate"].0, "agrees", "{r:?}");
    assert_eq!(r["figure:ttft_tail"].0, "differs", "{r:?}");
    assert!(
        r["figure:ttft_tail"].1.contains("linear"),
        "the why names the cause: {r:?}"
    );
    assert_eq!(r["choice:cmp"].0, "not_written", "{r:?}");
    assert_eq!(r["figure:goodput"].0, "not_written", "{r:?}");
    b.screenshot(&screenshot_path("lessons-card-check"));
    // What the learner wrote is kept through a reload.
    b.goto(&b.url());
    b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
    let kept = b.execute(
        &format!(
            "return document.querySelector('[data-testid=card-card_value-{}]').value",
            index("ttft_tail")
        ),
        json!([]),
    );
    assert_eq!(kept, json!("1.72 s"));

    // A pre-fill after a step left a wrong choice in the lab says which settings it used.
    reveal_all(&b);
    frame_shows(&b, "5");
    b.click("[data-testid=step-ten-at-05s]");
    frame_shows(&b, "4");
    prefill(&b);
    let note = b.wait_text("[data-testid=prefill-note]", |t| !t.is_empty());
    assert!(
        note.contains("TTFT threshold (s): 0.5 s")
            && note.contains("Percentile method: nearest-rank"),
        "{note}"
    );
    b.click("[data-testid=card-check-lab]");
    let r = review(&b, "card-check");
    assert!(
        r.values()
            .all(|(a, _)| a == "agrees" || a == "for_a_reader"),
        "a pre-filled card agrees with the lab: {r:?}"
    );

    // The classmate's card: exported, one figure altered, loaded with the trace it names.
    b.click("[data-testid=card-json]");
    let mut theirs: serde_json::Value =
        serde_json::from_str(&b.downloaded("metric-card.json")).unwrap();
    assert_eq!(
        theirs["choices"]["t"],
        json!("0.5"),
        "the card states its choices: {theirs}"
    );
    for r in theirs["results"].as_array_mut().unwrap() {
        if r["key"] == json!("joint_rate") {
            r["value"] = json!("50 %");
        }
    }
    let dir = std::env::temp_dir().join(format!("tracelab-classmate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let card_file = dir.join("their-card.json");
    std::fs::write(&card_file, theirs.to_string()).unwrap();
    let trace_file = dir.join("ten-requests.jsonl");
    std::fs::copy(
        support::dist().join("samples/ten-requests.jsonl"),
        &trace_file,
    )
    .unwrap();
    b.type_into("[data-testid=classmate-card]", card_file.to_str().unwrap());
    b.type_into(
        "[data-testid=classmate-trace]",
        trace_file.to_str().unwrap(),
    );
    let r = review(&b, "classmate-check");
    assert_eq!(r["field:source"].0, "agrees", "{r:?}");
    assert_eq!(r["figure:goodput"].0, "agrees", "{r:?}");
    assert_eq!(r["figure:joint_rate"].0, "differs", "{r:?}");
    assert!(
        r["figure:joint_rate"].1.contains("40 %"),
        "the card's own choices give 40 %: {r:?}"
    );
    b.screenshot(&screenshot_path("lessons-card-classmate"));
    // The same review in Chinese, every line and its why.
    b.click("[data-testid=lang-switch]");
    let zh = b.wait_text("[data-testid=classmate-check]", |t| t.contains("推不出来"));
    assert!(
        zh.contains("同学的口径卡，重算结果") && zh.contains("40 %"),
        "{zh}"
    );
    b.execute(
        "document.querySelector('[data-testid=classmate-check]').scrollIntoView()",
        json!([]),
    );
    b.screenshot(&screenshot_path("lessons-card-classmate-zh"));
    b.click("[data-testid=lang-switch]");
    // A file that is not a card is refused, naming it.
    std::fs::write(
        &card_file,
        "{\"kind\": \"tracelab.learner_card\", \"version\": 1, \"choices\": {\"t\": 1}}",
    )
    .unwrap();
    b.type_into("[data-testid=classmate-card]", card_file.to_str().unwrap());
    let err = b.wait_text("[data-testid=lesson-error]", |t| !t.is_empty());
    assert!(
        err.contains("their-card.json") && err.contains("choices.t"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Opens every worked answer of the lesson on the page (a recorded request), so the lab beside
/// shows every figure: for the tests of what the lab shows, not of predicting first.
fn reveal_all(b: &Browser) {
    for _ in 0..20 {
        let left = b.execute("const s = document.querySelector('[data-testid=show-worked]'); if (s) s.click(); return !!s;", json!([]));
        if left != json!(true) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
    panic!("the worked answers did not open");
}

/// Waits until the lab inside the frame shows `qualified`, reading it in the frame.
fn frame_shows(b: &Browser, qualified: &str) {
    b.enter_frame("[data-testid=lab-frame]");
    b.wait_text("[data-testid=value-qualified_count]", |t| t == qualified);
    b.leave_frame();
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_card_is_prefilled_from_what_the_lab_shows_upload_and_what_if_edits_included() {
    let (b, _) = lessons("en-US", "?lesson=denominators");
    reveal_all(&b);
    frame_shows(&b, "5");

    // An upload in the frame: its own window (4 s) and rows, no cost.
    let dir = std::env::temp_dir().join(format!("tracelab-prefill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let upload = dir.join("class.csv");
    std::fs::write(&upload, "# window_s: 4\nid,outcome,ttft_s,quality\nA,success,0.2,pass\nB,success,0.7,pass\nC,connect_error,,not_evaluated\nD,success,0.3,fail\n").unwrap();
    b.enter_frame("[data-testid=lab-frame]");
    b.type_into("[data-testid=upload]", upload.to_str().unwrap());
    b.wait_text("[data-testid=trace-summary]", |t| t.contains("class.csv"));
    b.wait_text("[data-testid=value-qualified_count]", |t| t == "2");
    b.leave_frame();

    prefill(&b);
    let (card, r) = card_results(&b);
    let source = card["source"].as_str().unwrap_or_default();
    assert!(
        source.contains("class.csv") && !source.contains("ten-requests"),
        "the upload, not the sample: {card}"
    );
    assert!(!source.contains("hypothetical"), "{source}");
    assert_eq!(r["goodput"].0, "0.5 /s", "{r:?}");
    assert!(
        r["goodput"].1.ends_with(") = 2") && r["goodput"].2 == "window seconds = 4",
        "{r:?}"
    );
    assert_eq!(r["failure_rate"].0, "25 %", "{r:?}");
    assert!(
        r["failure_rate"].1.ends_with("= 1") && r["failure_rate"].2.ends_with("= 4"),
        "{r:?}"
    );
    assert!(
        card["window"]
            .as_str()
            .unwrap_or_default()
            .starts_with("4 s"),
        "{card}"
    );
    assert!(
        card["window"]
            .as_str()
            .unwrap_or_default()
            .contains("cost not given"),
        "{card}"
    );

    // A what-if edit in the frame: D's quality fail marked as a pass. The lab says the figures
    // are hypothetical and names the false conclusion; the card says the same.
    b.enter_frame("[data-testid=lab-frame]");
    b.click("[data-testid=attempt-row]:nth-of-type(4)");
    b.wait_text("[data-testid=position]", |t| t == "4 / 4");
    b.execute("document.querySelector('.row-edit').open = true", json!([]));
    b.select("[data-testid=edit-quality]", "pass");
    b.wait_text("[data-testid=value-qualified_count]", |t| t == "3");
    let note = b.wait_text("[data-testid=hypothetical]", |t| !t.is_empty());
    assert!(
        note.contains("Hypothetical figures (1 row edited)"),
        "{note}"
    );
    assert!(
        note.contains("D edited from “not qualified — quality”") && note.contains("wrong answer"),
        "{note}"
    );
    b.leave_frame();
    prefill(&b);
    let (card, r) = card_results(&b);
    let source = card["source"].as_str().unwrap_or_default();
    assert!(
        source.contains("class.csv (hypothetical: 1 row edited, not the trace as recorded)"),
        "{card}"
    );
    assert_eq!(r["goodput"].0, "0.75 /s", "{r:?}");
    assert!(
        r["goodput"].1.ends_with(") = 3") && r["goodput"].2 == "window seconds = 4",
        "{r:?}"
    );
    let notes = card["notes"].as_str().unwrap_or_default();
    assert!(
        notes.contains("D's answer failed the quality check"),
        "the card names the false conclusion: {notes}"
    );
    b.screenshot(&screenshot_path("lessons-prefill-upload-whatif"));

    // A frame that is not the lab: the card is refused, with the reason, and the old one kept.
    b.execute(
        "document.querySelector('[data-testid=lab-frame]').src = 'about:blank'",
        json!([]),
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    b.click("[data-testid=prefill]");
    let err = b.wait_text("[data-testid=lesson-error]", |t| !t.is_empty());
    assert!(err.contains("not pre-filled"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn lesson_steps_never_overwrite_the_learners_own_lab_settings() {
    let base = static_server::serve(dist());
    let b = Browser::start(1500, 1100, "en-US");
    // The learner's own lab: 0.7 s.
    b.goto(&format!("{base}/"));
    b.wait_text("[data-testid=value-qualified_count]", |t| t == "5");
    b.replace_text("[data-testid=threshold-input]", "0.7");
    b.wait_text("[data-testid=value-qualified_count]", |t| t == "4");
    // A lesson step drives the lab in the frame to "< 0.5 s".
    b.goto(&format!("{base}/lessons/?lesson=denominators"));
    b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
    reveal_all(&b);
    b.execute(
        "document.querySelector('[data-testid=step-ten-lt-mistake]').scrollIntoView()",
        json!([]),
    );
    b.click("[data-testid=step-ten-lt-mistake]");
    frame_shows(&b, "3");
    // Back in the lab itself: the learner's 0.7 s and ≤ are still there.
    b.goto(&format!("{base}/"));
    b.wait_text("[data-testid=value-qualified_count]", |t| t == "4");
    assert_eq!(
        b.execute(
            "return document.querySelector('[data-testid=threshold-input]').value",
            json!([])
        ),
        json!("0.7")
    );
    assert_eq!(
        b.execute(
            "return document.querySelector('[data-testid=comparison]').value",
            json!([])
        ),
        json!("le")
    );
    let own = b.execute(
        "return JSON.parse(localStorage.getItem('tracelab.v1.state')).settings",
        json!([]),
    );
    assert_eq!(
        (own["t"].clone(), own["cmp"].clone()),
        (json!("0.7"), json!("le")),
        "{own}"
    );
    let frame = b.execute(
        "return JSON.parse(localStorage.getItem('tracelab.v1.lesson-frame')).settings",
        json!([]),
    );
    assert_eq!(
        (frame["t"].clone(), frame["cmp"].clone()),
        (json!("0.5"), json!("lt")),
        "the frame keeps its own: {frame}"
    );
}

/// At laptop widths, a projector and a phone, every lesson keeps to its column and nothing of it
/// lies under the lab frame. Screenshots `lessons-layout-<width>.png` are for looking at.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn every_lesson_keeps_to_its_column_at_every_width() {
    let base = static_server::serve(dist());
    for (width, height) in [
        (1024, 768),
        (1280, 800),
        (1366, 768),
        (1440, 900),
        (1920, 1080),
        (360, 740),
    ] {
        let b = Browser::start(width, height, "en-US");
        b.goto(&format!("{base}/lessons/?lesson=system-path"));
        b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
        let tabs = b.find_all(".lesson-tab").len();
        assert_eq!(tabs, 5, "five lessons at {width} px");
        for i in 0..tabs {
            b.execute(
                "document.querySelectorAll('.lesson-tab')[arguments[0]].click()",
                json!([i]),
            );
            std::thread::sleep(std::time::Duration::from_millis(400));
            b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
            // Below 761 px the lab is docked over the bottom of the window on purpose (the
            // lesson scrolls above it and is padded to clear it), so only the column is checked.
            let avoid = if width > 760 {
                json!("#lab-frame")
            } else {
                json!(null)
            };
            let bad = b.execute(support::OUT_OF_COLUMN_JS, json!([".lesson-col", avoid]));
            assert_eq!(bad, json!([]), "lesson {i} at {width} px");
            let tab = b.execute(
                "const t = document.querySelectorAll('.lesson-tab')[4].getBoundingClientRect(); const f = document.querySelector('#lab-frame').getBoundingClientRect(); return t.right <= f.left || t.top >= f.bottom || t.bottom <= f.top || t.left >= f.right;",
                json!([]),
            );
            assert_eq!(
                tab,
                json!(true),
                "the fifth lesson tab is clear of the frame at {width} px"
            );
        }
        b.execute(
            "document.querySelectorAll('.lesson-tab')[2].click(); window.scrollTo(0, 0)",
            json!([]),
        );
        std::thread::sleep(std::time::Duration::from_millis(400));
        b.screenshot(&screenshot_path(&format!("lessons-layout-{width}")));
    }
}

/// Whether `css` in the lab's frame is rendered (Chromium's `checkVisibility`, visibility
/// included); `None` while the frame has no such element yet.
fn frame_visible(b: &Browser, css: &str) -> Option<bool> {
    b.execute(
        "const d = document.querySelector('[data-testid=lab-frame]').contentDocument; const e = d && d.querySelector(arguments[0]); return e ? e.checkVisibility({visibilityProperty: true}) : null;",
        json!([css]),
    )
    .as_bool()
}

/// Waits until the frame's `css` is rendered as `shown`.
fn frame_settles(b: &Browser, css: &str, shown: bool) {
    let ok = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        frame_visible(b, css) == Some(shown)
    });
    assert!(
        ok,
        "the lab's {css} should be {}: {:?}",
        if shown { "shown" } else { "hidden" },
        frame_visible(b, css)
    );
}

fn body_text(b: &Browser) -> String {
    b.execute("return document.body.innerText", json!([]))
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Lesson 3's worked figures as they read on the page.
const LESSON_THREE_ANSWERS: [&str; 6] = [
    "2 / 10 = 20",
    "7 / 8 = 87.5",
    "5 / 10 s = 0.5",
    "/ 5 = 4 CNY",
    "0.5 s to 0.4 s",
    "R6 (0.8 s) no longer qualifies",
];

/// Teacher mode hides every answer: no worked text, feedback that names nothing (a wrong
/// multi-select, a one-character free text, a known numeric mistake), the lab beside with the
/// asked figures hidden, a printed worksheet without feedback; the answers are on the separate,
/// printable answer key, computed by the core.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn teacher_mode_hides_every_answer_and_the_answer_key_has_them() {
    let (b, base) = lessons("en-US", "?lesson=denominators&teacher=1");
    let text = body_text(&b);
    for worked in LESSON_THREE_ANSWERS {
        assert!(!text.contains(worked), "teacher mode shows `{worked}`");
    }
    assert!(!b.find_all("[data-testid=worked-locked]").is_empty());
    assert!(
        b.find_all("[data-testid=show-worked]").is_empty(),
        "no offer to open a worked answer"
    );
    let said = answer(&b, "t1-failure", "25");
    assert!(
        said.starts_with("✗") && !said.contains('/') && !said.contains("20"),
        "names no figure: {said}"
    );
    // The lab beside: each asked figure is hidden, its heading stays.
    frame_settles(&b, "[data-testid=metric-ttft_p95] h3", true);
    for key in [
        "ttft_p95",
        "failure_rate",
        "qualified_count",
        "goodput",
        "cost_per_1000_qualified",
        "quality_pass_rate",
        "joint_rate",
        "ttft_p50",
    ] {
        frame_settles(&b, &format!("[data-testid=value-{key}]"), false);
    }
    b.screenshot(&screenshot_path("lessons-teacher"));
    // The printed worksheet: no feedback at all.
    b.emulate_media("print");
    let printed = body_text(&b);
    assert!(
        !printed.contains("Not yet") && !printed.contains("Teacher mode shows"),
        "{printed}"
    );
    b.emulate_media("");

    // Lesson 1: a wrong multi-select names nothing; a one-character free text shows no model answer.
    b.goto(&format!("{base}/lessons/?lesson=system-path&teacher=1"));
    b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
    let at = "[data-testid=exercise-mark-failure-points]";
    b.execute(
        "document.querySelector(arguments[0]).scrollIntoView()",
        json!([at]),
    );
    b.click(&format!("{at} [data-testid=option-fp-connect]"));
    b.click(&format!("{at} [data-testid=option-fp-checkpoint]"));
    b.click(&format!("{at} [data-testid=check]"));
    let said = b.wait_text(&format!("{at} [data-testid=feedback]"), |t| !t.is_empty());
    assert!(
        said.starts_with("✗") && !said.contains("F2 ·") && !said.contains("F6 ·"),
        "{said}"
    );
    let at = "[data-testid=exercise-gpu-busy-counterexample]";
    b.execute(
        "document.querySelector(arguments[0]).scrollIntoView()",
        json!([at]),
    );
    b.type_into(&format!("{at} [data-testid=free-text]"), "x");
    b.click(&format!("{at} [data-testid=check]"));
    let said = b.wait_text(&format!("{at} [data-testid=feedback]"), |t| !t.is_empty());
    assert!(!said.contains("One possible answer"), "{said}");

    // The answer key: every exercise, the numbers from the core.
    b.goto(&format!("{base}/lessons/?key=1"));
    b.wait_text("[data-testid=key-table]", |t| t.contains("t05-cost"));
    assert_eq!(
        b.text_of("[data-testid=key-t1-p95] [data-testid=key-answer]"),
        "2 s"
    );
    assert_eq!(
        b.text_of("[data-testid=key-t05-cost] [data-testid=key-answer]"),
        "5 CNY"
    );
    assert_eq!(
        b.text_of("[data-testid=key-stream-ttft] [data-testid=key-answer]"),
        "700 ms"
    );
    assert!(b
        .text_of("[data-testid=key-mark-failure-points] [data-testid=key-answer]")
        .contains("F2 ·"));
    assert!(
        b.find_all("[data-testid^=key-] [data-testid=key-answer]")
            .len()
            >= 40
    );
    b.screenshot(&screenshot_path("lessons-answer-key"));
    b.click("[data-testid=lang-switch]");
    b.wait_text("[data-testid=key-t1-p95] [data-testid=key-answer]", |t| {
        t == "2 s"
    });
    assert_eq!(
        b.text_of("[data-testid=key-t1-qualified] [data-testid=key-answer]"),
        "5 个"
    );
    b.screenshot(&screenshot_path("lessons-answer-key-zh"));
}

/// A learner's wrong multi-select names what was marked wrongly, never the missed right options;
/// one character saved shows no model answer.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn a_learners_wrong_answer_never_lists_the_answer() {
    let (b, _) = lessons("en-US", "?lesson=system-path");
    let at = "[data-testid=exercise-mark-failure-points]";
    b.execute(
        "document.querySelector(arguments[0]).scrollIntoView()",
        json!([at]),
    );
    b.click(&format!("{at} [data-testid=option-fp-connect]"));
    b.click(&format!("{at} [data-testid=option-fp-checkpoint]"));
    b.click(&format!("{at} [data-testid=check]"));
    let said = b.wait_text(&format!("{at} [data-testid=feedback]"), |t| !t.is_empty());
    assert!(
        said.contains("F6 ·")
            && !said.contains("F2 ·")
            && said.contains("4 right options are still unmarked"),
        "{said}"
    );
    let at = "[data-testid=exercise-gpu-busy-counterexample]";
    b.execute(
        "document.querySelector(arguments[0]).scrollIntoView()",
        json!([at]),
    );
    b.type_into(&format!("{at} [data-testid=free-text]"), "x");
    b.click(&format!("{at} [data-testid=check]"));
    let said = b.wait_text(&format!("{at} [data-testid=feedback]"), |t| !t.is_empty());
    assert!(!said.contains("One possible answer"), "{said}");
}

/// Predict, then reveal: the exercises come before the worked answer, which opens on answering
/// (or on an explicit, recorded request); the lab beside hides each asked figure until it is
/// answered right.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn exercises_come_first_and_the_answer_is_revealed_after() {
    let (b, _) = lessons("en-US", "?lesson=denominators");
    let text = body_text(&b);
    for worked in LESSON_THREE_ANSWERS {
        assert!(
            !text.contains(worked),
            "`{worked}` is shown before the exercises are answered"
        );
    }
    assert!(b.find_all("[data-testid=worked]").is_empty());
    frame_settles(&b, "[data-testid=value-ttft_p95]", false);
    frame_settles(&b, "[data-testid=value-failure_rate]", false);
    // A right answer shows the lab's figure for it; the others stay hidden, P95 too after its
    // first exercise, since the 0.5 s section asks for the same P95 again.
    assert!(answer(&b, "quality-rate", "87.5").starts_with("✓"));
    frame_settles(&b, "[data-testid=value-quality_pass_rate]", true);
    frame_settles(&b, "[data-testid=value-failure_rate]", false);
    assert!(answer(&b, "t1-p95", "2").starts_with("✓"));
    frame_settles(&b, "[data-testid=value-ttft_p95]", false);
    b.screenshot(&screenshot_path("lessons-predict-lab-hides"));
    // Answering every exercise of the section (wrong ones too) opens its worked answer.
    for (id, v) in [
        ("t1-failure", "25"),
        ("t1-qualified", "5"),
        ("t1-goodput", "0.5"),
        ("t1-cost", "4"),
        ("joint-rate", "50"),
    ] {
        answer(&b, id, v);
        assert!(
            b.find_all("[data-testid=worked]").is_empty(),
            "open before every exercise is answered ({id})"
        );
    }
    answer(&b, "ttft-p50", "0.5");
    let worked = b.wait_text("[data-testid=worked]", |t| !t.is_empty());
    assert!(worked.contains("2 / 10 = 20"), "{worked}");
    frame_settles(&b, "[data-testid=value-failure_rate]", false); // answered, but wrong
                                                                  // Asking for a worked answer opens it and is recorded.
    let locked = b.find_all("[data-testid=show-worked]").len();
    b.execute(
        "document.querySelector('[data-testid=show-worked]').scrollIntoView()",
        json!([]),
    );
    b.click("[data-testid=show-worked]");
    b.wait_text("[data-testid=lesson]", |t| {
        t.contains("no longer qualifies")
    });
    assert_eq!(b.find_all("[data-testid=show-worked]").len(), locked - 1);
    let stored = b.execute(
        "return localStorage.getItem('tracelab.v1.lessons')",
        json!([]),
    );
    assert!(
        stored
            .as_str()
            .unwrap_or_default()
            .contains("worked:t05-p95"),
        "{stored}"
    );
    b.screenshot(&screenshot_path("lessons-predict-revealed"));

    // Lesson 2's one-request sample: its row's TTFT is the answer, hidden until answered.
    b.click("[data-testid=lesson-client-timeline]");
    b.wait_text("[data-testid=lesson]", |t| t.contains("Four moments"));
    b.click("[data-testid=step-timeline-stream]");
    frame_settles(&b, "[data-testid=attempts-table] td:nth-child(4)", false);
    assert!(!body_text(&b).contains("700 − 0"), "the worked TTFT waits");
    assert!(answer(&b, "stream-ttft", "700").starts_with("✓"));
    frame_settles(&b, "[data-testid=attempts-table] td:nth-child(4)", true);
}

/// Judge first, beside the lab: the learner calls each row before its verdict shows (the lab's
/// verdicts stay hidden meanwhile), the core checks each call and scores the pass. And the lab's
/// running tally gives each figure's 95 % interval: at R8 the P95 of 8 TTFTs has no upper bound.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn judge_first_scores_each_call_and_the_tally_shows_how_sure_it_is() {
    let base = static_server::serve(dist());
    for (width, height, lang) in [(1280, 900, "en"), (360, 740, "zh")] {
        let b = Browser::start(width, height, "en-US");
        b.goto(&format!("{base}/lessons/?lesson=denominators&lang={lang}"));
        b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
        if width <= 760 {
            // On a phone the docked lab starts lowered; the learner raises it to look.
            frame_settles(&b, "[data-testid=why-verdict]", false);
            b.click("[data-testid=lab-toggle]");
        }
        frame_settles(&b, "[data-testid=why-verdict]", true);
        if width <= 760 {
            // Lowered again while reading; starting to judge raises it, since rows are judged against it.
            b.click("[data-testid=lab-toggle]");
            frame_settles(&b, "[data-testid=why-verdict]", false);
        }
        b.execute(
            "document.querySelector('[data-testid=judge]').scrollIntoView()",
            json!([]),
        );
        b.click("[data-testid=judge-start]");
        b.wait_text("[data-testid=judge-row]", |t| t.starts_with("R1 "));
        frame_settles(&b, "[data-testid=why-verdict]", false);
        frame_settles(&b, "[data-testid=verdict]", false);
        // No verdict by colour either: the row's marks are grey in every chart (#38).
        for mark in [
            "[data-testid=run-bar] rect.wait",
            "[data-testid=request-chart] rect.wait",
            "[data-testid=ttft-dot]",
        ] {
            wait_for(&format!("{mark} in grey"), || {
                frame_fill(&b, mark).as_deref() == Some("rgb(153, 153, 153)")
            });
        }
        // R1–R4 qualified (right), R5 called qualified (wrong: quality).
        for (row, call) in [
            ("R1", "qualified"),
            ("R2", "qualified"),
            ("R3", "qualified"),
            ("R4", "qualified"),
            ("R5", "qualified"),
        ] {
            let line = b.wait_text("[data-testid=judge-row]", |t| {
                t.starts_with(&format!("{row} "))
            });
            // The keyboard is on the row's first call, never dropped to the page (#38), and the
            // docked lab on a phone covers no call.
            wait_for(&format!("focus on {row}'s first call"), || {
                focused(&b).starts_with("call-")
            });
            assert!(
                calls_clear_of_the_lab(&b),
                "{row}: the lab covers the calls"
            );
            if lang == "zh" {
                for english in ["success", "pass", "not_evaluated", "fail"] {
                    assert!(!line.contains(english), "{row}: {line}");
                }
            }
            b.click(&format!("[data-testid=call-{call}]"));
            let judged = b.wait_text("[data-testid=judged]", |t| !t.is_empty());
            assert_eq!(judged.starts_with('✓'), row != "R5", "{row}: {judged}");
            wait_for(&format!("focus on the next row after {row}"), || {
                focused(&b) == "judge-next"
            });
            if row != "R5" {
                b.click("[data-testid=judge-next]");
            }
        }
        let judged = b.text_of("[data-testid=judged]");
        let score = b.text_of("[data-testid=judge-score]");
        if lang == "en" {
            assert_eq!(
                judged,
                "✗ You said qualified; the row is not qualified: quality."
            );
            assert_eq!(
                score,
                "Judged 5 of 10 rows: 4 verdicts right; 0 of 0 reasons right."
            );
        } else {
            assert!(
                judged.starts_with('✗') && judged.contains("质量"),
                "{judged}"
            );
        }
        // The lab beside shows the row being judged.
        b.enter_frame("[data-testid=lab-frame]");
        b.wait_text("[data-testid=position]", |t| t.starts_with("5 /"));
        b.leave_frame();
        b.screenshot(&screenshot_path(&format!(
            "lessons-judge-first-{width}-{lang}"
        )));
        // R6 … R8: a latency call on R7 and R8 is right, reason and all.
        for (row, call) in [("R6", "qualified"), ("R7", "latency"), ("R8", "latency")] {
            b.click("[data-testid=judge-next]");
            b.wait_text("[data-testid=judge-row]", |t| {
                t.starts_with(&format!("{row} "))
            });
            b.click(&format!("[data-testid=call-{call}]"));
            assert!(
                b.wait_text("[data-testid=judged]", |t| !t.is_empty())
                    .starts_with('✓'),
                "{row}"
            );
        }
        if lang == "en" {
            assert_eq!(
                b.text_of("[data-testid=judge-score]"),
                "Judged 8 of 10 rows: 7 verdicts right; 2 of 2 reasons right."
            );
        }
        // Stopping shows the lab's verdicts again, and its running tally at R8 says n = 8 cannot
        // bound the tail.
        b.click("[data-testid=judge-stop]");
        frame_settles(&b, "[data-testid=why-verdict]", true);
        // The running figures stay hidden while the lesson's P95 is asked; shown once answered.
        frame_settles(&b, "[data-testid=running]", false);
        reveal_all(&b);
        frame_settles(&b, "[data-testid=running]", true);
        b.enter_frame("[data-testid=lab-frame]");
        let running = b.wait_text("[data-testid=running]", |t| t.contains("P95"));
        b.leave_frame();
        let tail = running
            .lines()
            .find(|l| l.contains("P95"))
            .unwrap_or_default()
            .to_string();
        assert!(
            tail.contains("n = 8")
                && tail.contains(if lang == "en" {
                    "no upper bound"
                } else {
                    "无上界"
                }),
            "{running}"
        );
        assert!(
            running.contains(if lang == "en" {
                "95 % interval"
            } else {
                "95 % 区间"
            }),
            "{running}"
        );
    }
}

/// The computed fill of the lab frame's first `css`, once it is there.
fn frame_fill(b: &Browser, css: &str) -> Option<String> {
    b.execute(
        "const d = document.querySelector('[data-testid=lab-frame]').contentDocument; const e = d && d.querySelector(arguments[0]); return e ? getComputedStyle(e).fill : null;",
        json!([css]),
    )
    .as_str()
    .map(str::to_string)
}

/// The `data-testid` of the element the keyboard is on ("" for none, the page's body).
fn focused(b: &Browser) -> String {
    b.execute(
        "const e = document.activeElement; return (e && e.dataset && e.dataset.testid) || '';",
        json!([]),
    )
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// Whether every call button (or the next-row button) of "judge first" lies above the docked
/// lab's top edge, inside the window.
fn calls_clear_of_the_lab(b: &Browser) -> bool {
    b.execute(
        "const lab = document.querySelector('.lab-col').getBoundingClientRect();
         const docked = getComputedStyle(document.querySelector('.lab-col')).position === 'fixed';
         const limit = docked ? lab.top : window.innerHeight;
         const buttons = document.querySelectorAll('[data-testid=judge] .calls button, [data-testid=judge-next]');
         return buttons.length > 0 && [...buttons].every(x => { const r = x.getBoundingClientRect(); return r.top >= 0 && r.bottom <= limit + 0.5; });",
        json!([]),
    ) == json!(true)
}

/// The closed worked answer, the lab's hidden figure and the answer key at a phone's and a
/// laptop's width, in both languages: screenshots `lessons-predict-<width>-<lang>.png` and
/// `lessons-key-<width>-<lang>.png` are for looking at; each stays inside the page's width.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn predict_first_and_the_answer_key_fit_a_phone_and_a_laptop() {
    let base = static_server::serve(dist());
    for (width, height) in [(1280, 800), (360, 740)] {
        for lang in ["en", "zh"] {
            let b = Browser::start(width, height, "en-US");
            b.goto(&format!("{base}/lessons/?lesson=denominators&lang={lang}"));
            b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
            b.execute(
                "document.querySelector('[data-testid=exercise-t1-p95]').scrollIntoView()",
                json!([]),
            );
            let locked = b.text_of("[data-testid=worked-locked]");
            assert!(!locked.is_empty());
            let right = b.execute("return document.querySelector('[data-testid=worked-locked]').getBoundingClientRect().right", json!([]));
            assert!(
                right.as_f64().unwrap() <= width as f64 + 0.5,
                "{width} px {lang}: {right}"
            );
            frame_settles(&b, "[data-testid=value-ttft_p95]", false);
            // Nor in the figure strip a narrow frame keeps at its bottom.
            frame_settles(&b, "[data-testid=strip-ttft_p95]", false);
            b.screenshot(&screenshot_path(&format!("lessons-predict-{width}-{lang}")));
            b.goto(&format!("{base}/lessons/?key=1&lang={lang}"));
            b.wait_text("[data-testid=key-table]", |t| t.contains("t05-cost"));
            let wide = b.execute("return document.documentElement.scrollWidth", json!([]));
            assert!(
                wide.as_f64().unwrap() <= width as f64 + 0.5,
                "the key fits {width} px ({lang}): {wide}"
            );
            b.screenshot(&screenshot_path(&format!("lessons-key-{width}-{lang}")));
        }
    }
}

/// The lab's "Lessons" link inside the lessons page's frame opens the lessons page in the whole
/// window, not a second lessons page inside the frame.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_labs_lessons_link_in_the_frame_opens_the_lessons_in_the_window() {
    let (b, _) = lessons("en-US", "?lesson=denominators");
    let ok = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        b.execute(
            "const d = document.getElementById('lab-frame').contentDocument; const a = d && d.querySelector('[data-testid=lessons-link]'); return !!a",
            json!([]),
        ) == json!(true)
    });
    assert!(ok, "the lab in the frame has no lessons link");
    // A mark on the window: it is gone once the window itself loads a new page.
    b.execute("window.tlMark = 1; document.getElementById('lab-frame').contentDocument.querySelector('[data-testid=lessons-link]').click()", json!([]));
    let left = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        b.execute("return window.tlMark === undefined", json!([])) == json!(true)
    });
    assert!(
        left,
        "the link opened inside the frame, not in the window: {}",
        b.url()
    );
    b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
    assert!(b.url().contains("/lessons/"), "{}", b.url());
    assert_eq!(
        b.execute(
            "return document.querySelectorAll('#lab-frame').length",
            json!([])
        ),
        json!(1),
        "one frame, not a lessons page inside it"
    );
}

/// Waits until the lab's document in the frame counts `qualified`, drawn or not.
fn frame_counts(b: &Browser, qualified: &str) {
    wait_for(
        &format!("the lab in the frame to count {qualified} qualified"),
        || {
            b.execute(
            "const d = document.querySelector('[data-testid=lab-frame]').contentDocument; const e = d && d.querySelector('[data-testid=value-qualified_count]'); return e ? e.textContent : '';",
            json!([]),
        )
        .as_str()
            == Some(qualified)
        },
    );
}

/// Where the step and the figure it moves are, after the step was clicked: the step under the
/// reader's eye (not covered by the docked lab), and the lab's qualified count (its card or its
/// figure strip) visible inside the frame and inside the window.
const STEP_AND_FIGURE_JS: &str = r#"
const vh = innerHeight, vw = innerWidth;
const step = document.querySelector('[data-testid=step-ten-at-05s]');
const s = step.getBoundingClientRect();
const hit = document.elementFromPoint(s.left + s.width / 2, s.top + s.height / 2);
const frame = document.querySelector('#lab-frame'), fr = frame.getBoundingClientRect();
const d = frame.contentDocument, fw = frame.contentWindow;
const figure = [...d.querySelectorAll('[data-testid=value-qualified_count], [data-testid=strip-qualified_count]')].some(e => {
  const r = e.getBoundingClientRect();
  return e.checkVisibility({visibilityProperty: true}) && r.height > 0 && r.top >= 0 && r.bottom <= fw.innerHeight && r.right <= fw.innerWidth
    && fr.top + r.top >= 0 && fr.top + r.bottom <= vh;
});
const seen = [...d.querySelectorAll('[data-testid=value-qualified_count], [data-testid=strip-qualified_count]')].map(e => {
  const r = e.getBoundingClientRect();
  return `${e.dataset.testid} ${e.checkVisibility({visibilityProperty: true})} ${Math.round(r.top)}–${Math.round(r.bottom)} in ${fw.innerHeight}`;
});
return {step: s.top >= 0 && s.bottom <= vh && s.right <= vw && !!hit && step.contains(hit), figure, frame_top: Math.round(fr.top), y: Math.round(scrollY), seen};
"#;

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn a_step_and_the_figure_it_moves_share_the_screen_at_every_width() {
    let base = static_server::serve(dist());
    for (width, height) in [(360, 740), (1024, 768), (1280, 800)] {
        let b = Browser::start(width, height, "en-US");
        b.goto(&format!("{base}/lessons/?lesson=denominators"));
        b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
        reveal_all(&b);
        // Read in the frame's document: on a phone the docked lab starts lowered (not drawn).
        frame_counts(&b, "5");
        // The reader reaches the step while reading: it is in the middle of what they see.
        b.execute("document.querySelector('[data-testid=step-ten-at-05s]').scrollIntoView({block: 'center'})", json!([]));
        std::thread::sleep(std::time::Duration::from_millis(300));
        let before = b.execute(STEP_AND_FIGURE_JS, json!([]));
        assert_eq!(
            before["step"],
            json!(true),
            "the step is visible and not under the lab at {width} px: {before}"
        );
        b.click("[data-testid=step-ten-at-05s]");
        frame_shows(&b, "4");
        std::thread::sleep(std::time::Duration::from_millis(600));
        let after = b.execute(STEP_AND_FIGURE_JS, json!([]));
        b.screenshot(&screenshot_path(&format!(
            "lessons-step-and-figure-{width}"
        )));
        assert_eq!(
            after["step"],
            json!(true),
            "the step is still where the reader was at {width} px: {after}"
        );
        assert_eq!(
            after["figure"],
            json!(true),
            "the figure it moved is on the same screen at {width} px: {after}"
        );
        // At most a nudge that lifts the step above the raised dock; never a jump to the frame.
        let moved = (after["y"].as_i64().unwrap() - before["y"].as_i64().unwrap()).abs();
        assert!(
            moved < 300,
            "the page did not jump ({moved} px) at {width} px"
        );
        if width == 360 {
            // Lowered to a bar, the lab gives the lesson the whole screen; raised, it is back.
            b.click("[data-testid=lab-toggle]");
            let h = b.execute(
                "return document.querySelector('#lab-frame').getBoundingClientRect().height",
                json!([]),
            );
            assert_eq!(h, json!(0), "{h}");
            b.click("[data-testid=lab-toggle]");
            let h = b.execute(
                "return document.querySelector('#lab-frame').getBoundingClientRect().height",
                json!([]),
            );
            assert!(h.as_f64().unwrap() > 250.0, "{h}");
        }
    }
}

/// The smallest text of each system-path drawing on the page, in CSS px as drawn: the inline
/// drawing of the exercise (each text's font size × the drawing's scale) and the lesson's figure
/// (an image of the same file: its scale × the file's smallest font size, given as the argument).
const DIAGRAM_TEXT_PX_JS: &str = r#"
const out = {};
const svg = document.querySelector('[data-testid=diagram] svg');
if (svg) {
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  out.inline = Math.min(...[...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * scale));
  out.inline_texts = svg.querySelectorAll('text').length;
}
const img = document.querySelector('[data-testid=diagram-figure] img');
if (img && img.complete && img.naturalWidth > 0) out.figure = img.getBoundingClientRect().width / img.naturalWidth * arguments[0];
const scroll = document.querySelector('[data-testid=diagram-scroll]');
out.figure_scrolls = scroll ? scroll.scrollWidth > scroll.clientWidth : null;
const d = document.querySelector('[data-testid=diagram]');
out.inline_scrolls = d ? d.scrollWidth > d.clientWidth : null;
out.page_overflow = document.documentElement.scrollWidth - window.innerWidth;
return out;
"#;

/// Issue #20: lesson 1's system-path diagram was drawn at ~6 px text at 1280 px and ~230 px wide
/// at 360 px. Now every text is at least 12 CSS px at both widths, in both languages; where the
/// column is narrower than the drawing it scrolls sideways inside its own box (the page does
/// not), and the file can be opened alone to zoom.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_system_path_diagram_is_readable_at_every_width() {
    // The file's smallest font size, read from the file itself (the image's text cannot be measured).
    let file = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("public/lessons/system-path.svg"),
    )
    .unwrap();
    let smallest = file
        .split("font-size:")
        .skip(1)
        .map(|rest| {
            rest.trim_start()
                .split("px")
                .next()
                .unwrap()
                .trim()
                .parse::<f64>()
                .unwrap()
        })
        .fold(f64::INFINITY, f64::min);
    assert!(
        smallest >= 12.0,
        "the drawing's smallest text is {smallest} px"
    );
    let base = static_server::serve(dist());
    for (lang, width) in [
        ("en-US", 1280),
        ("en-US", 360),
        ("zh-CN", 1280),
        ("zh-CN", 360),
    ] {
        let b = Browser::start(width, 900, lang);
        b.goto(&format!("{base}/lessons/?lesson=system-path"));
        b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
        let measured = (0..100)
            .find_map(|_| {
                std::thread::sleep(std::time::Duration::from_millis(100));
                let v = b.execute(DIAGRAM_TEXT_PX_JS, json!([smallest]));
                (v["inline"].is_number() && v["figure"].is_number()).then_some(v)
            })
            .unwrap_or_else(|| panic!("both drawings are on the page ({lang} {width})"));
        let px = |k: &str| measured[k].as_f64().unwrap();
        assert!(
            measured["inline_texts"].as_u64().unwrap() > 40,
            "{measured}"
        );
        assert!(
            px("inline") >= 11.99,
            "the exercise's drawing at {lang} {width} px: smallest text {measured}"
        );
        assert!(
            px("figure") >= 11.99,
            "the lesson's figure at {lang} {width} px: smallest text {measured}"
        );
        assert!(
            px("page_overflow") <= 0.0,
            "the page itself does not scroll sideways at {width} px: {measured}"
        );
        if width == 360 {
            assert_eq!(
                (&measured["figure_scrolls"], &measured["inline_scrolls"]),
                (&json!(true), &json!(true)),
                "{measured}"
            );
        }
        let hint = b.text_of("[data-testid=diagram-figure] figcaption");
        assert!(
            hint.contains(if lang == "zh-CN" {
                "左右滚动"
            } else {
                "scroll sideways"
            }),
            "{hint}"
        );
        let open = b.execute(
            "return document.querySelector('[data-testid=diagram-open]').getAttribute('href')",
            json!([]),
        );
        assert_eq!(open, json!("content/system-path.svg"));
        b.execute("document.querySelector('[data-testid=diagram-figure]').scrollIntoView({block: 'start'})", json!([]));
        b.screenshot(&screenshot_path(&format!(
            "lessons-diagram-figure-{}-{width}",
            &lang[..2]
        )));
        b.execute(
            "document.querySelector('[data-testid=diagram]').scrollIntoView({block: 'start'})",
            json!([]),
        );
        b.screenshot(&screenshot_path(&format!(
            "lessons-diagram-exercise-{}-{width}",
            &lang[..2]
        )));
    }
}

/// The lab frame's own address (its query string), as the lab writes it after every change.
fn frame_search(b: &Browser) -> String {
    b.execute("const f = document.querySelector('[data-testid=lab-frame]'); return f.contentWindow ? f.contentWindow.location.search : ''", json!([]))
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    for _ in 0..150 {
        if ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("timed out waiting for {what}");
}

/// The frame's selected row, its box and the frame's height, for a failure's message.
fn frame_row_state(b: &Browser) -> String {
    b.execute(
        "const d = document.querySelector('[data-testid=lab-frame]').contentDocument; if (!d) return 'no frame';
         const tr = d.querySelector('[data-testid=attempt-row].selected'); if (!tr) return 'no selected row; ' + d.defaultView.location.search;
         const r = tr.getBoundingClientRect(); return tr.querySelector('th').textContent + ' top ' + r.top + ' bottom ' + r.bottom + ' of ' + d.defaultView.innerHeight + '; ' + d.defaultView.location.search;",
        json!([]),
    )
    .to_string()
}

/// Switching lessons writes `?lesson=` into the address (a reload opens that lesson) and starts
/// the lab beside afresh on the new lesson's sample with its own settings: the last step's wrong
/// setting (`<` for `≤`) and the step's notice are gone. Screenshot `lessons-switch-lesson.png`.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn switching_lessons_updates_the_address_and_starts_the_lab_afresh() {
    let (b, _) = lessons("en-US", "?lesson=denominators&lang=en");
    reveal_all(&b);
    frame_shows(&b, "5");
    b.execute(
        "document.querySelector('[data-testid=step-ten-lt-mistake]').scrollIntoView()",
        json!([]),
    );
    b.click("[data-testid=step-ten-lt-mistake]");
    b.wait_text("[data-testid=notice]", |t| {
        t.contains("The lab now shows this step.")
    });
    frame_shows(&b, "3");
    wait_for("the frame's address to carry cmp=lt", || {
        frame_search(&b).contains("cmp=lt")
    });

    // Lesson 2 starts on its own sample (the streaming example), lesson 4 on the ten requests.
    b.execute(
        "document.querySelector('[data-testid=lesson-client-timeline]').scrollIntoView()",
        json!([]),
    );
    b.click("[data-testid=lesson-client-timeline]");
    b.wait_text("[data-testid=lesson]", |t| {
        t.contains("The client timeline")
    });
    assert!(
        b.url().contains("lesson=client-timeline") && b.url().contains("lang=en"),
        "{}",
        b.url()
    );
    wait_for("the frame to load the streaming example", || {
        frame_search(&b).contains("sample=streaming-example.jsonl")
    });
    assert!(
        b.find_all("[data-testid=notice]").is_empty(),
        "the step's notice stayed: {}",
        b.text_of("body")
    );

    b.click("[data-testid=lesson-baseline]");
    b.wait_text("[data-testid=lesson]", |t| {
        t.contains("A baseline you can rerun")
    });
    assert!(b.url().contains("lesson=baseline"), "{}", b.url());
    wait_for(
        "the frame to start on the ten requests with their own settings",
        || {
            let q = frame_search(&b);
            q.contains("sample=ten-requests.jsonl") && q.contains("cmp=le") && !q.contains("cmp=lt")
        },
    );
    assert!(
        b.find_all("[data-testid=notice]").is_empty(),
        "the step's notice stayed"
    );
    b.screenshot(&screenshot_path("lessons-switch-lesson"));

    // A reload (or the address shared) opens the lesson that was open.
    let here = b.url();
    b.goto(&here);
    b.wait_text("[data-testid=lesson]", |t| {
        t.contains("A baseline you can rerun")
    });
    let current = b.execute("return document.querySelector('[data-testid=lesson-baseline]').getAttribute('aria-current')", json!([]));
    assert_eq!(current, json!("page"));
}

/// Where `row` (e.g. "R4") of the lab in the frame is: selected, and wholly inside the frame's
/// view.
fn frame_row_in_view(b: &Browser, row: &str) -> bool {
    b.execute(
        "const d = document.querySelector('[data-testid=lab-frame]').contentDocument; if (!d) return false;
         const tr = d.querySelector('[data-testid=attempt-row].selected'); if (!tr) return false;
         const r = tr.getBoundingClientRect(); const h = d.defaultView.innerHeight;
         return tr.querySelector('th').textContent.trim() === arguments[0] && r.top >= 0 && r.bottom <= h;",
        json!([row]),
    )
    .as_bool()
    .unwrap_or(false)
}

/// A step that names a row ("Mistake: … (watch R4)") scrolls the lab beside to that row, selected,
/// not to the figures: taken in place and loaded by address (a sample of 400 rows, row 251).
/// Screenshots `lessons-step-row-r4.png` and `lessons-step-row-251.png`.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn a_step_that_names_a_row_shows_that_row_in_the_lab() {
    let (b, _) = lessons("en-US", "?lesson=denominators&lang=en");
    reveal_all(&b);
    frame_shows(&b, "5");
    // The figures' step first, so the frame is scrolled away from the table.
    b.execute(
        "document.querySelector('[data-testid=step-ten-at-05s]').scrollIntoView()",
        json!([]),
    );
    b.click("[data-testid=step-ten-at-05s]");
    frame_shows(&b, "4");
    b.execute(
        "document.querySelector('[data-testid=step-ten-lt-mistake]').scrollIntoView()",
        json!([]),
    );
    b.click("[data-testid=step-ten-lt-mistake]");
    wait_for("R4 selected and in the frame's view", || {
        frame_row_in_view(&b, "R4")
    });
    b.screenshot(&screenshot_path("lessons-step-row-r4"));

    // Another lesson starts the lab afresh, even on the address the frame was first given.
    b.click("[data-testid=lesson-baseline]");
    b.wait_text("[data-testid=lesson]", |t| {
        t.contains("A baseline you can rerun")
    });
    wait_for("the frame back on the sample's own settings", || {
        let q = frame_search(&b);
        q.contains("sample=ten-requests.jsonl") && q.contains("cmp=le")
    });
    // Another sample: the step loads the lab by its address, then shows the row.
    b.execute(
        "document.querySelector('[data-testid=step-gpu-busy-sample]').scrollIntoView()",
        json!([]),
    );
    b.click("[data-testid=step-gpu-busy-sample]");
    let ok = (0..150).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        frame_row_in_view(&b, "R251")
    });
    b.screenshot(&screenshot_path("lessons-step-row-251"));
    assert!(
        ok,
        "row 251 (R251) selected and in the frame's view: {}",
        frame_row_state(&b)
    );
}

/// The metric card pre-filled in Chinese names the percentile method in Chinese (the glossary's
/// 最近秩), in its field and in every result line; in English, the English method. Screenshots
/// `lessons-card-method-<lang>.png`.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_card_names_the_percentile_method_in_the_pages_language() {
    // "nearest-rank:" is the English method line; the card's choices table keeps the code `pm=nearest-rank` in both languages.
    for (lang, want, not) in [
        (
            "zh",
            "最近秩：⌈95·8/100⌉ = 第 8 个（共 8 个）",
            "nearest-rank:",
        ),
        ("en", "nearest-rank: ⌈95·8/100⌉ = 8 of 8", "最近秩"),
    ] {
        let (b, _) = lessons("en-US", &format!("?lesson=denominators&lang={lang}"));
        reveal_all(&b);
        frame_shows(&b, "5");
        prefill(&b);
        let method = b.execute(
            "return document.querySelector('[data-testid=card-percentile_method]').value",
            json!([]),
        );
        assert_eq!(method, json!(want), "{lang}");
        let preview = b.text_of("[data-testid=card-preview]");
        assert!(
            preview.contains(want) && !preview.contains(not),
            "{lang}: {preview}"
        );
        b.execute("document.querySelector('[data-testid=card-percentile_method]').scrollIntoView({block: 'center'})", json!([]));
        b.screenshot(&screenshot_path(&format!("lessons-card-method-{lang}")));
    }
}

/// The lab frame's text as rendered (what is hidden is not in it).
fn frame_text(b: &Browser) -> String {
    b.execute(
        "const d = document.querySelector('[data-testid=lab-frame]').contentDocument; return d && d.body ? d.body.innerText : '';",
        json!([]),
    )
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// Presses a lesson's step, scrolled into view first.
fn step(b: &Browser, id: &str) {
    let at = format!("[data-testid=step-{id}]");
    b.execute(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'center'})",
        json!([at]),
    );
    b.click(&at);
}

/// The lab beside a lesson hides an open exercise's figure wherever it shows, not only on its
/// card (#38): lesson 2's one request (its P95 card, its timeline's TTFT, E2E and gap labels),
/// lesson 3's verdicts by word and by colour and its running figures after "Select R9", lesson
/// 4's failure count and the histogram's percentiles; in teacher mode and in Chinese too. An
/// answer brings back its own figure and no other. Screenshots `lessons-hidden-*.png`.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn an_open_exercises_figure_is_hidden_wherever_the_lab_shows_it() {
    let base = static_server::serve(dist());
    for (lang, teacher) in [("en", ""), ("zh", "&teacher=1")] {
        let b = Browser::start(1280, 1000, "en-US");
        b.goto(&format!(
            "{base}/lessons/?lesson=client-timeline&lang={lang}{teacher}"
        ));
        b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
        step(&b, "timeline-stream");
        wait_for("the streamed request in the frame", || {
            frame_search(&b).contains("streaming-example")
        });
        for hidden in [
            "request-ttft",
            "request-e2e",
            "request-gap",
            "value-ttft_p50",
            "value-ttft_p95",
            "value-e2e_p50",
            "value-e2e_tail",
            "tail-label",
        ] {
            frame_settles(&b, &format!("[data-testid={hidden}]"), false);
        }
        frame_settles(&b, "[data-testid=request-chart] .tick", true);
        let text = frame_text(&b);
        for answer in ["700", "0.7 s", "150 ms", "0.15 s"] {
            assert!(
                !text.contains(answer),
                "{lang}: `{answer}` in the lab:\n{text}"
            );
        }
        // Nor in a tab of its own.
        assert!(b.try_find("[data-testid=open-lab]").is_none());
        b.screenshot(&screenshot_path(&format!("lessons-hidden-timeline-{lang}")));
        if !teacher.is_empty() {
            continue;
        }
        // Answering TTFT brings back the request's TTFT, not its E2E.
        assert!(answer(&b, "stream-ttft", "700").starts_with('✓'));
        frame_settles(&b, "[data-testid=request-ttft]", true);
        frame_settles(&b, "[data-testid=request-e2e]", false);

        // Lesson 3 asks how many qualify and P95: after "Select R9" no verdict by word or colour,
        // no tally, no running figures.
        b.goto(&format!("{base}/lessons/?lesson=denominators&lang={lang}"));
        b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
        step(&b, "ten-row-r9");
        wait_for("R9 in the frame", || frame_search(&b).contains("row=9"));
        for hidden in [
            "verdict",
            "tally",
            "running",
            "chart-legend",
            "export-card-md",
        ] {
            frame_settles(&b, &format!("[data-testid={hidden}]"), false);
        }
        frame_settles(&b, "[data-testid=why-verdict]", true);
        wait_for("grey run bars", || {
            frame_fill(&b, "[data-testid=run-bar] rect.wait").as_deref()
                == Some("rgb(153, 153, 153)")
        });
        let green = b.execute(
            "const d = document.querySelector('[data-testid=lab-frame]').contentDocument; const plain = getComputedStyle([...d.querySelectorAll('.attempt-row:not(.qualified):not(.selected)')][0]).backgroundColor; return [...d.querySelectorAll('.attempt-row.qualified:not(.selected)')].filter(r => getComputedStyle(r).backgroundColor !== plain).length;",
            json!([]),
        );
        assert_eq!(green, json!(0), "rows coloured by their verdict");
        let text = frame_text(&b);
        assert!(!text.contains("n = 8"), "the running P95's sample:\n{text}");
        b.screenshot(&screenshot_path(&format!(
            "lessons-hidden-denominators-{lang}"
        )));

        // Lesson 4 asks how many attempts failed and the open loop's P95.
        b.goto(&format!("{base}/lessons/?lesson=baseline&lang={lang}"));
        b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
        step(&b, "gpu-busy-sample");
        wait_for("the GPU-busy sample in the frame", || {
            frame_search(&b).contains("gpu-busy-users-slow")
        });
        for hidden in ["no-ttft-count", "hist-failures", "heat-failed"] {
            frame_settles(&b, &format!("[data-testid={hidden}]"), false);
        }
        let text = frame_text(&b);
        assert!(
            !text.contains("81 failures") && !text.contains("histogram: 81"),
            "the failure count shows:\n{text}"
        );
        step(&b, "stall-open");
        wait_for("the open-loop stall in the frame", || {
            frame_search(&b).contains("sim-stall-open")
        });
        frame_settles(&b, "[data-testid=hist-marker]", false);
        assert!(
            !frame_text(&b).contains("17.571"),
            "the open loop's P95 shows"
        );
        b.screenshot(&screenshot_path(&format!("lessons-hidden-baseline-{lang}")));
    }
}

/// The lab frame's text as a reader sees it, one line per text node: each with the
/// `data-testid`s of the elements around it. Only what is drawn counts: nothing inside a closed
/// `<details>`, under `display: none` or `visibility: hidden`, or written at a size of 0.
fn frame_seen(b: &Browser) -> Vec<(String, String)> {
    let v = b.execute(
        "const d = document.querySelector('[data-testid=lab-frame]').contentDocument; if (!d || !d.body) return [];
         const out = []; const w = d.createTreeWalker(d.body, NodeFilter.SHOW_TEXT);
         for (let n = w.nextNode(); n; n = w.nextNode()) {
           const t = n.textContent.trim(); const e = n.parentElement; if (!t || !e) continue;
           if (!e.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
           if (parseFloat(getComputedStyle(e).fontSize) === 0) continue;
           const ids = []; for (let x = e; x; x = x.parentElement) { if (x.dataset && x.dataset.testid) ids.push(x.dataset.testid); }
           out.push([t, ids.join(' < ')]);
         }
         return out;",
        json!([]),
    );
    v.as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p[0].as_str().unwrap_or_default().to_string(),
                p[1].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// How many attempts a shipped sample holds.
fn sample_attempts(name: &str) -> usize {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("public/samples")
            .join(name),
    )
    .map(|t| {
        t.lines()
            .filter(|l| l.contains("\"kind\": \"attempt\""))
            .count()
    })
    .unwrap_or(0)
}

/// Whether `text` holds `form` as a whole (not "1 s" in "1 success") and not as the threshold
/// the settings state ("≤ 1 s"), which is a choice on screen, not a figure.
fn holds(text: &str, form: &str) -> bool {
    text.match_indices(form).any(|(at, _)| {
        let after = text[at + form.len()..].chars().next();
        let before = text[..at].trim_end();
        !after.is_some_and(char::is_alphanumeric)
            && !before.ends_with('≤')
            && !before.ends_with('<')
    })
}

/// The ways the lab writes an exercise's answer on screen (its formatter's, and the plain
/// forms of the "why" panel and the chart labels), for the copyability walk.
fn written_forms(unit: &str, answer: f64) -> Vec<String> {
    use tracelab_core::format::{duration, trim_num};
    match unit {
        "s" => vec![duration(answer), format!("{} s", trim_num(answer))],
        "ms" => vec![
            duration(answer / 1000.0),
            format!("{} s", trim_num(answer / 1000.0)),
        ],
        "%" => vec![format!("{} %", trim_num(answer))],
        "/s" => vec![format!("{} /s", trim_num(answer))],
        "money" => vec![format!("{} CNY", trim_num(answer))],
        _ => {
            let n = trim_num(answer);
            vec![
                format!("{n} failures"),
                format!("{n} qualified"),
                format!("n = {n}"),
                // A count alone where a figure's value stands (a card's, the strip's).
                n,
            ]
        }
    }
}

/// The issue's walk (#38), measured: each lesson in Chromium, English, 1280 px, its steps
/// pressed in reading order and nothing answered; at each number exercise, whether the lab
/// beside shows its answer as the lab writes it. Prints one line per exercise and the count,
/// learner and teacher; none may be copyable from the lab.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn no_number_exercise_can_be_copied_from_the_lab_beside_it() {
    let course: serde_json::Value =
        serde_json::from_str(include_str!("../lessons/course.json")).unwrap();
    let base = static_server::serve(dist());
    let mut copyable = Vec::new();
    let mut total = 0;
    for teacher in ["", "&teacher=1"] {
        for lesson in course["lessons"].as_array().unwrap() {
            let id = lesson["id"].as_str().unwrap();
            let file = lesson["text"]["en"].as_str().unwrap();
            let md = std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("lessons")
                    .join(file),
            )
            .unwrap();
            let b = Browser::start(1280, 1000, "en-US");
            b.goto(&format!("{base}/lessons/?lesson={id}&lang=en{teacher}"));
            b.wait_text("[data-testid=lesson]", |t| t.len() > 200);
            std::thread::sleep(std::time::Duration::from_millis(1500));
            for marker in md.split("[[").skip(1) {
                let Some((kind_id, _)) = marker.split_once("]]") else {
                    continue;
                };
                let Some((kind, what)) = kind_id.split_once(':') else {
                    continue;
                };
                match kind {
                    "step" => {
                        let has_sample = lesson["steps"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .any(|s| s["id"] == what && s["sample"].is_string());
                        if has_sample {
                            step(&b, what);
                            // The frame takes the step, and a big trace's canvases paint.
                            std::thread::sleep(std::time::Duration::from_millis(3000));
                        }
                    }
                    "exercise" => {
                        let e = lesson["exercises"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .find(|e| e["id"] == what)
                            .unwrap();
                        if e["kind"] != "number" {
                            continue;
                        }
                        total += 1;
                        let seen = frame_seen(&b);
                        let forms = written_forms(
                            e["unit"].as_str().unwrap(),
                            e["answer"].as_f64().unwrap(),
                        );
                        // Each text node that holds the answer as the lab writes it, with where.
                        let shown: Vec<String> = seen
                            .iter()
                            .filter(|(t, at)| {
                                forms.iter().any(|f| {
                                    if f.contains(' ') {
                                        holds(t, f)
                                    } else {
                                        // A bare count: where a figure's value stands.
                                        f == t && (at.contains("value-") || at.contains("strip-"))
                                    }
                                })
                            })
                            .map(|(t, at)| format!("`{t}` in {at}"))
                            .collect();
                        // The run's recorded conditions and one row's own times (on a sample of
                        // many) are the data, not the figure: where they equal the answer it is
                        // said, apart, as a coincidence of the sample.
                        let sample = e["sample"].as_str().unwrap_or_default();
                        let one_row = sample_attempts(sample) == 1;
                        let (data, figure): (Vec<String>, Vec<String>) =
                            shown.into_iter().partition(|m| {
                                m.ends_with("trace-summary")
                                    || (!one_row && m.contains("< request-chart"))
                            });
                        let line = format!(
                            "{}{id} {what}: {}{}",
                            if teacher.is_empty() { "" } else { "teacher " },
                            if figure.is_empty() {
                                "hidden".to_string()
                            } else {
                                format!("copyable ({figure:?})")
                            },
                            if data.is_empty() {
                                String::new()
                            } else {
                                format!("; the sample's own data equal it: {data:?}")
                            }
                        );
                        println!("{line}");
                        if !figure.is_empty() {
                            copyable.push(line);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    println!(
        "{} of {total} number exercises copyable from the lab beside them",
        copyable.len()
    );
    assert!(copyable.is_empty(), "{copyable:#?}");
}

/// The card's pre-fill and its check against the lab hold back what the lab beside hides (#38):
/// both wait for the learner's own figure, then a pre-fill leaves the lesson's asked figures
/// (and the counts that give them away) empty, saying so, and the check marks those lines
/// without the core's figure. Once the exercises are answered, the pre-fill fills them.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_cards_prefill_and_check_leave_the_asked_figures_to_the_learner() {
    let (b, _) = lessons("en-US", "?lesson=denominators");
    b.execute(
        "document.querySelector('[data-testid=card-panel]').scrollIntoView()",
        json!([]),
    );
    for button in ["prefill", "card-check-lab"] {
        let disabled = b.execute(
            "return document.querySelector(`[data-testid=${arguments[0]}]`).disabled",
            json!([button]),
        );
        assert_eq!(
            disabled,
            json!(true),
            "{button} before the learner's own figure"
        );
    }
    // The check of a card with one figure written: the hidden lines name no figure of the core.
    write(&b, "[data-testid=card-card_value-0]", "0.5");
    b.click("[data-testid=card-check-lab]");
    let lines = review(&b, "card-check");
    let (_, failure) = &lines["figure:failure_rate"];
    assert!(!failure.contains("20 %"), "{failure}");
    let (_, n) = &lines["field:sample_count"];
    assert!(!n.contains('8'), "{n}");
    assert!(
        b.find_all("[data-testid=card-check] [data-testid=review-held]")
            .len()
            >= 7
    );
    // The pre-fill: the asked figures left empty, and said so.
    b.click("[data-testid=prefill]");
    let held = b.wait_text("[data-testid=prefill-held]", |t| !t.is_empty());
    assert!(held.contains("Failure rate"), "{held}");
    wait_for("the pre-filled card saved", || {
        card_results(&b).0["source"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    });
    let (card, r) = card_results(&b);
    for key in ["ttft_tail", "failure_rate", "joint_rate", "goodput"] {
        assert_eq!(r[key], Default::default(), "{key}: {card}");
    }
    // The learner's own figure stays where the lab's is held back.
    assert_eq!(r["ttft_p50"].0, "0.5", "{card}");
    assert_eq!(card["sample_count"], json!(""), "{card}");
    // Answered (the worked answers asked for): the pre-fill fills them.
    reveal_all(&b);
    b.click("[data-testid=prefill]");
    wait_for("the figures pre-filled", || {
        card_results(&b).1["failure_rate"].0 == "20 %"
    });
}
