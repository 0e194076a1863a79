//! AIPerf's session trace for `tracelab record --conversations`: its `mooncake_trace` custom
//! dataset (JSON Lines, one turn per line, grouped into sessions by `session_id`).
//!
//! Read from AIPerf's own source (github.com/ai-dynamo/aiperf): the loader
//! `src/aiperf/dataset/loader/mooncake_trace.py` at 9ad887178e912daf299f39e076a6cdc655ca9f05
//! (and `aiperf/dataset/loader/mooncake_trace.py` at db4f6397d11ee2d4cfbb41f70b2327315163dcf0),
//! its model `MooncakeTrace` in `src/aiperf/dataset/loader/models.py` at
//! 02b0d5c368212e27462f70410963927eaeb4715c, the session history rules in
//! `src/aiperf/workers/session_manager.py` at e48192af792d0a52f90f6685f7652f9f2f82ff8d, and the
//! docs `docs/benchmark-modes/trace-replay.md` (96ebaea3…) and `docs/tutorials/multi-turn.md`
//! (a99b8fe3…). What they say, and what Trace Lab does with it:
//!
//! - Blank lines are skipped; every other line is one JSON object (pydantic `MooncakeTrace`).
//! - Lines sharing a `session_id` are one conversation, its turns in file order; a line without
//!   one is a conversation of its own (AIPerf gives it a fresh id; here `line-N`). A
//!   `session_id` is a string.
//! - Exactly one input mode per line: `input_length` (synthetic text of that many tokens, with
//!   `hash_ids` naming its 512-token blocks, AIPerf's default `--isl-block-size`), `text_input`
//!   (the text itself), `messages` (a complete OpenAI message array, each with a `role`) or
//!   `payload` (a pre-built request body sent verbatim). `hash_ids` only with `input_length`.
//! - `output_length` becomes the turn's `max_tokens`; `delay` is ms to wait before sending the
//!   turn (the user's think time after the previous reply; AIPerf applies none before a
//!   session's first turn); `timestamp` is the request's time in ms (`--fixed-schedule`).
//! - History: `text_input`/`input_length` turns are deltas: turn k + 1 carries turns 1..k and
//!   the server's live replies (`deltas_without_responses`, AIPerf's default); a `messages` turn
//!   already holds its whole history and is sent as it is, the live reply not carried
//!   (`message_array_with_responses`, AIPerf's default for pre-built `messages`).
//! - AIPerf ignores fields it does not know (`extra="allow"`), and so does this reader.
//!
//! Refused here, naming file, line and field, before anything is sent: `payload` (a body sent
//! verbatim would drop the streaming and usage options every measurement needs), `tools` (tool
//! calls stream no answer text for the rubric to judge) and `extra` (it would override the
//! request's own fields); a session mixing `messages` turns with text turns (the two history
//! rules cannot both hold); a later turn whose `timestamp` lies before an earlier one's;
//! `hash_ids` that do not fill `input_length` block by block.

use serde_json::{Map, Value};
use tracelab_core::workload::MOONCAKE_BLOCK_TOKENS;

use crate::conversation_file::{
    sha256_hex, AnswerLength, ConversationFile, FileConversation, FileFormat, FileTurn, TurnInput,
};
use crate::workload::{Lengths, Space};

/// The fields AIPerf's `MooncakeTrace` reads: a JSON Lines file whose first object holds one of
/// them is read as AIPerf's trace.
pub const FIELDS: [&str; 11] = [
    "session_id",
    "input_length",
    "text_input",
    "messages",
    "payload",
    "output_length",
    "hash_ids",
    "timestamp",
    "delay",
    "tools",
    "extra",
];

