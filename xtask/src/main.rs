//! `cargo xtask`: the project's automation, in Rust so it runs wherever cargo does.
//!
//! - `cargo xtask serve`  — install what is missing, build the lab, serve it on 127.0.0.1:8080.
//! - `cargo xtask test`   — install what is missing, run every test: the workspace's unit and
//!   integration tests, the recorder against llama.cpp's real server, then the lab end to end
//!   in headless Chromium.
//! - `cargo xtask build`  — the release bundle in `dist/`, with its gzipped size.
//! - `cargo xtask bench`  — the core's criterion benchmarks.
//! - `cargo xtask bench-recorder` — the recorder's fidelity benchmark.
//! - `cargo xtask bench-wire [OPTIONS]` — the recorder and guidellm judged by a packet capture.
//! - `cargo xtask bench-lab [N]` — the browser benchmark over N attempts in headless Chromium.
//! - `cargo xtask fixtures` — the real fixtures the tests read, fetched into the per-user cache
//!   when no `../shared/fixtures/` is beside the repository (`fixtures.rs`).
//! - `cargo xtask fuzz [SECONDS]` — each fuzz target in `fuzz/` for SECONDS (default 60), with
//!   the total executions and anything found.
//!
//! Tools come from the package registries only (nothing else is reachable on the course
//! machines): trunk and wasm-bindgen-cli from crates.io, Chromium from Debian's packages,
//! llama.cpp's server (llama-cpp-python, and the C++ `llama-server` built from its sdist) from PyPI.
//!
//! One module per task: `pages.rs` (the page list, `serve`, `build`), `tools.rs` (`install`),
//! `test.rs`, `bench.rs`, `fuzz.rs`, `fixtures.rs`; `venv.rs` makes the cached PyPI venvs,
//! `llama_server.rs` builds llama.cpp's C++ server,
//! `versions.rs` holds every version pin, `process.rs` runs commands.

use std::env;
use std::process::ExitCode;

mod bench;
mod fixtures;
mod fuzz;
mod llama_server;
mod pages;
mod process;
mod test;
#[cfg(test)]
mod tidy;
mod tools;
mod venv;
mod versions;

type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("help");
    let rest = &args[args.len().min(1)..];
    let result = match task {
        "serve" => pages::serve(rest),
        "test" => test::test(rest),
        "build" => pages::build_release().map(|_| ()),
        "bench" => bench::bench(),
        "bench-recorder" => bench::bench_recorder(),
        "bench-wire" => bench::bench_wire(rest),
        "bench-lab" => bench::bench_lab(rest),
        "bench-export" => bench::bench_export(rest),
        "install" => tools::install_tools(true),
        "fuzz" => fuzz::fuzz(rest),
        "fixtures" => fixtures::folder().map(|dir| println!("{}", dir.display())),
        "help" | "--help" | "-h" => {
            print_help();
            Ok(())
        }
        other => Err(format!("unknown task `{other}`; run `cargo xtask help`")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn print_help() {
    println!(
        "cargo xtask <task>\n\n\
         serve            build the lab and serve it on http://127.0.0.1:8080 (sample trace loaded)\n\
         test             run every test, including the lab in headless Chromium\n\
         build            build the release bundle into dist/ and print its gzipped size\n\
         bench            run the core's criterion benchmarks\n\
         bench-recorder   run the recorder's fidelity benchmark\n\
         bench-wire [..]  the recorder and guidellm side by side, judged by a loopback packet capture\n\
         bench-lab [N]    the browser benchmark: parse, load and recompute N attempts (default 1,000,000)\n\
         bench-export [..] peak memory and time of report, export (every format) and merge on N attempts\n\
         install          install the tools only (wasm target, trunk, wasm-bindgen-cli, Chromium)\n\
         fixtures         fetch the real fixtures the tests read into ~/.cache/tracelab/fixtures (when ../shared/fixtures is absent)\n\
         fuzz [SECONDS]   run each fuzz target (fuzz/, cargo-fuzz on nightly) for SECONDS, default 60"
    );
}
