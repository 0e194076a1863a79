//! The core's modules depend downward only (rust-analyzer's "tidy" style: a test that reads the
//! source). The layer table lives in one place, ARCHITECTURE.md ("The core's layers"); this test
//! reads it, finds every `crate::…` and `super::…` path in every file under `crates/core/src/`,
//! maps it to a top-level module and fails when a module names one of its own layer or a higher
//! one. Strictly lower layers only, so the module graph is a DAG by construction. Unit tests
//! inside a module follow the same rule (a test that needs a higher layer belongs in `tests/`).
//!
//! The scanner is a small lexer, not a parser: it skips comments, strings and character
//! literals, tracks inline `mod name { … }` blocks (so `super::` resolves), expands
//! `use crate::{a::x, b}` groups, and resolves `crate::Name` through lib.rs's `pub use`
//! re-exports. A path it cannot place is an error, never skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One top-level module's place in the table.
#[derive(Debug, Clone, PartialEq)]
struct Layers {
    /// module → layer number (0 is the bottom).
    of: BTreeMap<String, usize>,
}

/// Reads the table under the heading that contains "The core's layers": rows
/// `| N | `a`, `b` | … |`, the modules named in backticks in the second cell.
fn parse_layers(markdown: &str) -> Result<Layers, String> {
    let mut lines = markdown.lines();
    lines
        .by_ref()
        .find(|l| l.starts_with('#') && l.contains("The core's layers"))
        .ok_or("ARCHITECTURE.md has no heading \"The core's layers\"")?;
    let mut of = BTreeMap::new();
    let mut in_table = false;
    for line in lines {
        let line = line.trim();
        if !line.starts_with('|') {
            if in_table {
                break; // the table ended
            }
            if line.starts_with('#') {
                break; // the next section, and no table met
            }
            continue;
        }
        in_table = true;
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let Ok(layer) = cells[0].parse::<usize>() else {
            continue;
        }; // the header and the rule
        let names = cells
            .get(1)
            .ok_or_else(|| format!("layer {layer}: the row has no modules cell"))?;
        let mut found = false;
        for (i, part) in names.split('`').enumerate() {
            if i % 2 == 1 {
                found = true;
                if let Some(before) = of.insert(part.to_string(), layer) {
                    return Err(format!(
                        "`{part}` is listed twice (layers {before} and {layer})"
                    ));
                }
            }
        }
        if !found {
            return Err(format!(
                "layer {layer} names no module (write them in backticks)"
            ));
        }
    }
    if of.is_empty() {
        return Err("the layer table under \"The core's layers\" is empty".into());
    }
    Ok(Layers { of })
}

use super::lex::{group_heads, lex, Tok};

/// The crate's shape, read from lib.rs: its modules and what its `pub use` lines re-export.
pub(super) struct Root {
    pub(super) modules: BTreeSet<String>,
    /// A re-exported name (`Metrics`) → the module it comes from (`metrics`).
    reexports: BTreeMap<String, String>,
    /// Items the root file defines itself (`fn t`, `const CARD_KIND`): a path to one names no module.
    defined: BTreeSet<String>,
}

pub(super) fn parse_root(lib_rs: &str) -> Root {
    let toks = lex(lib_rs);
    let ident = |i: usize| match toks.get(i) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let (mut modules, mut reexports, mut defined) =
        (BTreeSet::new(), BTreeMap::new(), BTreeSet::new());
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => depth = depth.saturating_sub(1),
            Tok::Ident(kw)
                if depth == 0
                    && matches!(
                        kw.as_str(),
                        "fn" | "const" | "static" | "struct" | "enum" | "type" | "trait" | "union"
                    ) =>
            {
                if let Some(name) = ident(i + 1) {
                    defined.insert(name.to_string());
                }
            }
            _ => {}
        }
        if ident(i) == Some("mod") {
            if let (Some(name), Some((Tok::Punct(';'), _))) = (ident(i + 1), toks.get(i + 2)) {
                modules.insert(name.to_string());
            }
        }
        if ident(i) == Some("use") {
            let from = ident(i + 1).unwrap_or_default().to_string();
            let mut j = i + 1;
            while j < toks.len() && toks[j].0 != Tok::Punct(';') {
                let leaf = matches!(toks.get(j + 1), Some((Tok::Punct(',' | '}' | ';'), _)));
                if let (Some(name), true) = (ident(j), leaf) {
                    if name != "self" && j > i + 1 {
                        reexports.insert(name.to_string(), from.clone());
                    }
                }
                j += 1;
            }
            i = j;
        }
        i += 1;
    }
    Root {
        modules,
        reexports,
        defined,
    }
}

