//! End-to-end tests of `tracelab record` and `tracelab probe` against a scripted server on
//! loopback: every fault's outcome, kills, privacy, GPU telemetry, and agreement with the core.
//! One test binary (modules below) so CI links it once.

mod server;

mod cli;
mod compare;
mod conformance;
mod connection;
mod dcgm;
mod deploy;
mod faults;
mod gpu;
mod llama;
mod parquet;
mod privacy;
mod shards;
mod signals;
mod stream;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tracelab_core::{parse::parse_trace_bytes, Attempt, Trace};

/// A fresh directory for one test (emptied first, so runs do not pile up).
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
    for var in ["OPENAI_API_KEY", "TRACELAB_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"] {
        cmd.env_remove(var);
    }
    cmd
}

/// Records each prompt in `ids` once (model "m", no warm-up, no GPU) from `server` into a fresh
/// directory `name`; `extra` adds pacing and timeouts. Returns the output and the trace's path.
pub fn record_once(name: &str, server: &server::ScriptedServer, ids: &[&str], extra: &[&str]) -> (Output, PathBuf) {
    let dir = temp_dir(name);
    let prompts = prompts(&dir, ids);
    let out = dir.join("t.jsonl");
    let output = run(record_cmd(server, &prompts, &out)
        .args(["--model", "m", "--repetitions", "1", "--warmup", "0", "--gpu", "off"])
        .args(extra));
    (output, out)
}

/// `tracelab record` against `server`, reading `prompts` and writing `out`: the arguments every
/// recording against the scripted server shares. The caller adds the model, load and the rest.
pub fn record_cmd(server: &server::ScriptedServer, prompts: &Path, out: &Path) -> Command {
    let mut cmd = tracelab();
    cmd.arg("record").arg("--base-url").arg(server.base_url()).arg("--prompts").arg(prompts).arg("--output").arg(out);
    cmd
}

pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("run tracelab");
    if !out.status.success() {
        eprintln!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    }
    out
}

pub fn load(path: &Path) -> Trace {
    let bytes = std::fs::read(path).unwrap();
    parse_trace_bytes(&path.display().to_string(), &bytes).unwrap_or_else(|e| panic!("the trace does not load: {e}"))
}

pub fn by_id<'a>(trace: &'a Trace, id: &str) -> &'a Attempt {
    trace.attempts.iter().find(|a| a.id == id).unwrap_or_else(|| panic!("no attempt {id}"))
}
