//! The recorder against real servers: llama.cpp's OpenAI-compatible server from PyPI
//! (`python -m llama_cpp.server`, llama-cpp-python) and llama.cpp's own C++ `llama-server`
//! (built from the llama.cpp that sdist vendors), on CPU, serving a tiny random-weight model
//! that the test writes itself with the `gguf` package (`tests/llama/make_tiny_gguf.py`).
//!
//! Ignored by plain `cargo test`: `cargo xtask test` installs both once into
//! `~/.cache/tracelab/` and runs these with `--ignored`, naming the python in
//! `TRACELAB_LLAMA_PYTHON` and the C++ server in `TRACELAB_LLAMA_SERVER`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tracelab_core::{Outcome, Phase, Trace};

use crate::{load, prompts, temp_dir, Record};

const PYTHON_VAR: &str = "TRACELAB_LLAMA_PYTHON";
const SERVER_VAR: &str = "TRACELAB_LLAMA_SERVER";

fn cpp_server() -> PathBuf {
    match std::env::var_os(SERVER_VAR) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => panic!(
            "{SERVER_VAR} is not set: run these tests through `cargo xtask test`, which builds llama.cpp's C++ \
             llama-server into ~/.cache/tracelab/llama-server-<version>/ and sets it, or point it at a llama-server binary"
        ),
    }
}

fn python() -> PathBuf {
    match std::env::var_os(PYTHON_VAR) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => panic!(
            "{PYTHON_VAR} is not set: run these tests through `cargo xtask test`, which installs llama.cpp's server \
             (llama-cpp-python[server] and gguf) into ~/.cache/tracelab/ and sets it, or point it at a python that \
             can `import llama_cpp.server, gguf`"
        ),
    }
}

/// The tiny model, written once per test process.
fn model() -> &'static Path {
    static MODEL: OnceLock<PathBuf> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = temp_dir("llama-model");
        let path = dir.join("tiny-random-llama.gguf");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/llama/make_tiny_gguf.py");
        let out = Command::new(python())
            .arg(script)
            .arg(&path)
            .output()
            .expect("run the GGUF generator");
        assert!(
            out.status.success(),
            "make_tiny_gguf.py failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        path
    })
}

/// A running `python -m llama_cpp.server`; killed when dropped.
pub struct Llama {
    child: Child,
    pub port: u16,
    log: PathBuf,
    /// Log lines of the warm-up request sent by `start`, left out of what tests count.
    warm_requests: usize,
    warm_totals: usize,
}

impl Llama {
    pub fn start(name: &str) -> Llama {
        Llama::start_with(name, &[])
    }

    /// With more of the server's own flags (e.g. `--interrupt_requests False`).
    pub fn start_with(name: &str, extra: &[&str]) -> Llama {
        let port = crate::server::refused_addr().port();
        let mut command = Command::new(python());
        command
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(model())
            .args([
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--n_ctx",
                "8192",
                "--n_threads",
                "1",
            ])
            .args(extra);
        Llama::spawn(name, port, command)
    }

    /// llama.cpp's C++ `llama-server` with `extra` flags (`--metrics --parallel 4`).
    pub fn start_cpp(name: &str, extra: &[&str]) -> Llama {
        let port = crate::server::refused_addr().port();
        let mut command = Command::new(cpp_server());
        command
            .arg("--model")
            .arg(model())
            .args([
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--ctx-size",
                "8192",
                "--threads",
                "1",
                "--no-webui",
            ])
            .args(extra);
        Llama::spawn(name, port, command)
    }

