//! Connections at their edges: keep-alive connections the server closed, response heads that
//! trickle in, replies that are not HTTP, the wrong HTTP version, file-descriptor limits, and
//! https:// with a private CA. The raw servers here speak bytes on a socket, so they can do
//! what no well-behaved HTTP library would.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tracelab_core::Outcome;

use crate::server::{Script, ScriptedServer};
use crate::{by_id, load, temp_dir, Record};

/// A complete, well-formed streamed answer (finish reason, then [DONE]).
const ANSWER: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
data: [DONE]\n\n";

fn head(extra: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n{extra}\r\n",
        ANSWER.len()
    )
}

/// A loopback server handing each accepted connection (numbered from 0) to `serve` on its own thread.
fn raw_server(serve: impl Fn(TcpStream, usize) + Send + Sync + 'static) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        for (i, stream) in listener.incoming().enumerate() {
            let Ok(stream) = stream else { continue };
            let _ = stream.set_nodelay(true);
            let serve = serve.clone();
            std::thread::spawn(move || serve(stream, i));
        }
    });
    addr
}

/// Reads one HTTP/1.1 request; its body, or None when the connection ended first.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<String> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(String::from_utf8_lossy(&body).into_owned())
}

fn record(
    name: &str,
    base_url: &str,
    ids: &[&str],
    extra: &[&str],
) -> (std::process::Output, std::path::PathBuf) {
    let (record, out) = Record::fresh(name, ids);
    (
        record
            .base_url(base_url)
            .args(["--timeout", "10"])
            .args(extra)
            .run(),
        out,
    )
}

/// The trace's attempt lines as raw JSON (for the recorder's own fields).
fn raw_attempts(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == "attempt")
        .collect()
}

#[test]
fn a_request_the_server_read_and_then_closed_on_is_never_sent_twice() {
    // Each connection answers its first request; the next request on it is read in full and
    // then the connection closes without a word. The server may have acted on that request,
    // so it is the attempt's failure, never resent (main sent 11 requests for 6 attempts).
    let (served, dropped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (s, d) = (served.clone(), dropped.clone());
    let addr = raw_server(move |stream, _| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        if read_request(&mut reader).is_none() {
            return;
        }
        s.fetch_add(1, Ordering::SeqCst);
        let _ = stream.write_all(format!("{}{ANSWER}", head("")).as_bytes());
        if read_request(&mut reader).is_some() {
            d.fetch_add(1, Ordering::SeqCst);
        }
    });
    let ids = ["a", "b", "c", "d", "e", "f"];
    let (output, out) = record("read-then-closed", &format!("http://{addr}/v1"), &ids, &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trace = load(&out);
    assert_eq!(
        served.load(Ordering::SeqCst) + dropped.load(Ordering::SeqCst),
        6,
        "one request per attempt reached the server"
    );
    let raw = raw_attempts(&out);
    assert!(
        raw.iter().all(|a| a["resent"].is_null()),
        "nothing resent: {raw:?}"
    );
    let failed: Vec<_> = trace
        .attempts
        .iter()
        .filter(|a| a.outcome != Outcome::Success)
        .collect();
    assert_eq!(failed.len(), dropped.load(Ordering::SeqCst));
    assert!(
        !failed.is_empty(),
        "the reused connections were closed under a request"
    );
    for a in failed {
        assert_eq!(a.outcome, Outcome::ConnectError);
        let detail = a.detail.as_deref().unwrap_or_default();
        assert!(
            detail.contains("after the request was sent") && detail.contains("not resent"),
            "{detail}"
        );
    }
    let policy = &trace
        .header
        .conditions
        .connection
        .as_ref()
        .expect("the connection policy is in the header");
    assert!(policy.keep_alive && policy.timing_includes_connect);
    assert_eq!(policy.protocol, "http/1.1");
}

#[test]
fn an_idle_connection_the_server_closed_is_not_used() {
    // The server answers, then closes the idle connection 50 ms later without `Connection:
    // close` (a keep-alive timeout). Requests 200 ms apart find theirs closed: each goes out
    // on a new connection, once, and none fails.
    let served = Arc::new(AtomicUsize::new(0));
    let s = served.clone();
    let addr = raw_server(move |stream, _| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        if read_request(&mut reader).is_none() {
            return;
        }
        s.fetch_add(1, Ordering::SeqCst);
        let _ = stream.write_all(format!("{}{ANSWER}", head("")).as_bytes());
        std::thread::sleep(Duration::from_millis(50));
    });
    let ids = ["a", "b", "c", "d"];
    let (output, out) = record(
        "idle-closed",
        &format!("http://{addr}/v1"),
        &ids,
        &["--rate", "5", "--arrival", "constant"],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trace = load(&out);
    for a in &trace.attempts {
        assert_eq!(a.outcome, Outcome::Success, "{}: {:?}", a.id, a.detail);
    }
    assert_eq!(
        served.load(Ordering::SeqCst),
        4,
        "each request reached the server once"
    );
    let raw = raw_attempts(&out);
    assert!(
        raw.iter()
            .all(|a| a["new_connection"] == true && a["resent"].is_null()),
        "{raw:?}"
    );
}

/// A server that closes each connection right after its one reply, as llama.cpp's C++
/// `llama-server` does (17–140 µs later, while its head says keep-alive): the close races the
/// recorder's next request on that connection. Counts the requests it read, per prompt.
fn closing_server(
    extra_head: &'static str,
    close_after: fn(usize) -> Duration,
) -> (SocketAddr, Arc<std::sync::Mutex<Vec<String>>>) {
    let read = Arc::new(std::sync::Mutex::new(Vec::new()));
    let r = read.clone();
    let addr = raw_server(move |stream, i| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        let Some(body) = read_request(&mut reader) else {
            return;
        };
        r.lock().unwrap().push(body);
        let _ = stream.write_all(format!("{}{ANSWER}", head(extra_head)).as_bytes());
        let pause = close_after(i);
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
        // Dropped here: closed, whatever came in since the reply unread.
    });
    (addr, read)
}

