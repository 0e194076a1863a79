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
    assert!(b.url().contains("/compare/?base=baseline-a.jsonl"), "{}", b.url());

    // A real change: slower beyond noise on TTFT, the contract holds.
    b.select("[data-testid=pick-new-sample]", "baseline-slower.jsonl");
    b.wait_text("[data-testid=contract]", |t| t.contains("Contract holds"));
    let tail = row_text(&b, "ttft_tail");
    assert!(tail.contains("790 ms") && tail.contains("1.204 s") && tail.contains("+414 ms"), "{tail}");
    assert!(tail.contains("slower beyond noise") && tail.contains("bootstrap, 2000 resamples, seed 42"), "{tail}");
    assert!(tail.contains("751 ms … 1.043 s"), "the base's own P95 interval: {tail}");
    // One chart, both ECDFs, the threshold, and a closed interval bar for each run's P95.
    assert_eq!(b.find_all("[data-testid=compare-chart] svg").len(), 1);
    for part in ["ecdf-base", "ecdf-new", "threshold", "tail-base", "tail-new"] {
        b.find(&format!("[data-testid=compare-chart] [data-testid={part}]")).unwrap_or_else(|e| panic!("{part}: {e}"));
    }
    assert!(b.find_all("[data-testid=compare-chart] .interval.open").is_empty());
    b.screenshot(&screenshot_path("compare-slower"));

    // A rerun that agrees: no row claims a change.
    b.select("[data-testid=pick-new-sample]", "baseline-rerun.jsonl");
    b.wait_text("[data-testid=pick-new-name]", |t| t == "baseline-rerun.jsonl");
    let table = b.wait_text("[data-testid=compare-table]", |t| t.contains("baseline-rerun.jsonl"));
    assert!(!table.contains("beyond noise"), "{table}");
    // The five checks for each run: the rerun is under the base's contract, and the two runs'
    // P50 and P95 intervals are compared (the fifth check).
    let checks = b.wait_text("[data-testid=baseline-checks]", |t| t.contains("baseline-rerun.jsonl"));
    assert!(checks.contains("This run counts as a baseline:") && checks.contains("the base's contract"), "{checks}");
    assert!(checks.contains("does not record runtime, prefix_reuse"), "samples written before the runtime was recorded: {checks}");
    assert!(checks.contains("Reruns in a similar range: yes — 2 runs"), "{checks}");
    // Which token ends TTFT is a choice here too (the same for runs that kept no reasoning apart).
    b.select("[data-testid=first-token]", "any");
    b.wait_text("[data-testid=compare-table]", |t| t.contains("baseline-rerun.jsonl"));
    b.select("[data-testid=first-token]", "content");
    // The comparison is in the page's address: a reload shows the same two runs.
    let href = b.execute("return location.href", json!([]));
    let href = href.as_str().unwrap();
    assert!(href.contains("base=baseline-a.jsonl") && href.contains("new=baseline-rerun.jsonl") && href.contains("ft=content"), "{href}");

    // A broken contract: said at the top and on every row; a P95 from 8 samples is open above.
    b.select("[data-testid=pick-new-sample]", "ten-requests.jsonl");
    b.wait_text("[data-testid=contract]", |t| t.contains("CONTRACT BROKEN") && t.contains("prompt_set: base lesson-baseline · new lesson-table"));
    let rows = b.find_all("[data-testid=compare-table] tbody tr");
    assert_eq!(rows.len(), 8);
    for r in &rows {
        assert!(b.text(r).contains("[contract broken]"), "{}", b.text(r));
    }
    assert!(row_text(&b, "ttft_tail").contains("too few samples to tell (needs n ≥ 72 per run)"));
    assert!(row_text(&b, "ttft_tail").contains("no upper bound"));
    assert_eq!(b.find_all("[data-testid=compare-chart] .interval.open").len(), 1, "the 8-sample P95 bar is open-ended");

    // An upload in another format (the classroom CSV) is the new run.
    let csv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("public/samples/ten-requests.csv");
    b.type_into("[data-testid=pick-new-file]", csv.to_str().unwrap());
    b.wait_text("[data-testid=pick-new-name]", |t| t == "ten-requests.csv");
    b.wait_text("[data-testid=compare-table]", |t| t.contains("ten-requests.csv"));
    // A bad file: a clear error, and the loaded run stays.
    let bad = std::env::temp_dir().join("tracelab-compare-bad.jsonl");
    std::fs::write(&bad, "{\"kind\": \"header\", \"schema\": \"nope\"}\n").unwrap();
    let before = b.text_of("[data-testid=pick-new-name]");
    b.type_into("[data-testid=pick-new-file]", bad.to_str().unwrap());
    b.wait_text("[data-testid=compare-error]", |t| t.contains("tracelab-compare-bad.jsonl"));
    assert_eq!(b.text_of("[data-testid=pick-new-name]"), before);

    // Chinese: the core's words.
    b.select("[data-testid=pick-new-sample]", "baseline-slower.jsonl");
    b.click("[data-testid=lang-switch]");
    b.wait_text("[data-testid=compare-table]", |t| t.contains("超出噪声：变慢"));
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
    for (lang, words) in [("en", ["Difference", "Verdict", "slower beyond noise"]), ("zh", ["差值", "结论", "超出噪声：变慢"])] {
        let b = Browser::start(360, 740, "en-US");
        b.goto(&format!("{base}/compare/?base=baseline-a.jsonl&new=baseline-slower.jsonl&lang={lang}"));
        let tail = b.wait_text("[data-testid=compare-table] tr[data-key=ttft_tail]", |t| t.contains(words[2]));
        let overflow = b.execute("return document.documentElement.scrollWidth > innerWidth", json!([]));
        assert_eq!(overflow.as_bool(), Some(false), "{lang}: the page scrolls sideways");
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
            assert_eq!(c[0].as_bool(), Some(true), "{lang}: a cell outside the screen: {cells:?}");
        }
        let labels: String = cells.iter().map(|c| c[1].as_str().unwrap_or("").to_string()).collect();
        assert!(labels.contains(words[0]) && labels.contains(words[1]), "{lang}: {labels}");
        assert!(tail.contains("+414 ms"), "{tail}");
        b.screenshot(&screenshot_path(&format!("compare-360-{lang}")));
    }
}
