//! `cargo xtask`: the project's automation, in Rust so it runs wherever cargo does.
//!
//! - `cargo xtask serve`  — install what is missing, build the lab, serve it on 127.0.0.1:8080.
//! - `cargo xtask test`   — install what is missing, run every test: the workspace's unit and
//!   integration tests, the recorder against llama.cpp's real server, then the lab end to end
//!   in headless Chromium.
//! - `cargo xtask build`  — the release bundle in `dist/`, with its gzipped size.
//! - `cargo xtask bench`  — the core's criterion benchmarks.
//! - `cargo xtask bench-recorder` — the recorder's fidelity benchmark.
//! - `cargo xtask bench-lab [N]` — the browser benchmark over N attempts in headless Chromium.
//! - `cargo xtask fixtures` — the real fixtures the tests read, fetched into the per-user cache
//!   when no `../shared/fixtures/` is beside the repository (`fixtures.rs`).
//! - `cargo xtask fuzz [SECONDS]` — each fuzz target in `fuzz/` for SECONDS (default 60), with
//!   the total executions and anything found.
//!
//! Tools come from the package registries only (nothing else is reachable on the course
//! machines): trunk and wasm-bindgen-cli from crates.io, Chromium from Debian's packages,
//! llama.cpp's server (llama-cpp-python) from PyPI.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod fixtures;

/// trunk 0.22 needs a newer rustc than the course machines have.
const TRUNK_VERSION: &str = "0.21.14";
/// llama.cpp's OpenAI-compatible server from PyPI, for the recorder's real-server test, and the
/// `gguf` package that writes the test's tiny model.
const LLAMA_CPP_PYTHON_VERSION: &str = "0.3.36";
const GGUF_VERSION: &str = "0.19.0";

type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("help");
    let rest = &args[args.len().min(1)..];
    let result = match task {
        "serve" => serve(rest),
        "test" => test(rest),
        "build" => build_release().map(|_| ()),
        "bench" => bench(),
        "bench-recorder" => bench_recorder(),
        "bench-lab" => bench_lab(rest),
        "install" => install_tools(true),
        "fuzz" => fuzz(rest),
        "fixtures" => fixtures_folder().map(|dir| println!("{}", dir.display())),
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
         bench-lab [N]    the browser benchmark: parse, load and recompute N attempts (default 1,000,000)\n\
         install          install the tools only (wasm target, trunk, wasm-bindgen-cli, Chromium)\n\
         fixtures         fetch the real fixtures the tests read into ~/.cache/tracelab/fixtures (when ../shared/fixtures is absent)\n\
         fuzz [SECONDS]   run each fuzz target (fuzz/, cargo-fuzz on nightly) for SECONDS, default 60"
    );
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

fn cargo() -> String {
    env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn cargo_bin_dir() -> PathBuf {
    let home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env::var("HOME").unwrap_or_else(|_| "/root".into())).join(".cargo"));
    home.join("bin")
}

/// Runs a command, echoing it, and fails with its exit status.
fn run(cmd: &mut Command) -> Result {
    eprintln!("xtask: $ {}", describe(cmd));
    let status = cmd.status().map_err(|e| format!("could not start `{}`: {e}", describe(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", describe(cmd)))
    }
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// The stdout of a command, or None when it cannot run.
fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn trunk_command() -> Command {
    let mut cmd = Command::new("trunk");
    // trunk must not try to download anything: the tools are on PATH at the right versions.
    cmd.env("TRUNK_OFFLINE", "true").env("TRUNK_SKIP_VERSION_CHECK", "true").current_dir(root());
    cmd
}

/// The wasm-bindgen version the lab is locked to (it must equal the CLI's).
fn locked_wasm_bindgen_version() -> Result<String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == "name = \"wasm-bindgen\"" {
            if let Some(v) = lines.next().and_then(|l| l.strip_prefix("version = \"")) {
                return Ok(v.trim_end_matches('"').to_string());
            }
        }
    }
    Err("Cargo.lock has no wasm-bindgen entry; run `cargo generate-lockfile`".into())
}

/// Puts `dir` first on this process's PATH (children inherit it).
fn prepend_path(dir: PathBuf) -> Result {
    let path = env::var_os("PATH").unwrap_or_default();
    let mut paths: Vec<PathBuf> = env::split_paths(&path).filter(|p| *p != dir).collect();
    paths.insert(0, dir);
    env::set_var("PATH", env::join_paths(paths).map_err(|e| e.to_string())?);
    Ok(())
}

/// binaryen's `wasm-opt` shrinks the release bundle; Debian's (108) is too old for the wasm
/// that Rust 1.95 emits, so a current one comes from the npm registry into `.tools/`.
const BINARYEN_VERSION: &str = "132";

fn ensure_wasm_opt() -> Result {
    let dir = root().join(".tools/binaryen");
    prepend_path(dir.join("node_modules/.bin"))?;
    let have = output("wasm-opt", &["--version"]).unwrap_or_default();
    let version = have.split_whitespace().nth(2).and_then(|v| v.parse::<u32>().ok()).unwrap_or(0);
    if version >= 118 {
        return Ok(());
    }
    if output("npm", &["--version"]).is_none() {
        apt_install(&["nodejs", "npm"])?;
    }
    eprintln!("xtask: installing wasm-opt (binaryen {BINARYEN_VERSION}) from the npm registry into .tools/");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    run(Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&dir)
        .arg(format!("binaryen@{BINARYEN_VERSION}")))
}

