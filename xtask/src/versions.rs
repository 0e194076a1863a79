//! Every version pin of the project's tools, in one place. The tests that need a pin too (the
//! recorder's DuckDB and kubernetes-validate tests, the lab's wasm-bindgen in Cargo.toml and
//! Trunk.toml) are checked equal to these by the workspace tidy (`tidy.rs`).

/// trunk 0.22 needs a newer rustc than the course machines have.
pub(crate) const TRUNK_VERSION: &str = "0.21.14";

/// binaryen's `wasm-opt` shrinks the release bundle; Debian's (108) is too old for the wasm
/// that Rust 1.95 emits, so a current one comes from the npm registry into `.tools/`.
pub(crate) const BINARYEN_VERSION: &str = "132";

/// llama.cpp's OpenAI-compatible server from PyPI, for the recorder's real-server test, and the
/// `gguf` package that writes the test's tiny model.
pub(crate) const LLAMA_CPP_PYTHON_VERSION: &str = "0.3.36";

pub(crate) const GGUF_VERSION: &str = "0.19.0";

/// Python tools from PyPI that tests use, each in a venv under ~/.cache/tracelab/<name>-<version>/
/// made once: DuckDB reads the Parquet export back; kubernetes-validate checks deploy/kubernetes/
/// against the Kubernetes schemas it ships. Keep the versions in step with
/// crates/recorder/tests/recorder/{parquet,deploy}.rs.
pub(crate) const DUCKDB_VERSION: &str = "2.0.0";

pub(crate) const KUBERNETES_VALIDATE_VERSION: &str = "1.37.0";

/// guidellm from PyPI, the peer `cargo xtask bench-wire` runs beside the recorder on the same
/// capture, in ~/.cache/tracelab/guidellm-<version>/.
pub(crate) const GUIDELLM_VERSION: &str = "0.8.1";

pub(crate) const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// Deque's accessibility rules from npm, run on every page by `tests/a11y.rs`, cached under
/// ~/.cache/tracelab/axe-core-<version>/.
pub(crate) const AXE_CORE_VERSION: &str = "4.14.1";
