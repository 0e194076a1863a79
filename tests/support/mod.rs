//! Shared pieces of the end-to-end tests: a static server for `dist/` and a WebDriver client.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

pub mod static_server;
pub mod webdriver;

use std::path::PathBuf;

/// The built lab, from `cargo xtask test` (TRACELAB_DIST) or `dist/` beside the manifest.
pub fn dist() -> PathBuf {
    let dist = std::env::var_os("TRACELAB_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("dist"));
    assert!(
        dist.join("index.html").is_file(),
        "the lab is not built at {}: run the end-to-end tests through `cargo xtask test`",
        dist.display()
    );
    dist
}

/// Where screenshots go, to be looked at after a run.
pub fn screenshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/e2e-screenshots")
        .join(format!("{name}.png"))
}

/// Elements whose box leaves the column `column` (a CSS selector) or, when given, overlaps
/// `avoid`'s box; content clipped by a scrolling box inside the column is judged by that box.
/// Returns a description of each offender (empty when the layout holds).
pub const OUT_OF_COLUMN_JS: &str = r#"
const [columnCss, avoidCss] = arguments;
const out = [];
for (const col of document.querySelectorAll(columnCss)) {
  const c = col.getBoundingClientRect();
  const avoid = avoidCss ? document.querySelector(avoidCss) : null;
  const a = avoid ? avoid.getBoundingClientRect() : null;
  for (const el of col.querySelectorAll('*')) {
    let clipped = false;
    for (let p = el.parentElement; p && p !== col; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== 'visible') { clipped = true; break; }
    }
    if (clipped) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === 'hidden') continue;
    const name = el.tagName.toLowerCase() + (el.dataset.testid ? '[' + el.dataset.testid + ']' : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : '');
    if (r.right > c.right + 1 || r.left < c.left - 1) out.push(`${name} spans ${Math.round(r.left)}–${Math.round(r.right)} outside ${columnCss} ${Math.round(c.left)}–${Math.round(c.right)}`);
    if (a && a.width > 0 && r.right > a.left + 1 && r.left < a.right - 1 && r.bottom > a.top + 1 && r.top < a.bottom - 1) out.push(`${name} at ${Math.round(r.left)}–${Math.round(r.right)} lies under ${avoidCss} ${Math.round(a.left)}–${Math.round(a.right)}`);
  }
}
return out.slice(0, 20);
"#;
