//! Shared by the peer tests: the real fixtures are read in place from `../shared/fixtures/`
//! beside the repository root (never copied into the project), and fail clearly when missing.

/// The text of `../shared/fixtures/{path}` (e.g. `peers/guidellm050_….json`).
pub fn shared(path: &str) -> String {
    let full = format!("{}/../../../shared/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| {
        panic!("the real fixture {full} is missing ({e}): these tests read ../shared/fixtures/ beside the repository root")
    })
}
