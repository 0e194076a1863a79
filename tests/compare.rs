//! The compare page in headless Chromium: opened from the lab's "Compare with…", a rerun that
//! agrees, a slower run beyond noise, a broken contract labelled on every row, an uploaded file,
//! the chart with both TTFT distributions, the threshold and each tail interval,
//! and the language switch. Run through `cargo xtask test` (it builds the pages first).

mod support;

use serde_json::json;
use support::webdriver::Browser;
use support::{dist, screenshot_path, static_server};

fn row_text(b: &Browser, key: &str) -> String {
    b.text_of(&format!("[data-testid=compare-table] tr[data-key={key}]"))
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn compare_view_shows_contract_table_and_both_distributions() {
    let base = static_server::serve(dist());
    let b = Browser::start(1400, 1000, "en-US");

    // From the lab: "Compare with…" opens the compare page on the lab's sample.
    b.goto(&format!("{base}/?sample=baseline-a.jsonl"));
    b.wait_text("[data-testid=compare-link]", |t| t.contains("Compare with"));
    b.click("[data-testid=compare-link]");
    b.wait_text("[data-testid=pick-base-name]", |t| t == "baseline-a.jsonl");
    assert!(
        b.url().contains("/compare/?base=baseline-a.jsonl"),
        "{}",
        b.url()
    );

    // A real change: slower beyond noise on TTFT, the contract holds.
    b.select("[data-testid=pick-new-sample]", "baseline-slower.jsonl");
    b.wait_text("[data-testid=contract]", |t| t.contains("Contract holds"));
    let tail = row_text(&b, "ttft_tail");
    assert!(
        tail.contains("790 ms") && tail.contains("1.204 s") && tail.contains("+414 ms"),
        "{tail}"
    );
    assert!(
        tail.contains("slower beyond noise")
            && tail.contains("bootstrap, 2,000 resamples, seed 42"),
        "{tail}"
    );
    assert!(
        tail.contains("751 ms … 1.043 s"),
        "the base's own P95 interval: {tail}"
    );
    // One chart, both ECDFs, the threshold, and a closed interval bar for each run's P95.
    assert_eq!(b.find_all("[data-testid=compare-chart] svg").len(), 1);
    for part in [
        "ecdf-base",
        "ecdf-new",
        "threshold",
        "tail-base",
        "tail-new",
    ] {
        b.find(&format!("[data-testid=compare-chart] [data-testid={part}]"))
            .unwrap_or_else(|e| panic!("{part}: {e}"));
    }
    assert!(b
        .find_all("[data-testid=compare-chart] .interval.open")
        .is_empty());
    b.screenshot(&screenshot_path("compare-slower"));

    // A rerun that agrees: no row claims a change.
    b.select("[data-testid=pick-new-sample]", "baseline-rerun.jsonl");
    b.wait_text("[data-testid=pick-new-name]", |t| {
        t == "baseline-rerun.jsonl"
    });
    let table = b.wait_text("[data-testid=compare-table]", |t| {
        t.contains("baseline-rerun.jsonl")
    });
    assert!(!table.contains("beyond noise"), "{table}");
    // The five checks for each run: the rerun is under the base's contract, and the two runs'
    // P50 and P95 intervals are compared (the fifth check).
    let checks = b.wait_text("[data-testid=baseline-checks]", |t| {
        t.contains("baseline-rerun.jsonl")
    });
    assert!(
        checks.contains("This run counts as a baseline:") && checks.contains("the base's contract"),
        "{checks}"
    );
    assert!(
        checks.contains("does not record runtime, prefix_reuse"),
        "samples written before the runtime was recorded: {checks}"
    );
    assert!(
        checks.contains("Reruns in a similar range: yes — 2 runs"),
        "{checks}"
    );
    // Which token ends TTFT is a choice here too (the same for runs that kept no reasoning apart).
    b.select("[data-testid=first-token]", "any");
    b.wait_text("[data-testid=compare-table]", |t| {
        t.contains("baseline-rerun.jsonl")
    });
    b.select("[data-testid=first-token]", "content");
    // The comparison is in the page's address: a reload shows the same two runs.
    let href = b.execute("return location.href", json!([]));
    let href = href.as_str().unwrap();
    assert!(
        href.contains("base=baseline-a.jsonl")
            && href.contains("new=baseline-rerun.jsonl")
            && href.contains("ft=content"),
        "{href}"
    );

    // A broken contract: said at the top and on every row; a P95 from 8 samples is open above.
    b.select("[data-testid=pick-new-sample]", "ten-requests.jsonl");
    b.wait_text("[data-testid=contract]", |t| {
        t.contains("CONTRACT BROKEN")
            && t.contains("prompt_set: base lesson-baseline · new lesson-table")
    });
    let rows = b.find_all("[data-testid=compare-table] tbody tr");
    assert_eq!(rows.len(), 8);
    for r in &rows {
        assert!(b.text(r).contains("[contract broken]"), "{}", b.text(r));
    }
    assert!(row_text(&b, "ttft_tail").contains("too few samples to tell (needs n ≥ 72 per run)"));
    assert!(row_text(&b, "ttft_tail").contains("no upper bound"));
    assert_eq!(
        b.find_all("[data-testid=compare-chart] .interval.open")
            .len(),
        1,
        "the 8-sample P95 bar is open-ended"
    );

    // An upload in another format (the classroom CSV) is the new run.
    let csv =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("public/samples/ten-requests.csv");
    b.type_into("[data-testid=pick-new-file]", csv.to_str().unwrap());
    b.wait_text("[data-testid=pick-new-name]", |t| t == "ten-requests.csv");
    b.wait_text("[data-testid=compare-table]", |t| {
        t.contains("ten-requests.csv")
    });
    // A bad file: a clear error, and the loaded run stays.
    let bad = std::env::temp_dir().join("tracelab-compare-bad.jsonl");
    std::fs::write(&bad, "{\"kind\": \"header\", \"schema\": \"nope\"}\n").unwrap();
    let before = b.text_of("[data-testid=pick-new-name]");
    b.type_into("[data-testid=pick-new-file]", bad.to_str().unwrap());
    b.wait_text("[data-testid=compare-error]", |t| {
        t.contains("tracelab-compare-bad.jsonl")
    });
    assert_eq!(b.text_of("[data-testid=pick-new-name]"), before);

    // Chinese: the core's words.
    b.select("[data-testid=pick-new-sample]", "baseline-slower.jsonl");
    b.click("[data-testid=lang-switch]");
    b.wait_text("[data-testid=compare-table]", |t| {
        t.contains("超出噪声：变慢")
    });
    assert!(b.text_of("[data-testid=contract]").contains("契约成立"));
    let html_lang = b.execute("return document.documentElement.lang", json!([]));
    assert_eq!(html_lang, json!("zh-CN"));
    b.screenshot(&screenshot_path("compare-zh"));
}

/// On a phone (360 px) every row of the table is a card: the difference, its interval and the
/// verdict are on screen without scrolling sideways, each under its column's name, en and zh.
/// Screenshots `compare-360-<lang>.png`.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn on_a_phone_each_figure_is_a_card_with_its_difference_interval_and_verdict() {
    let base = static_server::serve(dist());
    for (lang, words) in [
        ("en", ["Difference", "Verdict", "slower beyond noise"]),
        ("zh", ["差值", "结论", "超出噪声：变慢"]),
    ] {
        let b = Browser::start(360, 740, "en-US");
        b.goto(&format!(
            "{base}/compare/?base=baseline-a.jsonl&new=baseline-slower.jsonl&lang={lang}"
        ));
        let tail = b.wait_text("[data-testid=compare-table] tr[data-key=ttft_tail]", |t| {
            t.contains(words[2])
        });
        let overflow = b.execute(
            "return document.documentElement.scrollWidth > innerWidth",
            json!([]),
        );
        assert_eq!(
            overflow.as_bool(),
            Some(false),
            "{lang}: the page scrolls sideways"
        );
        b.execute("document.querySelector('[data-testid=compare-table] tr[data-key=ttft_tail]').scrollIntoView({block: 'start'})", json!([]));
        // Every cell of the row is inside the screen's width, and says which column it is.
        let cells = b.execute(
            "return [...document.querySelectorAll('[data-testid=compare-table] tr[data-key=ttft_tail] td')]
                .map(td => [td.getBoundingClientRect().right <= innerWidth + 0.5 && td.getBoundingClientRect().width > 0,
                            getComputedStyle(td, '::before').content])",
            json!([]),
        );
        let cells = cells.as_array().unwrap();
        assert_eq!(cells.len(), 6, "{cells:?}");
        for c in cells {
            assert_eq!(
                c[0].as_bool(),
                Some(true),
                "{lang}: a cell outside the screen: {cells:?}"
            );
        }
        let labels: String = cells
            .iter()
            .map(|c| c[1].as_str().unwrap_or("").to_string())
            .collect();
        assert!(
            labels.contains(words[0]) && labels.contains(words[1]),
            "{lang}: {labels}"
        );
        assert!(tail.contains("+414 ms"), "{tail}");
        b.screenshot(&screenshot_path(&format!("compare-360-{lang}")));
    }
}