    fn spawn(name: &str, port: u16, mut command: Command) -> Llama {
        let log = temp_dir(&format!("llama-log-{name}")).join("server.log");
        let file = std::fs::File::create(&log).unwrap();
        let child = command
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .expect("start the llama.cpp server");
        let mut server = Llama {
            child,
            port,
            log,
            warm_requests: 0,
            warm_totals: 0,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!(
                    "the llama.cpp server exited ({status}) before it served:\n{}",
                    server.log_tail()
                );
            }
            if server
                .get("/v1/models")
                .is_some_and(|r| r.starts_with("HTTP/1.1 200"))
            {
                server.warm_up();
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "the llama.cpp server did not come up in 120 s:\n{}",
                server.log_tail()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The end of the server's log, for failure messages.
    pub fn log_tail(&self) -> String {
        let text = self.log_text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    /// Requests the server logged (uvicorn's access log), by path, after the warm-up.
    pub fn requests_logged(&self, path: &str) -> usize {
        let all = self
            .log_text()
            .lines()
            .filter(|l| l.contains(&format!("\"POST {path} HTTP/1.1\"")))
            .count();
        all - self.warm_requests
    }

    /// llama.cpp's own per-request total times, after the warm-up.
    pub fn server_totals_ms(&self) -> Vec<f64> {
        server_total_ms(&self.log_text()).split_off(self.warm_totals)
    }

    /// llama.cpp's first generation spends seconds setting up before its first token; one short
    /// request pays that before a test measures anything.
    fn warm_up(&mut self) {
        let body =
            r#"{"model":"tiny","max_tokens":2,"messages":[{"role":"user","content":"warm"}]}"#;
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect for the warm-up");
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        write!(
            s,
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        assert!(
            reply.starts_with("HTTP/1.1 200"),
            "the warm-up request failed: {reply}"
        );
        wait_until(
            "the warm-up's timings in the log",
            Duration::from_secs(30),
            || !server_total_ms(&self.log_text()).is_empty(),
        );
        self.warm_requests = 1;
        self.warm_totals = server_total_ms(&self.log_text()).len();
    }

    fn get(&self, path: &str) -> Option<String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        Some(text)
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Llama {
    fn drop(&mut self) {
        self.kill();
    }
}

const PROMPTS: [&str; 4] = ["hello", "count-to-ten", "name-a-colour", "tell-a-story"];

fn record_args(server: &Llama, dir: &Path, out: &Path) -> Record {
    Record::new(out)
        .base_url(server.base_url())
        .prompts(&prompts(dir, &PROMPTS))
        .args(["--model", "tiny", "--timeout", "120"])
}

fn record(server: &Llama, name: &str, args: &[&str]) -> (std::process::Output, Trace) {
    let dir = temp_dir(name);
    let out = dir.join("trace.jsonl");
    let output = record_args(server, &dir, &out)
        .args(args)
        .command()
        .output()
        .unwrap();
    assert!(
        out.exists(),
        "no trace written:\n{}\nserver log:\n{}",
        String::from_utf8_lossy(&output.stderr),
        server.log_tail()
    );
    (output, load(&out))
}

fn measured(trace: &Trace) -> Vec<&tracelab_core::Attempt> {
    trace
        .attempts
        .iter()
        .filter(|a| a.phase == Phase::Measure)
        .collect()
}

/// llama.cpp's own per-request timings (`llama_perf_context_print: total time = … ms`), in order.
fn server_total_ms(log: &str) -> Vec<f64> {
    log.lines()
        .filter(|l| l.contains("total time"))
        .filter_map(|l| l.split('=').nth(1)?.split_whitespace().next()?.parse().ok())
        .collect()
}

#[test]
#[ignore = "needs llama.cpp's server: run through `cargo xtask test`"]
fn llama_default_run_is_all_success_and_agrees_with_the_server() {
    let server = Llama::start("default");
    let (output, trace) = record(
        &server,
        "llama-default",
        &["--repetitions", "2", "--warmup", "1", "--max-tokens", "16"],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(trace.attempts.len(), 12);
    assert_eq!(
        server.requests_logged("/v1/chat/completions"),
        12,
        "one request per attempt, none resent"
    );
    for a in &trace.attempts {
        assert_eq!(a.outcome, Outcome::Success, "{}: {:?}", a.id, a.detail);
        let (fb, ttft, e2e) = (
            a.first_byte_ms.unwrap(),
            a.ttft_ms.unwrap(),
            a.e2e_ms.unwrap(),
        );
        assert!(
            0.0 < fb && fb <= ttft && ttft <= e2e,
            "{}: first byte {fb}, ttft {ttft}, e2e {e2e}",
            a.id
        );
        assert!(!a.events.is_empty());
    }
    // The server's own clock for each request (prompt + generation) lies inside the client's:
    // the client's E2E adds only the network and the HTTP layers on loopback.
    let totals = server.server_totals_ms();
    assert_eq!(
        totals.len(),
        12,
        "llama.cpp reports its timings per request:\n{}",
        server.log_tail()
    );
    for (a, server_ms) in trace.attempts.iter().zip(&totals) {
        let e2e = a.e2e_ms.unwrap();
        assert!(
            e2e >= server_ms * 0.95,
            "{}: client E2E {e2e} ms < server total {server_ms} ms",
            a.id
        );
        assert!(
            e2e - server_ms < 2000.0,
            "{}: client E2E {e2e} ms far above server total {server_ms} ms",
            a.id
        );
    }
}

#[test]
#[ignore = "needs llama.cpp's server: run through `cargo xtask test`"]
fn llama_interrupted_streams_are_failures_not_successes() {
    // With --interrupt_requests on (llama_cpp.server's default), a request that arrives while
    // another streams aborts that stream: it ends with a role-only chunk or a few tokens, then
    // [DONE], and no finish_reason.
    let server = Llama::start("interrupt");
    let (_, trace) = record(
        &server,
        "llama-interrupt",
        &[
            "--repetitions",
            "3",
            "--warmup",
            "0",
            "--max-tokens",
            "64",
            "--concurrency",
            "4",
        ],
    );
    let all = measured(&trace);
    assert_eq!(all.len(), 12);
    let failures: Vec<_> = all
        .iter()
        .filter(|a| a.outcome != Outcome::Success)
        .collect();
    assert!(
        !failures.is_empty(),
        "four clients at once interrupt each other: some streams must have been cut"
    );
    for a in &all {
        if a.outcome == Outcome::Success {
            // The tiny model never samples end-of-sequence, so a complete answer is max_tokens long.
            assert_eq!(
                a.output_tokens.or(Some(a.events.len() as u32)),
                Some(64),
                "{}: a success is a complete answer",
                a.id
            );
            assert!(
                a.ttft_ms.is_some(),
                "{}: a success without a token is an interrupted stream",
                a.id
            );
        } else {
            assert_eq!(a.outcome, Outcome::StreamBroken, "{}: {:?}", a.id, a.detail);
            assert!(a.detail.is_some(), "{}: says why", a.id);
        }
    }
}

#[test]
#[ignore = "needs llama.cpp's server: run through `cargo xtask test`"]
fn llama_closing_idle_connections_makes_no_false_connect_errors() {
    // uvicorn closes a keep-alive connection after 5 s idle, without `Connection: close`.
    // Requests 5.3 s apart each find their pooled connection closed by the server.
    let server = Llama::start("idle");
    let (output, trace) = record(
        &server,
        "llama-idle",
        &[
            "--repetitions",
            "1",
            "--warmup",
            "0",
            "--max-tokens",
            "4",
            "--rate",
            "0.19",
            "--arrival",
            "constant",
        ],
    );
    assert!(output.status.success());
    let all = measured(&trace);
    assert_eq!(all.len(), 4);
    for a in &all {
        assert_eq!(a.outcome, Outcome::Success, "{}: {:?}", a.id, a.detail);
    }
    assert_eq!(server.requests_logged("/v1/chat/completions"), 4);
}

fn spawn_record(server: &Llama, name: &str, args: &[&str]) -> (Child, PathBuf) {
    let dir = temp_dir(name);
    let out = dir.join("trace.jsonl");
    let child = record_args(server, &dir, &out).args(args).spawn();
    (child, out)
}

fn wait_until(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
#[ignore = "needs llama.cpp's server: run through `cargo xtask test`"]
fn llama_killed_mid_run_is_stream_broken_then_connect_error() {
    let mut server = Llama::start("kill");
    let (child, out) = spawn_record(
        &server,
        "llama-kill",
        &[
            "--repetitions",
            "1",
            "--warmup",
            "0",
            "--max-tokens",
            "8000",
        ],
    );
    // The first answer (8000 tokens, several seconds) is streaming when the server dies.
    wait_until(
        "the first request to reach the server",
        Duration::from_secs(30),
        || server.requests_logged("/v1/chat/completions") >= 1,
    );
    std::thread::sleep(Duration::from_secs(2));
    server.kill();
    let output = child.wait_with_output().unwrap();
    let trace = load(&out);
    let all = measured(&trace);
    assert_eq!(all.len(), 4, "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(all[0].outcome, Outcome::StreamBroken, "{:?}", all[0].detail);
    assert!(all[0].ttft_ms.is_some(), "tokens had come before the kill");
    for a in &all[1..] {
        assert_eq!(a.outcome, Outcome::ConnectError, "{}: {:?}", a.id, a.detail);
        // Refused, or reset when the connect raced the dying server's listening socket.
        assert!(
            matches!(
                a.detail.as_deref(),
                Some("connection refused" | "connection reset")
            ),
            "{}: {:?}",
            a.id,
            a.detail
        );
        assert!(a.first_byte_ms.is_none());
    }
}

#[test]
#[ignore = "needs llama.cpp's server: run through `cargo xtask test`"]
fn llama_ctrl_c_keeps_every_finished_attempt() {
    let server = Llama::start("sigint");
    let (child, out) = spawn_record(
        &server,
        "llama-sigint",
        &[
            "--repetitions",
            "100",
            "--warmup",
            "0",
            "--max-tokens",
            "32",
            "--grace",
            "0.2",
        ],
    );
    let lines = || {
        std::fs::read_to_string(&out)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    wait_until("three finished attempts", Duration::from_secs(60), || {
        lines() >= 4
    });
    // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let output = child.wait_with_output().unwrap();
    assert!(
        matches!(output.status.code(), Some(0) | Some(130)),
        "stopped by Ctrl-C: {:?}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let trace = load(&out);
    let footer = trace.footer.expect("a footer after Ctrl-C");
    assert!(!footer.finished_cleanly);
    assert_eq!(footer.attempts as usize, trace.attempts.len());
    assert!(trace.attempts.len() >= 3 && trace.attempts.len() < 400);
    assert_eq!(
        trace.attempts.len(),
        server.requests_logged("/v1/chat/completions"),
        "every request the server saw has its attempt"
    );
    let (last, done) = trace.attempts.split_last().unwrap();
    assert!(
        done.iter().all(|a| a.outcome == Outcome::Success),
        "every attempt before Ctrl-C finished"
    );
    assert!(
        matches!(last.outcome, Outcome::Success | Outcome::Cancelled),
        "{:?}",
        last.outcome
    );
}

/// A loopback TCP relay in front of `port` that counts the connections made through it: the
/// wire's own count, not the recorder's claim. Returns the relay's port and the counter.
fn counting_relay(port: u16) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let relay_port = listener.local_addr().unwrap().port();
    let count = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            counter.fetch_add(1, Ordering::SeqCst);
            let Ok(upstream) = TcpStream::connect(("127.0.0.1", port)) else {
                continue;
            };
            let _ = (client.set_nodelay(true), upstream.set_nodelay(true));
            let pipe = |mut from: TcpStream, mut to: TcpStream| {
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(std::net::Shutdown::Write);
                })
            };
            pipe(client.try_clone().unwrap(), upstream.try_clone().unwrap());
            pipe(upstream, client);
        }
    });
    (relay_port, count)
}

#[test]
#[ignore = "needs llama.cpp's server: run through `cargo xtask test`"]
fn llama_sequential_requests_reuse_one_connection_on_the_wire() {
    // Main dropped each connection ~0.25 ms after [DONE], before the chunked body's end marker:
    // 23 TCP connections for 25 requests. Read to the end, one connection carries them all.
    let server = Llama::start("one-connection");
    let (relay, connections) = counting_relay(server.port);
    let dir = temp_dir("llama-one-connection");
    let out = dir.join("trace.jsonl");
    let output = Record::new(&out)
        .base_url(format!("http://127.0.0.1:{relay}/v1"))
        .prompts(&prompts(&dir, &PROMPTS))
        .args([
            "--model",
            "tiny",
            "--timeout",
            "120",
            "--repetitions",
            "3",
            "--warmup",
            "1",
            "--max-tokens",
            "8",
        ])
        .run();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trace = load(&out);
    assert_eq!(trace.attempts.len(), 16);
    assert!(trace.attempts.iter().all(|a| a.outcome == Outcome::Success));
    assert_eq!(
        server.requests_logged("/v1/chat/completions"),
        16,
        "one request per attempt"
    );
    assert_eq!(
        connections.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "16 sequential requests rode one TCP connection on the wire"
    );
    let share = trace.header.client.expect("the recorder's share");
    assert_eq!(
        (share.new_connections, share.warm_connections, share.resent),
        (0, 1, 0),
        "{share:?}"
    );
    let timing = share.timing.expect("kernel receive times on Linux");
    assert_eq!(
        timing.first_token.n, 12,
        "one first token per measured attempt"
    );
    // A stated bound, not a speed target: how late the timestamps were depends on the machine's
    // load (the fidelity bench measures it), so only its consistency is checked here.
    let f = timing.first_token;
    assert!(
        f.p50_ms >= 0.0 && f.p50_ms <= f.p99_ms && f.p99_ms <= f.max_ms && f.max_ms.is_finite(),
        "{timing:?}"
    );
}

#[test]
#[ignore = "needs llama.cpp's server: run through `cargo xtask test`"]
fn llama_runtime_prompts_and_reuse_are_recorded() {
    let server = Llama::start("runtime");
    let dir = temp_dir("llama-runtime");
    let out = dir.join("trace.jsonl");
    let output = record_args(&server, &dir, &out)
        .ask_runtime()
        .args([
            "--repetitions",
            "2",
            "--warmup",
            "1",
            "--max-tokens",
            "8",
            "--quiet",
        ])
        .command()
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stderr),
        server.log_tail()
    );
    let trace = load(&out);
    // What the server itself says: llama-cpp-python names itself in its FastAPI description,
    // and its model list names the GGUF file (by path: only the file name is kept).
    let runtime = trace
        .header
        .conditions
        .runtime
        .as_ref()
        .expect("conditions.runtime");
    assert_eq!(
        runtime.engine.as_deref(),
        Some("llama-cpp-python"),
        "{runtime:?}"
    );
    assert!(
        runtime
            .engine_version
            .as_deref()
            .is_some_and(|v| v.starts_with("0.")),
        "{runtime:?}"
    );
    assert_eq!(
        runtime.model_id.as_deref(),
        Some("tiny-random-llama.gguf"),
        "{runtime:?}"
    );
    assert!(
        runtime.asked.contains(&"/openapi.json 200".to_string())
            && runtime.asked.contains(&"/props 404".to_string()),
        "{:?}",
        runtime.asked
    );
    let header = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(
        !header.contains("127.0.0.1") && !header.contains(dir.to_str().unwrap()),
        "no host or directory: {header}"
    );
    std::fs::write(dir.join("header.json"), &header).unwrap();
    // Each prompt: the warm-up sent it first, so every measured send is a repeat.
    for (i, id) in PROMPTS.iter().enumerate() {
        let warm = crate::by_id(&trace, &format!("{id}.w1")).prompt.unwrap();
        assert_eq!(
            (warm.index as usize, warm.repetition, warm.repeat),
            (i, 1, false),
            "{id}"
        );
        let second = crate::by_id(&trace, &format!("{id}.r2")).prompt.unwrap();
        assert_eq!(
            (second.index as usize, second.repetition, second.repeat),
            (i, 2, true),
            "{id}"
        );
    }
    // The card: the split by reuse and the five checks.
    let report = crate::run(crate::tracelab().arg("report").arg(&out));
    let card = String::from_utf8(report.stdout).unwrap();
    std::fs::write(dir.join("card.txt"), &card).unwrap();
    assert!(card.contains("TTFT by prompt reuse"), "{card}");
    assert!(
        card.contains("This run counts as a baseline:") && card.contains("✓ 1 One contract: yes"),
        "{card}"
    );
}

/// Nearest-rank P95 of the measured attempts' TTFT, in ms.
fn ttft_p95_ms(trace: &Trace) -> f64 {
    ttft_percentile_ms(trace, 0.95)
}

/// Nearest-rank percentile `p` (0..1) of the measured TTFTs, in ms.
fn ttft_percentile_ms(trace: &Trace, p: f64) -> f64 {
    let mut t: Vec<f64> = measured(trace).iter().filter_map(|a| a.ttft_ms).collect();
    t.sort_by(f64::total_cmp);
    t[((p * t.len() as f64).ceil() as usize).clamp(1, t.len()) - 1]
}

/// `tracelab sweep --concurrencies 1,2,4` against the real server, then `tracelab capacity` on
/// its folder. llama-cpp-python serves one request at a time, and by default a new request
/// interrupts the one streaming (`interrupt_requests`: every concurrent step is then mostly
/// `stream_broken`, and the sweep stops there as saturated); started with `--interrupt_requests
/// False` it queues them instead, so a higher concurrency only waits longer: the median TTFT must not fall as concurrency rises (beyond noise). The target is one the
/// tiny model meets at every step (half the requests qualified, with a non-empty answer and a
/// first token within 60 s), so every step is written and the answer is "at least concurrency
/// 4". The capacity output is kept in the test's folder (`capacity.txt`) for reading.
#[test]
#[ignore = "needs llama.cpp's server: run through `cargo xtask test`"]
fn llama_concurrency_sweep_gives_a_capacity_answer() {
    let server = Llama::start_with("sweep", &["--interrupt_requests", "False"]);
    let dir = temp_dir("llama-sweep");
    let out_dir = dir.join("sweep");
    let rubric_prompts = dir.join("prompts.jsonl");
    let rows: String = PROMPTS
        .iter()
        .map(|id| {
            format!(
                "{}\n",
                serde_json::json!({"id": id, "prompt": id, "rubric": {"min_chars": 1}})
            )
        })
        .collect();
    std::fs::write(&rubric_prompts, rows).unwrap();
    let output = crate::tracelab()
        .args([
            "sweep",
            "--base-url",
            &server.base_url(),
            "--model",
            "tiny",
            "--timeout",
            "120",
            "--gpu",
            "off",
        ])
        .arg("--prompts")
        .arg(&rubric_prompts)
        .arg("--output-dir")
        .arg(&out_dir)
        .args([
            "--concurrencies",
            "1,2,4",
            "--repetitions",
            "2",
            "--warmup",
            "1",
            "--max-tokens",
            "8",
        ])
        .args(["--threshold", "60", "--target", "joint_rate>=0.5"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{stderr}\nserver log:\n{}",
        server.log_tail()
    );
    let sweep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
            .unwrap();
    let steps = sweep["steps"].as_array().unwrap();
    let loads: Vec<f64> = steps.iter().map(|s| s["load"].as_f64().unwrap()).collect();
    assert_eq!(
        loads,
        [1.0, 2.0, 4.0],
        "every step written, in order: {sweep}"
    );
    assert_eq!(
        (
            sweep["kind"].as_str(),
            &sweep["stopped"],
            &sweep["interrupted"]
        ),
        (
            Some("concurrency"),
            &serde_json::Value::Null,
            &serde_json::json!(false)
        ),
        "{sweep}"
    );
    let (mut p95, mut p50) = (Vec::new(), Vec::new());
    for (s, c) in steps.iter().zip([1, 2, 4]) {
        let trace = load(&out_dir.join(s["file"].as_str().unwrap()));
        assert_eq!(trace.header.conditions.concurrency, Some(c));
        let m = measured(&trace);
        assert_eq!(m.len(), 8, "4 prompts × 2 repetitions at concurrency {c}");
        assert!(
            m.iter().all(|a| a.outcome == Outcome::Success),
            "concurrency {c}: {:?}",
            m.iter().map(|a| &a.detail).collect::<Vec<_>>()
        );
        p95.push(ttft_p95_ms(&trace));
        p50.push(ttft_percentile_ms(&trace, 0.5));
    }
    // One request at a time: each step queues more. Judged on the median: with 8 requests a
    // step's P95 is its slowest one, and one stall of the shared CPU (7 s once, at load 10)
    // made concurrency 1 look slower than 4. Noise: 30 % and 50 ms.
    assert!(
        p50.windows(2).all(|w| w[1] >= w[0] * 0.7 - 50.0),
        "P50 TTFT fell as concurrency rose: {p50:?} ms (P95 {p95:?})"
    );
    assert!(
        p50[2] > p50[0],
        "four queued requests wait longer than one: P50 {p50:?} ms (P95 {p95:?})"
    );

    let capacity = crate::tracelab()
        .arg("capacity")
        .arg(&out_dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&capacity.stdout).to_string();
    std::fs::write(
        dir.join("capacity.txt"),
        format!("P95 TTFT per step (ms): {p95:?}\n\n{text}"),
    )
    .unwrap();
    eprintln!(
        "P95 TTFT at concurrency 1, 2, 4: {p95:?} ms\n{text}\n(sweep's own answer:\n{stdout})"
    );
    assert!(
        capacity.status.success(),
        "{}",
        String::from_utf8_lossy(&capacity.stderr)
    );
    assert!(
        text.contains("capacity is at least concurrency 4"),
        "{text}"
    );
    // Recomputed under a P95 TTFT target near the first step's: printed whatever it says (8
    // requests a step may leave a P95's interval open, so no verdict is asserted).
    let tight = format!("ttft_p95<={:.3}", p95[0] / 1000.0 * 1.2);
    let capacity = crate::tracelab()
        .arg("capacity")
        .arg(&out_dir)
        .args(["--target", &tight])
        .output()
        .unwrap();
    let tight_text = String::from_utf8_lossy(&capacity.stdout).to_string();
    std::fs::write(dir.join("capacity-tight.txt"), &tight_text).unwrap();
    eprintln!("--target {tight}:\n{tight_text}");
    assert!(
        capacity.status.success() && tight_text.to_lowercase().contains("capacity"),
        "{tight_text}"
    );
}

#[test]
#[ignore = "needs llama.cpp's C++ server: run through `cargo xtask test`"]
fn llama_cpp_server_loops_a_sweep_and_a_replay_have_no_false_failures() {
    // llama-server closes the connection 17–140 µs after every streamed reply while its head
    // says keep-alive: main recorded 26 of 160 attempts `connect_error` at concurrency 2 on
    // this healthy server, requests it never read. Here every attempt must succeed, and the
    // server's log must count exactly one request per attempt (nothing lost, nothing twice).
    let server = Llama::start_cpp("cpp", &["--metrics", "--parallel", "4"]);
    let metrics = format!("http://127.0.0.1:{}/metrics", server.port);
    let loads: [(&str, &[&str]); 2] = [
        (
            "llama-cpp-closed",
            &["--concurrency", "2", "--repetitions", "10", "--warmup", "1"],
        ),
        (
            "llama-cpp-open",
            &[
                "--rate",
                "6",
                "--arrival",
                "poisson",
                "--repetitions",
                "10",
                "--warmup",
                "1",
            ],
        ),
    ];
    let mut sent = 0;
    for (name, shape) in loads {
        let dir = temp_dir(name);
        let out = dir.join("trace.jsonl");
        let args = [shape, &["--max-tokens", "8", "--server-metrics", &metrics]].concat();
        let output = record_args(&server, &dir, &out)
            .ask_runtime()
            .args(args)
            .command()
            .output()
            .unwrap();
        let trace = load(&out);
        assert!(
            output.status.success(),
            "{name}: {}\n{}",
            String::from_utf8_lossy(&output.stderr),
            server.log_tail()
        );
        assert_eq!(trace.attempts.len(), 44, "{name}");
        let false_failures: Vec<_> = trace
            .attempts
            .iter()
            .filter(|a| a.outcome != Outcome::Success)
            .map(|a| (&a.id, &a.detail))
            .collect();
        assert!(
            false_failures.is_empty(),
            "{name}: {} of 44 attempts failed on a healthy server: {false_failures:?}",
            false_failures.len()
        );
        sent += trace.attempts.len();
        let totals = server.server_totals_ms();
        assert_eq!(
            totals.len(),
            sent,
            "{name}: the server finished exactly one request per attempt:\n{}",
            server.log_tail()
        );
        let runtime = trace
            .header
            .conditions
            .runtime
            .as_ref()
            .expect("the runtime probe ran");
        assert_eq!(
            runtime.engine.as_deref(),
            Some("llama.cpp"),
            "{name}: /props names llama.cpp: {runtime:?}"
        );
        assert!(!trace.engine.is_empty(), "{name}: /metrics was scraped");
    }
    // A concurrency sweep, judged on TTFT (the prompts carry no rubrics): every step whole.
    let dir = temp_dir("llama-cpp-sweep");
    let out_dir = dir.join("sweep");
    let output = crate::run(
        crate::tracelab()
            .args([
                "sweep",
                "--base-url",
                &server.base_url(),
                "--model",
                "tiny",
                "--gpu",
                "off",
                "--keep-going",
            ])
            .arg("--prompts")
            .arg(prompts(&dir, &PROMPTS))
            .arg("--output-dir")
            .arg(&out_dir)
            .args([
                "--concurrencies",
                "1,2,4",
                "--repetitions",
                "3",
                "--warmup-rounds",
                "1",
                "--max-tokens",
                "8",
            ])
            .args(["--target", "ttft_p95<=10", "--server-metrics", &metrics]),
    );
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stderr),
        server.log_tail()
    );
    let sweep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
            .unwrap();
    let steps = sweep["steps"].as_array().expect("the steps");
    assert_eq!(steps.len(), 3, "{sweep}");
    for step in steps {
        let trace = load(&out_dir.join(step["file"].as_str().unwrap()));
        sent += trace.attempts.len();
        let failed: Vec<_> = trace
            .attempts
            .iter()
            .filter(|a| a.outcome != Outcome::Success)
            .map(|a| (&a.id, &a.detail))
            .collect();
        assert!(failed.is_empty(), "{step}: {failed:?}");
    }
    assert_eq!(
        server.server_totals_ms().len(),
        sent,
        "the sweep's requests, each finished once:\n{}",
        server.log_tail()
    );

    // A workload replay, its prompt lengths measured at llama-server's /tokenize: the server
    // reads each prompt at about the length asked (plus the chat template's own tokens).
    let file = dir.join("small.jsonl");
    let rows: String = (0..8)
        .map(|i| {
            format!(
                "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": 4}}\n",
                i * 150,
                40 + 30 * i
            )
        })
        .collect();
    std::fs::write(&file, rows).unwrap();
    let out = dir.join("replay.jsonl");
    let output = Record::new(&out)
        .base_url(server.base_url())
        .args(["--model", "tiny", "--timeout", "120", "--workload"])
        .args([file.as_os_str()])
        .run();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        header["workload"]["input_lengths"]["method"], "tokenizer",
        "measured at /tokenize: {}",
        header["workload"]
    );
    let trace = load(&out);
    assert_eq!(trace.attempts.len(), 8);
    for (i, a) in trace.attempts.iter().enumerate() {
        assert_eq!(a.outcome, Outcome::Success, "{}: {:?}", a.id, a.detail);
        let (asked, read) = (
            40 + 30 * i as u32,
            a.input_tokens
                .expect("llama-server reports the prompt's tokens"),
        );
        assert!(
            read >= asked * 9 / 10 && read <= asked * 11 / 10 + 40,
            "{}: asked {asked} tokens, the server read {read}",
            a.id
        );
    }
}