fn install_tools(with_browser: bool) -> Result {
    // Tools installed by cargo land here; make sure this process and its children see them.
    prepend_path(cargo_bin_dir())?;

    let targets = output("rustup", &["target", "list", "--installed"]).unwrap_or_default();
    if !targets.lines().any(|l| l.trim() == "wasm32-unknown-unknown") {
        run(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))?;
    }

    let trunk = output("trunk", &["--version"]).unwrap_or_default();
    if !trunk.contains(TRUNK_VERSION) {
        eprintln!("xtask: installing trunk {TRUNK_VERSION} (a few minutes, once)");
        run(Command::new(cargo()).args(["install", "trunk", "--version", TRUNK_VERSION, "--locked"]))?;
    }

    let wanted = locked_wasm_bindgen_version()?;
    let have = output("wasm-bindgen", &["--version"]).unwrap_or_default();
    if !have.split_whitespace().any(|w| w == wanted) {
        eprintln!("xtask: installing wasm-bindgen-cli {wanted} to match Cargo.lock (a few minutes, once)");
        // Not --locked: the registry mirror can lag the CLI's own lockfile.
        run(Command::new(cargo()).args(["install", "wasm-bindgen-cli", "--version", &wanted, "--force"]))?;
    }

    ensure_wasm_opt()?;
    if with_browser {
        ensure_chromium()?;
    }
    Ok(())
}