/// 0–300 µs, spread over the connections (the recorder's next request lands anywhere in it).
fn llama_like_close(i: usize) -> Duration {
    Duration::from_micros((i as u64 * 37) % 300)
}

#[test]
fn a_server_that_closes_after_every_reply_costs_no_attempt_and_no_request_twice() {
    // main recorded 14 of 160 such attempts `connect_error` ("the server closed its kept-alive
    // connection after the request was sent"): each a request written into a connection whose
    // FIN was on its way, read by nobody, and never resent.
    let (addr, read) = closing_server("connection: keep-alive\r\n", llama_like_close);
    let ids: Vec<String> = (0..80).map(|i| format!("p{i:03}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let (output, out) = record(
        "closes-after-reply",
        &format!("http://{addr}/v1"),
        &ids,
        &["--concurrency", "2", "--repetitions", "2"],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trace = load(&out);
    let failed: Vec<_> = trace
        .attempts
        .iter()
        .filter(|a| a.outcome != Outcome::Success)
        .map(|a| (&a.id, &a.detail))
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} attempts failed on a healthy server: {failed:?}",
        failed.len(),
        trace.attempts.len()
    );
    // Every prompt was read by the server exactly as often as it was recorded: nothing twice.
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for body in read.lock().unwrap().iter() {
        let v: Value = serde_json::from_str(body).unwrap();
        *seen
            .entry(
                v["messages"][0]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
            .or_default() += 1;
    }
    assert_eq!(seen.len(), 80);
    assert!(
        seen.values().all(|n| *n == 2),
        "each prompt read once per round: {seen:?}"
    );
    let raw = raw_attempts(&out);
    assert!(
        raw.iter().all(|a| a["new_connection"] == true),
        "no connection carried two requests: {raw:?}"
    );
    assert!(
        trace
            .header
            .client
            .as_ref()
            .is_some_and(|c| c.server_closed_after_reply),
        "the header says what the server did"
    );
    let card = crate::run(crate::tracelab().args(["report"]).arg(&out));
    assert!(String::from_utf8_lossy(&card.stdout)
        .contains("the server closed its connections right after its replies"));
}

#[test]
fn connection_close_and_http_1_0_replies_are_never_reused() {
    // The server says it closes, and closes 100 ms later: the connection is never offered a
    // second request in between, whatever the FIN's timing.
    for (name, head_line) in [("conn-close", "connection: close\r\n"), ("http10", "")] {
        let served = Arc::new(AtomicUsize::new(0));
        let s = served.clone();
        let http10 = head_line.is_empty();
        let addr = raw_server(move |stream, _| {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut stream = stream;
            // One request per connection: the reply says it closes, so a second never comes.
            if read_request(&mut reader).is_some() {
                s.fetch_add(1, Ordering::SeqCst);
                let mut reply = format!("{}{ANSWER}", head(head_line));
                if http10 {
                    reply = reply.replacen("HTTP/1.1", "HTTP/1.0", 1);
                }
                let _ = stream.write_all(reply.as_bytes());
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let ids = ["a", "b", "c", "d"];
        let (output, out) = record(name, &format!("http://{addr}/v1"), &ids, &[]);
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let trace = load(&out);
        assert!(
            trace.attempts.iter().all(|a| a.outcome == Outcome::Success),
            "{name}: {:?}",
            trace.attempts
        );
        assert_eq!(served.load(Ordering::SeqCst), 4, "{name}");
        let raw = raw_attempts(&out);
        assert!(
            raw.iter()
                .all(|a| a["new_connection"] == true && a["resent"].is_null()),
            "{name}: {raw:?}"
        );
    }
}

/// A server that reads each request and answers nothing, holding the connection for `hold`.
fn silent_server(hold: Duration) -> SocketAddr {
    raw_server(move |stream, _| {
        let mut reader = BufReader::new(stream);
        let _ = read_request(&mut reader);
        std::thread::sleep(hold);
    })
}

#[test]
fn an_attempt_that_opened_a_connection_and_timed_out_says_it_opened_one() {
    // Accepts and never answers: the first-token timeout cuts the attempt off with its request
    // out on the connection it opened (main wrote `new_connection: false`).
    let addr = silent_server(Duration::from_secs(3));
    let (_, out) = record(
        "opened-then-timed-out",
        &format!("http://{addr}/v1"),
        &["a", "b"],
        &["--first-token-timeout", "0.3"],
    );
    let trace = load(&out);
    assert!(
        trace
            .attempts
            .iter()
            .all(|a| a.outcome == Outcome::TimeoutBeforeFirstToken),
        "{:?}",
        trace.attempts
    );
    let raw = raw_attempts(&out);
    assert!(raw.iter().all(|a| a["new_connection"] == true), "{raw:?}");
    let share = trace.header.client.expect("the recorder's share");
    assert_eq!(
        share.new_connections, 2,
        "the header counts the connections opened"
    );
}

/// A chunked stream written the way that makes framing arrive apart from the events: each
/// chunk's size line and event in one write and its trailing CRLF in another 1 ms later, so the
/// CRLF arrives a whole inter-token gap before the next token; `gap` between events.
fn framing_apart_server(gap: Duration) -> SocketAddr {
    raw_server(move |stream, _| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        while read_request(&mut reader).is_some() {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
            if stream.write_all(head.as_bytes()).is_err() {
                return;
            }
            let events: Vec<&str> = ANSWER.split_inclusive("\n\n").collect();
            for (i, event) in events.iter().enumerate() {
                if i > 0 {
                    std::thread::sleep(gap);
                }
                let _ = stream.write_all(format!("{:x}\r\n{event}", event.len()).as_bytes());
                std::thread::sleep(Duration::from_millis(1));
                let _ = stream.write_all(b"\r\n");
            }
            let _ = stream.write_all(b"0\r\n\r\n");
        }
    })
}

#[test]
fn the_stated_timing_error_is_against_the_bytes_that_carried_each_event() {
    // main measured each event against the oldest read since the previous one: the previous
    // chunk's CRLF, 300 ms before the token here, so it stated a 300 ms error on loopback.
    let addr = framing_apart_server(Duration::from_millis(300));
    let ids = ["a", "b", "c"];
    let (output, out) = record("framing-apart", &format!("http://{addr}/v1"), &ids, &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trace = load(&out);
    assert!(
        trace.attempts.iter().all(|a| a.outcome == Outcome::Success),
        "{:?}",
        trace.attempts
    );
    for a in &trace.attempts {
        assert!(
            a.ttft_ms.unwrap() > 290.0,
            "{}: the token came 300 ms after the role chunk",
            a.id
        );
    }
    let Some(timing) = trace.header.client.and_then(|c| c.timing) else {
        // Linux gives kernel receive times; elsewhere there is nothing to judge.
        if cfg!(target_os = "linux") {
            panic!("Linux gives kernel receive times");
        }
        return;
    };
    assert_eq!(timing.first_token.n, 3);
    assert!(
        timing.first_token.p99_ms < 100.0,
        "the token's own read is what it is judged against: {timing:?}"
    );
    assert!(timing.events.max_ms < 100.0, "{timing:?}");
}

#[test]
fn the_stated_timing_error_stays_tight_when_events_are_coalesced_or_split() {
    // Three tokens in one write after 200 ms, and (split) every event sent as two halves
    // 150 ms apart: each event is judged against the read that brought its last bytes, so the
    // stated error stays far below the gaps while every listed event is counted.
    use crate::server::Step;
    let server = ScriptedServer::start(|prompt| {
        let steps = vec![
            Step::Role,
            Step::Sleep(Duration::from_millis(200)),
            Step::Token("a ".into()),
            Step::Token("b ".into()),
            Step::Token("c ".into()),
            Step::Sleep(Duration::from_millis(200)),
            Step::Token("d".into()),
            Step::Finish,
            Step::Usage {
                prompt: 3,
                completion: 4,
            },
            Step::Done,
        ];
        match prompt {
            "split" => Script {
                split: Some(Duration::from_millis(150)),
                ..Script::new(steps)
            },
            _ => Script {
                coalesce: true,
                ..Script::new(steps)
            },
        }
    });
    for id in ["coalesce", "split"] {
        let (record, out) = Record::fresh(&format!("timing-{id}"), &[id]);
        let record = record.args(["--repetitions", "2"]);
        let output = record.server(&server).run();
        assert!(
            output.status.success(),
            "{id}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let trace = load(&out);
        assert!(
            trace.attempts.iter().all(|a| a.outcome == Outcome::Success),
            "{id}: {:?}",
            trace.attempts
        );
        let listed: usize = trace.attempts.iter().map(|a| a.events.len()).sum();
        let Some(timing) = trace.header.client.and_then(|c| c.timing) else {
            if cfg!(target_os = "linux") {
                panic!("Linux gives kernel receive times");
            }
            return;
        };
        assert_eq!(
            timing.events.n as usize, listed,
            "{id}: one sample per listed event"
        );
        assert!(
            timing.first_token.p99_ms < 100.0 && timing.events.max_ms < 100.0,
            "{id}: {timing:?}"
        );
    }
}

#[test]
fn the_runtime_probe_of_a_server_that_never_answers_is_short_and_says_what_it_waits_for() {
    // main asked its seven endpoints one after another, 3 s each: 21 s of silence.
    let addr = silent_server(Duration::from_secs(30));
    let dir = temp_dir("probe-silent");
    let out = dir.join("t.jsonl");
    let started = std::time::Instant::now();
    let output = Record::new(&out)
        .prompts(&crate::prompts(&dir, &["a"]))
        .base_url(format!("http://{addr}/v1"))
        .ask_runtime()
        .args(["--first-token-timeout", "0.5", "--timeout", "1"])
        .run();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        took < Duration::from_secs(8),
        "the probe asks every endpoint at once: {took:?}\n{stderr}"
    );
    assert!(
        stderr.contains("asking the server what it is") && stderr.contains("/props"),
        "{stderr}"
    );
    let runtime = load(&out)
        .header
        .conditions
        .runtime
        .expect("the runtime record");
    assert_eq!(runtime.asked.len(), 7, "{:?}", runtime.asked);
    assert!(
        runtime.asked.iter().all(|a| a.ends_with("no answer")),
        "{:?}",
        runtime.asked
    );
}

#[test]
fn sequential_requests_ride_one_connection() {
    // Read to its end, each answer hands its connection back before the next request: main
    // opened 12 connections for 12 requests (it dropped each right after [DONE]).
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(2), Duration::from_millis(1), 3)
    });
    let ids = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"];
    let (record, out) = Record::fresh("one-connection", &ids);
    let output = record.server(&server).run();
    assert!(output.status.success());
    assert_eq!(server.request_count(), 12);
    assert_eq!(
        server.connections(),
        1,
        "12 sequential requests, one TCP connection"
    );
    assert!(server.requests().iter().all(|r| r.connection == 0));
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.accept_encoding.as_deref() == Some("identity")),
        "the recorder asks for an uncompressed stream (no Accept-Encoding means any coding)"
    );
    let raw = raw_attempts(&out);
    let new: Vec<bool> = raw
        .iter()
        .map(|a| a["new_connection"].as_bool().unwrap())
        .collect();
    assert_eq!(
        new.iter().filter(|n| **n).count(),
        1,
        "only the first paid a connect: {new:?}"
    );
    let share = load(&out)
        .header
        .client
        .expect("the recorder's share is in the header");
    assert_eq!(
        (
            share.measured,
            share.new_connections,
            share.resent,
            share.not_sent
        ),
        (12, 1, 0, 0)
    );
}

