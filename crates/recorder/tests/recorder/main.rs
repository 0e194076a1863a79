//! End-to-end tests of `tracelab record` and `tracelab probe` against a scripted server on
//! loopback: every fault's outcome, kills, privacy, GPU telemetry, and agreement with the core.
//! One test binary (modules below) so CI links it once.

use tracelab_scripted_server as server;

mod baseline;
mod cli;
mod compare;
mod conformance;
mod connection;
mod dcgm;
mod deploy;
mod engine_metrics;
mod faults;
mod gpu;
mod llama;
mod parquet;
mod privacy;
mod shards;
mod signals;
mod stream;
mod sweep;
mod workload;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use tracelab_core::{parse::parse_trace_bytes, Attempt, Trace};

/// A fresh directory for one test (emptied first, so runs do not pile up).
// Where the real fixtures are (read in place, never copied here) is the workspace's test
// kit's, written once; these names are the ones the test files here use.
pub use tracelab_testkit::{fixture_dir as fixtures, MISSING as FIXTURES_MISSING};

pub fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("recorder-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A prompt file whose prompt texts are the scenario names the server scripts by.
pub fn prompts(dir: &Path, ids: &[&str]) -> PathBuf {
    let path = dir.join("prompts.jsonl");
    let text: String = ids
        .iter()
        .map(|id| format!("{}\n", serde_json::json!({"id": id, "prompt": id})))
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// The recorder with a clean environment: no proxy, no key, no base URL unless a test sets one.
pub fn tracelab() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tracelab"));
    for var in [
        "OPENAI_API_KEY",
        "TRACELAB_BASE_URL",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Records each prompt in `ids` once (model "m", no warm-up, no GPU) from `server` into a fresh
/// directory `name`; `extra` adds pacing and timeouts. Returns the output and the trace's path.
pub fn record_once(
    name: &str,
    server: &server::ScriptedServer,
    ids: &[&str],
    extra: &[&str],
) -> (Output, PathBuf) {
    let (record, out) = Record::fresh(name, ids);
    (record.server(server).args(extra).run(), out)
}

/// `tracelab record` as the tests run it: the one place for what every recording shares. It
/// writes `output`, and by default records model `m`, one repetition, no warm-up and no GPU
/// telemetry; each default gives way to the same flag in [`Record::args`] (and `--duration`
/// replaces `--repetitions`: a timed run has no repetition count). The base URL and the prompt
/// file are added only when set, so a test may pass them through the environment instead.
pub struct Record {
    output: PathBuf,
    base_url: Option<OsString>,
    prompts: Option<PathBuf>,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    launcher: Option<Command>,
    /// Let the recorder ask the server what it is before the run (its info endpoints): off by
    /// default here, so a test that counts requests or connections counts the run's only.
    ask_runtime: bool,
}

impl Record {
    const DEFAULTS: [(&'static str, &'static str); 4] = [
        ("--model", "m"),
        ("--repetitions", "1"),
        ("--warmup", "0"),
        ("--gpu", "off"),
    ];

    pub fn new(output: &Path) -> Record {
        Record {
            output: output.to_path_buf(),
            base_url: None,
            prompts: None,
            args: Vec::new(),
            env: Vec::new(),
            launcher: None,
            ask_runtime: false,
        }
    }

    /// Asks the server what it is before the run, as `tracelab record` does by default.
    pub fn ask_runtime(mut self) -> Record {
        self.ask_runtime = true;
        self
    }

    /// A recording in a fresh directory `name` ([`temp_dir`]) of a prompt file with `ids`
    /// ([`prompts`]), into `t.jsonl` there; also returns that path.
    pub fn fresh(name: &str, ids: &[&str]) -> (Record, PathBuf) {
        let dir = temp_dir(name);
        let out = dir.join("t.jsonl");
        (Record::new(&out).prompts(&prompts(&dir, ids)), out)
    }

    /// `--base-url` of the scripted server.
    pub fn server(self, server: &server::ScriptedServer) -> Record {
        self.base_url(server.base_url())
    }

    pub fn base_url(mut self, url: impl Into<OsString>) -> Record {
        self.base_url = Some(url.into());
        self
    }

    pub fn prompts(mut self, path: &Path) -> Record {
        self.prompts = Some(path.to_path_buf());
        self
    }

    /// More flags: the load, timeouts, or one of the defaults replaced.
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Record {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Record {
        self.env
            .push((key.as_ref().to_os_string(), value.as_ref().to_os_string()));
        self
    }

    /// Runs the recorder through `launcher` (a command that ends by executing it with the
    /// arguments appended, e.g. a shell that lowers a limit first) instead of [`tracelab`].
    pub fn via(mut self, launcher: Command) -> Record {
        self.launcher = Some(launcher);
        self
    }

    fn has(&self, flag: &str) -> bool {
        self.args.iter().any(|a| {
            let a = a.to_string_lossy();
            a == flag || a.starts_with(&format!("{flag}="))
        })
    }

    pub fn command(self) -> Command {
        // A timed run, a workload replay and sessions have no repetition count.
        let timed = self.has("--duration")
            || self.has("--workload")
            || self.has("--sessions")
            || self.has("--conversations");
        let defaults: Vec<&str> = Self::DEFAULTS
            .iter()
            .filter(|(flag, _)| !(self.has(flag) || timed && *flag == "--repetitions"))
            .flat_map(|(flag, value)| [*flag, *value])
            .collect();
        let mut cmd = self.launcher.unwrap_or_else(tracelab);
        cmd.arg("record")
            .args(defaults)
            .arg("--output")
            .arg(&self.output);
        if !self.ask_runtime {
            cmd.arg("--no-runtime-probe");
        }
        if let Some(url) = &self.base_url {
            cmd.arg("--base-url").arg(url);
        }
        if let Some(prompts) = &self.prompts {
            cmd.arg("--prompts").arg(prompts);
        }
        cmd.args(&self.args).envs(self.env);
        cmd
    }

    /// Runs it to the end (printing its output when it fails).
    pub fn run(self) -> Output {
        run(&mut self.command())
    }

    /// Starts it with stdout and stderr piped, for a test that signals or kills it.
    pub fn spawn(self) -> Child {
        self.command()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start tracelab")
    }
}

pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("run tracelab");
    if !out.status.success() {
        eprintln!(
            "stdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

pub fn load(path: &Path) -> Trace {
    let bytes = std::fs::read(path).unwrap();
    parse_trace_bytes(&path.display().to_string(), &bytes)
        .unwrap_or_else(|e| panic!("the trace does not load: {e}"))
}

pub fn by_id<'a>(trace: &'a Trace, id: &str) -> &'a Attempt {
    trace
        .attempts
        .iter()
        .find(|a| a.id == id)
        .unwrap_or_else(|| panic!("no attempt {id}"))
}

/// A Prometheus text endpoint on loopback answering every `GET /metrics` with `body`:
/// `keep_alive` false closes after each answer (as dcgm-exporter's Go server is set up here),
/// true keeps the connection for the next scrape (as engines' servers do). Returns its URL and
/// a counter of the scrapes it answered.
pub fn prometheus_endpoint(
    body: String,
    keep_alive: bool,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/metrics", listener.local_addr().unwrap());
    let scrapes = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = scrapes.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let (body, counter) = (body.clone(), counter.clone());
            std::thread::spawn(move || loop {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                assert!(
                    request.starts_with(b"GET /metrics "),
                    "{}",
                    String::from_utf8_lossy(&request)
                );
                counter.fetch_add(1, Ordering::Relaxed);
                let close = if keep_alive {
                    ""
                } else {
                    "Connection: close\r\n"
                };
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\n{close}\r\n",
                    body.len()
                );
                if stream
                    .write_all(head.as_bytes())
                    .and_then(|_| stream.write_all(body.as_bytes()))
                    .is_err()
                    || !keep_alive
                {
                    return;
                }
            });
        }
    });
    (url, scrapes)
}
