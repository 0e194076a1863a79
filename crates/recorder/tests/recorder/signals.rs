//! Stopping a run: Ctrl-C (SIGINT) stops new requests, gives in-flight ones a grace period,
//! records the rest as `cancelled` and writes the footer; SIGKILL leaves every finished attempt.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use tracelab_core::Outcome;

use crate::server::{Script, ScriptedServer, Step};
use crate::{load, Record};

/// "fast" answers at once, "hang" sends one token and then nothing: with two workers the run
/// settles into two finished attempts and two hanging ones.
fn script(key: &str) -> Script {
    match key {
        "fast" => Script::ok(Duration::from_millis(5), Duration::from_millis(2), 2),
        _ => Script::new(vec![
            Step::Role,
            Step::Sleep(Duration::from_millis(5)),
            Step::Token("t".into()),
            Step::Hang,
        ]),
    }
}

fn start(name: &str) -> (ScriptedServer, Child, PathBuf) {
    let server = ScriptedServer::start(script);
    let (record, out) = Record::fresh(name, &["fast", "hang"]);
    let child = record
        .server(&server)
        .args([
            "--repetitions",
            "50",
            "--concurrency",
            "2",
            "--timeout",
            "60",
            "--grace",
            "0.3",
        ])
        .spawn();
    (server, child, out)
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped.
    let rc = unsafe { libc::kill(child.id() as i32, sig) };
    assert_eq!(rc, 0);
}

fn settle(server: &ScriptedServer, out: &Path) {
    wait_for("two finished attempts and two hanging requests", || {
        server.request_count() >= 4 && lines(out) >= 3
    });
    std::thread::sleep(Duration::from_millis(50));
}

#[test]
fn sigint_cancels_in_flight_attempts_and_writes_the_footer() {
    let (server, child, out) = start("sigint");
    settle(&server, &out);
    let sent = Instant::now();
    signal(&child, libc::SIGINT);
    let output = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    assert_eq!(
        output.status.code(),
        Some(130),
        "stopped by Ctrl-C exits 130, as shells do: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(took < Duration::from_secs(10), "stopped in {took:?}");
    let trace = load(&out);
    let footer = trace.footer.expect("a footer after Ctrl-C");
    assert!(
        !footer.finished_cleanly,
        "stopped early is not a clean finish"
    );
    assert_eq!(footer.attempts, 4);
    assert_eq!(
        trace.attempts.len(),
        server.request_count(),
        "every request sent has its attempt"
    );
    let cancelled: Vec<_> = trace
        .attempts
        .iter()
        .filter(|a| a.outcome == Outcome::Cancelled)
        .collect();
    let successes = trace
        .attempts
        .iter()
        .filter(|a| a.outcome == Outcome::Success)
        .count();
    assert_eq!((cancelled.len(), successes), (2, 2));
    for a in cancelled {
        assert!(a.id.starts_with("hang."));
        assert!(a.ttft_ms.is_some(), "the token that came is kept");
        assert_eq!(a.events.len(), 1);
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("stopped early"), "{stdout}");
}

#[test]
fn sigterm_is_a_stop_too_and_exits_130() {
    let (server, child, out) = start("sigterm");
    settle(&server, &out);
    signal(&child, libc::SIGTERM);
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trace = load(&out);
    assert_eq!(
        trace.attempts.len(),
        server.request_count(),
        "every finished attempt is kept"
    );
    assert!(
        !trace
            .footer
            .expect("a footer after SIGTERM")
            .finished_cleanly
    );
}

#[test]
fn sigkill_leaves_a_loadable_trace_with_every_finished_attempt() {
    let (server, mut child, out) = start("sigkill");
    settle(&server, &out);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let trace = load(&out);
    assert!(trace.footer.is_none() && trace.is_incomplete());
    assert_eq!(
        trace.attempts.len(),
        2,
        "the two finished attempts; the hanging two never finished"
    );
    assert!(trace
        .attempts
        .iter()
        .all(|a| a.outcome == Outcome::Success && a.id.starts_with("fast.")));
}

#[test]
fn sigint_stops_an_open_loop_schedule_at_once() {
    let server = ScriptedServer::start(script);
    let (record, out) = Record::fresh("sigint-open", &["hang"]);
    let child = record
        .server(&server)
        .args([
            "--repetitions",
            "1000",
            "--rate",
            "20",
            "--arrival",
            "constant",
            "--timeout",
            "60",
            "--grace",
            "0.2",
        ])
        .spawn();
    wait_for("three requests in flight", || server.request_count() >= 3);
    signal(&child, libc::SIGINT);
    let at_signal = server.request_count();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let trace = load(&out);
    assert!(
        server.request_count() <= at_signal + 1,
        "no request is sent after Ctrl-C"
    );
    assert_eq!(trace.attempts.len(), server.request_count());
    assert!(trace
        .attempts
        .iter()
        .all(|a| a.outcome == Outcome::Cancelled));
    assert!(!trace.footer.unwrap().finished_cleanly);
}
