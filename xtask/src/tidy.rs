//! The workspace tidy (rust-analyzer's `xtask/src/tidy.rs` is the model): tests that read the
//! source and fail naming the file and the line. `cargo test -p xtask` runs them, and so does
//! `cargo test --workspace` (what `cargo xtask test` runs first), xtask being a member.
//!
//! - `layers.rs`: the core's modules depend downward only, by the layer table in ARCHITECTURE.md.
//! - `view.rs`: the view computes nothing (the lab under `src/`, its pages under `pages/`, their kit).
//! - `file_circles.rs`: no import circle between the files of one module folder, at any depth.
//! - here: no import circle among the modules of any crate (every library, binary and page);
//!   every `.rs` file opens with a `//!` doc; ARCHITECTURE.md names every package and test
//!   suite; no `#[path]` attribute (the list of ones still to go is empty); every version pin
//!   that is written twice agrees with `versions.rs`; every word the lab asks for is in
//!   `src/i18n.rs`, in English and Chinese; the lab's own bundle names neither the importers nor
//!   the course; each package depends on the workspace packages `DEPENDS_ON` lists (the lab's
//!   manifest on neither the importers nor the course); the Chinese text writes the glossary's
//!   term for each concept (`ZH_NOT_THE_TERM` lists the words it replaced).
//!
//! They share one lexer (`lex.rs`), so every check reads source the same way.

mod file_circles;
mod layers;
mod lex;
mod view;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use layers::{dependencies, module_path, parse_root, rust_files};
use lex::{lex, Tok};

/// The workspace's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// Folders never read: build outputs, installed tools, git's own.
const SKIPPED: [&str; 9] = [
    "target",
    ".git",
    ".build",
    "dist",
    ".tools",
    "node_modules",
    "corpus",
    "artifacts",
    "coverage",
];

/// Every `.rs` file of the workspace (the fuzz targets included), relative to the root.
fn workspace_rust_files() -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("a folder reads")
            .map(|e| e.expect("an entry").path())
            .collect();
        entries.sort();
        for p in entries {
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            if p.is_dir() {
                if !SKIPPED.contains(&name.as_str()) && !name.starts_with("target") {
                    walk(&p, root, out);
                }
            } else if name.ends_with(".rs") {
                out.push(
                    p.strip_prefix(root)
                        .expect("under the root")
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), &root(), &mut out);
    out
}

// --- no import circle -------------------------------------------------------------------------

/// The circles among the top-level modules of one crate root (`lib.rs` or `main.rs` of `dir`):
/// each as the modules in it and, for each edge inside it, the file and line of the import.
fn circles(root_file: &str, files: &[(String, String)]) -> Result<Vec<String>, String> {
    let root = parse_root(root_file);
    let mut edges = Edges::new();
    for (rel, src) in files {
        let path = module_path(rel);
        let Some(unit) = path.first() else { continue };
        if path.len() == 1 && matches!(unit.as_str(), "main" | "lib")
            || !root.modules.contains(unit)
        {
            continue; // the root itself, or a file no module of this root declares
        }
        for (dep, line) in dependencies(rel, src, &root)? {
            edges
                .entry(unit.clone())
                .or_default()
                .entry(dep)
                .or_insert((rel.clone(), line));
        }
    }
    Ok(strongly_connected(&root.modules, &edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| format!("a circle among {}", circle_text(&c, &edges)))
        .collect())
}

/// Modules and the imports between them: module → (module it imports → (file, line)).
type Edges = BTreeMap<String, BTreeMap<String, (String, usize)>>;

/// A circle's modules, then each import inside it with its file and line.
fn circle_text(c: &BTreeSet<String>, edges: &Edges) -> String {
    let inside: Vec<String> = c
        .iter()
        .flat_map(|m| {
            edges
                .get(m)
                .into_iter()
                .flatten()
                .filter(|(to, _)| c.contains(*to))
                .map(|(to, (file, line))| format!("{file}:{line} uses `{to}`"))
        })
        .collect();
    format!(
        "{}: {}",
        c.iter()
            .map(|m| format!("`{m}`"))
            .collect::<Vec<_>>()
            .join(", "),
        inside.join("; ")
    )
}

