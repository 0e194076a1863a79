//! What the workspace's tests share, written once (a dev-dependency only, never in a shipped
//! build): where the real fixtures are. They are read in place, never copied into the project:
//! from `TRACELAB_FIXTURES` when it is set and not empty (`cargo xtask test` sets it to
//! `../shared/fixtures/` when that is beside the repository, else to the cache `cargo xtask
//! fixtures` fills), else from `../shared/fixtures/` beside the repository root. Also: a command
//! run with its output captured, and a fresh scratch folder per test.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Output};

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

/// Runs `bin` (a test's `env!("CARGO_BIN_EXE_…")`) with `args`, its output captured.
pub fn run(bin: &str, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {bin}: {e}"))
}

/// A fresh, empty folder for one test (`tracelab-{suite}-{pid}-{name}` under the system's
/// temporary folder), emptied first so reruns do not pile up.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tracelab-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

#[test]
fn an_empty_variable_falls_back_to_the_folder_beside_the_repository() {
    let shared = folder_from(None);
    assert!(shared.ends_with("shared/fixtures"), "{}", shared.display());
    assert_eq!(folder_from(Some("".into())), shared);
    assert_eq!(folder_from(Some("/f".into())), PathBuf::from("/f"));
}
