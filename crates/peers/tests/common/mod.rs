//! Shared by the peer tests: the real fixtures, read in place (never copied into the project)
//! through the workspace's test kit, failing clearly when missing; `streamed.rs` runs a file
//! both ways.
#![allow(dead_code)] // each test file uses some of these

pub mod streamed;

// Where the fixtures are is the workspace's test kit's (`crates/testkit`), written once.
#[allow(unused_imports)] // each test file uses some of these
pub use tracelab_testkit::{fixture_dir, fixtures, read_fixture_text as shared, MISSING};
