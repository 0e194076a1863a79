//! The view computes nothing (ARCHITECTURE.md, "The view computes nothing"): a test in
//! rust-analyzer's "tidy" style that reads every `.rs` file of the view (the lab's `src/`, each
//! page's `pages/NAME/src/`, their kit's `crates/web/src/`) and fails naming the file, the line
//! and the rule when the view
//!
//! 1. **names the core's arithmetic**: a path through `percentile::` (other than the
//!    `PercentileMethod` choice), `compare::stats::`, or `index::` (other than the `Index` type).
//!    Those are how figures are computed; the view takes the figures.
//! 2. **converts a time unit itself**: a factor of 1000 or 10⁶ (`1000.0`, `1e3`, `0.001`, `1e-6`,
//!    …) multiplied or divided by, or bound to a name (`const MS: f64 = 1000.0;`). Times go
//!    through `tracelab_core::units` (to the trace's microsecond), so a TTFT typed as 2.007 s
//!    equals a 2.007 s threshold.
//! 3. **computes a percentage**: a factor of 100 multiplied or divided by
//!    (`units::share_from_percent`, `GpuSample::mem_used_pct`, a figure's own unit instead).
//! 4. **counts by a predicate**: `.filter(…)` or `.filter_map(…)` whose chain ends in `.count()`.
//!    How many attempts, warm-ups or matching figures there are is the core's to say.
//!
//! Formatting is not computing: the view may use any `tracelab_core::format` helper, and this
//! test also checks that every public function there returns text (`String`, `Text` or
//! `Option<String>`), so none can become a back door for arithmetic. Laying out (pixels, scales,
//! tick positions over values the core gave, in the unit the core gave) is the view's own job.
//!
//! The scanner is a small lexer, not a parser: comments, strings and character literals are
//! skipped, so a rule named in a comment (like this one) is not a violation. Unit tests at the
//! end prove each rule fires on synthetic input and stays quiet on what is allowed.

use std::fmt;
use std::path::{Path, PathBuf};

use super::lex::{lex, Tok};

/// The value of a decimal literal (`1_000.0` → 1000, `1e-3f64` → 0.001); `None` for hex and
/// friends.
fn value_of(literal: &str) -> Option<f64> {
    let s: String = literal.chars().filter(|c| *c != '_').collect();
    if s.starts_with("0x") || s.starts_with("0o") || s.starts_with("0b") {
        return None;
    }
    let body = [
        "f32", "f64", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64",
        "i128", "isize",
    ]
    .iter()
    .find_map(|suffix| s.strip_suffix(suffix))
    .unwrap_or(&s);
    body.parse().ok()
}

fn is_time_factor(v: f64) -> bool {
    [1e3, 1e-3, 1e6, 1e-6]
        .iter()
        .any(|f| (v - f).abs() <= f * 1e-12)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rule {
    CoreArithmetic,
    TimeUnits,
    Percent,
    Counting,
}

impl Rule {
    fn advice(self) -> &'static str {
        match self {
            Rule::CoreArithmetic => "names the core's arithmetic; show the figure the core computed",
            Rule::TimeUnits => "converts a unit itself (a factor of 1000 or 10^6); use tracelab_core::units (times to the trace's microsecond)",
            Rule::Percent => "computes a percentage itself; use tracelab_core::units or the figure's own unit",
            Rule::Counting => "counts by a predicate; counts of attempts and figures come from the core",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Violation {
    file: String,
    line: usize,
    rule: Rule,
    what: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: `{}` {}",
            self.file,
            self.line,
            self.what,
            self.rule.advice()
        )
    }
}

/// Every path `a::b::c` in the tokens, with `use` groups expanded (`use x::{a::b, c}` gives
/// `x::a::b` and `x::c`), each with the line of its first segment.
fn paths(tokens: &[(Tok, usize)]) -> Vec<(Vec<String>, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i].0 == Tok::Ident("use".into()) {
            let end = (i..tokens.len())
                .find(|&j| tokens[j].0 == Tok::Punct(';'))
                .unwrap_or(tokens.len());
            use_tree(&tokens[i + 1..end], &mut Vec::new(), &mut out);
            i = end + 1;
            continue;
        }
        if let Tok::Ident(first) = &tokens[i].0 {
            // The start of a path: not a segment after `::` (already taken with its head).
            let after_sep = i > 0 && tokens[i - 1].0 == Tok::PathSep;
            if !after_sep {
                let mut segs = vec![first.clone()];
                let mut j = i + 1;
                while j + 1 < tokens.len() && tokens[j].0 == Tok::PathSep {
                    match &tokens[j + 1].0 {
                        Tok::Ident(s) => segs.push(s.clone()),
                        _ => break,
                    }
                    j += 2;
                }
                if segs.len() > 1 {
                    out.push((segs, tokens[i].1));
                }
            }
        }
        i += 1;
    }
    out
}

