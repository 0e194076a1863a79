//! Shared by the peer tests: the real fixtures are read in place (never copied into the
//! project), and fail clearly when missing. The folder is `TRACELAB_FIXTURES` when set (`cargo
//! xtask test` sets it: `../shared/fixtures/` when it is beside the repository, else the cache
//! that `cargo xtask fixtures` fills), else `../shared/fixtures/` beside the repository root.
#![allow(dead_code)] // each test file uses some of these

pub mod streamed;

use std::path::PathBuf;

/// The folder holding `dcgm/ peers/ servers/ streams/ workloads/`.
pub fn fixtures() -> PathBuf {
    match std::env::var_os("TRACELAB_FIXTURES").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/fixtures"
        )),
    }
}

/// What to do when a real fixture is not there.
pub const MISSING: &str = "these tests read the real fixtures from $TRACELAB_FIXTURES, else ../shared/fixtures/ beside the \
     repository root; on a clone without them, run `cargo xtask fixtures` (it fetches them into ~/.cache/tracelab/fixtures/) \
     and `cargo xtask test`, which passes that folder on";

/// A folder of the real fixtures (`peers`, `streams`, …).
pub fn fixture_dir(folder: &str) -> PathBuf {
    fixtures().join(folder)
}

/// The text of `{fixtures}/{path}` (e.g. `peers/guidellm050_….json`).
pub fn shared(path: &str) -> String {
    let full = fixtures().join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| {
        panic!(
            "the real fixture {} is missing ({e}): {MISSING}",
            full.display()
        )
    })
}