/// Tarjan's strongly connected components, each sorted.
fn strongly_connected(nodes: &BTreeSet<String>, edges: &Edges) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        edges: &'a Edges,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(v: &'a str, s: &mut State<'a>) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(next) = s.edges.get(v) {
            for w in next.keys() {
                if !s.index.contains_key(w.as_str()) {
                    visit(w, s);
                    let low = s.low[v].min(s.low[w.as_str()]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w.as_str()) {
                    let low = s.low[v].min(s.index[w.as_str()]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes.iter().chain(edges.keys()) {
        if !s.index.contains_key(v.as_str()) {
            visit(v, &mut s);
        }
    }
    s.out
}

/// Every crate root of the workspace: (its root file, the folder its modules live in).
fn crate_roots() -> Vec<(String, String)> {
    let mut roots = Vec::new();
    for file in workspace_rust_files() {
        let (dir, name) = file.rsplit_once('/').unwrap_or(("", &file));
        let is_root = match name {
            "lib.rs" => dir.ends_with("src"),
            // A package's binary (`src/main.rs`, a page's `pages/NAME/src/main.rs` too).
            "main.rs" => dir.ends_with("src"),
            _ => false,
        };
        if is_root {
            roots.push((file.clone(), dir.to_string()));
        }
    }
    roots
}

#[test]
fn no_crate_has_an_import_circle() {
    let roots = crate_roots();
    for expected in [
        "crates/core/src/lib.rs",
        "crates/course/src/lib.rs",
        "crates/web/src/lib.rs",
        "src/lib.rs",
        "pages/compare/src/main.rs",
        "pages/lessons/src/main.rs",
    ] {
        assert!(
            roots.iter().any(|(f, _)| f == expected),
            "{expected} was not found among the crate roots: {roots:?}"
        );
    }
    let mut problems = Vec::new();
    for (root_file, dir) in &roots {
        let base = root().join(dir);
        let mut files = Vec::new();
        rust_files(&base, &base, &mut files);
        let text = std::fs::read_to_string(root().join(root_file)).expect("a crate root reads");
        match circles(&text, &files) {
            Ok(found) => problems.extend(found.into_iter().map(|c| format!("{dir}/: {c}"))),
            Err(e) => problems.push(format!("{dir}/: {e}")),
        }
        match file_circles::file_circles(&files) {
            Ok(found) => problems.extend(found.into_iter().map(|c| format!("{dir}/: {c}"))),
            Err(e) => problems.push(format!("{dir}/: {e}")),
        }
    }
    assert!(
        problems.is_empty(),
        "the modules of a crate must not import each other in a circle:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn a_circle_is_named_with_its_files_and_lines() {
    let lib = "mod a;\nmod b;\nmod c;\nmod d;\nfn t() {}\n";
    let files = |list: &[(&str, &str)]| {
        list.iter()
            .map(|(p, s)| (p.to_string(), s.to_string()))
            .collect::<Vec<_>>()
    };
    let found = circles(
        lib,
        &files(&[
            ("a.rs", "use crate::b::X;\n"),
            ("b.rs", "\nuse crate::c::Y;\n"),
            ("c.rs", "use crate::a;\nuse crate::t;\n"),
            ("d.rs", "use crate::a;\n"),
        ]),
    )
    .unwrap();
    assert_eq!(
        found,
        ["a circle among `a`, `b`, `c`: a.rs:1 uses `b`; b.rs:2 uses `c`; c.rs:1 uses `a`"]
    );
    // Downward only, an item of the root, and `super::` inside a test module: no circle.
    assert!(circles(
        lib,
        &files(&[
            ("a.rs", "use crate::b;\nmod tests { use super::*; }\n"),
            ("b.rs", "use crate::t;\n")
        ])
    )
    .unwrap()
    .is_empty());
    // Two modules naming each other are a circle too.
    assert_eq!(
        circles(
            lib,
            &files(&[
                ("a.rs", "fn f() { crate::b::g() }\n"),
                ("b/mod.rs", "use super::a;\n")
            ])
        )
        .unwrap()
        .len(),
        1
    );
    // A path that cannot be placed is an error.
    assert!(circles(lib, &files(&[("a.rs", "use crate::Nowhere;\n")])).is_err());
}

// --- every file opens with a module doc -------------------------------------------------------

/// Whether a file's first non-blank line is a `//!` doc.
fn opens_with_doc(src: &str) -> bool {
    src.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim_start().starts_with("//!"))
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let files = workspace_rust_files();
    assert!(files.len() > 150, "found only {} .rs files", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            !opens_with_doc(&std::fs::read_to_string(root().join(f)).expect("a source file reads"))
        })
        .map(|f| format!("{f}:1: no `//!` doc saying what the file holds"))
        .collect();
    assert!(
        missing.is_empty(),
        "every .rs file opens with a `//!` module doc:\n  {}",
        missing.join("\n  ")
    );
    assert!(opens_with_doc("\n//! Doc.\nfn f() {}\n"));
    assert!(!opens_with_doc("use std::fs;\n//! Too late.\n"));
    assert!(!opens_with_doc(
        "/// An item's doc, not the module's.\nfn f() {}\n"
    ));
}

// --- ARCHITECTURE.md names every package and test suite ---------------------------------------

/// Every manifest of the workspace (and the fuzz targets'), relative to the root: the root's,
/// each library's (`crates/*`), each page's (`pages/*`), xtask's and the fuzz targets'.
fn manifests() -> Vec<String> {
    let mut manifests = vec![
        "Cargo.toml".to_string(),
        "fuzz/Cargo.toml".to_string(),
        "xtask/Cargo.toml".to_string(),
    ];
    for folder in ["crates", "pages"] {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join(folder))
            .expect("a folder reads")
            .map(|e| e.unwrap().path())
            .collect();
        dirs.sort();
        manifests.extend(
            dirs.into_iter()
                .filter(|p| p.join("Cargo.toml").is_file())
                .map(|p| {
                    format!(
                        "{}/Cargo.toml",
                        p.strip_prefix(root()).unwrap().to_string_lossy()
                    )
                }),
        );
    }
    manifests
}

/// Every package of the workspace (and the fuzz targets' own) by its manifest: (manifest, name).
fn packages() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for manifest in manifests() {
        let text = std::fs::read_to_string(root().join(&manifest)).expect("a manifest reads");
        let mut in_package = false;
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                in_package = line == "[package]";
            } else if in_package {
                if let Some(name) = line
                    .strip_prefix("name = \"")
                    .and_then(|r| r.strip_suffix('"'))
                {
                    out.push((manifest.clone(), name.to_string()));
                }
            }
        }
    }
    out
}

