//! The pages and their bundles: the one list of pages with bundles of their own, their builds,
//! `cargo xtask serve` and `cargo xtask build` (the release bundle, with the lab's first download
//! checked against its budget).

use std::path::Path;
use std::process::Command;

use crate::process::{root, run};
use crate::tools::{install_tools, trunk_command};
use crate::Result;

/// A page with a bundle of its own, so the lab's initial download stays small: the package
/// `pages/NAME/` (its `Cargo.toml`, `src/`, `index.html` shell and style), built by trunk into
/// `.build/NAME` and copied by the lab's build (`index.html`'s one `.build` line) to `dist/NAME/`,
/// served at `/NAME/`. Adding a page is its folder and one line here.
pub(crate) struct Page {
    pub name: &'static str,
    /// Whether its files are named with hashes. The lab imports `convert/convert.js` by name
    /// (src/convert.rs), so that bundle has none.
    pub hashed: bool,
    /// Its browser test (`tests/NAME.rs` of the lab's package), run after the lab's; `None` when
    /// the lab's test covers it.
    pub test: Option<&'static str>,
}

/// Every page with a bundle of its own: the one list (the builds, the browser tests).
pub(crate) const PAGES: [Page; 6] = [
    Page {
        name: "lessons",
        hashed: true,
        test: Some("lessons"),
    },
    Page {
        name: "compare",
        hashed: true,
        test: Some("compare"),
    },
    Page {
        name: "capacity",
        hashed: true,
        test: Some("capacity"),
    },
    Page {
        name: "load-model",
        hashed: true,
        test: Some("loadmodel"),
    },
    // Its canvas views are tested on the lab with a big trace (`tests/charts.rs`).
    Page {
        name: "convert",
        hashed: false,
        test: Some("charts"),
    },
    Page {
        name: "bench",
        hashed: true,
        test: None,
    },
];

/// `--test lab --test lessons …`: the lab's browser test, then each page's, then axe-core's
/// accessibility check over every page (`tests/a11y.rs`).
pub(crate) fn browser_tests() -> Vec<String> {
    std::iter::once("lab")
        .chain(PAGES.iter().filter_map(|p| p.test))
        .chain(std::iter::once("a11y"))
        .flat_map(|t| ["--test".to_string(), t.to_string()])
        .collect()
}

pub(crate) fn build_pages(release: bool) -> Result {
    // Only the listed pages: a page removed from the list leaves nothing behind in dist/.
    let build = root().join(".build");
    if build.is_dir() {
        std::fs::remove_dir_all(&build)
            .map_err(|e| format!("cannot clear {}: {e}", build.display()))?;
    }
    for Page { name, hashed, .. } in PAGES {
        let mut cmd = trunk_command();
        let html = format!("pages/{name}/index.html");
        let dist = format!(".build/{name}");
        let url = format!("/{name}/");
        cmd.args(["build", &html, "--dist", &dist, "--public-url", &url]);
        if !hashed {
            cmd.args(["--filehash", "false"]);
        }
        if release {
            cmd.args(["--release", "true"]);
        }
        run(&mut cmd)?;
    }
    Ok(())
}

pub(crate) fn serve(rest: &[String]) -> Result {
    install_tools(false)?;
    build_pages(false)?;
    eprintln!("xtask: the lab will be on http://127.0.0.1:8080 (Ctrl-C stops it)");
    run(trunk_command().arg("serve").args(rest))
}

/// Builds `dist/` for release and returns the gzipped size of what a browser downloads first.
/// What a learner's browser downloads first (html + wasm + js + css, gzipped), at most: a
/// classroom on a slow network opens the lab in seconds. A budget, not a timing: `cargo xtask
/// build` (and so the test command) fails past it.
pub(crate) const INITIAL_DOWNLOAD_BUDGET: u64 = 400_000;

pub(crate) fn build_release() -> Result<u64> {
    install_tools(false)?;
    build_pages(true)?;
    run(trunk_command().args(["build", "--release"]))?;
    let dist = root().join("dist");
    let mut total = 0;
    for entry in
        std::fs::read_dir(&dist).map_err(|e| format!("cannot read {}: {e}", dist.display()))?
    {
        let path = entry.map_err(|e| e.to_string())?.path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ["wasm", "js", "css", "html"].contains(&ext) {
            let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
            let size = gzip_size(&path, bytes.len() as u64);
            eprintln!(
                "xtask:   {:<48} {:>9} B raw {:>9} B gzip",
                path.file_name().unwrap().to_string_lossy(),
                bytes.len(),
                size
            );
            total += size;
        }
    }
    eprintln!(
        "xtask: initial download (html + wasm + js + css, gzip -9): {total} B ({:.1} KiB)",
        total as f64 / 1024.0
    );
    if total > INITIAL_DOWNLOAD_BUDGET {
        return Err(format!(
            "the lab's initial download is {total} B gzipped, over its budget of {INITIAL_DOWNLOAD_BUDGET} B: move what a first \
             visit does not need into the second bundle (pages/convert, loaded on first use) or a page of its own (see ARCHITECTURE.md)"
        ));
    }
    // Named from the one page list, so a new page shows up here by itself.
    let pages: Vec<&str> = PAGES
        .iter()
        .map(|p| p.name)
        .filter(|n| *n != "convert")
        .collect();
    eprintln!(
        "xtask: (the {} pages under dist/NAME/ are separate bundles, loaded only there; dist/convert/, the importers and download writers, is fetched on first use)",
        pages.join(", ")
    );
    Ok(total)
}

pub(crate) fn gzip_size(path: &Path, fallback: u64) -> u64 {
    Command::new("gzip")
        .args(["-9", "-c"])
        .arg(path)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| o.stdout.len() as u64)
        .unwrap_or(fallback)
}