/// The bytes each connection's client sent, one buffer per connection.
type Sent = std::sync::Arc<std::sync::Mutex<Vec<std::sync::Arc<std::sync::Mutex<Vec<u8>>>>>>;

/// A TCP relay in front of a server that keeps every byte the client sent, so a test can read
/// the request bodies as they went on the wire.
struct WireTap {
    port: u16,
    sent: Sent,
}

impl WireTap {
    fn start(upstream: u16) -> WireTap {
        use std::sync::{Arc, Mutex};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let sent: Sent = Arc::default();
        let all = sent.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                let _ = (client.set_nodelay(true), server.set_nodelay(true));
                let log = Arc::new(Mutex::new(Vec::new()));
                all.lock().unwrap().push(log.clone());
                let (mut c_read, mut s_write) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || {
                    let mut buf = [0u8; 65536];
                    while let Ok(n) = c_read.read(&mut buf) {
                        if n == 0 || s_write.write_all(&buf[..n]).is_err() {
                            break;
                        }
                        log.lock().unwrap().extend_from_slice(&buf[..n]);
                    }
                    let _ = s_write.shutdown(std::net::Shutdown::Write);
                });
                let (mut s_read, mut c_write) = (server, client);
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut s_read, &mut c_write);
                    let _ = c_write.shutdown(std::net::Shutdown::Both);
                });
            }
        });
        WireTap { port, sent }
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The JSON bodies of every POST to `path`, in the order their connections opened.
    fn bodies(&self, path: &str) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        for log in self.sent.lock().unwrap().iter() {
            let bytes = log.lock().unwrap().clone();
            let mut rest = &bytes[..];
            while let Some(end) = rest.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&rest[..end]).to_string();
                let length: usize = head
                    .lines()
                    .find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse().ok())?
                    })
                    .unwrap_or(0);
                let body = &rest[end + 4..(end + 4 + length).min(rest.len())];
                if head.starts_with(&format!("POST {path} ")) {
                    out.push(serde_json::from_slice(body).expect("a JSON request body"));
                }
                rest = &rest[(end + 4 + length).min(rest.len())..];
            }
        }
        out
    }
}