/// Every integration test suite: the `.rs` files directly under a package's `tests/`.
fn test_suites() -> Vec<String> {
    workspace_rust_files()
        .into_iter()
        .filter(|f| {
            let parts: Vec<&str> = f.split('/').collect();
            parts.len() >= 2 && parts[parts.len() - 2] == "tests" && !f.starts_with("xtask/")
        })
        .collect()
}

#[test]
fn architecture_names_every_package_and_test_suite() {
    let architecture =
        std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md reads");
    let tests_section = &architecture[architecture
        .find("\n## Tests")
        .expect("ARCHITECTURE.md has a \"## Tests\" section")..];
    let packages = packages();
    assert!(packages.len() >= 7, "found only {packages:?}");
    let mut problems = Vec::new();
    for (manifest, name) in packages {
        if !architecture.contains(&format!("`{name}`")) {
            problems.push(format!(
                "{manifest}: the package `{name}` is not named in ARCHITECTURE.md"
            ));
        }
    }
    let suites = test_suites();
    assert!(suites.len() >= 20, "found only {suites:?}");
    for suite in suites {
        let file = suite.rsplit('/').next().unwrap();
        let dir = &suite[..suite.len() - file.len()];
        // Named by its file in the Tests section, under its folder's entry (`crates/core/tests/` …).
        let named = tests_section.contains(&format!("`{suite}`"))
            || tests_section.find(&format!("`{dir}`")).is_some_and(|at| {
                let entry = &tests_section[at..];
                let entry = &entry[..entry[1..].find("\n- ").map_or(entry.len(), |e| e + 1)];
                entry.contains(&format!("`{file}`"))
            });
        if !named {
            problems.push(format!(
                "{suite}: the test suite is not named in ARCHITECTURE.md's \"Tests\" section"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md must name every package and test suite:\n  {}",
        problems.join("\n  ")
    );
}

// --- #[path] ----------------------------------------------------------------------------------

/// The `#[path]` attributes still to go, each with why it is there. None is left: a file two
/// crates share is a module of a crate both depend on (the pages' kit `crates/web`, the lab's
/// library, the recorder's `crates/scripted-server`). The test fails on any new one, and on a
/// listed one that is gone, so the list stays exact.
const PATH_ATTRIBUTES_TO_GO: [(&str, usize); 0] = [];

/// The lines of a file's `#[path = …]` attributes.
fn path_attributes(src: &str) -> Vec<usize> {
    let toks = lex(src);
    toks.windows(3)
        .filter(|w| {
            w[0].0 == Tok::Punct('#')
                && w[1].0 == Tok::Punct('[')
                && w[2].0 == Tok::Ident("path".into())
        })
        .map(|w| w[0].1)
        .collect()
}

#[test]
fn no_path_attributes_beyond_the_listed_ones() {
    let allowed: BTreeMap<&str, usize> = PATH_ATTRIBUTES_TO_GO.into_iter().collect();
    let mut found: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for file in workspace_rust_files() {
        let lines = path_attributes(&std::fs::read_to_string(root().join(&file)).unwrap());
        if !lines.is_empty() {
            found.insert(file, lines);
        }
    }
    let mut problems = Vec::new();
    for (file, lines) in &found {
        if allowed.get(file.as_str()) != Some(&lines.len()) {
            for line in lines {
                problems.push(format!("{file}:{line}: a `#[path]` attribute: make the shared file a module of a crate both use"));
            }
        }
    }
    for (file, count) in &allowed {
        if found.get(*file).map_or(0, Vec::len) != *count {
            problems.push(format!(
                "{file}: listed in PATH_ATTRIBUTES_TO_GO with {count}, found {}: update the list",
                found.get(*file).map_or(0, Vec::len)
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "no `#[path]` attributes (tidy.rs, PATH_ATTRIBUTES_TO_GO):\n  {}",
        problems.join("\n  ")
    );
    assert_eq!(
        path_attributes("// #[path = \"x.rs\"]\n#[cfg(test)]\n#[path = \"y.rs\"]\nmod y;\n"),
        [3]
    );
}

// --- version pins -----------------------------------------------------------------------------

/// The value of `const NAME: &str = "…";` in `src`, with its line.
fn const_str(src: &str, name: &str) -> Option<(String, usize)> {
    src.lines().enumerate().find_map(|(i, l)| {
        let rest = l
            .trim()
            .trim_start_matches("pub ")
            .strip_prefix(&format!("const {name}: &str = \""))?;
        Some((rest.strip_suffix("\";")?.to_string(), i + 1))
    })
}

#[test]
fn version_pins_written_twice_agree() {
    use crate::versions::{DUCKDB_VERSION, KUBERNETES_VALIDATE_VERSION};
    let mut problems = Vec::new();
    for (file, name, pin) in [
        (
            "crates/recorder/tests/recorder/parquet.rs",
            "DUCKDB_VERSION",
            DUCKDB_VERSION,
        ),
        (
            "crates/recorder/tests/recorder/deploy.rs",
            "KUBERNETES_VALIDATE_VERSION",
            KUBERNETES_VALIDATE_VERSION,
        ),
    ] {
        match const_str(&std::fs::read_to_string(root().join(file)).unwrap(), name) {
            Some((v, line)) if v != pin => problems.push(format!(
                "{file}:{line}: {name} is {v}, xtask/src/versions.rs says {pin}"
            )),
            Some(_) => {}
            None => problems.push(format!("{file}: no `const {name}: &str = \"…\";` found")),
        }
    }
    // wasm-bindgen: the lab's exact pin, trunk's, and the lockfile's (the CLI is installed to match it).
    let locked = crate::tools::locked_wasm_bindgen_version().unwrap();
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let trunk = std::fs::read_to_string(root().join("Trunk.toml")).unwrap();
    for (file, text, prefix) in [
        ("Cargo.toml", &manifest, "wasm-bindgen = \"="),
        ("Trunk.toml", &trunk, "wasm_bindgen = \""),
    ] {
        match text.lines().enumerate().find_map(|(i, l)| {
            Some((
                l.strip_prefix(prefix)?.trim_end_matches('"').to_string(),
                i + 1,
            ))
        }) {
            Some((v, line)) if v != locked => problems.push(format!(
                "{file}:{line}: wasm-bindgen {v}, Cargo.lock has {locked}"
            )),
            Some(_) => {}
            None => problems.push(format!("{file}: no wasm-bindgen pin found")),
        }
    }
    assert!(
        problems.is_empty(),
        "every version pin written twice agrees:\n  {}",
        problems.join("\n  ")
    );
    assert_eq!(
        const_str("pub const X: &str = \"1.2\";\n", "X"),
        Some(("1.2".into(), 1))
    );
}

// --- the lab's words ----------------------------------------------------------------------------

/// The keys of `src/i18n.rs`'s table whose English and Chinese are both written: `("key", "en", "zh"),`.
fn word_keys(i18n: &str) -> (BTreeSet<String>, Vec<String>) {
    let (mut keys, mut problems) = (BTreeSet::new(), Vec::new());
    for (i, line) in i18n.lines().enumerate() {
        let Some(row) = line
            .trim()
            .strip_prefix("(\"")
            .and_then(|r| r.strip_suffix("),"))
        else {
            continue;
        };
        let cells: Vec<&str> = row.split("\", \"").collect();
        let key = cells[0].to_string();
        if cells.len() != 3 || cells[1].is_empty() || cells[2].trim_end_matches('"').is_empty() {
            problems.push(format!(
                "src/i18n.rs:{}: `{key}` needs its English and its Chinese",
                i + 1
            ));
        }
        if !keys.insert(key.clone()) {
            problems.push(format!("src/i18n.rs:{}: `{key}` is listed twice", i + 1));
        }
    }
    (keys, problems)
}

/// Every `tr(…, "key")` with a literal key in `src`, with its line.
fn asked_words(src: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (i, line) in src.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("tr(") {
            let before_ok =
                at == 0 || !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
            rest = &rest[at + 3..];
            if !before_ok || line.trim_start().starts_with("//") {
                continue;
            }
            // The second argument, when it is a string literal.
            let (mut depth, mut comma) = (0i32, None);
            for (j, c) in rest.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' if depth == 0 => break,
                    ')' => depth -= 1,
                    ',' if depth == 0 => {
                        comma = Some(j);
                        break;
                    }
                    _ => {}
                }
            }
            let Some(comma) = comma else { continue };
            if let Some(key) = rest[comma + 1..]
                .trim_start()
                .strip_prefix('"')
                .and_then(|r| r.split_once('"'))
                .map(|(k, _)| k)
            {
                out.push((key.to_string(), i + 1));
            }
        }
    }
    out
}

/// `src/i18n.rs` promises that every key the lab asks for is there, in both languages.
#[test]
fn every_word_the_lab_asks_for_is_there_in_both_languages() {
    let (keys, mut problems) =
        word_keys(&std::fs::read_to_string(root().join("src/i18n.rs")).unwrap());
    assert!(
        keys.len() > 100,
        "read only {} keys from src/i18n.rs",
        keys.len()
    );
    let mut asked = 0;
    for file in workspace_rust_files()
        .into_iter()
        .filter(|f| f.starts_with("src/"))
    {
        for (key, line) in asked_words(&std::fs::read_to_string(root().join(&file)).unwrap()) {
            asked += 1;
            if !keys.contains(&key) {
                problems.push(format!("{file}:{line}: `{key}` is not in src/i18n.rs (the page would show ⟨missing text⟩)"));
            }
        }
    }
    assert!(asked > 100, "found only {asked} words asked for");
    assert!(
        problems.is_empty(),
        "the lab's words:\n  {}",
        problems.join("\n  ")
    );
    assert_eq!(
        asked_words("x(tr(l, \"a\"), attr(\"b\", 1), tr(lang.get(), \"c\"), str(1, \"d\"))"),
        [("a".into(), 1), ("c".into(), 1)]
    );
    assert_eq!(
        word_keys("(\"a\", \"A\", \"甲\"),\n(\"b\", \"\", \"乙\"),\n(\"a\", \"A\", \"甲\"),\n")
            .1
            .len(),
        2
    );
}

// --- what the lab's own bundle links ------------------------------------------------------------

/// Where a file names one of `crates` (`tracelab_peers::…`), by line.
fn names_crate(src: &str, crates: &[&str]) -> Vec<(String, usize)> {
    lex(src)
        .into_iter()
        .filter_map(|(t, line)| {
            matches!(&t, Tok::Ident(n) if crates.contains(&n.as_str()))
                .then(|| (format!("{t:?}"), line))
        })
        .collect()
}

/// The lab's own bundle (`src/lib.rs`, its modules, and `src/main.rs`) reads our formats through
/// the core only: the importers and the course belong to the pages that need them (`pages/…`),
/// so the first download cannot link them by accident. (Its manifest cannot reach them either:
/// see `each_package_depends_on_what_it_is_listed_with`.)
#[test]
fn the_labs_own_bundle_names_neither_the_importers_nor_the_course() {
    let mut problems = Vec::new();
    let mut read = 0;
    for file in workspace_rust_files()
        .into_iter()
        .filter(|f| f.starts_with("src/"))
    {
        read += 1;
        for (name, line) in names_crate(
            &std::fs::read_to_string(root().join(&file)).unwrap(),
            &["tracelab_peers", "tracelab_course"],
        ) {
            problems.push(format!("{file}:{line}: {name}: the lab's first download would link it; hand the work to its second bundle (src/convert.rs)"));
        }
    }
    assert!(read >= 20, "read only {read} of the lab's files");
    assert!(
        problems.is_empty(),
        "the lab's own bundle:\n  {}",
        problems.join("\n  ")
    );
    assert_eq!(
        names_crate(
            "// tracelab_peers\nuse tracelab_peers::import;\n",
            &["tracelab_peers"]
        )
        .len(),
        1
    );
}

// --- the lab's calls into its second bundle ---------------------------------------------------

/// The names `tracelab_web::bridge::Call` gives the second bundle's functions (`Call::X => "name"`).
fn bridge_names(src: &str) -> Vec<String> {
    src.lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("Call::")?
                .split_once("=> \"")?
                .1
                .strip_suffix("\",")
                .map(str::to_string)
        })
        .collect()
}

/// The lab names its second bundle's functions through `tracelab_web::bridge::Call`, never as a
/// string at the call site, and the bundle (`pages/convert/src/main.rs`) exports each of them:
/// a renamed function fails here, not in a learner's browser.
#[test]
fn every_call_into_the_second_bundle_is_a_named_export_of_it() {
    let names =
        bridge_names(&std::fs::read_to_string(root().join("crates/web/src/bridge.rs")).unwrap());
    assert!(
        names.len() >= 5,
        "read only {names:?} from crates/web/src/bridge.rs"
    );
    let bundle = std::fs::read_to_string(root().join("pages/convert/src/main.rs")).unwrap();
    let mut problems = Vec::new();
    for name in &names {
        let exported = bundle.contains(&format!("#[wasm_bindgen]\npub fn {name}("));
        if !exported {
            problems.push(format!("pages/convert/src/main.rs: no `#[wasm_bindgen] pub fn {name}(` for tracelab_web::bridge::Call"));
        }
    }
    for file in workspace_rust_files()
        .into_iter()
        .filter(|f| f.starts_with("src/"))
    {
        for (n, line) in std::fs::read_to_string(root().join(&file))
            .unwrap()
            .lines()
            .enumerate()
        {
            if line.contains("convert::call(\"") || line.contains("call_on_trace(\"") {
                problems.push(format!("{file}:{}: a call into the second bundle by a string: name it with tracelab_web::bridge::Call", n + 1));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "the second bundle's calls:\n  {}",
        problems.join("\n  ")
    );
    assert_eq!(
        bridge_names("            Call::PeerTable => \"peer_table\",\n"),
        ["peer_table"]
    );
}

// --- which package depends on what ------------------------------------------------------------

/// The workspace packages each package depends on (`[dependencies]`, its normal ones): which
/// crate links what is a fact of each manifest, held here. The lab (`trace-lab`) reaches the core
/// and the browser kit only, so its first download cannot link the importers or the course.
const DEPENDS_ON: [(&str, &[&str]); 16] = [
    ("trace-lab", &["tracelab-core", "tracelab-web"]),
    ("tracelab-core", &[]),
    ("tracelab-peers", &["tracelab-core"]),
    ("tracelab-course", &["tracelab-core"]),
    ("tracelab-recorder", &["tracelab-core", "tracelab-peers"]),
    ("tracelab-scripted-server", &[]),
    ("tracelab-testkit", &[]),
    ("tracelab-web", &["tracelab-core"]),
    (
        "tracelab-lessons-page",
        &["tracelab-core", "tracelab-course", "tracelab-web"],
    ),
    (
        "tracelab-compare-page",
        &["tracelab-core", "tracelab-peers", "tracelab-web"],
    ),
    ("tracelab-capacity-page", &["tracelab-core", "tracelab-web"]),
    (
        "tracelab-load-model-page",
        &["tracelab-core", "tracelab-web"],
    ),
    (
        "tracelab-convert-page",
        &["tracelab-core", "tracelab-peers", "tracelab-web"],
    ),
    (
        "tracelab-bench-page",
        &["trace-lab", "tracelab-core", "tracelab-web"],
    ),
    ("xtask", &[]),
    (
        "tracelab-fuzz",
        &["tracelab-core", "tracelab-course", "tracelab-peers"],
    ),
];

/// A manifest's dependencies by section (`dependencies`, `dev-dependencies`, …; the
/// `[workspace.dependencies]` table is not a package's), each with its line.
fn manifest_dependencies(text: &str) -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    let mut section = String::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            // `[target.'cfg(…)'.dependencies]` counts as its last part.
            let last = header.rsplit('.').next().unwrap_or(header);
            section = if header.starts_with("workspace") {
                String::new()
            } else {
                last.to_string()
            };
            continue;
        }
        if !section.ends_with("dependencies") || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line
            .split(['=', '.'])
            .next()
            .map(str::trim)
            .filter(|n| !n.is_empty())
        {
            out.push((section.clone(), name.trim_matches('"').to_string(), i + 1));
        }
    }
    out
}