/// Expands one `use` tree (the tokens between `use` and `;`).
fn use_tree(
    tokens: &[(Tok, usize)],
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, usize)>,
) {
    let depth_before = prefix.len();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].0 {
            Tok::Ident(s) if s == "as" => i += 2, // a rename keeps the path it renames
            Tok::Ident(s) => {
                prefix.push(s.clone());
                let followed = tokens.get(i + 1).is_some_and(|t| t.0 == Tok::PathSep);
                if !followed {
                    out.push((prefix.clone(), tokens[i].1));
                    prefix.truncate(depth_before);
                }
                i += 1;
            }
            Tok::PathSep => i += 1,
            Tok::Punct('{') => {
                let mut depth = 0;
                let mut j = i;
                loop {
                    match tokens[j].0 {
                        Tok::Punct('{') => depth += 1,
                        Tok::Punct('}') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                    if j == tokens.len() {
                        break;
                    }
                }
                let inner = &tokens[i + 1..j.min(tokens.len())];
                // Split the group at top-level commas.
                let mut start = 0;
                let mut d = 0;
                for (k, t) in inner.iter().enumerate() {
                    match t.0 {
                        Tok::Punct('{') => d += 1,
                        Tok::Punct('}') => d -= 1,
                        Tok::Punct(',') if d == 0 => {
                            use_tree(&inner[start..k], &mut prefix.clone(), out);
                            start = k + 1;
                        }
                        _ => {}
                    }
                }
                use_tree(&inner[start..], &mut prefix.clone(), out);
                prefix.truncate(depth_before);
                i = j + 1;
            }
            Tok::Punct('*') => {
                prefix.push("*".into());
                out.push((prefix.clone(), tokens[i].1));
                prefix.truncate(depth_before);
                i += 1;
            }
            _ => i += 1,
        }
    }
}

/// Rule 1 on one path: the core's percentile, stats and index internals.
fn core_arithmetic(segs: &[String]) -> bool {
    segs.iter().enumerate().any(|(k, s)| {
        let next = segs.get(k + 1).map(String::as_str);
        match s.as_str() {
            // `self` re-imports the module, `*` everything in it: both reach the arithmetic.
            "percentile" => next != Some("PercentileMethod"),
            "index" => next != Some("Index"),
            "stats" => k > 0 && segs[k - 1] == "compare",
            _ => false,
        }
    })
}

