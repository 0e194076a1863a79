//! `cargo xtask fuzz [SECONDS]`: each cargo-fuzz target in `fuzz/` (nightly, libFuzzer), seeded
//! from our samples, the constructed fixtures and the real peer files read in place; `cargo
//! xtask test` runs a short smoke of each.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::fixtures::folder as fixtures_folder;
use crate::process::{cargo, describe, output, root, run};
use crate::versions::CARGO_FUZZ_VERSION;
use crate::Result;

/// The fuzz targets in `fuzz/` (see `fuzz/fuzz_targets/`).
pub(crate) const FUZZ_TARGETS: [&str; 3] = ["parse_trace", "load_peer", "exports"];

/// Seconds each target runs inside `cargo xtask test`.
pub(crate) const FUZZ_SMOKE_SECONDS: u64 = 5;

/// Permalink pairs prepended to the `exports` target's seeds (its first line sets the settings).
pub(crate) const EXPORTS_SEED_PAIRS: [&str; 3] = [
    "t=2&cmp=le&pm=nearest-rank&p=95",
    "t=0.5&cmp=lt&pm=linear&p=100&fd=failed_rows_deleted&mt=treat_as_zero&wu=include&w=10&cost=2&cur=CNY",
    "t=0&pm=higher&p=0.001&fd=successes&w=0.000001&cost=1000000000000",
];

pub(crate) fn fuzz(rest: &[String]) -> Result {
    let seconds = match rest.first() {
        Some(s) => s
            .parse::<u64>()
            .map_err(|_| format!("`{s}` is not a number of seconds"))?,
        None => 60,
    };
    run_fuzzers(seconds)
}

/// The nightly toolchain cargo-fuzz builds with (installed with rustup when missing), and
/// cargo-fuzz itself from crates.io.
pub(crate) fn ensure_cargo_fuzz() -> Result<String> {
    let list = output("rustup", &["toolchain", "list"])
        .ok_or("the fuzz targets need rustup (they build on nightly)")?;
    let nightly = list
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .find(|t| t.starts_with("nightly"))
        .map(str::to_string);
    let nightly = match nightly {
        Some(n) => n,
        None => {
            run(Command::new("rustup").args([
                "toolchain",
                "install",
                "nightly",
                "--profile",
                "minimal",
            ]))?;
            "nightly".to_string()
        }
    };
    let installed =
        output(&cargo(), &["fuzz", "--version"]).is_some_and(|v| v.contains(CARGO_FUZZ_VERSION));
    if !installed {
        run(Command::new(cargo()).args([
            "install",
            "cargo-fuzz",
            "--locked",
            "--version",
            CARGO_FUZZ_VERSION,
        ]))?;
    }
    Ok(nightly)
}

/// Runs each fuzz target for `seconds`, seeded from our samples, the constructed fixtures and
/// the real peer files read in place; prints the executions of each and their total, and fails
/// when a target finds a crash (the input is left in `fuzz/artifacts/<target>/`).
pub(crate) fn run_fuzzers(seconds: u64) -> Result {
    let nightly = ensure_cargo_fuzz()?;
    let fuzz_dir = root().join("fuzz");
    let shared = fixtures_folder()?;
    let seeds: Vec<PathBuf> = vec![
        root().join("public/samples"),
        root().join("crates/peers/tests/data/constructed"),
        shared.join("peers"),
        shared.join("streams"),
    ];
    let mut total = 0u64;
    let mut found = Vec::new();
    for target in FUZZ_TARGETS {
        let corpus = fuzz_dir.join("corpus").join(target);
        std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
        // Through rustup: under `cargo xtask`, CARGO is the stable toolchain's own cargo, which
        // does not understand `+nightly`.
        let mut cmd = Command::new("rustup");
        cmd.args([
            "run",
            &nightly,
            "cargo",
            "fuzz",
            "run",
            "--sanitizer",
            "none",
            target,
        ])
        .arg(&corpus)
        .current_dir(&fuzz_dir);
        if target == "exports" {
            // Its input starts with a line of permalink pairs: seed copies of the files with one.
            write_exports_seeds(&seeds, &corpus)?;
        } else {
            cmd.args(seeds.iter().filter(|s| s.is_dir()));
        }
        // Large seeds (a 1 MB vLLM result) are cut to 64 KiB: cut-off files are inputs too.
        cmd.args([
            "--",
            &format!("-max_total_time={seconds}"),
            "-max_len=65536",
            "-timeout=10",
            "-rss_limit_mb=4096",
        ]);
        if seconds <= FUZZ_SMOKE_SECONDS {
            // The smoke in `cargo xtask test` mutates from a fixed seed, so a red CI is a
            // reproducible finding, not luck; the long runs explore afresh each time.
            cmd.arg("-seed=1");
        }
        eprintln!("xtask: $ {}", describe(&cmd));
        let out = cmd
            .output()
            .map_err(|e| format!("could not start cargo fuzz: {e}"))?;
        let log = String::from_utf8_lossy(&out.stderr);
        let runs = log.lines().rev().find_map(|l| {
            l.strip_prefix("Done ")
                .and_then(|r| r.split_whitespace().next())
                .and_then(|n| n.parse::<u64>().ok())
        });
        match (out.status.success(), runs) {
            (true, Some(n)) => {
                eprintln!("xtask: fuzz {target}: {n} executions in {seconds} s, nothing found");
                total += n;
            }
            _ => {
                let tail: Vec<&str> = log.lines().rev().take(40).collect();
                eprintln!("{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
                found.push(target);
            }
        }
    }
    eprintln!(
        "xtask: fuzz: {total} executions in total over {} targets",
        FUZZ_TARGETS.len()
    );
    if found.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "fuzz targets failed: {} (inputs in fuzz/artifacts/)",
            found.join(", ")
        ))
    }
}

/// Seeds for the `exports` target: each seed file after a line of permalink pairs.
pub(crate) fn write_exports_seeds(seeds: &[PathBuf], corpus: &Path) -> Result {
    for dir in seeds.iter().filter(|s| s.is_dir()) {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name.ends_with(".md") || !path.is_file() {
                continue;
            }
            let Ok(body) = std::fs::read(&path) else {
                continue;
            };
            let body = &body[..body.len().min(65536)];
            for (i, pairs) in EXPORTS_SEED_PAIRS.iter().enumerate() {
                let mut seed = format!("{pairs}\n").into_bytes();
                seed.extend_from_slice(body);
                let out = corpus.join(format!("seed-{i}-{name}"));
                std::fs::write(&out, seed).map_err(|e| format!("{}: {e}", out.display()))?;
            }
        }
    }
    Ok(())
}