fn chromium_paths() -> (PathBuf, PathBuf) {
    let chrome = env::var_os("CHROME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    let driver =
        env::var_os("CHROMEDRIVER").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/usr/bin/chromedriver"));
    (chrome, driver)
}

/// Installs Debian packages (as root, or through `sudo -n`).
fn apt_install(packages: &[&str]) -> Result {
    let is_root = output("id", &["-u"]).map(|s| s.trim() == "0").unwrap_or(false);
    let apt = |args: &[&str]| -> Command {
        let mut cmd = if is_root {
            Command::new("apt-get")
        } else {
            let mut c = Command::new("sudo");
            c.arg("-n").arg("apt-get");
            c
        };
        cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        cmd
    };
    run(&mut apt(&["update"]))
        .and_then(|_| run(apt(&["install", "-y", "--no-install-recommends"]).args(packages)))
        .map_err(|e| format!("{e}\nInstall them by hand: `sudo apt-get install {}`", packages.join(" ")))
}

fn ensure_chromium() -> Result {
    let (chrome, driver) = chromium_paths();
    if chrome.exists() && driver.exists() {
        return Ok(());
    }
    eprintln!("xtask: installing Chromium and its driver from Debian's packages (once)");
    apt_install(&["chromium", "chromium-driver", "fonts-noto-cjk"])
        .map_err(|e| format!("{e}, or point CHROME and CHROMEDRIVER at a matching pair"))?;
    if !(chrome.exists() && driver.exists()) {
        return Err(format!("Chromium was installed but {} or {} is still missing", chrome.display(), driver.display()));
    }
    Ok(())
}

/// The pages with bundles of their own, so the lab's initial download stays small: each is
/// built by trunk into `.build/NAME` and copied by the lab's build to `dist/NAME/`.
const PAGES: [(&str, &str); 5] = [
    ("lessons.html", "lessons"),
    ("compare.html", "compare"),
    ("loadmodel.html", "load-model"),
    ("convert.html", "convert"),
    ("bench.html", "bench"),
];

fn build_pages(release: bool) -> Result {
    for (html, name) in PAGES {
        let mut cmd = trunk_command();
        let dist = format!(".build/{name}");
        let url = format!("/{name}/");
        cmd.args(["build", html, "--dist", &dist, "--public-url", &url]);
        if name == "convert" {
            // The lab imports `convert/convert.js` by name (src/convert.rs): no hashes in names.
            cmd.args(["--filehash", "false"]);
        }
        if release {
            cmd.args(["--release", "true"]);
        }
        run(&mut cmd)?;
    }
    Ok(())
}

fn serve(rest: &[String]) -> Result {
    install_tools(false)?;
    build_pages(false)?;
    eprintln!("xtask: the lab will be on http://127.0.0.1:8080 (Ctrl-C stops it)");
    run(trunk_command().arg("serve").args(rest))
}

/// Builds `dist/` for release and returns the gzipped size of what a browser downloads first.
/// What a learner's browser downloads first (html + wasm + js + css, gzipped), at most: a
/// classroom on a slow network opens the lab in seconds. A budget, not a timing: `cargo xtask
/// build` (and so the test command) fails past it.
const INITIAL_DOWNLOAD_BUDGET: u64 = 400_000;

fn build_release() -> Result<u64> {
    install_tools(false)?;
    build_pages(true)?;
    run(trunk_command().args(["build", "--release"]))?;
    let dist = root().join("dist");
    let mut total = 0;
    for entry in std::fs::read_dir(&dist).map_err(|e| format!("cannot read {}: {e}", dist.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ["wasm", "js", "css", "html"].contains(&ext) {
            let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
            let size = gzip_size(&path, bytes.len() as u64);
            eprintln!("xtask:   {:<48} {:>9} B raw {:>9} B gzip", path.file_name().unwrap().to_string_lossy(), bytes.len(), size);
            total += size;
        }
    }
    eprintln!("xtask: initial download (html + wasm + js + css, gzip -9): {total} B ({:.1} KiB)", total as f64 / 1024.0);
    if total > INITIAL_DOWNLOAD_BUDGET {
        return Err(format!(
            "the lab's initial download is {total} B gzipped, over its budget of {INITIAL_DOWNLOAD_BUDGET} B: move what a first \
             visit does not need into the second bundle (src/bin/convert, loaded on first use) or a page of its own (see ARCHITECTURE.md)"
        ));
    }
    eprintln!("xtask: (the lessons, compare, load-model and bench pages under dist/NAME/ are separate bundles, loaded only there; dist/convert/, the importers and download writers, is fetched on first use)");
    Ok(total)
}

fn gzip_size(path: &Path, fallback: u64) -> u64 {
    Command::new("gzip")
        .args(["-9", "-c"])
        .arg(path)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| o.stdout.len() as u64)
        .unwrap_or(fallback)
}

/// `${XDG_CACHE_HOME:-~/.cache}/tracelab`: heavy installs, kept outside the clone, keyed by version.
fn cache_dir() -> PathBuf {
    match env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env::var("HOME").unwrap_or_else(|_| "/root".into())).join(".cache"),
    }
    .join("tracelab")
}