#[test]
fn a_closed_loop_opens_one_connection_per_worker_and_the_warm_up_opens_them_first() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(5), Duration::from_millis(1), 3)
    });
    let (record, out) = Record::fresh("per-worker", &["a", "b", "c"]);
    let output = record
        .server(&server)
        .args(["--concurrency", "4", "--repetitions", "4", "--warmup", "1"])
        .run();
    assert!(output.status.success());
    assert_eq!(server.request_count(), 15, "3 warm-up + 12 measured");
    assert_eq!(
        server.connections(),
        4,
        "four workers, four connections, whatever the order"
    );
    let trace = load(&out);
    let share = trace.header.client.expect("the recorder's share");
    assert_eq!(
        share.warm_connections, 4,
        "the warm-up opened the fourth before measuring"
    );
    assert_eq!(
        share.new_connections, 0,
        "no measured attempt paid a connect"
    );
    let raw = raw_attempts(&out);
    for a in raw.iter().filter(|a| a["phase"] == "measure") {
        assert_eq!(a["new_connection"], false, "{a}");
    }
    let card = crate::run(crate::tracelab().args(["report"]).arg(&out));
    let card = String::from_utf8_lossy(&card.stdout);
    assert!(
        card.contains("Client's share: 0 of 12 measured attempts opened a new connection")
            && card.contains("the warm-up opened 4"),
        "{card}"
    );
    assert!(
        card.contains("Client timing error this run: ≤"),
        "measured in every run: {card}"
    );
}

