//! The load-model page in headless Chromium: the stall demonstration's figures are the core's,
//! turning the stall off calms the open loop, the language switches, the link to the capacity
//! page (both languages), and a screenshot of the demonstration is kept in
//! target/e2e-screenshots/load-model-stall.png.
//! Run through `cargo xtask test` (it builds the pages and installs Chromium first).

mod support;

use support::webdriver::Browser;
use support::{dist, screenshot_path, static_server};
use tracelab_core::simulate::{
    compare_loads, Arrival, Load, Params, Service, Stall, DEFAULT_FIRST_TOKEN_SHARE,
};

/// The page's defaults: the lesson's stall demonstration.
fn expected(stall: bool) -> (String, String) {
    let params = Params {
        slots: 8,
        service: Service::Exponential { mean_s: 1.0 },
        first_token_share: DEFAULT_FIRST_TOKEN_SHARE,
        load: Load::Closed {
            clients: 16,
            think_s: 4.0,
        },
        requests: 600,
        seed: 11,
        stall: stall.then_some(Stall {
            at_s: 60.0,
            for_s: 20.0,
        }),
    };
    let c = compare_loads(&params, Arrival::Poisson, 1.0).unwrap();
    let s = |v: Option<f64>| format!("{:.3} s", v.unwrap());
    (s(c.closed_summary.p95_s), s(c.open_summary.p95_s))
}

#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_stall_demonstration_shows_the_cores_figures() {
    let base = static_server::serve(dist());
    let b = Browser::start(1280, 1000, "en-US");
    b.goto(&format!("{base}/load-model/"));
    let (closed, open) = expected(true);
    assert_eq!(
        b.wait_text("[data-testid=p95-closed]", |t| t.ends_with(" s")),
        closed
    );
    assert_eq!(b.text_of("[data-testid=p95-open]"), open);
    let (c, o): (f64, f64) = (
        closed.trim_end_matches(" s").parse().unwrap(),
        open.trim_end_matches(" s").parse().unwrap(),
    );
    assert!(c < 5.0 && o > 10.0, "closed {c} s, open {o} s");
    assert!(
        b.text_of("[data-testid=matched]").contains("λ = 3."),
        "{}",
        b.text_of("[data-testid=matched]")
    );
    assert!(b.text_of("[data-testid=cli]").contains("--stall 60:20"));
    assert_eq!(b.find_all("[data-testid=in-flight] .stall").len(), 1);
    b.screenshot(&screenshot_path("load-model-stall"));

    // Without the stall the two loads agree much more closely.
    b.click("[data-testid=stall-on]");
    let (closed, open) = expected(false);
    assert_eq!(b.wait_text("[data-testid=p95-open]", |t| *t == open), open);
    assert_eq!(b.text_of("[data-testid=p95-closed]"), closed);
    assert!(b.find_all("[data-testid=in-flight] .stall").is_empty());

    // A bad value is refused where it was typed; the last good run stays.
    b.replace_text("[data-testid=slots]", "0");
    assert_eq!(b.text_of("[data-testid=p95-open]"), open);

    b.click("[data-testid=lang-switch]");
    b.wait_text("h1", |t| t.contains("负载模型"));

    // The link to the capacity page, in the reader's language, opens it in that language.
    assert_eq!(
        b.wait_text("[data-testid=capacity-link]", |t| t.contains("容量")),
        "负载扫描的容量……"
    );
    b.click("[data-testid=capacity-link]");
    let zh = b.wait_text("[data-testid=capacity]", |t| t.starts_with("容量："));
    assert!(zh.contains("速率 2.5 个/秒"), "{zh}");
    let b = Browser::start(1280, 1000, "en-US");
    b.goto(&format!("{base}/load-model/?lang=en"));
    assert_eq!(
        b.wait_text("[data-testid=capacity-link]", |t| !t.is_empty()),
        "Capacity of a load sweep…"
    );
    b.click("[data-testid=capacity-link]");
    assert!(b
        .wait_text("[data-testid=capacity]", |t| t.starts_with("Capacity:"))
        .contains("rate 2.5 /s"));
    // Nothing wider than a 360 px window, the extra link in the header included.
    let b = Browser::start(360, 800, "en-US");
    b.goto(&format!("{base}/load-model/"));
    b.wait_text("[data-testid=capacity-link]", |t| !t.is_empty());
    let wide = b.execute(
        "const w = document.documentElement.clientWidth; const scrolls = e => { for (let p = e.parentElement; p; p = p.parentElement) { if (getComputedStyle(p).overflowX !== 'visible') return true; } return false; }; return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w + 1 && !scrolls(e)).slice(0, 8).map(e => e.tagName + '.' + e.className + '#' + (e.dataset.testid || '') + ' ' + Math.round(e.getBoundingClientRect().right))",
        serde_json::json!([]),
    );
    assert_eq!(wide, serde_json::json!([]), "wider than a 360 px window");
    let overflow = b.execute(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
        serde_json::json!([]),
    );
    assert_eq!(
        overflow,
        serde_json::json!(0),
        "horizontal overflow at 360 px"
    );
    let head = b.execute(
        support::OUT_OF_COLUMN_JS,
        serde_json::json!([".lm-head", null]),
    );
    assert_eq!(
        head,
        serde_json::json!([]),
        "the header and its links at 360 px"
    );
    let link = b.execute("return document.querySelector('[data-testid=capacity-link]').getBoundingClientRect().right <= document.documentElement.clientWidth", serde_json::json!([]));
    assert_eq!(
        link,
        serde_json::json!(true),
        "the capacity link inside a 360 px window"
    );
    b.screenshot(&screenshot_path("load-model-360"));
}

