//! No import circle between the files of one module folder (`components/charts.rs` and
//! `components/distribution.rs`, say), at any depth: the check in `tidy.rs` sees the top-level
//! modules of a crate only. Each `crate::…` and `super::…` path is resolved to the module it
//! names; two files meet at their closest common folder, and an edge joins the two children of
//! that folder they sit in.

use std::collections::{BTreeMap, BTreeSet};

use super::layers::{crate_paths, module_path};
use super::lex::lex;

/// The circles between sibling files of one crate (`files`: paths under its `src/` with their
/// text), below the top level: each named with its folder and, for each edge, file and line.
pub(super) fn file_circles(files: &[(String, String)]) -> Result<Vec<String>, String> {
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(rel, _)| module_path(rel)).collect();
    // folder → its children and the imports between them
    let mut folders: BTreeMap<Vec<String>, super::Edges> = BTreeMap::new();
    for (rel, src) in files {
        let here = module_path(rel);
        for path in crate_paths(rel, &here, &lex(src))? {
            let (mut target, line) = (path.path, path.line);
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
    Ok(found)
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
    ]))
    .unwrap();
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
    ]))
    .unwrap();
    assert!(found.is_empty(), "{found:?}");
    // A circle through `crate::` paths two folders down.
    let found = file_circles(&files(&[
        ("x/y/p.rs", "use crate::x::y::q::T;\n"),
        ("x/y/q.rs", "fn g() { crate::x::y::p::h() }\n"),
    ]))
    .unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("a circle in `x::y` among `p`, `q`"),
        "{found:?}"
    );
}