#[test]
fn a_server_that_closes_every_connection_at_once_is_not_reconnected_to_for_ever() {
    // Accepts, then closes without reading: each attempt fails as a connect error, after a
    // bounded number of connections, well before its timeout.
    let accepted = Arc::new(AtomicUsize::new(0));
    let a = accepted.clone();
    let addr = raw_server(move |stream, _| {
        a.fetch_add(1, Ordering::SeqCst);
        drop(stream);
    });
    let started = std::time::Instant::now();
    let (_, out) = record(
        "close-at-once",
        &format!("http://{addr}/v1"),
        &["a", "b"],
        &[],
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "no spinning until the 10 s timeout"
    );
    let trace = load(&out);
    for a in &trace.attempts {
        assert_eq!(a.outcome, Outcome::ConnectError, "{:?}", a.detail);
    }
    assert!(
        accepted.load(Ordering::SeqCst) <= 2 * 5,
        "at most 1 + 4 connections per attempt: {}",
        accepted.load(Ordering::SeqCst)
    );
}

#[test]
fn a_fresh_connection_closed_before_a_response_is_a_failure_not_resent() {
    let seen = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let addr = raw_server(move |stream, _| {
        let mut reader = BufReader::new(stream);
        if read_request(&mut reader).is_some() {
            s.fetch_add(1, Ordering::SeqCst);
        }
    });
    let (output, out) = record(
        "fresh-close",
        &format!("http://{addr}/v1"),
        &["a", "b"],
        &[],
    );
    assert!(
        output.status.success() || matches!(output.status.code(), Some(1 | 3)),
        "{output:?}"
    );
    let trace = load(&out);
    for a in &trace.attempts {
        assert_eq!(a.outcome, Outcome::ConnectError);
        assert_eq!(
            a.detail.as_deref(),
            Some("connection closed before a response")
        );
    }
    assert_eq!(
        seen.load(Ordering::SeqCst),
        2,
        "a request that may have reached the server is never sent twice"
    );
}