/// The core's comparison of two samples as the page makes it: the base's settings with the
/// link's choices, the new run judged alike.
fn core_report(
    base: &str,
    new: &str,
    pairs: &[(&str, &str)],
) -> (tracelab_core::Settings, tracelab_core::compare::Report) {
    use tracelab_core::compare::{judge_alike, Bootstrap, Report, Run};
    use tracelab_core::{parse::parse_trace, Settings};
    let read = |name: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("public/samples")
            .join(name);
        parse_trace(name, &std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let (b, n) = (read(base), read(new));
    let mut settings = Settings::from_header(&b.header);
    assert!(settings.apply_pairs(pairs.iter().copied()).is_empty());
    let (new_settings, _) = judge_alike(&settings, Settings::from_header(&n.header));
    let runs = [
        Run::new(base, b, settings.clone()),
        Run::new(new, n, new_settings),
    ];
    (settings, Report::build(&runs, Bootstrap::default()))
}

fn value_of(b: &Browser, css: &str) -> String {
    b.execute(
        "const e = document.querySelector(arguments[0]); return e ? e.value : null",
        json!([css]),
    )
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// Every choice of how both runs are judged (threshold, comparison, percentile method, where
/// TTFT ends, and the population choices a link carries) round-trips through the address; a
/// link's unusable value is named, a typed one refused with the core's reason.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn every_choice_round_trips_through_the_address() {
    let base = static_server::serve(dist());
    let b = Browser::start(1280, 1000, "en-US");
    let choices = [
        ("t", "0.5"),
        ("cmp", "lt"),
        ("pm", "linear"),
        ("ft", "any"),
        ("wu", "include"),
        ("lf", "intended"),
    ];
    let link: String = choices.iter().map(|(k, v)| format!("&{k}={v}")).collect();
    b.goto(&format!(
        "{base}/compare/?base=baseline-a.jsonl&new=baseline-slower.jsonl&lang=en{link}"
    ));
    b.wait_text("[data-testid=compare-table]", |t| {
        t.contains("baseline-slower.jsonl")
    });
    assert_eq!(value_of(&b, "[data-testid=threshold]"), "0.5");
    assert_eq!(value_of(&b, "[data-testid=comparison]"), "lt");
    assert_eq!(value_of(&b, "[data-testid=percentile-method]"), "linear");
    assert_eq!(value_of(&b, "[data-testid=first-token]"), "any");
    assert_eq!(value_of(&b, "[data-testid=latency-from]"), "intended");
    // The figures are the core's under exactly these choices.
    let (settings, report) = core_report("baseline-a.jsonl", "baseline-slower.jsonl", &choices);
    let goodput = report.pairs[0]
        .rows
        .iter()
        .find(|r| r.key == "goodput")
        .unwrap();
    let row = row_text(&b, "goodput");
    assert!(
        row.contains(&format!("n = {}", goodput.n_base))
            && row.contains(&format!("n = {}", goodput.n_new)),
        "{row}"
    );
    assert!(b
        .text_of("[data-testid=threshold-label]")
        .contains("threshold 0.5 s"));
    // The wrong choices a link carries are named (< for ≤, warm-up mixed in).
    let mistakes = b.text_of("[data-testid=mistakes]");
    for m in settings.mistakes() {
        assert!(mistakes.contains(&m.label.en), "{mistakes}");
    }
    assert_eq!(settings.mistakes().len(), 2);
    let url = b.url();
    for (k, v) in choices {
        assert!(url.contains(&format!("{k}={v}")), "{k}={v} not in {url}");
    }

    // A choice made on the page goes into the address; a reload shows it again.
    b.select("[data-testid=threshold]", "0.8");
    b.wait_text("[data-testid=threshold-label]", |t| t.contains("0.8 s"));
    b.select("[data-testid=comparison]", "le");
    b.select("[data-testid=percentile-method]", "nearest-rank");
    b.wait_text("[data-testid=mistakes]", |t| {
        !t.contains("Wrong comparison")
    });
    let url = b.url();
    assert!(
        url.contains("t=0.8")
            && url.contains("cmp=le")
            && url.contains("pm=nearest-rank")
            && url.contains("wu=include"),
        "{url}"
    );
    b.goto(&url);
    b.wait_text("[data-testid=compare-table]", |t| {
        t.contains("baseline-slower.jsonl")
    });
    assert_eq!(value_of(&b, "[data-testid=threshold]"), "0.8");
    assert_eq!(value_of(&b, "[data-testid=comparison]"), "le");
    assert_eq!(
        value_of(&b, "[data-testid=percentile-method]"),
        "nearest-rank"
    );
    assert_eq!(value_of(&b, "[data-testid=first-token]"), "any");
    assert_eq!(value_of(&b, "[data-testid=latency-from]"), "intended");
    let (_, report) = core_report(
        "baseline-a.jsonl",
        "baseline-slower.jsonl",
        &[
            ("t", "0.8"),
            ("cmp", "le"),
            ("pm", "nearest-rank"),
            ("ft", "any"),
            ("wu", "include"),
            ("lf", "intended"),
        ],
    );
    let joint = report.pairs[0]
        .rows
        .iter()
        .find(|r| r.key == "joint_rate")
        .unwrap();
    assert!(
        row_text(&b, "joint_rate").contains(&joint.verdict.en),
        "{}",
        row_text(&b, "joint_rate")
    );

    // A typed value the core refuses is said where it was typed; the address keeps the last good one.
    b.select("[data-testid=threshold]", "abc");
    b.wait_text("[data-testid=threshold-error]", |t| !t.is_empty());
    assert!(b.url().contains("t=0.8"), "{}", b.url());
    // A link's unusable value is named, never used silently.
    b.goto(&format!(
        "{base}/compare/?base=baseline-a.jsonl&new=baseline-slower.jsonl&lang=en&t=-1&pm=median"
    ));
    b.wait_text("[data-testid=compare-table]", |t| {
        t.contains("baseline-slower.jsonl")
    });
    let error = b.text_of("[data-testid=link-ignored]");
    assert!(
        error.starts_with("Not used from the link:")
            && error.contains("t=-1")
            && error.contains("pm=median"),
        "{error}"
    );
    assert!(!b.url().contains("t=-1"), "{}", b.url());
}

/// Goodput's n is the qualified count, and says so; every row says what its n counts. The rule
/// behind every verdict is beside the table, in the core's words, en and zh.
/// Screenshots `compare-rule-<lang>.png`.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn each_n_is_labelled_and_the_verdict_rule_is_beside_the_table() {
    let base = static_server::serve(dist());
    let (_, report) = core_report("baseline-a.jsonl", "baseline-slower.jsonl", &[]);
    let rows = &report.pairs[0].rows;
    let rule = tracelab_core::compare::verdict_rule(rows);
    for lang in [tracelab_core::Lang::En, tracelab_core::Lang::Zh] {
        let b = Browser::start(1280, 1000, "en-US");
        b.goto(&format!(
            "{base}/compare/?base=baseline-a.jsonl&new=baseline-slower.jsonl&lang={}",
            lang.code()
        ));
        b.wait_text("[data-testid=compare-table]", |t| {
            t.contains("baseline-slower.jsonl")
        });
        for r in rows {
            let th = b.text_of(&format!(
                "[data-testid=compare-table] tr[data-key={}] th",
                r.key
            ));
            assert!(
                th.contains(&format!("n = {}", r.n_counts.get(lang))),
                "{}: {th}",
                r.key
            );
        }
        let goodput = b.text_of("[data-testid=compare-table] tr[data-key=goodput] th");
        assert!(
            goodput.contains(if lang == tracelab_core::Lang::Zh {
                "联合合格的尝试"
            } else {
                "jointly qualified attempts"
            }),
            "{goodput}"
        );
        let aside = b.text_of("[data-testid=verdict-rule]");
        assert!(
            aside.starts_with(if lang == tracelab_core::Lang::Zh {
                "结论如何判定"
            } else {
                "How the verdict is decided"
            }),
            "{aside}"
        );
        for line in &rule {
            assert!(
                aside.contains(line.get(lang)),
                "{aside}\n---\n{}",
                line.get(lang)
            );
        }
        // Beside the table at this width: the rule's box starts right of the table's.
        let beside = b.execute(
            "const t = document.querySelector('[data-testid=compare-table]').parentElement.getBoundingClientRect(); const a = document.querySelector('[data-testid=verdict-rule]').getBoundingClientRect(); return a.left >= t.right - 1 && a.top < t.bottom;",
            json!([]),
        );
        assert_eq!(beside, json!(true));
        b.execute(
            "document.querySelector('[data-testid=compare-table]').scrollIntoView()",
            json!([]),
        );
        b.screenshot(&screenshot_path(&format!("compare-rule-{}", lang.code())));
    }
}

