//! One test per bad input: each names the line and the field at fault, says something a learner
//! can act on, and never panics.

use std::time::{Duration, Instant};

use tracelab_core::parse::{parse_jsonl, parse_trace, parse_trace_bytes};
use tracelab_core::{ParseError, Trace};

mod common;

use common::streamed;

const HEADER: &str = r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"test","version":"1"}}"#;

/// A header line followed by the given lines, each ending with a newline.
fn jsonl(lines: &[&str]) -> String {
    let mut out = format!("{HEADER}\n");
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A complete, valid attempt record with `fields` spliced in (later keys win in the parser's
/// eyes only if they are not duplicated, so callers pass fields not in the base).
fn attempt(id: &str, fields: &str) -> String {
    let base = format!(r#""kind":"attempt","id":"{id}","phase":"measure","quality":"pass""#);
    if fields.is_empty() {
        format!("{{{base}}}")
    } else {
        format!("{{{base},{fields}}}")
    }
}

const GOOD: &str = r#""start_ms":0,"first_token_ms":200,"end_ms":500,"outcome":"success""#;

#[track_caller]
fn fails(name: &str, text: &str) -> ParseError {
    match parse_trace(name, text) {
        Ok(trace) => panic!(
            "{name} should not parse, got {} attempts",
            trace.attempts.len()
        ),
        Err(e) => {
            assert_eq!(e.file, name, "the error names the file");
            assert!(!e.message.trim().is_empty());
            // Display puts the place first: "file, line N, field `f`: message".
            let shown = e.to_string();
            assert!(shown.starts_with(name), "{shown}");
            if let Some(line) = e.line {
                assert!(shown.contains(&format!("line {line}")), "{shown}");
            }
            if let Some(field) = &e.field {
                assert!(shown.contains(&format!("field `{field}`")), "{shown}");
            }
            // `tracelab report` streams a JSON Lines trace: it must refuse it alike (the 50 MB
            // lines are compared after their timing, below).
            if text.len() < 1024 * 1024 {
                streamed::agree(name, text.as_bytes(), |_| {});
            }
            e
        }
    }
}

#[track_caller]
fn at(e: &ParseError, line: Option<usize>, field: Option<&str>, words: &[&str]) {
    assert_eq!(e.line, line, "line of: {e}");
    assert_eq!(e.field.as_deref(), field, "field of: {e}");
    for w in words {
        assert!(
            e.message.contains(w),
            "the message should mention `{w}`: {e}"
        );
    }
}

#[test]
fn empty_file() {
    for text in ["", "   \n\n\t\n"] {
        let e = fails("empty.jsonl", text);
        at(&e, None, None, &["empty", "header"]);
    }
    // parse_jsonl directly (no format detection) says the same.
    let e = parse_jsonl("direct.jsonl", "\n\n").unwrap_err();
    at(&e, None, None, &["empty", "header"]);
}

#[test]
fn not_json() {
    let e = fails("bad.jsonl", "{not json}\n");
    at(&e, Some(1), None, &["not valid JSON", "column 2"]);

    let text = jsonl(&[&attempt("A", GOOD), r#"{"kind":"attempt","id":"B",}"#]);
    let e = fails("bad.jsonl", &text);
    at(&e, Some(3), None, &["not valid JSON", "trailing comma"]);
    // serde_json counts lines within the one record; that count must not leak into the message
    // and contradict the file's line number.
    assert!(!e.message.contains("line 1"), "{e}");
}

#[test]
fn wrong_type_names_the_field() {
    let text = jsonl(&[&attempt(
        "A",
        r#""start_ms":"soon","end_ms":500,"outcome":"success""#,
    )]);
    let e = fails("type.jsonl", &text);
    at(&e, Some(2), Some("start_ms"), &["string", "f64"]);

    // An enum given a number is a wrong type too, not "not valid JSON".
    let text = jsonl(&[&format!(
        r#"{{"kind":"attempt","id":"A","phase":1,"quality":"pass",{GOOD}}}"#
    )]);
    let e = fails("type.jsonl", &text);
    at(&e, Some(2), Some("phase"), &["invalid type", "integer"]);
    let text = jsonl(&[&format!(
        r#"{{"kind":"attempt","id":"A","phase":"later","quality":"pass",{GOOD}}}"#
    )]);
    let e = fails("type.jsonl", &text);
    at(&e, Some(2), Some("phase"), &["later", "warmup", "measure"]);
    let text = jsonl(&[&attempt("A", &format!("{GOOD},\"events\":[[1,\"two\"]]"))]);
    let e = fails("type.jsonl", &text);
    at(&e, Some(2), Some("events[0][1]"), &["string"]);
}

#[test]
fn record_without_kind() {
    let text = jsonl(&[r#"{"id":"A"}"#]);
    let e = fails("kind.jsonl", &text);
    at(&e, Some(2), Some("kind"), &["kind"]);
}

#[test]
fn csv_missing_column() {
    let e = fails(
        "class.csv",
        "# window_s: 10\nid,outcome,ttft_s\nR1,success,0.2\n",
    );
    at(
        &e,
        Some(2),
        Some("quality"),
        &["quality", "id, outcome, ttft_s, quality"],
    );
}

#[test]
fn csv_row_with_wrong_cell_count() {
    let e = fails("class.csv", "id,outcome,ttft_s,quality\nR1,success,0.2\n");
    at(&e, Some(2), None, &["3 cells", "4 columns"]);
}

#[test]
fn csv_nan_and_infinite() {
    for bad in ["NaN", "nan", "inf", "-inf", "infinity"] {
        let e = fails(
            "class.csv",
            &format!("id,outcome,ttft_s,quality\nR1,success,0.2,pass\nR2,success,{bad},pass\n"),
        );
        at(&e, Some(3), Some("ttft_s"), &[bad, "not a time"]);
    }
    let e = fails(
        "class.csv",
        "id,outcome,ttft_s,quality\nR1,success,fast,pass\n",
    );
    at(&e, Some(2), Some("ttft_s"), &["fast", "not a number"]);
}

#[test]
fn csv_negative_time() {
    let e = fails(
        "class.csv",
        "id,outcome,ttft_s,quality\nR1,success,-0.2,pass\n",
    );
    at(&e, Some(2), Some("ttft_s"), &["negative", "-0.2"]);
    let e = fails(
        "class.csv",
        "id,outcome,ttft_s,quality,e2e_s\nR1,success,0.2,pass,-1\n",
    );
    at(&e, Some(2), Some("e2e_s"), &["negative"]);
}

#[test]
fn jsonl_negative_time() {
    let text = jsonl(&[&attempt(
        "A",
        r#""start_ms":-5,"end_ms":500,"outcome":"success""#,
    )]);
    let e = fails("neg.jsonl", &text);
    at(&e, Some(2), Some("start_ms"), &["negative", "-5"]);

    let text = jsonl(&[
        &attempt("A", GOOD),
        &attempt(
            "B",
            r#""start_ms":null,"first_token_ms":-1,"end_ms":500,"outcome":"success""#,
        ),
    ]);
    let e = fails("neg.jsonl", &text);
    at(&e, Some(3), Some("first_token_ms"), &["negative"]);
}

#[test]
fn end_before_start() {
    let text = jsonl(&[&attempt(
        "A",
        r#""start_ms":1000,"end_ms":400,"outcome":"success""#,
    )]);
    let e = fails("end.jsonl", &text);
    at(
        &e,
        Some(2),
        Some("end_ms"),
        &["before", "start_ms", "400", "1000"],
    );
}

#[test]
fn first_token_before_start() {
    let text = jsonl(&[&attempt(
        "A",
        r#""start_ms":1000,"first_token_ms":900,"end_ms":1500,"outcome":"success""#,
    )]);
    let e = fails("token.jsonl", &text);
    at(&e, Some(2), Some("first_token_ms"), &["before", "start_ms"]);
}

#[test]
fn first_token_after_end() {
    let text = jsonl(&[&attempt(
        "A",
        r#""start_ms":0,"first_token_ms":900,"end_ms":500,"outcome":"success""#,
    )]);
    let e = fails("token.jsonl", &text);
    at(&e, Some(2), Some("first_token_ms"), &["after the end"]);
    let e = fails(
        "class.csv",
        "id,outcome,ttft_s,quality,e2e_s\nR1,success,0.9,pass,0.5\n",
    );
    at(&e, Some(2), Some("ttft_s"), &["after the end"]);
}

#[test]
fn token_recorded_for_an_attempt_that_got_none() {
    let text = jsonl(&[&attempt(
        "A",
        r#""start_ms":0,"first_token_ms":100,"end_ms":500,"outcome":"connect_error""#,
    )]);
    let e = fails("t.jsonl", &text);
    at(&e, Some(2), Some("first_token_ms"), &["missing, not 0"]);
    let e = fails(
        "class.csv",
        "id,outcome,ttft_s,quality\nR9,timeout_before_first_token,0,not_evaluated\n",
    );
    at(&e, Some(2), Some("ttft_s"), &["missing, not 0"]);
}

#[test]
fn events_out_of_order() {
    let text = jsonl(&[&attempt(
        "A",
        r#""start_ms":0,"first_token_ms":100,"events":[[100,1],[300,1],[200,1]],"end_ms":500,"outcome":"success""#,
    )]);
    let e = fails("ev.jsonl", &text);
    at(&e, Some(2), Some("events[2]"), &["arrival order"]);
}

#[test]
fn duplicate_attempt_ids() {
    let text = jsonl(&[
        &attempt("A", GOOD),
        &attempt("B", GOOD),
        &attempt("A", GOOD),
    ]);
    let e = fails("dup.jsonl", &text);
    at(
        &e,
        Some(4),
        Some("id"),
        &["duplicate", "`A`", "first used on line 2"],
    );

    let e = fails("dup.csv", "# comment\nid,outcome,ttft_s,quality\nR1,success,0.2,pass\nR2,success,0.3,pass\nR1,success,0.4,pass\n");
    at(
        &e,
        Some(5),
        Some("id"),
        &["duplicate", "`R1`", "first used on line 3"],
    );
}

#[test]
fn unknown_outcome() {
    let text = jsonl(&[&attempt(
        "A",
        r#""start_ms":0,"end_ms":500,"outcome":"exploded""#,
    )]);
    let e = fails("out.jsonl", &text);
    at(
        &e,
        Some(2),
        Some("outcome"),
        &["unknown outcome `exploded`", "success", "stream_broken"],
    );

    let e = fails("out.csv", "id,outcome,ttft_s,quality\nR1,ok,0.2,pass\n");
    at(&e, Some(2), Some("outcome"), &["unknown outcome `ok`"]);
}

#[test]
fn unknown_quality() {
    let text = jsonl(&[&format!(
        r#"{{"kind":"attempt","id":"A","phase":"measure","quality":"great",{GOOD}}}"#
    )]);
    let e = fails("q.jsonl", &text);
    at(
        &e,
        Some(2),
        Some("quality"),
        &["great", "pass, fail or not_evaluated"],
    );
}

#[test]
fn missing_required_attempt_field() {
    let text = jsonl(&[
        r#"{"kind":"attempt","id":"A","phase":"measure","start_ms":0,"end_ms":5,"outcome":"success"}"#,
    ]);
    let e = fails("m.jsonl", &text);
    at(&e, Some(2), Some("quality"), &["missing"]);
    // start_ms absent is a mistake; null is a statement ("no clock positions").
    let text = jsonl(&[
        r#"{"kind":"attempt","id":"A","phase":"measure","end_ms":5,"outcome":"success","quality":"pass"}"#,
    ]);
    let e = fails("m.jsonl", &text);
    at(&e, Some(2), Some("start_ms"), &["null"]);
}

fn header_with(extra: &str) -> String {
    format!(
        r#"{{"kind":"header","schema":"tracelab.trace","version":1,"tool":{{"name":"t","version":"1"}},{extra}}}"#
    )
}

#[test]
fn window_not_longer_than_zero() {
    for length in ["0", "-1", "0.0"] {
        let text = format!(
            "{}\n",
            header_with(&format!(r#""window":{{"start_ms":0,"length_s":{length}}}"#))
        );
        let e = fails("w.jsonl", &text);
        at(&e, Some(1), Some("window.length_s"), &["longer than 0 s"]);
    }
    for length in ["0", "-1"] {
        let e = fails("w.csv", &format!("# a comment\n# window_s: {length}\nid,outcome,ttft_s,quality\nR1,success,0.2,pass\n"));
        at(&e, Some(2), Some("window_s"), &["longer than 0 s"]);
    }
    let e = fails("w.csv", "# window_s: ten\nid,outcome,ttft_s,quality\n");
    at(&e, Some(1), Some("window_s"), &["ten", "not a number"]);
}

#[test]
fn negative_cost() {
    let text = format!(
        "{}\n",
        header_with(r#""window":{"length_s":10},"window_cost":{"amount":-0.02,"currency":"CNY"}"#)
    );
    let e = fails("c.jsonl", &text);
    at(
        &e,
        Some(1),
        Some("window_cost.amount"),
        &["negative", "-0.02"],
    );

    let e = fails(
        "c.csv",
        "# window_s: 10\n# window_cost: -0.02\nid,outcome,ttft_s,quality\n",
    );
    at(&e, Some(2), Some("window_cost"), &["negative"]);
}

#[test]
fn negative_threshold_default() {
    let text = format!("{}\n", header_with(r#""defaults":{"ttft_threshold_s":-1}"#));
    let e = fails("d.jsonl", &text);
    at(
        &e,
        Some(1),
        Some("defaults.ttft_threshold_s"),
        &["negative"],
    );
}

fn fifty_megabytes_of(c: char) -> String {
    std::iter::repeat_n(c, 50 * 1024 * 1024).collect()
}

#[test]
fn fifty_megabyte_line() {
    // Inside an attempt, after a good header and attempt.
    let mut text = jsonl(&[&attempt("A", GOOD)]);
    text.push_str(r#"{"kind":"attempt","id":"B","detail":""#);
    text.push_str(&fifty_megabytes_of('x'));
    text.push_str("\"}\n");
    text.push_str(&attempt("C", GOOD));
    text.push('\n');
    let started = Instant::now();
    let e = fails("huge.jsonl", &text);
    let took = started.elapsed();
    at(&e, Some(3), None, &["50.0 MiB", "at most"]);
    assert!(
        took < Duration::from_secs(5),
        "must fail fast, took {took:?}"
    );
    assert!(
        streamed::agree("huge.jsonl", text.as_bytes(), |_| {}),
        "read past without holding it"
    );

    // As the very first line, and with no newline at the end (so not taken for a cut-off line).
    let mut text = String::from("{\"kind\":\"header\",\"x\":\"");
    text.push_str(&fifty_megabytes_of('y'));
    let started = Instant::now();
    let e = fails("huge.jsonl", &text);
    at(&e, Some(1), None, &["MiB"]);
    assert!(started.elapsed() < Duration::from_secs(5));

    // In a classroom CSV.
    let mut text = String::from("id,outcome,ttft_s,quality\nR1,success,0.2,pass\nR2,");
    text.push_str(&fifty_megabytes_of('z'));
    text.push_str(",0.3,pass\n");
    let started = Instant::now();
    let e = fails("huge.csv", &text);
    at(&e, Some(3), None, &["too long"]);
    assert!(started.elapsed() < Duration::from_secs(5));

    // Through the bytes entry point too.
    let mut bytes = jsonl(&[]).into_bytes();
    bytes.extend(std::iter::repeat_n(b' ', 50 * 1024 * 1024));
    bytes.extend_from_slice(b"{}\n");
    let e = parse_trace_bytes("huge.jsonl", &bytes).unwrap_err();
    at(&e, Some(2), None, &["MiB"]);
    assert!(streamed::agree("huge.jsonl", &bytes, |_| {}));
}

#[test]
fn header_missing() {
    let text = format!("{}\n", attempt("A", GOOD));
    let e = fails("nohead.jsonl", &text);
    at(
        &e,
        Some(1),
        Some("kind"),
        &["first record must be the header", "attempt"],
    );

    let e = fails(
        "nohead.jsonl",
        "\n\n{\"kind\":\"footer\",\"finished_cleanly\":true,\"attempts\":0}\n",
    );
    at(&e, Some(3), Some("kind"), &["header", "footer"]);

    // A CSV made only of `#` lines has no header row.
    let e = fails("nohead.csv", "# window_s: 10\n# window_cost: 1\n");
    at(
        &e,
        None,
        None,
        &["header row", "id, outcome, ttft_s, quality"],
    );
}

#[test]
fn second_header() {
    let text = format!("{HEADER}\n{HEADER}\n");
    let e = fails("two.jsonl", &text);
    at(&e, Some(2), Some("kind"), &["second header"]);
}

#[test]
fn header_of_version_two() {
    let text = format!("{}\n", HEADER.replace(r#""version":1"#, r#""version":2"#));
    let e = fails("v2.jsonl", &text);
    at(&e, Some(1), Some("version"), &["v2", "v1", "update"]);

    let text = format!("{}\n", HEADER.replace(r#""version":1"#, r#""version":0"#));
    let e = fails("v0.jsonl", &text);
    at(&e, Some(1), Some("version"), &["start at 1"]);
}

#[test]
fn header_of_another_schema() {
    let text = format!("{}\n", HEADER.replace("tracelab.trace", "something.else"));
    let e = fails("other.jsonl", &text);
    at(
        &e,
        Some(1),
        Some("schema"),
        &["something.else", "tracelab.trace"],
    );
}

#[test]
fn header_missing_a_required_field() {
    let e = fails(
        "h.jsonl",
        "{\"kind\":\"header\",\"schema\":\"tracelab.trace\",\"version\":1}\n",
    );
    at(
        &e,
        Some(1),
        Some("tool"),
        &["header", "missing field `tool`"],
    );
    let e = fails(
        "h.jsonl",
        &format!("{}\n", header_with(r#""window":{"start_ms":0}"#)),
    );
    at(
        &e,
        Some(1),
        Some("window.length_s"),
        &["missing field `length_s`"],
    );
    let e = fails(
        "h.jsonl",
        &format!("{}\n", header_with(r#""window":{"length_s":"ten"}"#)),
    );
    at(&e, Some(1), Some("window.length_s"), &["string"]);
}

#[test]
fn http_error_without_status() {
    let text = jsonl(&[&attempt(
        "A",
        r#""start_ms":0,"end_ms":40,"outcome":"http_error""#,
    )]);
    let e = fails("h.jsonl", &text);
    at(
        &e,
        Some(2),
        Some("http_status"),
        &["http_error", "http_status"],
    );

    // The CSV names the same field.
    let e = fails(
        "h.csv",
        "id,outcome,ttft_s,quality\nR1,http_error,,not_evaluated\n",
    );
    at(
        &e,
        Some(2),
        Some("http_status"),
        &["http_error", "http_status"],
    );

    // With the status it is fine, and the status is kept.
    let text = jsonl(&[&attempt(
        "A",
        r#""start_ms":0,"end_ms":40,"outcome":"http_error","http_status":429"#,
    )]);
    let trace = parse_trace("h.jsonl", &text).unwrap();
    assert_eq!(trace.attempts[0].outcome.http_status(), Some(429));
}

#[track_caller]
fn parses(name: &str, text: &str) -> Trace {
    parse_trace(name, text).unwrap_or_else(|e| panic!("{name} should parse: {e}"))
}

#[test]
fn cut_off_last_line_is_accepted_with_a_warning() {
    let mut text = jsonl(&[&attempt("A", GOOD), &attempt("B", GOOD)]);
    text.push_str(r#"{"kind":"attempt","id":"C","phase":"meas"#); // no trailing newline
    let trace = parses("cut.jsonl", &text);
    let ids: Vec<&str> = trace.attempts.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["A", "B"], "the finished attempts are kept");
    assert_eq!(trace.warnings.len(), 1, "{:?}", trace.warnings);
    assert!(
        trace.warnings[0].contains("line 4") && trace.warnings[0].contains("cut off"),
        "{:?}",
        trace.warnings
    );
    assert!(
        trace.is_incomplete(),
        "no footer: the run did not finish cleanly"
    );

    // Cut right after a number, too.
    let mut text = jsonl(&[&attempt("A", GOOD)]);
    text.push_str(r#"{"kind":"attempt","id":"C","start_ms":12"#);
    assert_eq!(parses("cut.jsonl", &text).attempts.len(), 1);

    // The same broken line *with* a newline after it is not a cut-off write but a bad record.
    let mut text = jsonl(&[&attempt("A", GOOD)]);
    text.push_str("{\"kind\":\"attempt\",\"id\":\"C\",\"phase\":\"meas\n");
    let e = fails("cut.jsonl", &text);
    at(&e, Some(3), None, &["not valid JSON"]);

    // Nor is a broken line in the middle of the file.
    let text = jsonl(&[
        &attempt("A", GOOD),
        r#"{"kind":"attempt","id":"C""#,
        &attempt("D", GOOD),
    ]);
    let e = fails("cut.jsonl", &text);
    at(&e, Some(3), None, &["not valid JSON"]);
}

#[test]
fn cut_off_in_the_middle_of_a_character() {
    // A writer stopped inside a multi-byte character leaves invalid UTF-8 at the very end: still
    // the cut-off last line, read with a warning by the bytes entry point.
    let mut bytes = jsonl(&[&attempt("A", GOOD)]).into_bytes();
    bytes.extend_from_slice(r#"{"kind":"attempt","id":"B","detail":"连接"#.as_bytes());
    bytes.extend_from_slice(&"失".as_bytes()[..2]);
    let trace = parse_trace_bytes("cut.jsonl", &bytes).unwrap_or_else(|e| panic!("{e}"));
    assert!(streamed::agree("cut.jsonl", &bytes, |_| {}));
    assert_eq!(trace.attempts.len(), 1);
    assert_eq!(trace.warnings.len(), 1, "{:?}", trace.warnings);
    assert!(trace.warnings[0].contains("line 3"), "{:?}", trace.warnings);
}

#[test]
fn non_utf8_bytes() {
    let mut bytes = jsonl(&[&attempt("A", GOOD)]).into_bytes();
    bytes.extend_from_slice(b"{\"kind\":\"attempt\",\"id\":\"B\xff\xfe\"}\n");
    let e = parse_trace_bytes("latin.jsonl", &bytes).unwrap_err();
    assert!(streamed::agree("latin.jsonl", &bytes, |_| {}));
    assert_eq!(e.file, "latin.jsonl");
    at(&e, Some(3), None, &["not UTF-8"]);

    let e = parse_trace_bytes(
        "latin.csv",
        b"id,outcome,ttft_s,quality\nR1,success,0.2,pass\nR\xe92,success,0.3,pass\n",
    )
    .unwrap_err();
    at(&e, Some(3), None, &["not UTF-8"]);

    // A binary file (a PNG's signature) on the first line.
    let e = parse_trace_bytes("picture.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap_err();
    at(&e, Some(1), None, &["not UTF-8", "is it a trace"]);

    // A CSV that ends inside a character is refused: it has no cut-off-line rule.
    let mut bytes = b"id,outcome,ttft_s,quality,detail\nR1,success,0.2,pass,".to_vec();
    bytes.extend_from_slice(&"失".as_bytes()[..1]);
    let e = parse_trace_bytes("cut.csv", &bytes).unwrap_err();
    at(&e, Some(2), None, &["not UTF-8"]);
}

#[test]
fn unknown_kind_is_skipped_with_a_warning_and_unknown_fields_ignored() {
    let text = jsonl(&[
        r#"{"kind":"annotation","text":"from a future version"}"#,
        &attempt("A", &format!("{GOOD},\"colour\":\"blue\"")),
    ]);
    let trace = parses("future.jsonl", &text);
    assert_eq!(trace.attempts.len(), 1);
    assert_eq!(trace.warnings.len(), 1);
    assert!(
        trace.warnings[0].contains("line 2") && trace.warnings[0].contains("annotation"),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn gpu_record_out_of_range() {
    let text = jsonl(&[
        r#"{"kind":"gpu","t_ms":0,"gpu":0,"util_pct":140,"mem_used_mib":1,"mem_total_mib":2}"#,
    ]);
    let e = fails("g.jsonl", &text);
    at(&e, Some(2), Some("util_pct"), &["0–100"]);
    let text = jsonl(&[r#"{"kind":"gpu","t_ms":0,"gpu":0,"mem_used_mib":1,"mem_total_mib":2}"#]);
    let e = fails("g.jsonl", &text);
    at(&e, Some(2), Some("util_pct"), &["missing"]);
}

#[test]
fn footer_disagreeing_with_the_attempts_is_a_warning() {
    let text = jsonl(&[
        &attempt("A", GOOD),
        r#"{"kind":"footer","finished_cleanly":true,"attempts":3}"#,
    ]);
    let trace = parses("f.jsonl", &text);
    assert!(!trace.is_incomplete());
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.contains("3") && w.contains("1")),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn crlf_and_bom_are_accepted() {
    let text = format!(
        "\u{feff}{}",
        jsonl(&[&attempt("A", GOOD)]).replace('\n', "\r\n")
    );
    assert_eq!(parses("win.jsonl", &text).attempts.len(), 1);
    let text = "\u{feff}id,outcome,ttft_s,quality\r\nR1,success,0.2,pass\r\n";
    assert_eq!(parses("win.csv", text).attempts.len(), 1);
}

#[test]
fn a_field_another_kind_reads_differently_is_still_ignored() {
    // Every kind is read through one flat record first; a field that this kind does not read
    // but another reads with another type must not fail the line.
    let text = jsonl(&[
        // `gpu` is a number on a gpu record; here it is an attempt's unknown field.
        &attempt(
            "A",
            &format!("{GOOD},\"gpu\":\"A100\",\"attempts\":\"several\""),
        ),
        // `id` and `attempt` are strings/numbers on attempts; on a gpu record they are unknown.
        r#"{"kind":"gpu","t_ms":10,"gpu":0,"util_pct":50,"mem_used_mib":1,"mem_total_mib":2,"id":7,"phase":"x"}"#,
        // An unknown kind is skipped, whatever its fields.
        r#"{"kind":"note","attempt":"A","events":"many","text":"from a later version"}"#,
        r#"{"kind":"footer","finished_cleanly":true,"attempts":1,"quality":0}"#,
    ]);
    let trace = parses("future.jsonl", &text);
    assert_eq!(trace.attempts.len(), 1);
    assert_eq!(trace.gpu.len(), 1);
    assert!(!trace.is_incomplete());
    assert_eq!(trace.warnings.len(), 1, "{:?}", trace.warnings);
    assert!(trace.warnings[0].contains("`note`"), "{:?}", trace.warnings);

    // A header with a top-level field an attempt reads with another type.
    let text = format!(
        "{}\n{}\n",
        header_with(r#""phase":1,"attempts":"many""#),
        attempt("A", GOOD)
    );
    assert_eq!(parses("h.jsonl", &text).attempts.len(), 1);

    // The record's own fields are still checked.
    let text = jsonl(&[&attempt(
        "A",
        r#""start_ms":"soon","end_ms":5,"outcome":"success","gpu":"A100""#,
    )]);
    let e = fails("own.jsonl", &text);
    at(&e, Some(2), Some("start_ms"), &["string"]);
    let text = jsonl(&[
        r#"{"kind":"gpu","t_ms":"now","gpu":0,"util_pct":50,"mem_used_mib":1,"mem_total_mib":2}"#,
    ]);
    let e = fails("own.jsonl", &text);
    at(&e, Some(2), Some("t_ms"), &["string"]);
    // An unknown kind before the header is still "no header".
    let e = fails("nohead.jsonl", "{\"kind\":\"note\",\"attempt\":\"A\"}\n");
    at(&e, Some(1), Some("kind"), &["header", "note"]);
    // A kind that is not a string, and a line that is not an object.
    let e = fails("k.jsonl", &jsonl(&[r#"{"kind":5}"#]));
    at(&e, Some(2), Some("kind"), &["integer"]);
    let e = fails("k.jsonl", &jsonl(&["[1,2]"]));
    at(&e, Some(2), None, &["JSON object"]);
}