#[test]
fn first_byte_is_the_first_byte_of_a_trickling_head() {
    let addr = raw_server(|stream, _| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        while read_request(&mut reader).is_some() {
            for b in head("x-padding: trickle\r\n").bytes() {
                if stream.write_all(&[b]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(12));
            }
            let _ = stream.write_all(ANSWER.as_bytes());
        }
    });
    let (output, out) = record("trickle-head", &format!("http://{addr}/v1"), &["a"], &[]);
    assert!(output.status.success());
    let trace = load(&out);
    let a = by_id(&trace, "a.r1");
    assert_eq!(a.outcome, Outcome::Success, "{:?}", a.detail);
    let (first_byte, ttft) = (a.first_byte_ms.unwrap(), a.ttft_ms.unwrap());
    // The head takes ~100 bytes × 12 ms to arrive; its first byte came at once.
    assert!(
        ttft > 900.0,
        "the head trickled for over a second: ttft {ttft}"
    );
    assert!(
        first_byte < ttft / 3.0,
        "first_byte_ms is the first byte, not the end of the head: {first_byte} vs {ttft}"
    );
}

#[test]
fn a_head_trickling_past_the_first_token_timeout_keeps_its_first_byte() {
    // One byte every 100 ms: the head is still arriving when the 0.5 s timeout fires.
    let addr = raw_server(|stream, _| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        if read_request(&mut reader).is_some() {
            for b in head("").bytes() {
                if stream.write_all(&[b]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    });
    let (_, out) = record(
        "trickle-timeout",
        &format!("http://{addr}/v1"),
        &["a"],
        &["--first-token-timeout", "0.5"],
    );
    let trace = load(&out);
    let a = by_id(&trace, "a.r1");
    assert_eq!(a.outcome, Outcome::TimeoutBeforeFirstToken);
    let first_byte = a.first_byte_ms.expect("the first byte came, and is kept");
    assert!(first_byte < 100.0, "it came at once: {first_byte} ms");
    assert!(
        a.detail
            .as_deref()
            .unwrap_or_default()
            .contains("still arriving"),
        "{:?}",
        a.detail
    );
}

#[test]
fn replies_that_are_not_http_say_what_came_back() {
    let addr = raw_server(|stream, _| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        let Some(body) = read_request(&mut reader) else {
            return;
        };
        let reply: &[u8] = if body.contains("partial") {
            b"HTTP/1.1 20"
        } else {
            b"SSH-2.0-OpenSSH_9.6\r\n"
        };
        let _ = stream.write_all(reply);
    });
    let (_, out) = record(
        "not-http",
        &format!("http://{addr}/v1"),
        &["partial", "ssh"],
        &[],
    );
    let trace = load(&out);
    let partial = by_id(&trace, "partial.r1");
    assert_eq!(partial.outcome, Outcome::ConnectError);
    assert_eq!(
        partial.detail.as_deref(),
        Some("connection closed in the middle of the response head")
    );
    let ssh = by_id(&trace, "ssh.r1");
    assert_eq!(
        ssh.detail.as_deref(),
        Some("the reply is not HTTP (its first bytes are not a status line)")
    );
    assert!(
        partial.first_byte_ms.is_none(),
        "no response, so no first byte is claimed"
    );
}

#[test]
fn http2_prior_knowledge_against_an_http1_server_says_so() {
    // Like uvicorn (llama.cpp's Python server): an HTTP/1.1-only server answers the HTTP/2
    // preface with a 400 and closes.
    let addr = raw_server(|mut stream, _| {
        let mut buf = [0u8; 4096];
        if stream.read(&mut buf).unwrap_or(0) > 0 {
            let _ = stream.write_all(
                b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    let (output, out) = record(
        "h2-vs-h1",
        &format!("http://{addr}/v1"),
        &["a"],
        &["--http2-prior-knowledge"],
    );
    let trace = load(&out);
    let a = by_id(&trace, "a.r1");
    assert_eq!(a.outcome, Outcome::ConnectError);
    let detail = a.detail.as_deref().unwrap_or_default();
    assert!(
        detail.contains("HTTP/1") && detail.contains("--http2-prior-knowledge"),
        "{detail}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("is the server running"), "{stderr}");
    assert!(
        stderr.contains("--http2-prior-knowledge"),
        "the hint names the cause: {stderr}"
    );
}

/// `tracelab` under `ulimit -n limit`, which in sh lowers the hard limit too, so the recorder
/// cannot raise it back; the arguments that follow go to `tracelab`.
fn with_open_file_limit(limit: u32) -> std::process::Command {
    let mut sh = std::process::Command::new("sh");
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "OPENAI_API_KEY",
        "TRACELAB_BASE_URL",
    ] {
        sh.env_remove(var);
    }
    sh.env("TRACELAB_BIN", env!("CARGO_BIN_EXE_tracelab"))
        .args([
            "-c",
            &format!("ulimit -n {limit} && exec \"$TRACELAB_BIN\" \"$@\""),
            "tracelab",
        ]);
    sh
}

#[test]
fn too_few_file_descriptors_for_the_concurrency_is_refused_before_the_run() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(1), Duration::from_millis(1), 1)
    });
    let (record, out) = Record::fresh("nofile", &["a"]);
    let output = record
        .via(with_open_file_limit(100))
        .server(&server)
        .args(["--concurrency", "200"])
        .run();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "refused: {stderr}");
    assert!(
        stderr.contains("open-file limit is 100") && stderr.contains("--concurrency"),
        "{stderr}"
    );
    let advised: u64 = stderr
        .split("lower --concurrency to ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("a value to lower to");
    assert!(
        (50..100).contains(&advised),
        "what the process really holds is reserved, no more: {stderr}"
    );
    assert!(!out.exists(), "nothing was recorded");
    assert_eq!(server.request_count(), 0, "nothing was sent");
}

#[test]
fn a_low_open_file_limit_still_takes_what_fits() {
    // Main refused --concurrency 1 under `ulimit -n 64` ("lower --concurrency to 0 or less").
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(1), Duration::from_millis(1), 1)
    });
    let (record, out) = Record::fresh("nofile-64", &["a", "b"]);
    let output = record
        .via(with_open_file_limit(64))
        .server(&server)
        .args(["--concurrency", "2"])
        .run();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(load(&out).attempts.len(), 2);
    let (record, _) = Record::fresh("nofile-64-many", &["a"]);
    let refused = record
        .via(with_open_file_limit(64))
        .server(&server)
        .args(["--concurrency", "500"])
        .run();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && !stderr.contains("to 0 or less"),
        "{stderr}"
    );
}

