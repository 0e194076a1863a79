//! `cargo xtask bench`, `bench-lab [N]` and `bench-recorder`: the core's criterion benchmarks,
//! the browser benchmark page in headless Chromium, and the recorder's fidelity benchmark.

use std::process::Command;

use crate::pages::build_release;
use crate::process::{cargo, root, run};
use crate::tools::{chromium_paths, install_tools};
use crate::Result;

pub(crate) fn bench() -> Result {
    run(Command::new(cargo())
        .args(["bench", "-p", "tracelab-core", "--bench", "metrics"])
        .current_dir(root()))
}

pub(crate) fn bench_lab(rest: &[String]) -> Result {
    let n = rest.first().cloned().unwrap_or_else(|| "1000000".into());
    install_tools(true)?;
    build_release()?;
    let (chrome, driver) = chromium_paths();
    run(Command::new(cargo())
        .args([
            "test",
            "--release",
            "--locked",
            "-p",
            "trace-lab",
            "--test",
            "lab",
            "the_benchmark_page",
            "--",
            "--ignored",
            "--nocapture",
        ])
        .env("TRACELAB_DIST", root().join("dist"))
        .env("TRACELAB_BENCH_N", n)
        .env("CHROME", chrome)
        .env("CHROMEDRIVER", driver)
        .current_dir(root()))
}

pub(crate) fn bench_recorder() -> Result {
    run(Command::new(cargo())
        .args(["bench", "-p", "tracelab-recorder", "--bench", "fidelity"])
        .current_dir(root()))
}
