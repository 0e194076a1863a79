//! `cargo xtask install`: the tools the lab's build and its browser tests need, installed when
//! missing from the package registries (trunk and wasm-bindgen-cli from crates.io, binaryen's
//! `wasm-opt` from npm, Chromium from Debian's packages).

use std::env;
use std::path::PathBuf;
use std::process::Command;

use crate::process::{
    apt_install, cache_dir, cargo, cargo_bin_dir, output, prepend_path, root, run,
};
use crate::versions::{AXE_CORE_VERSION, BINARYEN_VERSION, TRUNK_VERSION};
use crate::Result;

pub(crate) fn trunk_command() -> Command {
    let mut cmd = Command::new("trunk");
    // trunk must not try to download anything: the tools are on PATH at the right versions.
    cmd.env("TRUNK_OFFLINE", "true")
        .env("TRUNK_SKIP_VERSION_CHECK", "true")
        .current_dir(root());
    cmd
}

/// The wasm-bindgen version the lab is locked to (it must equal the CLI's).
pub(crate) fn locked_wasm_bindgen_version() -> Result<String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock"))
        .map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
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

pub(crate) fn ensure_wasm_opt() -> Result {
    let dir = root().join(".tools/binaryen");
    prepend_path(dir.join("node_modules/.bin"))?;
    let have = output("wasm-opt", &["--version"]).unwrap_or_default();
    let version = have
        .split_whitespace()
        .nth(2)
        .and_then(|v| v.parse::<u32>().ok())
        .unwrap_or(0);
    if version >= 118 {
        return Ok(());
    }
    eprintln!("xtask: installing wasm-opt (binaryen {BINARYEN_VERSION}) from the npm registry into .tools/");
    npm_install(&dir, &format!("binaryen@{BINARYEN_VERSION}"))
}

/// `npm install` of one package into `dir` (its own `node_modules/`), with Debian's nodejs and
/// npm installed first when there is no npm.
fn npm_install(dir: &std::path::Path, package: &str) -> Result {
    if output("npm", &["--version"]).is_none() {
        apt_install(&["nodejs", "npm"])?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    run(Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(dir)
        .arg(package))
}

/// axe-core's script for the accessibility check, from the npm registry into the user's cache
/// (once per version): the path the browser tests read as `AXE_JS`.
pub(crate) fn ensure_axe_core() -> Result<PathBuf> {
    let dir = cache_dir().join(format!("axe-core-{AXE_CORE_VERSION}"));
    let script = dir.join("node_modules/axe-core/axe.min.js");
    if script.is_file() {
        return Ok(script);
    }
    eprintln!(
        "xtask: installing axe-core {AXE_CORE_VERSION} from the npm registry into {}",
        dir.display()
    );
    npm_install(&dir, &format!("axe-core@{AXE_CORE_VERSION}"))?;
    if script.is_file() {
        Ok(script)
    } else {
        Err(format!(
            "npm installed axe-core {AXE_CORE_VERSION}, but {} is not there",
            script.display()
        ))
    }
}

pub(crate) fn install_tools(with_browser: bool) -> Result {
    // Tools installed by cargo land here; make sure this process and its children see them.
    prepend_path(cargo_bin_dir())?;

    let targets = output("rustup", &["target", "list", "--installed"]).unwrap_or_default();
    if !targets
        .lines()
        .any(|l| l.trim() == "wasm32-unknown-unknown")
    {
        run(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))?;
    }

    let trunk = output("trunk", &["--version"]).unwrap_or_default();
    if !trunk.contains(TRUNK_VERSION) {
        eprintln!("xtask: installing trunk {TRUNK_VERSION} (a few minutes, once)");
        run(Command::new(cargo()).args([
            "install",
            "trunk",
            "--version",
            TRUNK_VERSION,
            "--locked",
        ]))?;
    }

    let wanted = locked_wasm_bindgen_version()?;
    let have = output("wasm-bindgen", &["--version"]).unwrap_or_default();
    if !have.split_whitespace().any(|w| w == wanted) {
        eprintln!(
            "xtask: installing wasm-bindgen-cli {wanted} to match Cargo.lock (a few minutes, once)"
        );
        // Not --locked: the registry mirror can lag the CLI's own lockfile.
        run(Command::new(cargo()).args([
            "install",
            "wasm-bindgen-cli",
            "--version",
            &wanted,
            "--force",
        ]))?;
    }

    ensure_wasm_opt()?;
    if with_browser {
        ensure_chromium()?;
    }
    Ok(())
}

pub(crate) fn chromium_paths() -> (PathBuf, PathBuf) {
    let chrome = env::var_os("CHROME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    let driver = env::var_os("CHROMEDRIVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromedriver"));
    (chrome, driver)
}

pub(crate) fn ensure_chromium() -> Result {
    let (chrome, driver) = chromium_paths();
    if chrome.exists() && driver.exists() {
        return Ok(());
    }
    eprintln!("xtask: installing Chromium and its driver from Debian's packages (once)");
    apt_install(&["chromium", "chromium-driver", "fonts-noto-cjk"])
        .map_err(|e| format!("{e}, or point CHROME and CHROMEDRIVER at a matching pair"))?;
    if !(chrome.exists() && driver.exists()) {
        return Err(format!(
            "Chromium was installed but {} or {} is still missing",
            chrome.display(),
            driver.display()
        ));
    }
    Ok(())
}