fn tls_ok(_: &str) -> Script {
    Script::ok(Duration::from_millis(5), Duration::from_millis(1), 3)
}

#[test]
fn https_with_a_private_ca_over_http2_and_http1() {
    for (alpn, version) in [
        (&["h2", "http/1.1"][..], hyper::Version::HTTP_2),
        (&["http/1.1"][..], hyper::Version::HTTP_11),
    ] {
        let (server, ca) = ScriptedServer::start_tls(alpn, tls_ok);
        let name = format!("https-{}", alpn.len());
        let dir = temp_dir(&format!("{name}-ca"));
        let ca_path = dir.join("ca.pem");
        std::fs::write(&ca_path, ca).unwrap();
        let (output, out) = record(
            &name,
            &server.https_url(),
            &["a", "b"],
            &["--ca-cert", ca_path.to_str().unwrap()],
        );
        assert!(output.status.success());
        let trace = load(&out);
        for a in &trace.attempts {
            assert_eq!(a.outcome, Outcome::Success, "{alpn:?}: {:?}", a.detail);
        }
        assert!(
            server.requests().iter().all(|r| r.version == version),
            "{alpn:?} speaks {version:?}"
        );
        let policy = trace.header.conditions.connection.clone().unwrap();
        assert_eq!(
            (policy.protocol.as_str(), policy.tls_roots.as_deref()),
            ("alpn", Some("bundled+ca-cert"))
        );
    }
}

