//! What counts as a complete answer, what a reply that is no event stream is called, how tokens
//! are estimated without usage, and what one endless stream may cost (issue 9, stream half).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use tracelab_core::{Outcome, Trace};

use crate::server::{Script, ScriptedServer, Step};
use crate::{by_id, load, record_once, run, tracelab};

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn tokens(n: u32) -> Vec<Step> {
    (0..n)
        .flat_map(|_| [Step::Sleep(ms(2)), Step::Token("tok ".into())])
        .collect()
}

fn with(mut head: Vec<Step>, tail: Vec<Step>) -> Script {
    head.extend(tail);
    Script::new(head)
}

fn header(mut script: Script, name: &str, value: &str) -> Script {
    script.headers.push((name.into(), value.into()));
    script
}

fn script(key: &str) -> Script {
    let role = || vec![Step::Role, Step::Sleep(ms(20))];
    let usage = |n| Step::Usage {
        prompt: 7,
        completion: n,
    };
    match key {
        "ok" => Script::ok(ms(20), ms(2), 3),
        // llama-cpp-python with --interrupt_requests: a role chunk, then [DONE] — nothing else.
        "interrupted" => Script::new(vec![Step::Role, Step::Sleep(ms(20)), Step::Done]),
        // A few tokens, then [DONE] without any finish reason: a cut answer.
        "cut" => with(role(), [tokens(3), vec![Step::Done]].concat()),
        // vLLM / SGLang abort: finish_reason "abort" (usage and [DONE] may still follow).
        "abort" => with(role(), [tokens(2), vec![Step::FinishWith("abort".into()), usage(2), Step::Done]].concat()),
        "error-reason" => with(role(), [tokens(1), vec![Step::FinishWith("error".into()), Step::Done]].concat()),
        // The model ended at once (EOS first): a success with no token and no TTFT.
        "eos-first" => Script::new(vec![Step::Role, Step::Sleep(ms(20)), Step::Finish, usage(0), Step::Done]),
        "tgi-eos" => with(role(), [tokens(2), vec![Step::FinishWith("eos_token".into()), Step::Done]].concat()),
        "tool-calls" => with(role(), [tokens(2), vec![Step::FinishWith("tool_calls".into()), usage(2), Step::Done]].concat()),
        // 200 replies that are not event streams.
        "json" => header(
            Script::new(vec![Step::Raw(r#"{"object":"chat.completion","choices":[{"message":{"content":"hi"},"finish_reason":"stop"}]}"#.into())]),
            "content-type",
            "application/json",
        ),
        "html" => header(Script::new(vec![Step::Raw("<html><body>log in</body></html>".into())]), "content-type", "text/html; charset=utf-8"),
        "gzip" => header(Script::new(vec![Step::Raw("\u{1f}\u{8b} not really gzip".into())]), "content-encoding", "gzip"),
        "charset" => header(Script::ok(ms(5), ms(2), 2), "content-type", "text/event-stream; charset=utf-8"),
        // Token counts without usage: 10 visible chunks and 6 byte tokens ("" chunks), stopped
        // by the length limit of 16.
        "length16" => {
            let mut steps = role();
            for i in 0..10 {
                steps.push(Step::Token("t".into()));
                if i % 2 == 1 && i < 9 || i == 0 {
                    steps.push(Step::Empty);
                }
                steps.push(Step::Sleep(ms(2)));
            }
            steps.push(Step::Empty);
            steps.extend([Step::FinishWith("length".into()), Step::Done]);
            Script::new(steps)
        }
        // Like llama-cpp-python finishing a multi-byte character past --max-tokens 16: 12
        // visible chunks and 6 byte tokens, 18 in all, then `length`, no usage.
        "length18" => {
            let mut steps = role();
            for i in 0..12 {
                steps.push(Step::Token("t".into()));
                if i % 2 == 0 {
                    steps.push(Step::Empty);
                }
            }
            steps.extend([Step::FinishWith("length".into()), Step::Done]);
            Script::new(steps)
        }
        // 3 visible chunks and 2 byte tokens, a normal stop, no usage: 5 tokens counted.
        "bytes" => with(
            role(),
            vec![Step::Token("a".into()), Step::Empty, Step::Empty, Step::Token("b".into()), Step::Token("c".into()), Step::Finish, Step::Done],
        ),
        other => panic!("no script for {other}"),
    }
}

fn record(name: &str, ids: &[&str], extra: &[&str]) -> (ScriptedServer, Output, Trace, PathBuf) {
    let server = ScriptedServer::start(script);
    let (output, out) = record_once(name, &server, ids, &[&["--timeout", "30"], extra].concat());
    let trace = load(&out);
    (server, output, trace, out)
}

fn detail(trace: &Trace, id: &str) -> String {
    by_id(trace, id).detail.clone().unwrap_or_default()
}

#[test]
fn only_a_normal_finish_reason_makes_a_success() {
    let ids = [
        "ok",
        "interrupted",
        "cut",
        "abort",
        "error-reason",
        "eos-first",
        "tgi-eos",
        "tool-calls",
    ];
    let (_server, output, trace, path) = record("false-successes", &ids, &["--concurrency", "8"]);
    assert_eq!(output.status.code(), Some(0), "some attempts succeeded");

    let interrupted = by_id(&trace, "interrupted.r1");
    assert_eq!(
        interrupted.outcome,
        Outcome::StreamBroken,
        "llama-cpp-python's interrupted stream is no success"
    );
    assert_eq!(interrupted.ttft_ms, None);
    assert!(interrupted.first_byte_ms.is_some());
    assert_eq!(
        detail(&trace, "interrupted.r1"),
        "[DONE] without a finish_reason or any token: the request was interrupted"
    );

    let cut = by_id(&trace, "cut.r1");
    assert_eq!(cut.outcome, Outcome::StreamBroken);
    assert_eq!(cut.events.len(), 3, "the tokens that came are kept");
    assert!(cut.ttft_ms.is_some());
    assert_eq!(
        detail(&trace, "cut.r1"),
        "[DONE] without a finish_reason: the answer was cut off"
    );

    for (id, reason) in [("abort.r1", "abort"), ("error-reason.r1", "error")] {
        let a = by_id(&trace, id);
        assert_eq!(a.outcome, Outcome::StreamBroken, "{id}");
        assert!(a.ttft_ms.is_some(), "{id}");
        assert_eq!(
            detail(&trace, id),
            format!("finish_reason \"{reason}\": the server aborted the request")
        );
    }

    let eos = by_id(&trace, "eos-first.r1");
    assert_eq!(
        eos.outcome,
        Outcome::Success,
        "EOS first is a complete, empty answer"
    );
    assert_eq!(
        (eos.ttft_ms, eos.events.len(), eos.output_tokens),
        (None, 0, Some(0))
    );
    for id in ["ok.r1", "tgi-eos.r1", "tool-calls.r1"] {
        assert_eq!(by_id(&trace, id).outcome, Outcome::Success, "{id}");
    }

    // The summary and the card say how many successes had no token (they are not in TTFT n).
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("(successes, n = 3; 1 success without any output token)"),
        "{stdout}"
    );
    let card = run(tracelab().arg("report").arg(&path));
    let card = String::from_utf8_lossy(&card.stdout);
    assert!(
        card.contains(
            "4 complete successes (1 with no output token), 4 failures (stream_broken 4)"
        ),
        "{card}"
    );
    assert!(
        card.contains("1 of 4 complete successes carried no output token"),
        "{card}"
    );
}

#[test]
fn a_reply_that_is_not_an_event_stream_says_so() {
    let (_server, _, trace, _) = record(
        "not-sse",
        &["json", "html", "gzip", "charset"],
        &["--concurrency", "4"],
    );
    for (id, expected) in [
        (
            "json.r1",
            "not an event stream: content-type application/json",
        ),
        ("html.r1", "not an event stream: content-type text/html"),
        ("gzip.r1", "not an event stream: content-encoding gzip"),
    ] {
        let a = by_id(&trace, id);
        assert_eq!(a.outcome, Outcome::StreamBroken, "{id}");
        assert_eq!(detail(&trace, id), expected, "{id}");
        assert_eq!(a.ttft_ms, None);
    }
    assert_eq!(
        by_id(&trace, "charset.r1").outcome,
        Outcome::Success,
        "parameters of text/event-stream are fine"
    );
}

#[test]
fn byte_tokens_and_the_length_limit_count_without_usage() {
    let (_server, _, trace, _) =
        record("estimate", &["length16", "bytes"], &["--max-tokens", "16"]);
    let capped = by_id(&trace, "length16.r1");
    assert_eq!(capped.outcome, Outcome::Success);
    assert_eq!(capped.events.len(), 10, "only visible chunks are events");
    let sum: u32 = capped.events.iter().map(|e| e.tokens).sum();
    assert_eq!(
        sum, 16,
        "each \"\" chunk is a token, carried by the next visible event: {:?}",
        capped.events
    );
    assert_eq!(
        (capped.output_tokens, capped.tokens_from_usage),
        (Some(16), false),
        "finish_reason length at --max-tokens 16"
    );
    assert!(capped.event_tokens_estimated);

    let bytes = by_id(&trace, "bytes.r1");
    assert_eq!(bytes.events.len(), 3);
    assert_eq!(
        bytes.events.iter().map(|e| e.tokens).collect::<Vec<_>>(),
        [1, 3, 1]
    );
    assert_eq!(bytes.output_tokens, Some(5));
}

#[test]
fn a_length_finish_keeps_the_tokens_observed_not_max_tokens() {
    let (_server, _, trace, _) = record("length-over", &["length18"], &["--max-tokens", "16"]);
    let a = by_id(&trace, "length18.r1");
    assert_eq!(a.outcome, Outcome::Success);
    assert_eq!(a.events.iter().map(|e| e.tokens).sum::<u32>(), 18);
    assert_eq!(
        (a.output_tokens, a.tokens_from_usage),
        (Some(18), false),
        "18 came, though --max-tokens was 16"
    );
}

#[test]
fn an_endless_fast_stream_keeps_a_bounded_readable_line() {
    let events = 150_000u32;
    let server = ScriptedServer::start(move |key| match key {
        "flood" => Script::new(vec![
            Step::Role,
            Step::Flood {
                events,
                per_frame: 2_000,
            },
            Step::Finish,
            Step::Done,
        ]),
        _ => Script::new(vec![Step::Role, Step::Token("t".into()), Step::EndlessData]),
    });
    let (output, out) = record_once(
        "bounded",
        &server,
        &["flood", "endless"],
        &["--timeout", "120", "--concurrency", "2"],
    );
    assert_eq!(output.status.code(), Some(0));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.lines().all(|l| l.len() < 8 * 1024 * 1024),
        "every line stays within the reader's 8 MiB"
    );
    let trace = load(Path::new(&out));

    let flood = by_id(&trace, "flood.r1");
    assert_eq!(flood.outcome, Outcome::Success);
    assert_eq!(
        flood.events.len(),
        tracelab_recorder::attempt::MAX_EVENTS,
        "event times are listed up to the cap"
    );
    let line: serde_json::Value =
        serde_json::from_str(text.lines().find(|l| l.contains("\"flood.r1\"")).unwrap()).unwrap();
    let omitted = events as usize - tracelab_recorder::attempt::MAX_EVENTS;
    assert_eq!(
        line["events_omitted"], omitted,
        "the rest are counted and flagged"
    );
    assert_eq!(line["events_omitted_tokens"], omitted);
    assert_eq!(
        flood.output_tokens,
        Some(events),
        "every event's token is counted"
    );
    assert!(flood.e2e_ms.unwrap() >= flood.events.last().unwrap().at_ms);

    let endless = by_id(&trace, "endless.r1");
    assert_eq!(endless.outcome, Outcome::StreamBroken);
    assert_eq!(
        endless.detail.as_deref(),
        Some("malformed SSE: data lines over 16 MiB without a blank line to end the event")
    );
}
