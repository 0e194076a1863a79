//! Every page of the lab checked by axe-core (Deque's accessibility rules, the version
//! `cargo xtask test` installs and names in `AXE_JS`) in headless Chromium, in English and
//! Chinese, at a phone's and a laptop's width: no violation of impact "critical" or "serious".

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::webdriver::Browser;
use support::{dist, static_server};

/// axe-core's script, read from where `cargo xtask test` installed it.
fn axe_js() -> String {
    let path = std::env::var("AXE_JS").unwrap_or_else(|_| {
        panic!("AXE_JS names no axe.min.js: run these tests through `cargo xtask test`, which installs axe-core and sets it")
    });
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// axe's critical and serious violations on the page as it is now, one line each (rule, impact,
/// what it asks, the first few elements).
fn violations(b: &Browser, axe: &str) -> Vec<String> {
    b.execute(
        &format!(
            "{axe}\nwindow.__axe = null;\naxe.run(document, {{resultTypes: ['violations']}}).then(r => {{ window.__axe = r.violations; }}, e => {{ window.__axe = String(e); }});"
        ),
        json!([]),
    );
    let start = Instant::now();
    let found = loop {
        let v = b.execute("return window.__axe", json!([]));
        if !v.is_null() {
            break v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "axe did not finish in 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let Value::Array(list) = found else {
        panic!("axe failed: {found}");
    };
    list.iter()
        .filter(|v| matches!(v["impact"].as_str(), Some("critical" | "serious")))
        .map(|v| {
            let targets: Vec<String> = v["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .take(3)
                .map(|n| n["target"].to_string())
                .collect();
            format!(
                "{} ({}): {} — {} element(s), e.g. {}",
                v["id"].as_str().unwrap_or_default(),
                v["impact"].as_str().unwrap_or_default(),
                v["help"].as_str().unwrap_or_default(),
                v["nodes"].as_array().map_or(0, Vec::len),
                targets.join(", ")
            )
        })
        .collect()
}

#[test]
#[ignore = "needs the built pages, Chromium and axe-core: run `cargo xtask test`"]
fn no_page_has_a_critical_or_serious_accessibility_violation() {
    let axe = axe_js();
    let base = static_server::serve(dist());
    // Each page with what proves it has drawn its content.
    let pages: [(&str, &str); 5] = [
        ("/", "[data-testid=value-qualified_count]"),
        ("/lessons/", "[data-testid=lesson-notes]"),
        (
            "/compare/?base=baseline-a.jsonl&new=baseline-slower.jsonl",
            "[data-testid=compare-table]",
        ),
        ("/capacity/", "[data-testid=capacity]"),
        ("/load-model/", "[data-testid=coverage]"),
    ];
    let mut problems = Vec::new();
    for (width, height, lang) in [(1280, 1000, "en-US"), (360, 800, "zh-CN")] {
        let b = Browser::start(width, height, lang);
        for (path, ready) in pages {
            b.goto(&format!("{base}{path}"));
            b.wait_text(ready, |_| true);
            // Let the page settle (its lazy parts load after the first paint).
            std::thread::sleep(Duration::from_millis(800));
            problems.extend(
                violations(&b, &axe)
                    .into_iter()
                    .map(|v| format!("{path} at {width} px, {lang}: {v}")),
            );
        }
    }
    assert!(
        problems.is_empty(),
        "axe-core found {} critical or serious violations:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}