#[test]
fn an_untrusted_certificate_says_to_pass_ca_cert() {
    let (server, _) = ScriptedServer::start_tls(&["h2", "http/1.1"], tls_ok);
    let (output, out) = record("https-untrusted", &server.https_url(), &["a"], &[]);
    let trace = load(&out);
    let a = by_id(&trace, "a.r1");
    assert_eq!(a.outcome, Outcome::ConnectError);
    let detail = a.detail.as_deref().unwrap_or_default();
    assert!(
        detail.contains("not trusted") && detail.contains("--ca-cert"),
        "{detail}"
    );
    assert_eq!(server.request_count(), 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("is the server running"), "{stderr}");

    let dir = temp_dir("https-bad-ca");
    let bad = dir.join("ca.pem");
    std::fs::write(&bad, "not a certificate\n").unwrap();
    let (output, _) = record(
        "https-bad-ca-run",
        &server.https_url(),
        &["a"],
        &["--ca-cert", bad.to_str().unwrap()],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success()
            && stderr.contains("--ca-cert")
            && stderr.contains("no PEM certificate"),
        "{stderr}"
    );
}

#[test]
fn running_out_of_file_descriptors_in_an_open_loop_is_not_called_a_server_failure() {
    // Every request hangs after one token, so each holds its socket until the timeout.
    let server = ScriptedServer::start(|_| {
        Script::new(vec![
            crate::server::Step::Role,
            crate::server::Step::Token("t".into()),
            crate::server::Step::Hang,
        ])
    });
    let (record, out) = Record::fresh("nofile-open", &["a"]);
    let output = record
        .via(with_open_file_limit(80))
        .server(&server)
        .args([
            "--repetitions",
            "120",
            "--rate",
            "400",
            "--arrival",
            "constant",
            "--timeout",
            "1.5",
        ])
        .run();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("open-file limit is 80"),
        "warned before the run: {stderr}"
    );
    let trace = load(&out);
    assert_eq!(trace.attempts.len(), 120);
    let out_of_files: Vec<_> = trace
        .attempts
        .iter()
        .filter(|a| a.outcome == Outcome::ConnectError)
        .collect();
    assert!(
        !out_of_files.is_empty(),
        "80 descriptors cannot hold 120 connections"
    );
    for a in &out_of_files {
        assert!(
            a.detail
                .as_deref()
                .unwrap_or_default()
                .contains("ran out of open files"),
            "{:?}",
            a.detail
        );
    }
    assert_eq!(
        server.request_count() + out_of_files.len(),
        120,
        "the failed ones never reached the server"
    );
    assert_eq!(
        output.status.code(),
        Some(4),
        "the exit status says the run measured the client: {stderr}"
    );
    assert!(stderr.contains("measured the client"), "{stderr}");
    let share = trace.header.client.as_ref().expect("the recorder's share");
    assert_eq!(share.not_sent as usize, out_of_files.len(), "counted apart");
    let raw = raw_attempts(&out);
    assert_eq!(
        raw.iter().filter(|a| a["not_sent"] == true).count(),
        out_of_files.len()
    );
    let card = crate::run(crate::tracelab().args(["report"]).arg(&out));
    let card = String::from_utf8_lossy(&card.stdout);
    let line = format!(
        "{} of 120 measured attempts were never sent: the recorder ran out of open files",
        out_of_files.len()
    );
    assert!(
        card.contains(&line) && card.contains("measures the recorder, not the server"),
        "{card}"
    );
}