/// Reads AIPerf's session trace (see the module's notes). Sessions keep the order of their
/// first line, or, where every session's first turn has a `timestamp`, the order of those
/// timestamps (AIPerf's timing manager sorts them too).
pub fn read_aiperf(file: &str, bytes: &[u8]) -> Result<ConversationFile, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        format!("{file}, line {line}: not UTF-8 text")
    })?;
    let mut order: Vec<String> = Vec::new();
    let mut sessions: std::collections::HashMap<String, (Vec<FileTurn>, Vec<usize>, bool, bool)> =
        std::collections::HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let at =
            |field: &str, what: String| format!("{file}, line {line}, field `{field}`: {what}");
        let value: Value = serde_json::from_str(raw).map_err(|e| {
            format!(
                "{file}, line {line}, column {}: not valid JSON ({e})",
                e.column()
            )
        })?;
        let Value::Object(o) = value else {
            return Err(format!(
                "{file}, line {line}: not a JSON object; AIPerf's trace has one object per line"
            ));
        };
        let (turn, is_messages) = read_turn(&o, &at)?;
        let id = match o.get("session_id") {
            None | Some(Value::Null) => format!("line-{line}"),
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) => return Err(at("session_id", "empty".into())),
            Some(v) => {
                return Err(at(
                    "session_id",
                    format!("expected a string (AIPerf's session_id is a string), found {v}"),
                ))
            }
        };
        let entry = sessions.entry(id.clone()).or_insert_with(|| {
            order.push(id.clone());
            (Vec::new(), Vec::new(), false, false)
        });
        let (turns, lines, has_messages, has_text) = entry;
        if (is_messages && *has_text) || (!is_messages && *has_messages) {
            let field = match &turn.input {
                TurnInput::Messages(_) => "messages",
                TurnInput::Text(_) => "text_input",
                TurnInput::Synthetic { .. } => "input_length",
            };
            return Err(at(
                field,
                format!(
                    "session \"{id}\" mixes whole `messages` arrays with text turns (`text_input`/`input_length`): a messages turn carries its own history and a text turn carries the server's replies, so one session cannot be both; split the session"
                ),
            ));
        }
        *has_messages |= is_messages;
        *has_text |= !is_messages;
        if let (Some(ts), Some(prev)) = (
            turn.timestamp_ms,
            turns.iter().rev().find_map(|t: &FileTurn| t.timestamp_ms),
        ) {
            if ts < prev {
                return Err(at(
                    "timestamp",
                    format!(
                        "{ts} ms lies before an earlier turn of session \"{id}\" ({prev} ms): a session's turns go in file order"
                    ),
                ));
            }
        }
        turns.push(turn);
        lines.push(line);
    }
    if order.is_empty() {
        return Err(format!("{file}: no line holds a turn"));
    }
    let mut conversations: Vec<FileConversation> = order
        .into_iter()
        .map(|id| {
            let (turns, _, _, _) = sessions.remove(&id).expect("every id was entered");
            FileConversation { id, turns }
        })
        .collect();
    if conversations
        .iter()
        .all(|c| c.turns[0].timestamp_ms.is_some())
    {
        conversations.sort_by(|a, b| {
            a.turns[0]
                .timestamp_ms
                .partial_cmp(&b.turns[0].timestamp_ms)
                .expect("timestamps are finite")
        });
    }
    Ok(ConversationFile {
        file: file.to_string(),
        sha256: sha256_hex(bytes),
        format: FileFormat::Aiperf,
        conversations,
    })
}