/// The module path of a file under `src/`: `import/vllm.rs` → [import, vllm], `trace.rs` →
/// [trace], `compare/mod.rs` → [compare].
pub(super) fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// A `crate::…` or `super::…` path in a file, resolved from the crate's root.
pub(super) struct CratePath {
    /// The module the path starts in (`here` and the inline `mod name {` blocks around it, less
    /// one module per `super`; empty for `crate::`), then its named segments (a macro's name is
    /// not one: `crate::outln!` names the root).
    pub(super) path: Vec<String>,
    /// Whether the path starts at the crate's root, so its first segment is a name the root
    /// must place (a module, an item of its own, or a re-export).
    pub(super) from_root: bool,
    pub(super) line: usize,
}

/// Every `crate::…` and `super::…` path in `toks` (the file `rel`, whose module is `here`); a
/// `{ … }` group gives the path to it, then one path per item's first name. The one reading of
/// paths the layer check and the file-circle check share.
pub(super) fn crate_paths(
    rel: &str,
    here: &[String],
    toks: &[(Tok, usize)],
) -> Result<Vec<CratePath>, String> {
    let ident = |i: usize| match toks.get(i) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let sep = |i: usize| toks.get(i).map(|t| &t.0) == Some(&Tok::PathSep);
    let mut out = Vec::new();
    // Inline `mod name {` blocks: (name, the brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let (tok, line) = (&toks[i].0, toks[i].1);
        match tok {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(kw) if kw == "mod" => {
                if let (Some(name), Some((Tok::Punct('{'), _))) = (ident(i + 1), toks.get(i + 2)) {
                    inline.push((name.to_string(), depth + 1));
                }
            }
            Tok::Ident(kw) if (kw == "crate" || kw == "super") && sep(i + 1) => {
                // Inside a longer path (`a::super::`) or a macro's `$crate::`: not a path of ours.
                if i > 0 && (sep(i - 1) || toks[i - 1].0 == Tok::Punct('$')) {
                    i += 1;
                    continue;
                }
                // Where the path starts: the root for `crate`, the parent module for each `super`.
                let mut at: Vec<String> = here
                    .iter()
                    .cloned()
                    .chain(inline.iter().map(|(n, _)| n.clone()))
                    .collect();
                let mut j = i;
                if kw == "crate" {
                    at.clear();
                    j += 2;
                } else {
                    while ident(j) == Some("super") && sep(j + 1) {
                        if at.pop().is_none() {
                            return Err(format!(
                                "`{rel}` line {line}: `super::` goes above the crate's root"
                            ));
                        }
                        j += 2;
                    }
                }
                let from_root = at.is_empty();
                let mut path_line = line;
                while let Some(name) = ident(j) {
                    if toks.get(j + 1).map(|t| &t.0) == Some(&Tok::Punct('!')) {
                        break; // a macro: `#[macro_export]` ones live at the root
                    }
                    if from_root && at.is_empty() {
                        path_line = toks[j].1;
                    }
                    at.push(name.to_string());
                    if !sep(j + 1) {
                        j += 1;
                        break;
                    }
                    j += 2;
                }
                let group = (toks.get(j).map(|t| &t.0) == Some(&Tok::Punct('{')))
                    .then(|| group_heads(toks, j));
                out.push(CratePath {
                    path: at.clone(),
                    from_root,
                    line: path_line,
                });
                if let Some((heads, close)) = group {
                    for (name, line) in heads {
                        let mut path = at.clone();
                        path.push(name);
                        out.push(CratePath {
                            path,
                            from_root,
                            line,
                        });
                    }
                    j = close + 1; // past the group's closing brace, whose opening one was not counted
                }
                i = j.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(out)
}

/// Every top-level module `file` names, with the line of its first mention.
pub(super) fn dependencies(
    rel: &str,
    src: &str,
    root: &Root,
) -> Result<BTreeMap<String, usize>, String> {
    let here = module_path(rel);
    let resolve = |name: &str, line: usize| -> Result<Option<String>, String> {
        if name == "self" {
            return Ok(None); // `use crate::{self}`: the root itself
        }
        if root.modules.contains(name) {
            return Ok(Some(name.to_string()));
        }
        if root.defined.contains(name) {
            return Ok(None); // an item of the root file itself
        }
        match root.reexports.get(name) {
            Some(m) => Ok(Some(m.clone())),
            None => Err(format!(
                "`{rel}` line {line}: cannot tell which module `crate::{name}` is in (neither a module nor re-exported by lib.rs)"
            )),
        }
    };
    let mut deps: BTreeMap<String, usize> = BTreeMap::new();
    for CratePath {
        path,
        from_root,
        line,
    } in crate_paths(rel, &here, &lex(src))?
    {
        let Some(first) = path.first() else { continue };
        // A path that starts inside a top-level module names that module already.
        let module = if from_root {
            resolve(first, line)?
        } else {
            Some(first.clone())
        };
        if let Some(module) = module {
            deps.entry(module).or_insert(line);
        }
    }
    if let Some(unit) = here.first() {
        deps.remove(unit); // a module's own submodules
    }
    Ok(deps)
}

/// Every violation of the layering among `files` (paths relative to `src/`, with their text).
fn check(files: &[(String, String)], layers: &Layers, root: &Root) -> Vec<String> {
    let mut problems = Vec::new();
    for m in &root.modules {
        if !layers.of.contains_key(m) {
            problems.push(format!(
                "module `{m}` (declared in lib.rs) has no layer in ARCHITECTURE.md's table"
            ));
        }
    }
    for m in layers.of.keys() {
        if !root.modules.contains(m) {
            problems.push(format!(
                "ARCHITECTURE.md's layer table names `{m}`, which lib.rs does not declare"
            ));
        }
    }
    for (rel, src) in files {
        let path = module_path(rel);
        let Some(unit) = path.first() else { continue }; // lib.rs: the root declares and re-exports
        let Some(&mine) = layers.of.get(unit) else {
            continue;
        }; // reported above
        let deps = match dependencies(rel, src, root) {
            Ok(d) => d,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        for (dep, line) in deps {
            let Some(&theirs) = layers.of.get(&dep) else {
                continue;
            };
            if theirs >= mine {
                let why = if theirs == mine {
                    "; modules of one layer may not use each other"
                } else {
                    ""
                };
                problems.push(format!(
                    "`{rel}` (layer {mine}) imports `{dep}` (layer {theirs}) at line {line}{why}"
                ));
            }
        }
    }
    problems
}

pub(super) fn rust_files(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src/ reads")
        .map(|e| e.expect("an entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, base, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            let rel = p
                .strip_prefix(base)
                .expect("under src")
                .to_string_lossy()
                .replace('\\', "/");
            out.push((
                rel,
                std::fs::read_to_string(&p).expect("a source file reads"),
            ));
        }
    }
}

#[test]
fn the_core_depends_downward_only() {
    let architecture = std::fs::read_to_string(super::root().join("ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md reads");
    let layers = parse_layers(&architecture).unwrap();
    let src = super::root().join("crates/core/src");
    let root = parse_root(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut files = Vec::new();
    rust_files(&src, &src, &mut files);
    assert!(
        files.len() > 40,
        "found only {} files under {}",
        files.len(),
        src.display()
    );
    let problems = check(&files, &layers, &root);
    assert!(
        problems.is_empty(),
        "the core's modules must depend on lower layers only (the table is in ARCHITECTURE.md, \"The core's layers\"):\n  {}",
        problems.join("\n  ")
    );
}

// --- the checker itself, on synthetic input ----------------------------------------------------

const TABLE: &str = "# A\n\n### The core's layers\n\nSome words.\n\n| layer | modules | what |\n|---|---|---|\n\
| 0 | `text` | words |\n| 1 | `trace` | schema |\n| 2 | `settings` | settings |\n| 5 | `metrics`, `index` | figures |\n\n## Next\n";
const LIB: &str =
    "pub mod text;\npub mod trace;\npub mod settings;\npub mod metrics;\npub mod index;\n\
pub use metrics::{Metrics, trim_num as trim};\npub use text::Text;\n";

fn run(files: &[(&str, &str)]) -> Vec<String> {
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(p, s)| (p.to_string(), s.to_string()))
        .collect();
    check(&files, &parse_layers(TABLE).unwrap(), &parse_root(LIB))
}

#[test]
fn a_lower_module_importing_a_higher_one_is_named_with_both_layers() {
    let problems = run(&[(
        "settings.rs",
        "use crate::text::Text;\nuse crate::metrics::trim_num;\n",
    )]);
    assert_eq!(
        problems,
        ["`settings.rs` (layer 2) imports `metrics` (layer 5) at line 2"]
    );
    // Downward is fine.
    assert!(run(&[(
        "metrics.rs",
        "use crate::settings::Settings;\nuse crate::text::Text;\n"
    )])
    .is_empty());
}

#[test]
fn one_layer_may_not_use_itself_so_no_cycle_can_hide_there() {
    let problems = run(&[(
        "index.rs",
        "fn f() -> crate::metrics::Metrics { todo!() }\n",
    )]);
    assert_eq!(
        problems,
        ["`index.rs` (layer 5) imports `metrics` (layer 5) at line 1; modules of one layer may not use each other"]
    );
}

#[test]
fn every_form_of_path_is_seen() {
    // A group, a path in an expression, a root re-export (also renamed), nested files.
    let cases = [
        ("trace.rs", "use crate::{text::Text, settings::Settings};"),
        (
            "trace.rs",
            "fn f() { let x = crate::settings::Settings::default(); }",
        ),
        ("trace.rs", "use crate::Metrics;"),
        ("trace.rs", "use crate::trim;"),
        (
            "trace/peer.rs",
            "use crate::{\n    text::Text,\n    metrics::{self, Figure},\n};",
        ),
        (
            "trace/mod.rs",
            "pub(crate) fn f() { crate::index::build() }",
        ),
    ];
    for (file, src) in cases {
        assert_eq!(run(&[(file, src)]).len(), 1, "{file}: {src}");
    }
}

#[test]
fn super_paths_resolve_through_files_and_inline_modules() {
    // From a nested file, `super::` stays inside its own top-level module.
    assert!(run(&[(
        "trace/peer.rs",
        "use super::Header;\nfn f() { super::super::text::Text::new(); }"
    )])
    .is_empty());
    // From a top-level file, `super::` is the crate's root.
    assert_eq!(run(&[("text.rs", "use super::metrics::Metrics;")]).len(), 1);
    // Inside `mod tests { }`, `super::` is the file itself; after the block it is the root again.
    assert!(run(&[(
        "text.rs",
        "mod tests {\n    use super::*;\n    fn f() { let _ = '{'; }\n}\n"
    )])
    .is_empty());
    assert_eq!(
        run(&[(
            "text.rs",
            "mod tests {\n    use super::*;\n}\nuse super::metrics;\n"
        )]),
        ["`text.rs` (layer 0) imports `metrics` (layer 5) at line 4"]
    );
    // A `use crate::{…}` group before the block leaves the brace count intact.
    assert_eq!(
        run(&[(
            "text.rs",
            "use crate::{text::Text};\nmod tests {\n    use super::*;\n}\nuse super::metrics;\n"
        )]),
        ["`text.rs` (layer 0) imports `metrics` (layer 5) at line 5"]
    );
}

#[test]
fn comments_strings_and_characters_are_not_paths() {
    let src = r####"
        // use crate::metrics;
        /* crate::metrics /* nested */ crate::metrics */
        /// [`crate::metrics::Metrics`]
        const A: &str = "crate::metrics::x";
        const B: &str = r#"crate::metrics "quoted" x"#;
        const C: &[u8] = b"crate::metrics";
        const D: char = '"';
        const E: char = '\'';
        const F: char = '\u{7b}';
        fn f<'a>(x: &'a str) -> &'a str { x }
        pub(crate) fn g() {}
        use crate::text::Text;
    "####;
    assert!(
        run(&[("trace.rs", src)]).is_empty(),
        "{:?}",
        run(&[("trace.rs", src)])
    );
    // …and the line numbers still count the lines inside them.
    assert_eq!(
        run(&[(
            "trace.rs",
            "const A: &str = \"one\ntwo\";\n/* three\nfour */\nuse crate::metrics;"
        )]),
        ["`trace.rs` (layer 1) imports `metrics` (layer 5) at line 5"]
    );
}

#[test]
fn a_path_that_cannot_be_placed_is_an_error_not_a_pass() {
    assert_eq!(
        run(&[("trace.rs", "use crate::Nowhere;")]),
        ["`trace.rs` line 1: cannot tell which module `crate::Nowhere` is in (neither a module nor re-exported by lib.rs)"]
    );
}

#[test]
fn the_table_and_lib_rs_must_agree() {
    let files: Vec<(String, String)> = Vec::new();
    let root = parse_root("pub mod text;\npub mod trace;\npub mod extra;\n");
    let problems = check(&files, &parse_layers(TABLE).unwrap(), &root);
    assert!(problems.contains(
        &"module `extra` (declared in lib.rs) has no layer in ARCHITECTURE.md's table".to_string()
    ));
    assert!(problems.contains(
        &"ARCHITECTURE.md's layer table names `metrics`, which lib.rs does not declare".to_string()
    ));
    assert!(parse_layers("# no table here\n").is_err());
    assert!(parse_layers(
        "### The core's layers\n\n| layer | modules |\n|---|---|\n| 0 | `a` |\n| 1 | `a` |\n"
    )
    .unwrap_err()
    .contains("listed twice"));
}

#[test]
fn lib_rs_re_exports_are_read_with_their_modules() {
    let root = parse_root(LIB);
    assert_eq!(
        root.reexports.get("Metrics").map(String::as_str),
        Some("metrics")
    );
    assert_eq!(
        root.reexports.get("trim").map(String::as_str),
        Some("metrics")
    );
    assert_eq!(root.reexports.get("Text").map(String::as_str), Some("text"));
    assert!(
        !root.reexports.contains_key("trim_num"),
        "renamed: only the new name is visible"
    );
    assert_eq!(root.modules.len(), 5);
}