#[test]
#[ignore = "needs llama.cpp's C++ server: run through `cargo xtask test`"]
fn llama_cpp_sessions_resend_their_history_and_the_server_serves_it_from_its_cache() {
    // Three sessions of three turns against llama-server, through a relay that keeps the
    // request bodies: each later turn carries its session's earlier turns on the wire, starts
    // after the previous reply plus the think time, and the server's own usage says how much
    // of its prompt came from its cache. The replies appear in the trace only as hashes.
    use sha2::{Digest, Sha256};
    use std::collections::BTreeMap;
    let server = Llama::start_cpp("cpp-sessions", &["--metrics", "--parallel", "4"]);
    let tap = WireTap::start(server.port);
    let dir = temp_dir("llama-cpp-sessions");
    let out = dir.join("sessions.jsonl");
    let think_s = 0.3;
    let output = Record::new(&out)
        .base_url(tap.base_url())
        .ask_runtime()
        .args(["--model", "tiny", "--timeout", "120", "--warmup", "1"])
        .args(["--sessions", "3", "--turns", "3", "--session-rate", "2"])
        .args(["--think-s", "0.3", "--user-tokens", "24"])
        .args(["--answer-tokens", "12", "--seed", "5"])
        .run();
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stderr),
        server.log_tail()
    );
    let trace = load(&out);
    let turns = measured(&trace);
    assert_eq!(turns.len(), 9, "3 sessions × 3 turns");
    let failures: Vec<_> = turns
        .iter()
        .filter(|a| a.outcome != Outcome::Success)
        .map(|a| (&a.id, &a.detail))
        .collect();
    assert!(failures.is_empty(), "no false failures: {failures:?}");
    assert_eq!(
        server.server_totals_ms().len(),
        10,
        "the server finished one request per attempt (the warm-up and 9 turns):\n{}",
        server.log_tail()
    );

    // The trace, session by session, turn by turn.
    let text = std::fs::read_to_string(&out).unwrap();
    let hashes: BTreeMap<String, String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "attempt" && v["phase"] == "measure")
        .map(|v| {
            (
                v["id"].as_str().unwrap().to_string(),
                v["answer_sha256"]
                    .as_str()
                    .expect("every turn's reply hash")
                    .to_string(),
            )
        })
        .collect();
    let mut by_session: BTreeMap<&str, Vec<&tracelab_core::Attempt>> = BTreeMap::new();
    for a in &turns {
        let s = a
            .session
            .as_ref()
            .expect("every measured attempt is a turn");
        by_session.entry(s.session_id.as_str()).or_default().push(a);
    }
    assert_eq!(by_session.len(), 3);
    for (id, list) in &mut by_session {
        list.sort_by_key(|a| a.session.as_ref().unwrap().turn);
        let numbers: Vec<u32> = list
            .iter()
            .map(|a| a.session.as_ref().unwrap().turn)
            .collect();
        assert_eq!(numbers, [1, 2, 3], "{id}");
        for pair in list.windows(2) {
            let (prev, next) = (pair[0], pair[1]);
            let s = next.session.as_ref().unwrap();
            let (p_in, p_out) = (prev.input_tokens.unwrap(), prev.output_tokens.unwrap());
            // The history is the previous turn's prompt and reply, in the server's counts.
            assert_eq!(s.history_tokens, Some(p_in + p_out), "{}", next.id);
            let n_in = next
                .input_tokens
                .expect("llama-server reports prompt tokens");
            assert!(
                n_in > p_in + 24 / 2,
                "{}: the prompt grows with the history: {p_in} → {n_in}",
                next.id
            );
            // The closed loop inside the session: sent after the reply plus the think time.
            let ended = prev.start_ms.unwrap() + prev.e2e_ms.unwrap();
            let intended = next.intended_start_ms.unwrap();
            assert!(
                (intended - (ended + think_s * 1000.0)).abs() < 0.01,
                "{}: intended {intended} ms, previous reply ended {ended} ms",
                next.id
            );
            assert!(next.start_ms.unwrap() >= intended, "{}", next.id);
            // llama-server reuses the slot that holds this session's previous prompt.
            let cached = s.cached_tokens.expect("llama-server reports cached tokens");
            assert!(
                cached >= p_in && cached < n_in,
                "{}: {cached} of {n_in} prompt tokens cached; the previous prompt was {p_in}",
                next.id
            );
        }
        assert!(
            list[0].session.as_ref().unwrap().cached_tokens.is_some(),
            "{id}: the first turn's cached tokens are reported too"
        );
    }

    // On the wire: every chat body, grouped by its session's first message.
    let bodies: Vec<serde_json::Value> = tap
        .bodies("/v1/chat/completions")
        .into_iter()
        .filter(|b| b["messages"].as_array().is_some_and(|m| !m.is_empty()))
        .collect();
    let mut wire: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for b in &bodies {
        let first = b["messages"][0]["content"].as_str().unwrap().to_string();
        wire.entry(first).or_default().push(b["messages"].clone());
    }
    let sessions: Vec<&Vec<serde_json::Value>> = wire.values().filter(|v| v.len() == 3).collect();
    assert_eq!(
        sessions.len(),
        3,
        "three sessions of three bodies on the wire"
    );
    for conversation in sessions {
        let mut conversation = conversation.clone();
        conversation.sort_by_key(|m| m.as_array().unwrap().len());
        let lengths: Vec<usize> = conversation
            .iter()
            .map(|m| m.as_array().unwrap().len())
            .collect();
        assert_eq!(lengths, [1, 3, 5], "user, then user+assistant+user, …");
        // The session this is: the trace's turn whose reply the second body resent.
        let reply = conversation[1][1]["content"].as_str().unwrap();
        let hash: String = Sha256::digest(reply.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let id = hashes
            .iter()
            .find(|(_, h)| **h == hash)
            .map(|(id, _)| id.clone())
            .expect("the resent reply is a turn's reply, by its hash");
        assert!(id.ends_with(".t1"), "{id}: turn 2 resends turn 1's reply");
        let session = id.trim_end_matches(".t1");
        for k in 1..3 {
            let (before, after) = (&conversation[k - 1], &conversation[k]);
            let after = after.as_array().unwrap();
            assert_eq!(
                &after[..before.as_array().unwrap().len()],
                before.as_array().unwrap().as_slice(),
                "{session}: turn {} resends turn {k}'s messages unchanged",
                k + 1
            );
            assert_eq!(after[after.len() - 2]["role"], "assistant");
            let reply = after[after.len() - 2]["content"].as_str().unwrap();
            let hash: String = Sha256::digest(reply.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(
                hashes[&format!("{session}.t{k}")],
                hash,
                "{session}: turn {} carries turn {k}'s own reply",
                k + 1
            );
            // No reply text in the trace: only its counts and its hash.
            let escaped = serde_json::to_string(reply).unwrap();
            assert!(
                reply.trim().len() < 8 || !text.contains(escaped.trim_matches('"')),
                "{session}: turn {k}'s reply text is in the trace"
            );
        }
    }

    // The card: per-turn and per-session figures from the recorded trace.
    let report = crate::run(crate::tracelab().args(["report", "--json"]).arg(&out));
    assert!(report.status.success());
    let card: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let s = &card["sessions"];
    assert_eq!(s["sessions"], 3.0, "{s}");
    let by_turn = s["by_turn"].as_array().expect("by_turn");
    assert_eq!(by_turn.len(), 3, "{s}");
    for row in by_turn {
        assert_eq!(row["attempts"], 3, "{row}");
        assert_eq!(row["cached_reported"], 3, "{row}");
    }
    eprintln!(
        "sessions: {}\nby turn: {}",
        s["session_qualified_share"],
        serde_json::to_string(by_turn).unwrap()
    );

    // A CONSTRUCTED file in vLLM's multi-turn input format, on the same server: the file's user
    // messages go out as they are, the server's own reply replaces the file's answer in the
    // next turn's history, and max_tokens is the file's answer at the measured words per token.
    let tap = WireTap::start(server.port);
    let file = dir.join("conversations.json");
    let answer = "It keeps the keys and values of the tokens two prompts share.";
    let conversations = serde_json::json!([{"id": "conv-a", "messages": [
        {"role": "user", "content": "What does a prefix cache keep?"},
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "And when is it full?"}
    ]}]);
    std::fs::write(&file, conversations.to_string()).unwrap();
    let out = dir.join("conversations.jsonl");
    let output = Record::new(&out)
        .base_url(tap.base_url())
        .ask_runtime()
        .args(["--model", "tiny", "--timeout", "120", "--warmup", "0"])
        .args([std::ffi::OsStr::new("--conversations"), file.as_os_str()])
        .args(["--session-rate", "5", "--think-s", "0.1"])
        .run();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trace = load(&out);
    assert_eq!(trace.attempts.len(), 2);
    assert!(trace.attempts.iter().all(|a| a.outcome == Outcome::Success));
    let text = std::fs::read_to_string(&out).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let words_per_token = header["sessions"]["input_lengths"]["words_per_token"]
        .as_f64()
        .expect("measured at /tokenize");
    let bodies = tap.bodies("/v1/chat/completions");
    assert_eq!(bodies.len(), 2, "two turns on the wire");
    assert_eq!(
        bodies[0]["messages"][0]["content"],
        "What does a prefix cache keep?"
    );
    assert_eq!(
        bodies[0]["max_tokens"].as_f64(),
        Some((answer.split_whitespace().count() as f64 / words_per_token).round()),
        "turn 1 asks the file's answer length"
    );
    let resent = bodies[1]["messages"][1]["content"].as_str().unwrap();
    assert_ne!(resent, answer, "the server's reply, not the file's answer");
    let hash: String = Sha256::digest(resent.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(
        text.contains(&format!("\"answer_sha256\":\"{hash}\"")),
        "turn 1's reply is the one resent"
    );
    assert!(!text.contains("What does a prefix cache keep?"));
}