/// Whether `python` runs and imports what the real-server test needs.
fn llama_env_works(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import llama_cpp.server, gguf"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A Python virtual environment with llama-cpp-python's server and `gguf`, built once (llama.cpp
/// compiles from source: ~12 minutes on 2 cores) and reused; returns its python.
fn ensure_llama_server() -> Result<PathBuf> {
    let venv = cache_dir().join(format!("llama-cpp-python-{LLAMA_CPP_PYTHON_VERSION}"));
    let python = venv.join("bin").join("python");
    if llama_env_works(&python) {
        return Ok(python);
    }
    eprintln!(
        "xtask: installing llama.cpp's server (llama-cpp-python {LLAMA_CPP_PYTHON_VERSION}) into {}: it compiles llama.cpp, \
         about 12 minutes on 2 cores, once",
        venv.display()
    );
    if output("python3", &["-c", "import venv, ensurepip"]).is_none() || output("c++", &["--version"]).is_none() {
        apt_install(&["python3-venv", "python3-dev", "build-essential", "cmake"])?;
    }
    // --clear: a half-made or stale environment (another Python) is started afresh.
    let runs = Command::new(&python).args(["-c", "pass"]).status().is_ok_and(|s| s.success());
    let mut create = Command::new("python3");
    create.arg("-m").arg("venv");
    if !runs {
        create.arg("--clear");
    }
    run(create.arg(&venv))?;
    run(Command::new(&python).args(["-m", "pip", "install", "--disable-pip-version-check"]).args([
        format!("llama-cpp-python[server]=={LLAMA_CPP_PYTHON_VERSION}"),
        format!("gguf=={GGUF_VERSION}"),
    ]))?;
    if !llama_env_works(&python) {
        return Err(format!("{} was installed but `import llama_cpp.server, gguf` still fails in it", venv.display()));
    }
    Ok(python)
}

/// Python tools from PyPI that tests use, each in a venv under ~/.cache/tracelab/<name>-<version>/
/// made once: DuckDB reads the Parquet export back; kubernetes-validate checks deploy/kubernetes/
/// against the Kubernetes schemas it ships. Keep the versions in step with
/// crates/recorder/tests/recorder/{parquet,deploy}.rs.
const DUCKDB_VERSION: &str = "2.0.0";
const KUBERNETES_VALIDATE_VERSION: &str = "1.37.0";

/// The venv's directory, with `package==version` importable as `module`.
fn ensure_venv(package: &str, version: &str, module: &str) -> Result<PathBuf> {
    let venv = cache_dir().join(format!("{package}-{version}"));
    let python = venv.join("bin/python");
    let ready = Command::new(&python).args(["-c", &format!("import {module}")]).output().is_ok_and(|o| o.status.success());
    if !ready {
        run(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
        run(Command::new(&python).args(["-m", "pip", "install", "--quiet", &format!("{package}=={version}")]))?;
    }
    Ok(venv)
}

/// The folder every test reads the real fixtures from (passed on as `TRACELAB_FIXTURES`).
fn fixtures_folder() -> Result<PathBuf> {
    fixtures::ensure(&root(), &cache_dir())
}

fn test(rest: &[String]) -> Result {
    // First, so a clone without the fixtures fails in seconds with what to fetch, not after the installs.
    let fixtures = fixtures_folder()?;
    install_tools(true)?;
    let llama_python = ensure_llama_server()?;
    let duckdb = ensure_venv("duckdb", DUCKDB_VERSION, "duckdb")?.join("bin/python");
    let kubernetes_validate = ensure_venv("kubernetes-validate", KUBERNETES_VALIDATE_VERSION, "kubernetes_validate")?.join("bin");
    // Unit, integration, property and process tests of every crate (native).
    run(Command::new(cargo())
        .args(["test", "--workspace", "--locked"])
        .args(rest)
        .env("TRACELAB_FIXTURES", &fixtures)
        .env("TRACELAB_DUCKDB_PYTHON", &duckdb)
        .env("TRACELAB_KUBERNETES_VALIDATE", &kubernetes_validate)
        .current_dir(root()))?;
    // The recorder against a real llama.cpp server (its own model, generated by the test).
    run(Command::new(cargo())
        .args(["test", "--locked", "-p", "tracelab-recorder", "--test", "recorder", "llama::", "--", "--ignored", "--test-threads=1"])
        .env("TRACELAB_LLAMA_PYTHON", &llama_python)
        .env("TRACELAB_FIXTURES", &fixtures)
        .current_dir(root()))?;
    // A short smoke of each fuzz target: the readers and exports on the seeds and a few
    // thousand mutations (the long runs are `cargo xtask fuzz`).
    run_fuzzers(FUZZ_SMOKE_SECONDS)?;
    // The core must also build for the browser.
    build_release()?;
    let (chrome, driver) = chromium_paths();
    // The lab in headless Chromium, against the release bundle just built.
    run(Command::new(cargo())
        .args(["test", "--locked", "-p", "trace-lab", "--test", "lab", "--test", "lessons", "--test", "compare", "--test", "loadmodel", "--", "--ignored", "--test-threads=1"])
        .env("TRACELAB_DIST", root().join("dist"))
        .env("TRACELAB_FIXTURES", &fixtures)
        .env("CHROME", chrome)
        .env("CHROMEDRIVER", driver)
        .current_dir(root()))?;
    eprintln!("xtask: every test passed");
    Ok(())
}

fn bench() -> Result {
    run(Command::new(cargo()).args(["bench", "-p", "tracelab-core", "--bench", "metrics"]).current_dir(root()))
}

fn bench_lab(rest: &[String]) -> Result {
    let n = rest.first().cloned().unwrap_or_else(|| "1000000".into());
    install_tools(true)?;
    build_release()?;
    let (chrome, driver) = chromium_paths();
    run(Command::new(cargo())
        .args(["test", "--release", "--locked", "-p", "trace-lab", "--test", "lab", "the_benchmark_page", "--", "--ignored", "--nocapture"])
        .env("TRACELAB_DIST", root().join("dist"))
        .env("TRACELAB_BENCH_N", n)
        .env("CHROME", chrome)
        .env("CHROMEDRIVER", driver)
        .current_dir(root()))
}

fn bench_recorder() -> Result {
    run(Command::new(cargo()).args(["bench", "-p", "tracelab-recorder", "--bench", "fidelity"]).current_dir(root()))
}

/// The fuzz targets in `fuzz/` (see `fuzz/fuzz_targets/`).
const FUZZ_TARGETS: [&str; 3] = ["parse_trace", "load_peer", "exports"];
/// Seconds each target runs inside `cargo xtask test`.
const FUZZ_SMOKE_SECONDS: u64 = 5;
const CARGO_FUZZ_VERSION: &str = "0.13.2";
/// Permalink pairs prepended to the `exports` target's seeds (its first line sets the settings).
const EXPORTS_SEED_PAIRS: [&str; 3] = [
    "t=2&cmp=le&pm=nearest-rank&p=95",
    "t=0.5&cmp=lt&pm=linear&p=100&fd=failed_rows_deleted&mt=treat_as_zero&wu=include&w=10&cost=2&cur=CNY",
    "t=0&pm=higher&p=0.001&fd=successes&w=0.000001&cost=1000000000000",
];

fn fuzz(rest: &[String]) -> Result {
    let seconds = match rest.first() {
        Some(s) => s.parse::<u64>().map_err(|_| format!("`{s}` is not a number of seconds"))?,
        None => 60,
    };
    run_fuzzers(seconds)
}

/// The nightly toolchain cargo-fuzz builds with (installed with rustup when missing), and
/// cargo-fuzz itself from crates.io.
fn ensure_cargo_fuzz() -> Result<String> {
    let list = output("rustup", &["toolchain", "list"]).ok_or("the fuzz targets need rustup (they build on nightly)")?;
    let nightly = list.lines().filter_map(|l| l.split_whitespace().next()).find(|t| t.starts_with("nightly")).map(str::to_string);
    let nightly = match nightly {
        Some(n) => n,
        None => {
            run(Command::new("rustup").args(["toolchain", "install", "nightly", "--profile", "minimal"]))?;
            "nightly".to_string()
        }
    };
    let installed = output(&cargo(), &["fuzz", "--version"]).is_some_and(|v| v.contains(CARGO_FUZZ_VERSION));
    if !installed {
        run(Command::new(cargo()).args(["install", "cargo-fuzz", "--locked", "--version", CARGO_FUZZ_VERSION]))?;
    }
    Ok(nightly)
}

/// Runs each fuzz target for `seconds`, seeded from our samples, the constructed fixtures and
/// the real peer files read in place; prints the executions of each and their total, and fails
/// when a target finds a crash (the input is left in `fuzz/artifacts/<target>/`).
fn run_fuzzers(seconds: u64) -> Result {
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
        cmd.args(["run", &nightly, "cargo", "fuzz", "run", "--sanitizer", "none", target])
            .arg(&corpus)
            .current_dir(&fuzz_dir);
        if target == "exports" {
            // Its input starts with a line of permalink pairs: seed copies of the files with one.
            write_exports_seeds(&seeds, &corpus)?;
        } else {
            cmd.args(seeds.iter().filter(|s| s.is_dir()));
        }
        // Large seeds (a 1 MB vLLM result) are cut to 64 KiB: cut-off files are inputs too.
        cmd.args(["--", &format!("-max_total_time={seconds}"), "-max_len=65536", "-timeout=10", "-rss_limit_mb=4096"]);
        if seconds <= FUZZ_SMOKE_SECONDS {
            // The smoke in `cargo xtask test` mutates from a fixed seed, so a red CI is a
            // reproducible finding, not luck; the long runs explore afresh each time.
            cmd.arg("-seed=1");
        }
        eprintln!("xtask: $ {}", describe(&cmd));
        let out = cmd.output().map_err(|e| format!("could not start cargo fuzz: {e}"))?;
        let log = String::from_utf8_lossy(&out.stderr);
        let runs = log
            .lines()
            .filter_map(|l| l.strip_prefix("Done ").and_then(|r| r.split_whitespace().next()).and_then(|n| n.parse::<u64>().ok()))
            .last();
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
    eprintln!("xtask: fuzz: {total} executions in total over {} targets", FUZZ_TARGETS.len());
    if found.is_empty() {
        Ok(())
    } else {
        Err(format!("fuzz targets failed: {} (inputs in fuzz/artifacts/)", found.join(", ")))
    }
}

/// Seeds for the `exports` target: each seed file after a line of permalink pairs.
fn write_exports_seeds(seeds: &[PathBuf], corpus: &Path) -> Result {
    for dir in seeds.iter().filter(|s| s.is_dir()) {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name.ends_with(".md") || !path.is_file() {
                continue;
            }
            let Ok(body) = std::fs::read(&path) else { continue };
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
