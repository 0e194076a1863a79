//! A trace read in pieces (`parse::TraceReader`, how the lab reads a big upload it keeps outside
//! its WebAssembly memory) is the trace `parse_trace` reads from the whole text: the same
//! attempts, header, warnings, and the same error naming the same line and field, wherever the
//! text is cut. The edge texts below are written here; the samples are the lab's own.

use std::path::Path;

use tracelab_core::parse::{parse_trace, TraceReader};

fn whole(text: &str) -> Result<tracelab_core::Trace, String> {
    parse_trace("t.jsonl", text).map_err(|e| e.to_string())
}

fn in_pieces<'a>(
    pieces: impl IntoIterator<Item = &'a str>,
) -> Result<tracelab_core::Trace, String> {
    let mut reader = TraceReader::new("t.jsonl");
    reader.reserve(3);
    for piece in pieces {
        reader.feed(piece).map_err(|e| e.to_string())?;
    }
    reader.finish().map_err(|e| e.to_string())
}

/// The text cut at the given character positions (kept on character boundaries).
fn cut(text: &str, at: &[usize]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut bounds: Vec<usize> = at.iter().map(|&a| a.min(chars.len())).collect();
    bounds.sort_unstable();
    let mut out = Vec::new();
    let mut from = 0;
    for b in bounds.into_iter().chain([chars.len()]) {
        out.push(chars[from..b].iter().collect());
        from = b;
    }
    out
}

fn same(text: &str, pieces: &[String], what: &str) {
    let a = whole(text);
    let b = in_pieces(pieces.iter().map(String::as_str));
    assert_eq!(
        a,
        b,
        "{what}: cut into {:?}",
        pieces.iter().map(|p| p.chars().count()).collect::<Vec<_>>()
    );
}

const HEADER: &str = r#"{"kind": "header", "schema": "tracelab.trace", "version": 1, "tool": {"name": "hand", "version": "1"}}"#;

fn attempt(id: &str, ttft: &str) -> String {
    format!(
        r#"{{"kind": "attempt", "id": "{id}", "business_id": "{id}", "attempt": 1, "phase": "measure", "start_ms": 0, "first_token_ms": {ttft}, "end_ms": 900, "outcome": "success", "quality": "pass"}}"#
    )
}

/// Written here: each is read whole and cut at every character, in two pieces and in three.
fn edge_texts() -> Vec<(&'static str, String)> {
    let a1 = attempt("r1", "120.5");
    let a2 = attempt("r2", "300");
    vec![
        ("a trace ending with a newline", format!("{HEADER}\n{a1}\n{a2}\n")),
        ("no newline at the end", format!("{HEADER}\n{a1}\n{a2}")),
        ("a cut-off last line", format!("{HEADER}\n{a1}\n{}", &a2[..a2.len() / 2])),
        ("a byte order mark, CRLF and blank lines first", format!("\u{feff}\r\n\n{HEADER}\r\n{a1}\r\n\r\n{a2}\r\n")),
        ("a damaged third line", format!("{HEADER}\n{a1}\n{}\n{a2}\n", a2.replace("\"outcome\"", "\"outcome_\""))),
        ("a duplicate id", format!("{HEADER}\n{a1}\n{a1}\n")),
        ("an attempt before the header", format!("{a1}\n{HEADER}\n")),
        ("an unknown kind and a footer that counts wrong", format!("{HEADER}\n{a1}\n{{\"kind\": \"later\"}}\n{{\"kind\": \"footer\", \"finished_cleanly\": true, \"attempts\": 5, \"gpu_samples\": 0}}\n")),
        ("non-ASCII text in the header", HEADER.replace("\"hand\"", "\"手写 ✓\"") + "\n" + &a1),
        ("empty", String::new()),
        ("blanks only", " \n\t\r\n".into()),
        ("a byte order mark only", "\u{feff}".into()),
        ("a classroom CSV", "id,outcome,ttft_s,quality\nR1,success,0.12,pass\nR2,timeout_before_first_token,,not_evaluated\n".into()),
        ("a CSV after blank lines", "\n\nid,outcome,ttft_s,quality\nR1,success,0.12,pass".into()),
    ]
}