/// One line's turn, and whether it is a whole `messages` array.
fn read_turn(
    o: &Map<String, Value>,
    at: &dyn Fn(&str, String) -> String,
) -> Result<(FileTurn, bool), String> {
    let get = |k: &str| o.get(k).filter(|v| !v.is_null());
    if let Some(t) = get("type") {
        if t.as_str() != Some("mooncake_trace") {
            return Err(at(
                "type",
                format!("{t}: AIPerf's session trace has type \"mooncake_trace\" (or none)"),
            ));
        }
    }
    for (field, why) in [
        ("payload", "a pre-built request body sent verbatim would drop the streaming and usage options every Trace Lab measurement needs; give the turn as `messages` or `text_input`"),
        ("tools", "a tool definition invites tool calls, whose streamed reply holds no answer text for the turn's rubric to judge; Trace Lab does not replay tool use"),
        ("extra", "vendor fields merged into the request body could override its model, stream or max_tokens; Trace Lab sends the request as it measures it"),
    ] {
        if get(field).is_some() {
            return Err(at(field, format!("not supported: {why}")));
        }
    }
    let modes: Vec<&str> = ["input_length", "text_input", "messages"]
        .into_iter()
        .filter(|k| get(k).is_some())
        .collect();
    let input = match modes.as_slice() {
        [] => {
            return Err(at(
                "input_length",
                "missing: a turn needs exactly one of `input_length`, `text_input`, `messages` (AIPerf's rule)".into(),
            ))
        }
        [_, second, ..] => {
            return Err(at(
                second,
                format!(
                    "`{}` and `{second}` are both given: AIPerf takes exactly one input mode per line",
                    modes[0]
                ),
            ))
        }
        ["input_length"] => {
            let tokens = whole(get("input_length").expect("present"), 1)
                .ok_or_else(|| at("input_length", "expected a whole number of tokens, at least 1".into()))?;
            let blocks = match get("hash_ids") {
                None => Vec::new(),
                Some(Value::Array(ids)) => {
                    let mut blocks = Vec::with_capacity(ids.len());
                    for (j, id) in ids.iter().enumerate() {
                        blocks.push(whole(id, 0).ok_or_else(|| {
                            at(&format!("hash_ids[{j}]"), format!("{id} is not a block id (a whole number from 0)"))
                        })?);
                    }
                    blocks
                }
                Some(v) => return Err(at("hash_ids", format!("{v} is not a list of block ids"))),
            };
            let needed = tokens.div_ceil(MOONCAKE_BLOCK_TOKENS as u64) as usize;
            if !blocks.is_empty() && blocks.len() != needed {
                return Err(at(
                    "hash_ids",
                    format!(
                        "{} blocks, but input_length {tokens} fills {needed} of AIPerf's default {MOONCAKE_BLOCK_TOKENS}-token blocks",
                        blocks.len()
                    ),
                ));
            }
            TurnInput::Synthetic {
                tokens: u32::try_from(tokens)
                    .map_err(|_| at("input_length", format!("{tokens} tokens is too long")))?,
                blocks,
            }
        }
        ["text_input"] => match get("text_input").expect("present") {
            Value::String(t) if !t.trim().is_empty() => TurnInput::Text(t.clone()),
            Value::String(_) => return Err(at("text_input", "empty".into())),
            v => return Err(at("text_input", format!("expected a string, found {v}"))),
        },
        _ => {
            let Some(Value::Array(messages)) = get("messages") else {
                return Err(at("messages", "expected an array of messages".into()));
            };
            if messages.is_empty() {
                return Err(at("messages", "must be a non-empty list (AIPerf's rule)".into()));
            }
            for (j, m) in messages.iter().enumerate() {
                let Some(m) = m.as_object() else {
                    return Err(at(&format!("messages[{j}]"), "expected an object with a `role`".into()));
                };
                match m.get("role") {
                    Some(Value::String(_)) => {}
                    Some(v) => return Err(at(&format!("messages[{j}].role"), format!("expected a string, found {v}"))),
                    None => return Err(at(&format!("messages[{j}].role"), "missing (AIPerf's rule: each message has a role)".into())),
                }
            }
            TurnInput::Messages(messages.clone())
        }
    };
    if get("hash_ids").is_some() && !matches!(input, TurnInput::Synthetic { .. }) {
        return Err(at(
            "hash_ids",
            "only allowed with `input_length` (AIPerf's rule): they name the blocks of a synthetic prompt".into(),
        ));
    }
    let answer = match get("output_length") {
        None => None,
        Some(v) => Some(AnswerLength::Tokens(
            whole(v, 1)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    at(
                        "output_length",
                        format!("{v} is not a whole number of tokens, at least 1"),
                    )
                })?,
        )),
    };
    let ms = |field: &str| -> Result<Option<f64>, String> {
        match get(field) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => Err(at(
                    field,
                    format!("{v} is not a number of milliseconds, 0 or more"),
                )),
            },
        }
    };
    let is_messages = matches!(input, TurnInput::Messages(_));
    Ok((
        FileTurn {
            input,
            answer,
            delay_ms: ms("delay")?,
            timestamp_ms: ms("timestamp")?,
        },
        is_messages,
    ))
}