#[test]
fn each_package_depends_on_what_it_is_listed_with() {
    let expected: BTreeMap<&str, BTreeSet<&str>> = DEPENDS_ON
        .iter()
        .map(|(p, d)| (*p, d.iter().copied().collect()))
        .collect();
    let packages = packages();
    let ours: BTreeSet<String> = packages.iter().map(|(_, n)| n.clone()).collect();
    let mut problems = Vec::new();
    for (manifest, name) in &packages {
        let text = std::fs::read_to_string(root().join(manifest)).unwrap();
        let deps = manifest_dependencies(&text);
        let found: BTreeSet<&str> = deps
            .iter()
            .filter(|(s, d, _)| s == "dependencies" && ours.contains(d))
            .map(|(_, d, _)| d.as_str())
            .collect();
        match expected.get(name.as_str()) {
            None => problems.push(format!("{manifest}: the package `{name}` is not in DEPENDS_ON (xtask/src/tidy.rs): add it with what it may depend on")),
            Some(want) if *want != found => {
                problems.push(format!("{manifest}: `{name}` depends on {found:?}, DEPENDS_ON says {want:?}"))
            }
            Some(_) => {}
        }
        // The lab cannot link the importers or the course, not even from its tests.
        if name == "trace-lab" {
            for (section, dep, line) in &deps {
                if dep == "tracelab-peers" || dep == "tracelab-course" {
                    problems.push(format!("{manifest}:{line}: [{section}] names `{dep}`: the lab's first download must not be able to link it"));
                }
            }
        }
    }
    for (name, _) in DEPENDS_ON {
        if !ours.contains(name) {
            problems.push(format!(
                "DEPENDS_ON lists `{name}`, which is no package of the workspace"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "which package depends on what:\n  {}",
        problems.join("\n  ")
    );
    let sample = "[workspace.dependencies]\ntracelab-peers = { path = \"p\" }\n[dependencies]\ntracelab-core.workspace = true\n# tracelab-course\n[target.'cfg(unix)'.dev-dependencies]\n\"x\" = \"1\"\n";
    assert_eq!(
        manifest_dependencies(sample),
        [
            ("dependencies".to_string(), "tracelab-core".to_string(), 4),
            ("dev-dependencies".to_string(), "x".to_string(), 7)
        ]
    );
}

// --- one Chinese term per concept --------------------------------------------------------------

/// Words the Chinese text once used for a concept the glossary (`../shared/glossary.md`) or the
/// course's seed names otherwise, and phrases that read as translations: (the word, the term to
/// write instead). The one table: the course's own term test (`crates/course/tests/
/// one_term_per_concept.rs`) checks English terms and spacing and leaves these to this check.
const ZH_NOT_THE_TERM: [(&str, &str); 14] = [
    ("开环", "开放到达 (open-loop arrivals)"),
    ("首字超时", "首字前超时 (timeout before first token)"),
    ("故障点", "失败点 (failure point)"),
    ("实验台", "实验室 (the lab)"),
    ("进行中的请求", "在途请求 (requests in flight)"),
    ("指标卡", "指标口径卡 (metric card)"),
    ("延迟", "时延 (latency)"),
    ("每千次成本", "每千次合格成本 (cost per 1,000 qualified)"),
    (
        "每 1000 个合格请求的成本",
        "每千次合格成本 (cost per 1,000 qualified)",
    ),
    // Phrases that read as translations, with what a Chinese writer would say.
    ("一个发布", "一次发布 / 发布版本 (a release)"),
    ("卡坏了", "流卡住不动 (a frozen stream)"),
    ("的身份进入排序", "当作 0 秒参与排序"),
    ("多常发生", "多频繁 / 发生频率"),
    ("说话者的角色", "只带角色（role）字段"),
];

/// Each word of [`ZH_NOT_THE_TERM`] in `text`, as "line: word → term".
fn zh_terms_outside_the_glossary(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (word, term) in ZH_NOT_THE_TERM {
            if line.contains(word) {
                found.push(format!("{}: 「{word}」 → write {term}", n + 1));
            }
        }
    }
    found
}

#[test]
fn chinese_text_uses_the_glossarys_term_for_each_concept() {
    // What a learner or a user reads: the lessons, the docs and every source file (their
    // Chinese is user-facing text; the tests and this list itself are not read).
    let mut files: Vec<String> = workspace_rust_files()
        .into_iter()
        .filter(|f| !f.contains("/tests/") && !f.starts_with("tests/") && !f.starts_with("xtask/"))
        .collect();
    for dir in ["lessons", "docs"] {
        for entry in std::fs::read_dir(root().join(dir)).expect("a folder reads") {
            let name = entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned();
            if name.ends_with(".md") || name.ends_with(".json") {
                files.push(format!("{dir}/{name}"));
            }
        }
    }
    files.push("README.md".into());
    assert!(files.iter().any(|f| f == "lessons/course.json"));
    let mut problems = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(root().join(file)).expect("a file reads");
        problems.extend(
            zh_terms_outside_the_glossary(&text)
                .into_iter()
                .map(|p| format!("{file}:{p}")),
        );
    }
    assert!(
        problems.is_empty(),
        "one Chinese term per concept, the glossary's:\n  {}",
        problems.join("\n  ")
    );
    assert_eq!(
        zh_terms_outside_the_glossary("闭环\n开环的尾部，开放到达\n"),
        ["2: 「开环」 → write 开放到达 (open-loop arrivals)"]
    );
    assert!(zh_terms_outside_the_glossary("首字前超时，指标口径卡，时延").is_empty());
}