#[test]
fn a_run_out_of_open_files_with_its_connections_still_pooled_keeps_its_header() {
    // Replies that complete leave their connections pooled, holding descriptors to the end:
    // rewriting the header then found none free ("cannot read back …: Too many open files",
    // exit 1, no `client` record) until the run kept a few aside.
    let server = ScriptedServer::start_with_threads(2, |_| {
        Script::ok(Duration::from_millis(200), Duration::from_millis(50), 8)
    });
    let (record, out) = Record::fresh("nofile-pooled", &["a"]);
    let output = record
        .via(with_open_file_limit(40))
        .server(&server)
        .args([
            "--repetitions",
            "300",
            "--rate",
            "200",
            "--arrival",
            "constant",
        ])
        .run();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(4),
        "the run measured the client, and says so: {stderr}"
    );
    assert!(!stderr.contains("Too many open files"), "{stderr}");
    let trace = load(&out);
    assert_eq!(trace.attempts.len(), 300);
    let share = trace
        .header
        .client
        .as_ref()
        .expect("the header keeps the client record");
    assert!(
        share.not_sent > 0,
        "40 descriptors cannot hold 120 requests in flight"
    );
    assert_eq!(
        share.not_sent as usize,
        raw_attempts(&out)
            .iter()
            .filter(|a| a["not_sent"] == true)
            .count()
    );
}

#[test]
fn warmup_rounds_count_rounds_of_the_prompt_set_and_say_so() {
    // `--warmup 2` sent 2 rounds of the prompt set (6 requests here) while its name read as a
    // number of requests; its name is now `--warmup-rounds` (`--warmup` still works).
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(1), Duration::from_millis(1), 2)
    });
    let dir = temp_dir("warmup-rounds");
    let out = dir.join("t.jsonl");
    let output = crate::run(
        crate::tracelab()
            .args([
                "record",
                "--base-url",
                &server.base_url(),
                "--model",
                "m",
                "--gpu",
                "off",
                "--no-runtime-probe",
            ])
            .args(["--warmup-rounds", "2", "--repetitions", "1", "--output"])
            .arg(&out)
            .arg("--prompts")
            .arg(crate::prompts(&dir, &["a", "b", "c"])),
    );
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("6 requests in 2 rounds of warm-up"),
        "{stderr}"
    );
    let trace = load(&out);
    assert_eq!(
        trace
            .attempts
            .iter()
            .filter(|a| a.phase == tracelab_core::Phase::Warmup)
            .count(),
        6
    );
    let help = crate::run(crate::tracelab().args(["record", "--help"]));
    assert!(
        String::from_utf8_lossy(&help.stdout).contains("--warmup-rounds"),
        "the help names what it counts"
    );
}
