//! One term per concept, the glossary's (`../shared/glossary.md`): the course's Chinese and
//! English never write a word the glossary replaced, nor a phrase that reads as a translation.
//!
//! The Chinese words and phrases the glossary replaced are one table, checked over every
//! user-facing file (the lessons, `course.json`, the lessons page's words, every source file) by
//! the workspace tidy (`xtask/src/tidy.rs`, `ZH_NOT_THE_TERM`). Checked here: the English terms in
//! every `lessons/*.en.md` (marker lines left out: they hold ids, not words) and every `en`
//! string of `lessons/course.json`; and that Chinese percentages in the course's own text
//! (`lessons/*.zh.md`, every `zh` string of `course.json`) are written without a space (`97%`),
//! as Chinese typesetting does.

use std::path::{Path, PathBuf};

/// (the word, the term to write instead) for English text.
const EN_NOT_THE_TERM: [(&str, &str); 2] = [
    ("unverified", "not verified (the glossary's 未验证)"),
    ("usual mistakes", "common mistakes"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A digit, a space, then `%`: how English writes a share, not Chinese.
fn spaced_percent(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    chars
        .windows(3)
        .any(|w| w[0].is_ascii_digit() && w[1] == ' ' && w[2] == '%')
}

/// Each word of `table` in `text`, as "where: 「word」 → write term".
fn wrong_terms(where_: &str, text: &str, table: &[(&str, &str)]) -> Vec<String> {
    let lower = text.to_lowercase();
    table
        .iter()
        .filter(|(word, _)| lower.contains(&word.to_lowercase()))
        .map(|(word, term)| format!("{where_}: 「{word}」 → write {term}"))
        .collect()
}

/// A spaced percentage in Chinese text, as "where: “N %” → write “N%”".
fn zh_problems(where_: &str, text: &str) -> Vec<String> {
    if spaced_percent(text) {
        vec![format!("{where_}: “N %” → write “N%” in Chinese")]
    } else {
        Vec::new()
    }
}

/// A lesson's lines with their numbers, marker lines (`[[…]]`, ids only) left out.
fn prose_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim_start().starts_with("[["))
}

/// Every string under a `zh` or `en` key of a JSON value, with its JSON pointer.
fn strings_of(v: &serde_json::Value, at: &str, lang: &str, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, x) in map {
                let here = format!("{at}/{k}");
                match x {
                    serde_json::Value::String(s) if k == lang => out.push((here, s.clone())),
                    _ => strings_of(x, &here, lang, out),
                }
            }
        }
        serde_json::Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                strings_of(x, &format!("{at}/{i}"), lang, out);
            }
        }
        _ => {}
    }
}

fn lesson_files(suffix: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("lessons"))
        .expect("lessons/ reads")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(suffix))
        .map(|n| format!("lessons/{n}"))
        .collect();
    files.sort();
    files
}

#[test]
fn the_chinese_course_writes_percentages_without_a_space() {
    let mut found = Vec::new();
    let zh_files = lesson_files(".zh.md");
    assert_eq!(zh_files.len(), 5, "{zh_files:?}");
    for file in &zh_files {
        for (n, line) in prose_lines(&read(file)) {
            found.extend(zh_problems(&format!("{file}:{n}"), line));
        }
    }
    let course: serde_json::Value =
        serde_json::from_str(&read("lessons/course.json")).expect("course.json parses");
    let mut zh = Vec::new();
    strings_of(&course, "", "zh", &mut zh);
    assert!(
        zh.len() > 100,
        "course.json's Chinese strings: {}",
        zh.len()
    );
    for (at, s) in &zh {
        found.extend(zh_problems(&format!("lessons/course.json#{at}"), s));
    }
    assert!(
        found.is_empty(),
        "Chinese percentages without a space:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_english_course_writes_the_glossarys_term_for_each_concept() {
    let mut found = Vec::new();
    for file in lesson_files(".en.md") {
        for (n, line) in prose_lines(&read(&file)) {
            found.extend(wrong_terms(&format!("{file}:{n}"), line, &EN_NOT_THE_TERM));
        }
    }
    let course: serde_json::Value =
        serde_json::from_str(&read("lessons/course.json")).expect("course.json parses");
    let mut en = Vec::new();
    strings_of(&course, "", "en", &mut en);
    for (at, s) in &en {
        found.extend(wrong_terms(
            &format!("lessons/course.json#{at}"),
            s,
            &EN_NOT_THE_TERM,
        ));
    }
    assert!(
        found.is_empty(),
        "one English term per concept, the glossary's:\n  {}",
        found.join("\n  ")
    );
}

/// The checks catch what they are for.
#[test]
fn the_term_checks_catch_a_replaced_word_and_a_spaced_percentage() {
    assert_eq!(zh_problems("x", "GPU 利用率 97 %").len(), 1);
    assert!(zh_problems("x", "GPU 利用率 97%，P95").is_empty());
    assert_eq!(
        wrong_terms("x", "the line says Unverified", &EN_NOT_THE_TERM).len(),
        1
    );
    assert!(wrong_terms("x", "GPU figures are not verified", &EN_NOT_THE_TERM).is_empty());
    let lines: Vec<_> = prose_lines("a\n[[exercise:gpu-unverified-quiz]]\nb").collect();
    assert_eq!(lines, [(1, "a"), (3, "b")]);
}