/// All violations in one file's source.
fn check(file: &str, src: &str) -> Vec<Violation> {
    let tokens = lex(src);
    let mut out = Vec::new();
    let mut flag = |line, rule, what: String| {
        out.push(Violation {
            file: file.to_string(),
            line,
            rule,
            what,
        })
    };

    for (segs, line) in paths(&tokens) {
        if core_arithmetic(&segs) {
            flag(line, Rule::CoreArithmetic, segs.join("::"));
        }
    }

    let punct = |k: usize| {
        tokens.get(k).and_then(|t| {
            if let Tok::Punct(p) = t.0 {
                Some(p)
            } else {
                None
            }
        })
    };
    for (k, (tok, line)) in tokens.iter().enumerate() {
        let Tok::Number(lit) = tok else { continue };
        let Some(v) = value_of(lit) else { continue };
        let before = k.checked_sub(1).and_then(punct);
        // `x *= 1000.0` lexes as `*`, `=`, literal.
        let compound = k >= 2 && before == Some('=') && matches!(punct(k - 2), Some('*' | '/'));
        let multiplied = matches!(before, Some('*' | '/'))
            || matches!(punct(k + 1), Some('*' | '/'))
            || compound;
        // `const MS: f64 = 1000.0;` or `let ms = 1e3;`: a factor given a name.
        let plain_assignment = before == Some('=')
            && !matches!(
                k.checked_sub(2).and_then(punct),
                Some('=' | '!' | '<' | '>' | '*' | '/' | '+' | '-')
            );
        let bound = plain_assignment && punct(k + 1) == Some(';');
        if is_time_factor(v) && (multiplied || bound) {
            flag(*line, Rule::TimeUnits, lit.clone());
        } else if v == 100.0 && multiplied {
            flag(*line, Rule::Percent, lit.clone());
        }
    }

    // `.filter(…)` / `.filter_map(…)` … `.count()` in one method chain.
    let ident = |k: usize| {
        tokens.get(k).and_then(|t| {
            if let Tok::Ident(s) = &t.0 {
                Some(s.as_str())
            } else {
                None
            }
        })
    };
    let close_of = |open: usize| {
        let mut depth = 0;
        for (j, (t, _)) in tokens.iter().enumerate().skip(open) {
            match t {
                Tok::Punct('(') | Tok::Punct('[') | Tok::Punct('{') => depth += 1,
                Tok::Punct(')') | Tok::Punct(']') | Tok::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j);
                    }
                }
                _ => {}
            }
        }
        None
    };
    for k in 0..tokens.len() {
        let is_filter = punct(k) == Some('.')
            && matches!(ident(k + 1), Some("filter" | "filter_map"))
            && punct(k + 2) == Some('(');
        if !is_filter {
            continue;
        }
        let line = tokens[k + 1].1;
        let Some(mut j) = close_of(k + 2) else {
            continue;
        };
        // Follow the chain: `.name(…)` or `.name::<…>(…)`, one call after another.
        while punct(j + 1) == Some('.') {
            let Some(name) = ident(j + 2) else { break };
            let mut open = j + 3;
            if tokens.get(open).is_some_and(|t| t.0 == Tok::PathSep) && punct(open + 1) == Some('<')
            {
                let mut depth = 0;
                while let Some(p) = tokens.get(open + 1) {
                    open += 1;
                    match p.0 {
                        Tok::Punct('<') => depth += 1,
                        Tok::Punct('>') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                open += 1;
            }
            if punct(open) != Some('(') {
                break; // a field, or `.await`
            }
            if name == "count" {
                flag(
                    line,
                    Rule::Counting,
                    format!(".{}(…)….count()", ident(k + 1).unwrap_or_default()),
                );
                break;
            }
            match close_of(open) {
                Some(c) => j = c,
                None => break,
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_view_computes_nothing() {
    let root = &super::root();
    // The lab (src/), every other page (pages/NAME/src/) and the kit they share (crates/web/src/).
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    assert!(
        files.len() >= 20,
        "expected the lab's sources under src/, found {} files",
        files.len()
    );
    let mut pages: Vec<_> = std::fs::read_dir(root.join("pages"))
        .expect("pages/ reads")
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    pages.sort();
    assert!(
        pages.len() >= 5,
        "expected the pages under pages/, found {pages:?}"
    );
    for dir in pages.iter().chain([&root.join("crates/web/src")]) {
        rust_files(dir, &mut files);
    }
    let mut violations = Vec::new();
    for path in &files {
        let src =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = path.strip_prefix(root).unwrap().display().to_string();
        violations.extend(check(&name, &src));
    }
    assert!(
        violations.is_empty(),
        "the view computes nothing (ARCHITECTURE.md, \"The view computes nothing\"):\n{}",
        violations
            .iter()
            .map(|v| format!("  {v}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The view may use every `format` helper because each one only writes text.
#[test]
fn every_format_helper_returns_text() {
    let path = super::root().join("crates/core/src/format.rs");
    let src = std::fs::read_to_string(&path).unwrap();
    let bad = format_helpers_returning_numbers(&src);
    assert!(
        bad.is_empty(),
        "crates/core/src/format.rs: public helpers that do not return text: {bad:?}"
    );
    assert!(
        src.contains("pub fn trim_num"),
        "the scan found format.rs's helpers"
    );
}

/// `name (line)` of every `pub fn` whose return type is not `String`, `Text` or
/// `Option<String>`.
fn format_helpers_returning_numbers(src: &str) -> Vec<String> {
    let tokens = lex(src);
    let mut bad = Vec::new();
    for k in 0..tokens.len() {
        let is = |j: usize, s: &str| tokens.get(j).is_some_and(|t| t.0 == Tok::Ident(s.into()));
        // `pub fn`, not `pub(crate) fn`.
        if !(is(k, "pub") && is(k + 1, "fn")) {
            continue;
        }
        let name = match tokens.get(k + 2) {
            Some((Tok::Ident(n), line)) => format!("{n} (line {line})"),
            _ => continue,
        };
        let body = (k..tokens.len())
            .find(|&j| tokens[j].0 == Tok::Punct('{'))
            .unwrap_or(tokens.len());
        let arrow = (k..body).find(|&j| {
            tokens[j].0 == Tok::Punct('-')
                && tokens.get(j + 1).is_some_and(|t| t.0 == Tok::Punct('>'))
        });
        let ret: Vec<String> = match arrow {
            Some(a) => tokens[a + 2..body]
                .iter()
                .map(|(t, _)| match t {
                    Tok::Ident(s) | Tok::Number(s) => s.clone(),
                    Tok::PathSep => "::".into(),
                    Tok::Punct(p) => p.to_string(),
                })
                .collect(),
            None => vec!["()".into()],
        };
        let ret = ret.concat();
        if !matches!(ret.as_str(), "String" | "Text" | "Option<String>") {
            bad.push(format!("{name} -> {ret}"));
        }
    }
    bad
}

mod checker {
    use super::*;

    fn rules(src: &str) -> Vec<(usize, Rule)> {
        check("src/x.rs", src)
            .into_iter()
            .map(|v| (v.line, v.rule))
            .collect()
    }

    #[test]
    fn time_unit_arithmetic_is_caught_in_every_spelling() {
        for src in [
            "let s = ms / 1000.0;",
            "let ms = s * 1000.0;",
            "let ms = 1000.0 * s;",
            "let ms = s * 1e3;",
            "let ms = s * 1E3;",
            "let ms = s * 1_000.0;",
            "let ms = s * 1000;",
            "let s = ms * 0.001;",
            "let s = ms * 1e-3;",
            "let us = s * 1e6;",
            "let s = us / 1_000_000.0;",
            "let s = us * 1e-6f64;",
            "x *= 1000.0;",
            "x /= 1e3;",
            "const MS_PER_S: f64 = 1000.0;",
            "let k = 1e3;",
        ] {
            assert_eq!(rules(src), [(1, Rule::TimeUnits)], "{src}");
        }
        let v = &check(
            "src/components/step_panel.rs",
            "fn f() {\n    let v = raw.parse::<f64>().ok().map(|s| s * 1000.0);\n}",
        )[0];
        assert_eq!(v.to_string(), "src/components/step_panel.rs:2: `1000.0` converts a unit itself (a factor of 1000 or 10^6); use tracelab_core::units (times to the trace's microsecond)");
    }

    #[test]
    fn percentages_are_caught() {
        for src in [
            "let pct = 100.0 * used / total;",
            "let f = p / 100.0;",
            "let label = (f * 100.0) as i64;",
            "x *= 100;",
        ] {
            assert_eq!(rules(src), [(1, Rule::Percent)], "{src}");
        }
    }

    #[test]
    fn counting_by_a_predicate_is_caught() {
        for src in [
            "let n = attempts.iter().filter(|a| a.phase == Phase::Warmup).count();",
            "let n = rows.iter().filter(|r| r.matches == Some(true)).count();",
            "let n = a.iter().filter_map(|a| a.ttft_ms).map(|t| t).count();",
            "let n = a.iter().filter(|a| f(a, (1, 2))).map(|a| a.id.clone()).collect::<Vec<_>>().into_iter().count();",
            "let n = a\n    .iter()\n    .filter(|a| a.ok)\n    .count();",
        ] {
            let found = rules(src);
            assert_eq!(found.iter().map(|(_, r)| *r).collect::<Vec<_>>(), [Rule::Counting], "{src}");
        }
        assert_eq!(
            rules("let n = a\n    .iter()\n    .filter(|a| a.ok)\n    .count();")[0].0,
            3,
            "the line of the filter"
        );
    }

    #[test]
    fn the_cores_arithmetic_is_caught_however_it_is_named() {
        for src in [
            "use tracelab_core::percentile::nearest_rank;",
            "use tracelab_core::percentile;",
            "use tracelab_core::percentile::*;",
            "use tracelab_core::{format::trim_num, percentile::{self, PercentileMethod}};",
            "use tracelab_core::percentile as p;",
            "let v = tracelab_core::percentile::percentile(&xs, 95.0, m);",
            "let r = percentile::nearest_rank(95.0, n);",
            "use tracelab_core::compare::stats::wilson;",
            "use tracelab_core::compare::{stats, Run};",
            "let b = tracelab_core::compare::stats::poisson(3);",
            "use tracelab_core::index::{Index, build_sorted};",
        ] {
            let found = rules(src);
            assert!(
                !found.is_empty()
                    && found
                        .iter()
                        .all(|(l, r)| *l == 1 && *r == Rule::CoreArithmetic),
                "{src}: {found:?}"
            );
        }
    }

    #[test]
    fn what_the_view_may_do_is_not_flagged() {
        let allowed = r##"
            //! Times are converted with `* 1000.0` nowhere; `.filter(..).count()` is the core's.
            use tracelab_core::percentile::PercentileMethod;
            use tracelab_core::{format::{trim_num, percentile_label}, units, Index, PercentileMethod as Pm};
            use tracelab_core::index::Index as Ix;
            /* a block comment: s * 1000.0 /* nested: 100.0 * x */ still a comment */
            fn f(s: &Settings, rows: &[Row]) -> String {
                let ms = units::ms_from_s(s.ttft_threshold_s);
                let method = s.percentile; // the setting, not the module
                let name = "cost_per_1000_qualified";
                let key = cost_per_1000_qualified;
                let raw = r#"s * 1000.0"#;
                let c = '/';
                let life: &'static str = "x / 1000.0";
                let step = n.div_ceil(MAX_MARKS).max(1);
                let y = top + h * (1.0 - v / ymax);
                let clamp = t.max(0.001);
                view! { <Field id="mean" min=0.001 step="0.1" /> };
                let same = v == 1000.0;
                let big = 20_000 * k;
                let kept: Vec<_> = rows.iter().filter(|r| r.headline).map(|r| r.key.clone()).collect();
                let n = rows.len();
                let range = (0..=4).map(|i| max * i as f64 / 4.0);
                let pos = 1.max(2) * 3;
                let x = 0x1000 * 2;
                Index::build(&a, p);
                format!("{} / {}", ms, method)
            }
        "##;
        assert_eq!(check("src/ok.rs", allowed), []);
    }

    #[test]
    fn lines_are_counted_through_strings_and_comments() {
        let src = "let a = \"one\ntwo\";\n/* x\ny */\nlet r = r#\"\n\"#;\nlet s = ms / 1000.0;";
        assert_eq!(rules(src), [(7, Rule::TimeUnits)]);
    }

    #[test]
    fn a_format_helper_that_computes_is_caught() {
        let src = "pub fn trim_num(v: f64) -> String { todo!() }\n\
                   pub fn value(f: &Figure, lang: Lang) -> Option<String> { None }\n\
                   pub fn unit_name(u: &Unit) -> Text { todo!() }\n\
                   pub fn scaled(v: f64) -> f64 { v * 2.0 }\n\
                   pub(crate) fn helper(v: f64) -> f64 { v }\n\
                   pub fn nothing(v: f64) { }\n\
                   fn private(v: f64) -> f64 { v }";
        assert_eq!(
            format_helpers_returning_numbers(src),
            ["scaled (line 4) -> f64", "nothing (line 6) -> ()"]
        );
    }

    #[test]
    fn literals_are_read_as_rust_reads_them() {
        for (lit, v) in [
            ("1_000.0", 1000.0),
            ("1e3", 1000.0),
            ("1e-3f64", 0.001),
            ("100u32", 100.0),
            ("0.001", 0.001),
            ("1.", 1.0),
            ("100usize", 100.0),
        ] {
            assert_eq!(value_of(lit), Some(v), "{lit}");
        }
        assert_eq!(value_of("0x3e8"), None);
        let numbers = |src: &str| {
            lex(src)
                .into_iter()
                .filter_map(|(t, _)| {
                    if let Tok::Number(n) = t {
                        Some(n)
                    } else {
                        None
                    }
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(numbers("0..1000"), ["0", "1000"]);
        assert_eq!(numbers("1.max(2)"), ["1", "2"]);
        assert_eq!(numbers("x.0 * 1e-3"), ["0", "1e-3"]);
        assert_eq!(numbers("n: 100usize * 2"), ["100usize", "2"]);
    }
}