/// Everything drawn in the chart's SVG whose box the threshold's label overlaps (its own dashed
/// line excepted), the label outside the SVG, and the x ticks' values.
const CHART_JS: &str = r#"
const svg = document.querySelector('[data-testid=compare-chart] svg');
const label = svg.querySelector('[data-testid=threshold-label]');
const l = label.getBoundingClientRect();
const s = svg.getBoundingClientRect();
const hits = [];
for (const el of svg.querySelectorAll('text, line, circle, path')) {
  if (el === label || el.classList.contains('threshold') || el.classList.contains('threshold-tab')) continue;
  const r = el.getBoundingClientRect();
  if (r.right > l.left && r.left < l.right && r.bottom > l.top && r.top < l.bottom) hits.push((el.getAttribute('class') || el.tagName) + ' ' + (el.textContent || '').trim());
}
const inside = l.left >= s.left - 0.5 && l.right <= s.right + 0.5 && l.top >= s.top - 0.5;
const ticks = [...svg.querySelectorAll('.x-tick')].map(t => t.textContent);
const w = document.documentElement.clientWidth;
const scrolls = e => { for (let p = e.parentElement; p; p = p.parentElement) { if (getComputedStyle(p).overflowX !== 'visible') return true; } return false; };
const wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w + 1 && !scrolls(e))
  .slice(0, 8).map(e => e.tagName + '.' + e.className + '#' + (e.dataset.testid || '') + ' ' + Math.round(e.getBoundingClientRect().right));
