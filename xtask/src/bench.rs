//! `cargo xtask bench`, `bench-lab [N]`, `bench-recorder`, `bench-wire` and `bench-export`: the
//! core's criterion benchmarks, the browser benchmark page in headless Chromium, the recorder's
//! fidelity benchmark, the recorder beside guidellm judged by a packet capture (`xtask/wire/`),
//! and the peak memory of every command that reads a whole trace (`xtask/bench/export.py`).

use std::process::Command;

use crate::pages::build_release;
use crate::process::{apt_install, cargo, output, root, run};
use crate::tools::{chromium_paths, install_tools};
use crate::venv::{ensure, Venv};
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

/// The recorder and guidellm against one scripted server process, each request judged by a
/// loopback capture (tcpdump) that no client under test takes part in: `xtask/wire/bench.py`
/// prints the table and keeps captures, traces and `results.json` in
/// `target/bench-wire/`. Options go to bench.py (`--concurrency 1,64,512`,
/// `--framing coalesced,split:2`, `--rounds N`). Capturing needs CAP_NET_RAW (root).
pub(crate) fn bench_wire(rest: &[String]) -> Result {
    if output("tcpdump", &["--version"]).is_none() {
        apt_install(&["tcpdump"])?;
    }
    let guidellm = ensure(&Venv::guidellm())?.join("bin").join("guidellm");
    run(Command::new(cargo())
        .args([
            "build",
            "--release",
            "--locked",
            "-p",
            "tracelab-recorder",
            "-p",
            "tracelab-scripted-server",
            "--bin",
            "tracelab",
            "--bin",
            "scripted-serve",
        ])
        .current_dir(root()))?;
    let release = root().join("target").join("release");
    run(Command::new("python3")
        .arg(root().join("xtask").join("wire").join("bench.py"))
        .arg(root().join("target").join("bench-wire"))
        .arg(release.join("tracelab"))
        .arg(release.join("scripted-serve"))
        .arg(guidellm)
        .args(rest)
        .current_dir(root()))
}

/// Peak memory (the kernel's `ru_maxrss` per process) and time of `tracelab report`, `export` in
/// every format and `merge` of K shards, on simulated traces of N attempts: `xtask/bench/export.py`
/// prints the table and writes `target/bench-export/results.json`. Options go to the script
/// (`--attempts 1000000,10000000`, `--shards 4`, `--keep`). A 10 M-attempt trace is about 2.3 GB,
/// and the run needs about three times that on disk.
pub(crate) fn bench_export(rest: &[String]) -> Result {
    run(Command::new(cargo())
        .args([
            "build",
            "--release",
            "--locked",
            "-p",
            "tracelab-recorder",
            "--bin",
            "tracelab",
        ])
        .current_dir(root()))?;
    run(Command::new("python3")
        .arg(root().join("xtask").join("bench").join("export.py"))
        .arg(root().join("target").join("bench-export"))
        .arg(root().join("target").join("release").join("tracelab"))
        .args(rest)
        .current_dir(root()))
}