/// The percentile method in the reader's language: in Chinese the glossary's 分位数方法 and 最近秩,
/// no English word left. Screenshots `load-model-method-<lang>.png`.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_percentile_method_is_named_in_the_readers_language() {
    let base = static_server::serve(dist());
    for (lang, want) in [("zh", "从计划开始时间算起的系统内时间，全部请求；分位数方法：最近秩"), ("en", "Time in system from the intended start, every request; percentile method: nearest-rank")] {
        let b = Browser::start(1024, 900, "en-US");
        b.goto(&format!("{base}/load-model/?lang={lang}"));
        let note = b.wait_text("[data-testid=method-note]", |t| !t.is_empty());
        assert_eq!(note, want, "{lang}");
        b.execute("document.querySelector('[data-testid=method-note]').scrollIntoView({block: 'center'})", serde_json::json!([]));
        b.screenshot(&screenshot_path(&format!("load-model-method-{lang}")));
    }
}

/// The coverage experiment: the button waits for the learner's prediction; then 100 runs of
/// M/M/4 at its critical load, each interval drawn against Erlang C's truth. The counts are the
/// core's (`tracelab_core::coverage::run` with the page's setup), independent draws hold the
/// truth far less often than the effective sample's intervals, and the words follow the
/// language. Screenshots `load-model-coverage-<lang>-<width>.png`.
#[test]
#[ignore = "needs the built pages and Chromium: run `cargo xtask test`"]
fn the_coverage_experiment_asks_first_then_draws_each_run_against_the_truth() {
    use tracelab_core::coverage::{critical_rate, run, Setup};
    let setup = Setup {
        slots: 4,
        rate_per_s: critical_rate(4, 0.5, 0.05),
        threshold_s: 0.5,
        runs: 100,
        requests: 2_000,
        seed: 1,
    };
    let want = run(setup).unwrap();
    assert!(
        want.joint_rate.independent_covered + 10 < want.joint_rate.honest_covered,
        "{} vs {}",
        want.joint_rate.independent_covered,
        want.joint_rate.honest_covered
    );
    let base = static_server::serve(dist());
    for (lang, width) in [("en", 1280), ("zh", 360)] {
        let b = Browser::start(width, 1000, "en-US");
        b.goto(&format!("{base}/load-model/?lang={lang}"));
        b.wait_text("[data-testid=coverage]", |t| !t.is_empty());
        let disabled = b.execute(
            "return document.querySelector('[data-testid=cov-run]').disabled",
            serde_json::json!([]),
        );
        assert_eq!(
            disabled,
            serde_json::json!(true),
            "the experiment waits for a prediction"
        );
        assert!(!b
            .wait_text("[data-testid=cov-predict-first]", |t| !t.is_empty())
            .is_empty());
        b.type_into("[data-testid=cov-predict]", "90");
        b.click("[data-testid=cov-run]");
        let independent = b.wait_text_for(
            "[data-testid=cov-independent]",
            std::time::Duration::from_secs(60),
            |t| !t.is_empty(),
        );
        assert!(
            independent.contains(&format!("{} / 100", want.joint_rate.independent_covered)),
            "{independent}"
        );
        let honest = b.wait_text("[data-testid=cov-honest]", |t| !t.is_empty());
        assert!(
            honest.contains(&format!("{} / 100", want.joint_rate.honest_covered)),
            "{honest}"
        );
        let summary = b.wait_text("[data-testid=cov-summary]", |t| !t.is_empty());
        assert!(
            summary.contains("90 / 100"),
            "the prediction is shown beside the result: {summary}"
        );
        if lang == "zh" {
            assert!(
                summary.contains("你的预测") && summary.contains("按有效样本"),
                "{summary}"
            );
        }
        let lines = b.execute("return [...document.querySelectorAll('[data-testid=forest-cov_honest] line.cov')].length", serde_json::json!([]));
        assert_eq!(lines, serde_json::json!(100));
        let missed = b.execute("return [...document.querySelectorAll('[data-testid=forest-cov_independent] line.cov.missed')].length", serde_json::json!([]));
        assert_eq!(
            missed,
            serde_json::json!(100 - want.joint_rate.independent_covered)
        );
        b.click("[data-testid=cov-figure-p95]");
        let p95 = b.wait_text("[data-testid=cov-honest]", |t| {
            t.contains(&format!("{} / 100", want.ttft_p95.honest_covered))
        });
        assert!(!p95.is_empty());
        let overflow = b.execute(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth",
            serde_json::json!([]),
        );
        assert_eq!(
            overflow,
            serde_json::json!(0),
            "horizontal overflow at {width} px"
        );
        b.execute(
            "document.querySelector('[data-testid=coverage]').scrollIntoView()",
            serde_json::json!([]),
        );
        b.screenshot(&screenshot_path(&format!(
            "load-model-coverage-{lang}-{width}"
        )));
    }
}