return [hits, inside, ticks, wide];
"#;

/// The ECDF chart: round ticks (1, 2 or 5 × 10ⁿ apart, from 0) and the threshold's label where it
/// collides with nothing — a closed and an open-ended tail bar, at 360, 1024 and 1280 px, en and
/// zh. Screenshots `compare-chart-<pair>-<width>-<lang>.png`.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_chart_has_round_ticks_and_a_threshold_label_that_collides_with_nothing() {
    let base = static_server::serve(dist());
    for (pair, new) in [
        ("slower", "baseline-slower.jsonl"),
        ("ten", "ten-requests.jsonl"),
    ] {
        for width in [360, 1024, 1280] {
            for lang in ["en", "zh"] {
                let b = Browser::start(width, 900, "en-US");
                b.goto(&format!(
                    "{base}/compare/?base=baseline-a.jsonl&new={new}&lang={lang}"
                ));
                b.wait_text("[data-testid=pick-new-name]", |t| t == new);
                b.wait_text("[data-testid=compare-chart]", |t| !t.is_empty());
                b.execute(
                    "document.querySelector('[data-testid=compare-chart]').scrollIntoView()",
                    json!([]),
                );
                let got = b.execute(CHART_JS, json!([]));
                let at = format!("{pair} {width} px {lang}");
                assert_eq!(got[0], json!([]), "{at}: the threshold's label overlaps");
                assert_eq!(got[1], json!(true), "{at}: the label leaves the chart");
                assert_eq!(got[3], json!([]), "{at}: wider than the window");
                let ticks: Vec<f64> = got[2]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_str().unwrap().trim_end_matches(" s").parse().unwrap())
                    .collect();
                assert!(ticks.len() >= 3 && ticks[0] == 0.0, "{at}: {ticks:?}");
                let step = ticks[1];
                let mantissa = step / 10f64.powi(step.log10().floor() as i32);
                assert!(
                    [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-9),
                    "{at}: a step of {step}: {ticks:?}"
                );
                for (k, t) in ticks.iter().enumerate() {
                    assert!((t - step * k as f64).abs() < 1e-9, "{at}: {ticks:?}");
                }
                b.screenshot(&screenshot_path(&format!(
                    "compare-chart-{pair}-{width}-{lang}"
                )));
            }
        }
    }
}
