//! What the workspace's tests share, written once (a dev-dependency only, never in a shipped
//! build): where the real fixtures are. They are read in place, never copied into the project:
//! from `TRACELAB_FIXTURES` when it is set and not empty (`cargo xtask test` sets it to
//! `../shared/fixtures/` when that is beside the repository, else to the cache `cargo xtask
//! fixtures` fills), else from `../shared/fixtures/` beside the repository root.

use std::ffi::OsString;
use std::path::PathBuf;

/// What to do when a real fixture is not there.
pub const MISSING: &str = "the tests read the real fixtures from $TRACELAB_FIXTURES, else ../shared/fixtures/ beside the \
     repository root; on a clone without them, run `cargo xtask fixtures` (it fetches them into ~/.cache/tracelab/fixtures/) \
     and `cargo xtask test`, which passes that folder on";

/// The folder holding `dcgm/ peers/ servers/ streams/ workloads/`.
pub fn fixtures() -> PathBuf {
    folder_from(std::env::var_os("TRACELAB_FIXTURES"))
}

/// The fixtures' folder for a value of `TRACELAB_FIXTURES`: an empty one names no folder.
fn folder_from(var: Option<OsString>) -> PathBuf {
    match var.filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        // This crate sits at crates/testkit, two folders below the repository root.
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/fixtures"
        )),
    }
}

/// A folder of the real fixtures (`peers`, `streams`, …).
pub fn fixture_dir(folder: &str) -> PathBuf {
    fixtures().join(folder)
}

/// The path of one real fixture (`peers/vllm_….json`), which must be there: a missing one fails
/// naming it and how to get it.
pub fn fixture(path: &str) -> PathBuf {
    let full = fixtures().join(path);
    assert!(
        full.is_file(),
        "the real fixture {} is missing: {MISSING}",
        full.display()
    );
    full
}

/// The bytes of one real fixture ([`fixture`]).
pub fn read_fixture(path: &str) -> Vec<u8> {
    let full = fixtures().join(path);
    std::fs::read(&full).unwrap_or_else(|e| {
        panic!(
            "the real fixture {} is missing ({e}): {MISSING}",
            full.display()
        )
    })
}

/// The text of one real fixture ([`fixture`]).
pub fn read_fixture_text(path: &str) -> String {
    String::from_utf8(read_fixture(path))
        .unwrap_or_else(|e| panic!("the real fixture {path} is not UTF-8: {e}"))
}

#[test]
fn an_empty_variable_falls_back_to_the_folder_beside_the_repository() {
    let shared = folder_from(None);
    assert!(shared.ends_with("shared/fixtures"), "{}", shared.display());
    assert_eq!(folder_from(Some("".into())), shared);
    assert_eq!(folder_from(Some("/f".into())), PathBuf::from("/f"));
}