/// A whole number at least `min` (a JSON integer, or a float with no fraction as pydantic's
/// lax `int` takes it).
fn whole(v: &Value, min: u64) -> Option<u64> {
    let n = match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1e15)
                .map(|f| f as u64)
        })?,
        _ => return None,
    };
    (n >= min).then_some(n)
}

/// The text of an `input_length` turn: its `hash_ids` blocks in order (a block's words depend
/// on its id only, so turns and sessions naming one block share its text, as AIPerf's prompt
/// generator makes them share tokens), or words of the turn's own.
pub fn synthetic_text(s: u32, turn: u32, tokens: u32, blocks: &[u64], lengths: &Lengths) -> String {
    let planned = tracelab_core::workload::Planned {
        index: ((s as usize) << 16) | turn as usize,
        at_ms: 0.0,
        input_tokens: tokens,
        output_tokens: 0,
        blocks: blocks.to_vec(),
    };
    crate::workload::prompt(Space::Replay, &planned, lengths)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A constructed file in AIPerf's session-trace format (fields as its `MooncakeTrace` model
    /// reads them; the values are made up here).
    const CONSTRUCTED: &str = r#"{"session_id": "b", "timestamp": 500, "text_input": "Name three colours.", "output_length": 8}
{"session_id": "a", "timestamp": 0, "input_length": 600, "output_length": 16, "hash_ids": [7, 8]}

{"session_id": "a", "delay": 250, "input_length": 40, "output_length": 4}
{"session_id": "b", "timestamp": 2500, "text_input": "And one more?"}
{"session_id": "c", "timestamp": 900, "messages": [{"role": "user", "content": "Hi"}], "output_length": 5, "unknown_field": 1}
{"session_id": "c", "delay": 100, "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye"}]}
"#;

    #[test]
    fn aiperf_lines_become_sessions_by_session_id_with_their_delays_and_lengths() {
        let f = read_aiperf("trace.jsonl", CONSTRUCTED.as_bytes()).unwrap();
        assert_eq!(f.format, FileFormat::Aiperf);
        let ids: Vec<&str> = f.conversations.iter().map(|c| c.id.as_str()).collect();
        // Every first turn has a timestamp: sessions in the order of those timestamps.
        assert_eq!(ids, ["a", "b", "c"]);
        let a = &f.conversations[0];
        assert_eq!(a.turns.len(), 2);
        assert_eq!(
            a.turns[0].input,
            TurnInput::Synthetic {
                tokens: 600,
                blocks: vec![7, 8]
            }
        );
        assert_eq!(a.turns[0].answer, Some(AnswerLength::Tokens(16)));
        assert_eq!(a.turns[1].delay_ms, Some(250.0));
        let b = &f.conversations[1];
        assert_eq!(b.turns[1].input, TurnInput::Text("And one more?".into()));
        assert_eq!(b.turns[1].answer, None);
        assert!(
            matches!(&f.conversations[2].turns[1].input, TurnInput::Messages(m) if m.len() == 3)
        );
        assert_eq!(f.starts_ms(), Some(vec![0.0, 500.0, 900.0]));

        // Shared blocks share text; the last block holds the remainder.
        let one = Lengths::approximate(vec![]);
        let t = synthetic_text(0, 1, 600, &[7, 8], &one);
        assert_eq!(t.split(' ').count(), 600);
        let u = synthetic_text(5, 2, 512, &[7], &one);
        assert_eq!(
            t.split(' ').take(512).collect::<Vec<_>>(),
            u.split(' ').collect::<Vec<_>>()
        );
        assert_ne!(
            synthetic_text(0, 2, 40, &[], &one),
            synthetic_text(1, 2, 40, &[], &one)
        );
    }

    #[test]
    fn lines_without_session_id_are_sessions_of_their_own() {
        let f = read_aiperf(
            "t.jsonl",
            b"{\"input_length\": 10}\n{\"input_length\": 12, \"delay\": 5}\n",
        )
        .unwrap();
        let ids: Vec<&str> = f.conversations.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["line-1", "line-2"]);
        assert_eq!(
            f.starts_ms(),
            None,
            "no timestamps: no schedule of the file's own"
        );
    }

    #[test]
    fn bad_aiperf_files_name_the_file_the_line_and_the_field() {
        let err = |text: &str| read_aiperf("bad.jsonl", text.as_bytes()).unwrap_err();
        let cases: [(&str, &str); 16] = [
            ("{\"session_id\": \"a\", \"input_length\": 5}\n{\"session_id\": \"a\", \"text_input\": \"x\", \"input_length\": 3}", "bad.jsonl, line 2, field `text_input`: `input_length` and `text_input` are both given"),
            ("{\"session_id\": \"a\", \"output_length\": 5}", "bad.jsonl, line 1, field `input_length`: missing"),
            ("{\"session_id\": 7, \"input_length\": 5}", "line 1, field `session_id`: expected a string"),
            ("{\"session_id\": \"a\", \"input_length\": 0}", "line 1, field `input_length`: expected a whole number"),
            ("{\"session_id\": \"a\", \"input_length\": 2.5}", "line 1, field `input_length`: expected a whole number"),
            ("{\"session_id\": \"a\", \"text_input\": \"x\", \"hash_ids\": [1]}", "line 1, field `hash_ids`: only allowed with `input_length`"),
            ("{\"session_id\": \"a\", \"input_length\": 600, \"hash_ids\": [1]}", "line 1, field `hash_ids`: 1 blocks, but input_length 600 fills 2"),
            ("{\"session_id\": \"a\", \"input_length\": 6, \"hash_ids\": [-1]}", "line 1, field `hash_ids[0]`: -1 is not a block id"),
            ("{\"session_id\": \"a\", \"input_length\": 6, \"delay\": -3}", "line 1, field `delay`: -3 is not a number of milliseconds"),
            ("{\"session_id\": \"a\", \"input_length\": 6, \"output_length\": 0}", "line 1, field `output_length`: 0 is not a whole number"),
            ("{\"session_id\": \"a\", \"messages\": []}", "line 1, field `messages`: must be a non-empty list"),
            ("{\"session_id\": \"a\", \"messages\": [{\"content\": \"x\"}]}", "line 1, field `messages[0].role`: missing"),
            ("{\"session_id\": \"a\", \"payload\": {\"prompt\": \"x\"}}", "line 1, field `payload`: not supported"),
            ("{\"session_id\": \"a\", \"input_length\": 5}\n\n{\"session_id\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}", "line 3, field `messages`: session \"a\" mixes"),
            ("{\"session_id\": \"a\", \"input_length\": 5, \"timestamp\": 10}\n{\"session_id\": \"a\", \"input_length\": 5, \"timestamp\": 9}", "line 2, field `timestamp`: 9 ms lies before"),
            ("{\"session_id\": \"a\", \"input_length\": 5, \"type\": \"single_turn\"}", "line 1, field `type`"),
        ];
        for (text, want) in cases {
            let e = err(text);
            assert!(e.contains(want), "{text}\n→ {e}\nwanted {want}");
            assert!(e.starts_with("bad.jsonl, line "), "{e}");
        }
        let e = err("{\"session_id\": \"a\", \"input_length\": 5}\n{\"session_id\": \"a\", oops}");
        assert!(e.starts_with("bad.jsonl, line 2, column"), "{e}");
        let e = err("{\"session_id\": \"a\", \"input_length\": 5}\n[1]");
        assert!(e.contains("line 2: not a JSON object"), "{e}");
    }
}
