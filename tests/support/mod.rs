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
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/e2e-screenshots").join(format!("{name}.png"))
}