#[test]
fn an_edge_text_cut_anywhere_reads_as_the_whole() {
    for (what, text) in edge_texts() {
        let n = text.chars().count();
        same(&text, std::slice::from_ref(&text), what);
        for i in 0..=n {
            same(&text, &cut(&text, &[i]), what);
            for j in (i..=n).step_by(5) {
                same(&text, &cut(&text, &[i, j]), what);
            }
        }
        // One character at a time.
        same(&text, &cut(&text, &(1..n).collect::<Vec<_>>()), what);
    }
    // They are read (or refused) as intended, so the comparison above compares something.
    let texts = edge_texts();
    let read = |what: &str| whole(&texts.iter().find(|(w, _)| *w == what).unwrap().1);
    assert_eq!(
        read("a trace ending with a newline")
            .unwrap()
            .attempts
            .len(),
        2
    );
    assert_eq!(read("a cut-off last line").unwrap().warnings.len(), 1);
    assert!(read("a damaged third line").unwrap_err().contains("line 3"));
    assert!(read("a duplicate id")
        .unwrap_err()
        .contains("duplicate attempt id"));
    assert!(read("empty").unwrap_err().contains("empty"));
    assert_eq!(read("a classroom CSV").unwrap().attempts.len(), 2);
}

#[test]
fn every_sample_cut_anywhere_reads_as_the_whole() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../public/samples");
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("jsonl" | "csv")
        ) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let what = path.file_name().unwrap().to_string_lossy().to_string();
        assert!(whole(&text).is_ok(), "{what}");
        let n = text.chars().count();
        for size in [1, 2, 7, 100, 4096] {
            let at: Vec<usize> = (size..n).step_by(size).collect();
            same(&text, &cut(&text, &at), &what);
        }
        // Cuts at a few scattered places, and one at each line's end.
        let at: Vec<usize> = (0..40).map(|k| (k * 7919 + 13) % n.max(1)).collect();
        same(&text, &cut(&text, &at), &what);
        let ends: Vec<usize> = text
            .chars()
            .enumerate()
            .filter(|(_, c)| *c == '\n')
            .map(|(i, _)| i + 1)
            .collect();
        same(&text, &cut(&text, &ends), &what);
        read += 1;
    }
    assert!(read >= 10, "only {read} samples under {}", dir.display());
}

#[test]
fn a_room_guess_too_big_for_memory_is_dropped_not_fatal() {
    // A first piece that looks like a tiny share of a huge text: the guess is far beyond any
    // memory, so it is dropped and the attempts grow as they come.
    let text = format!("{HEADER}\n{}\n", attempt("r1", "100"));
    let mut reader = TraceReader::new("t.jsonl");
    reader.reserve_by_sample(&"\"attempt\"\n".repeat(1000), 1e-9);
    reader.feed(&text).unwrap();
    assert_eq!(reader.finish().unwrap(), whole(&text).unwrap());
}

#[test]
fn a_line_too_long_for_a_record_is_refused_alike_wherever_it_is_cut() {
    let long = "x".repeat(tracelab_core::parse::MAX_LINE_BYTES + 1000);
    let a1 = attempt("r1", "100");
    let texts = [
        ("in the middle", format!("{HEADER}\n{long}\n{a1}\n")),
        ("ended by CRLF", format!("{HEADER}\r\n{long}\r\n{a1}\r\n")),
        (
            "first, after a byte order mark",
            format!("\u{feff}{{{long}\n{HEADER}\n"),
        ),
        ("last, with no newline", format!("{HEADER}\n{a1}\n{long}")),
        ("last, ending in CR", format!("{HEADER}\n{a1}\n{long}\r")),
    ];
    // A header padded to exactly the longest a record may be, after a byte order mark and
    // before a CR: read, not refused. One byte more is refused.
    let max = tracelab_core::parse::MAX_LINE_BYTES;
    let padded = |len: usize| format!("{HEADER}{}", " ".repeat(len - HEADER.len()));
    let longest = format!("\u{feff}{}\r\n{a1}\r\n", padded(max));
    let one_more = format!("\u{feff}{}\r\n{a1}\r\n", padded(max + 1));
    assert_eq!(whole(&longest).unwrap().attempts.len(), 1);
    assert!(whole(&one_more).unwrap_err().contains("line 1"));
    let texts: Vec<(&str, String)> = texts
        .into_iter()
        .chain([
            ("the longest record", longest),
            ("one byte longer", one_more),
        ])
        .collect();
    for (what, text) in &texts {
        let expected = whole(text);
        assert!(
            expected.is_ok() == (*what == "the longest record"),
            "{what}: {expected:?}"
        );
        for size in [1 << 20, (8 << 20) + 5] {
            let at: Vec<usize> = (size..text.len()).step_by(size).collect();
            same(text, &cut(text, &at), what);
        }
        same(
            text,
            &cut(text, &[HEADER.len() + 1, HEADER.len() + 2, text.len() - 1]),
            what,
        );
    }
}
