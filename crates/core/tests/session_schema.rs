//! The session fields of an attempt (`session_id`, `turn`, `history_tokens`, and
//! `cached_tokens` without a prompt-set record): read, refused with file, line and field, and
//! written back unchanged; a trace without them still loads.

use tracelab_core::parse::parse_trace;
use tracelab_core::write;

const HEADER: &str = r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"hand","version":"1"}}"#;

fn turn(id: &str, business: &str, session: &str, turn: u32, extra: &str) -> String {
    format!(
        r#"{{"kind":"attempt","id":"{id}","business_id":"{business}","phase":"measure","start_ms":0,"first_token_ms":100,"end_ms":200,"outcome":"success","quality":"pass","session_id":"{session}","turn":{turn}{extra}}}"#
    )
}

fn text(lines: &[String]) -> String {
    let mut all = vec![HEADER.to_string()];
    all.extend(lines.iter().cloned());
    all.join("\n") + "\n"
}

#[test]
fn session_fields_are_read_and_written_back() {
    let t = text(&[
        turn(
            "a1",
            "a1",
            "s1",
            1,
            r#","history_tokens":0,"cached_tokens":0"#,
        ),
        turn(
            "a2",
            "a2",
            "s1",
            2,
            r#","history_tokens":350,"cached_tokens":300"#,
        ),
        turn("b1", "b1", "s2", 1, ""),
    ]);
    let trace = parse_trace("s.jsonl", &t).unwrap();
    let s = trace.attempts[1].session.as_ref().unwrap();
    assert_eq!((s.session_id.as_str(), s.turn), ("s1", 2));
    assert_eq!(s.history_tokens, Some(350));
    assert_eq!(trace.attempts[1].cached_tokens(), Some(300));
    assert_eq!(trace.attempts[1].prompt, None);
    let bare = trace.attempts[2].session.as_ref().unwrap();
    assert_eq!((bare.history_tokens, bare.cached_tokens), (None, None));
    let again = parse_trace("again.jsonl", &write::to_jsonl(&trace)).unwrap();
    assert_eq!(again.attempts, trace.attempts);
}

#[test]
fn a_retry_keeps_its_turn_and_a_trace_without_sessions_still_loads() {
    let t = text(&[
        turn("a1", "u1", "s1", 1, ""),
        turn("a1-retry", "u1", "s1", 1, ""),
    ]);
    assert_eq!(parse_trace("r.jsonl", &t).unwrap().attempts.len(), 2);
    let old = text(&[r#"{"kind":"attempt","id":"x","phase":"measure","start_ms":0,"first_token_ms":100,"end_ms":200,"outcome":"success","quality":"pass"}"#.to_string()]);
    let trace = parse_trace("old.jsonl", &old).unwrap();
    assert_eq!(trace.attempts[0].session, None);
    assert!(!write::to_jsonl(&trace).contains("session_id"));
}

#[test]
fn bad_session_fields_are_refused_naming_file_line_and_field() {
    let refuse = |lines: &[String], line: usize, field: &str, says: &str| {
        let e = parse_trace("bad.jsonl", &text(lines)).unwrap_err();
        assert_eq!(e.file, "bad.jsonl", "{e}");
        assert_eq!(e.line, Some(line), "{e}");
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
        assert!(e.message.contains(says), "{e}");
    };
    refuse(&[turn("a", "a", "s1", 0, "")], 2, "turn", "from 1");
    refuse(
        &[turn("a", "a", "", 1, "")],
        2,
        "session_id",
        "cannot be empty",
    );
    refuse(
        &[turn("a", "a", "s1", 1, ""), turn("b", "b", "s1", 1, "")],
        3,
        "turn",
        "repeats turn 1 (first on line 2)",
    );
    let no_turn = r#"{"kind":"attempt","id":"a","phase":"measure","start_ms":0,"end_ms":200,"outcome":"success","quality":"pass","session_id":"s1"}"#;
    refuse(&[no_turn.to_string()], 2, "turn", "go together");
    let no_session = r#"{"kind":"attempt","id":"a","phase":"measure","start_ms":0,"end_ms":200,"outcome":"success","quality":"pass","turn":2}"#;
    refuse(&[no_session.to_string()], 2, "session_id", "go together");
    let history_alone = r#"{"kind":"attempt","id":"a","phase":"measure","start_ms":0,"end_ms":200,"outcome":"success","quality":"pass","history_tokens":5}"#;
    refuse(
        &[history_alone.to_string()],
        2,
        "history_tokens",
        "session_id and turn",
    );
    refuse(
        &[turn("a", "a", "s1", 1, r#","turn_x":1,"turn":-1"#)],
        2,
        "turn",
        "",
    );
}
