//! No import circle between the files of one module folder (`components/charts.rs` and
//! `components/distribution.rs`, say), at any depth: the check in `tidy.rs` sees the top-level
//! modules of a crate only. Each `crate::…` and `super::…` path is resolved to the module it
//! names; two files meet at their closest common folder, and an edge joins the two children of
//! that folder they sit in.

use std::collections::{BTreeMap, BTreeSet};

use super::layers::module_path;
use super::lex::{group_heads, lex, Tok};

/// The modules (as paths from the crate root) that `src` names through `crate::` or `super::`,
/// each with the line of its first mention. `here` is the file's own module path.
fn named_paths(here: &[String], src: &str) -> Vec<(Vec<String>, usize)> {
    let toks = lex(src);
    let ident = |i: usize| match toks.get(i) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let sep = |i: usize| toks.get(i).map(|t| &t.0) == Some(&Tok::PathSep);
    let mut out = Vec::new();
    // Inline `mod name {` blocks: (name, the brace depth inside them), for `super::` in a test module.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
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
                let continues = i > 0 && (sep(i - 1) || toks[i - 1].0 == Tok::Punct('$'));
                if !continues {
                    let line = toks[i].1;
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
                            at.pop();
                            j += 2;
                        }
                    }
                    // The path's named segments, then (in a group) each item's first one.
                    while let Some(name) = ident(j) {
                        at.push(name.to_string());
                        if !sep(j + 1) {
                            break;
                        }
                        j += 2;
                    }
                    if toks.get(j).map(|t| &t.0) == Some(&Tok::Punct('{')) {
                        for (name, line) in group_heads(&toks, j).0 {
                            let mut p = at.clone();
                            p.push(name);
                            out.push((p, line));
                        }
                    }
                    out.push((at, line));
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The circles between sibling files of one crate (`files`: paths under its `src/` with their
/// text), below the top level: each named with its folder and, for each edge, file and line.
pub(super) fn file_circles(files: &[(String, String)]) -> Vec<String> {
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(rel, _)| module_path(rel)).collect();
    // folder → its children and the imports between them
    let mut folders: BTreeMap<Vec<String>, super::Edges> = BTreeMap::new();
    for (rel, src) in files {
        let here = module_path(rel);
        for (mut target, line) in named_paths(&here, src) {
            // The longest prefix that is a module (the rest names items in it).
            while !target.is_empty() && !modules.contains(&target) {
                target.pop();
            }
            let common = here.iter().zip(&target).take_while(|(a, b)| a == b).count();
            // The top level is `tidy.rs`'s check; a path into the file's own module, or up
            // to one that holds it, is no edge between siblings.
            if common == 0 || common >= here.len() || common >= target.len() {
                continue;
            }
            folders
                .entry(here[..common].to_vec())
                .or_default()
                .entry(here[common].clone())
                .or_default()
                .entry(target[common].clone())
                .or_insert((rel.clone(), line));
        }
    }
    let mut found = Vec::new();
    for (folder, edges) in &folders {
        let nodes: BTreeSet<String> = edges.keys().cloned().collect();
        for c in super::strongly_connected(&nodes, edges) {
            if c.len() > 1 {
                found.push(format!(
                    "a circle in `{}` among {}",
                    folder.join("::"),
                    super::circle_text(&c, edges)
                ));
            }
        }
    }
    found
}

#[test]
fn a_circle_between_sibling_files_is_named() {
    let files = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    // The lab's old shape: charts uses distribution's component, distribution charts' helpers.
    let found = file_circles(&files(&[
        ("components/mod.rs", "mod charts;\nmod distribution;\n"),
        (
            "components/charts.rs",
            "fn f() {\n  super::distribution::Distribution();\n}\n",
        ),
        (
            "components/distribution.rs",
            "use super::charts::{use_width, BARS_FIT};\n",
        ),
    ]));
    assert_eq!(
        found,
        ["a circle in `components` among `charts`, `distribution`: components/charts.rs:2 uses `distribution`; components/distribution.rs:1 uses `charts`"]
    );
    // Both down to a shared third file, `crate::` paths, a test module's `super::`, a deeper
    // file reaching up with `super::super::`: no circle.
    let found = file_circles(&files(&[
        ("components/mod.rs", "mod a;\nmod b;\nmod frame;\n"),
        (
            "components/a.rs",
            "use super::frame::W;\nfn f() { crate::components::b::g() }\n#[cfg(test)]\nmod tests {\n  use super::f;\n}\n",
        ),
        ("components/b.rs", "use crate::components::frame::{W, X};\n"),
        ("components/b/inner.rs", "use super::super::frame::W;\n"),
        ("components/frame.rs", "pub struct W;\n"),
    ]));
    assert!(found.is_empty(), "{found:?}");
    // A circle through `crate::` paths two folders down.
    let found = file_circles(&files(&[
        ("x/y/p.rs", "use crate::x::y::q::T;\n"),
        ("x/y/q.rs", "fn g() { crate::x::y::p::h() }\n"),
    ]));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("a circle in `x::y` among `p`, `q`"),
        "{found:?}"
    );
}
