//! Nothing secret leaves the recorder: a canary key, URL and response text never appear in the
//! trace, in stdout or stderr, in the arguments, or in what a child process (nvidia-smi) sees.

use std::time::Duration;

use crate::gpu::fake_nvidia_smi;
use crate::server::{refused_addr, Script, ScriptedServer, Step};
use crate::{load, run, temp_dir, Record};

const KEY: &str = "sk-canary-key-7f3a91";
const URL_MARK: &str = "canary-url-52c8";
const TEXT: &str = "canary-response-e1d0";

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for canary in [KEY, URL_MARK, TEXT, "127.0.0.1"] {
        assert!(!text.contains(canary), "{what} holds `{canary}`:\n{text}");
    }
}

#[test]
fn no_key_url_or_response_text_leaks() {
    let server = ScriptedServer::start(|_| {
        Script::new(vec![
            Step::Sleep(Duration::from_millis(5)),
            Step::Token(format!("{TEXT} {TEXT}")),
            Step::Finish,
            Step::Done,
        ])
    });
    let dir = temp_dir("privacy");
    let smi = fake_nvidia_smi(&dir);
    let out = dir.join("t.jsonl");
    // The URL comes from the environment, so it is not in the arguments either.
    let url = format!("{}?tenant={URL_MARK}", server.base_url());
    // The server names its model by a path under a user's directory: only the file name is kept.
    server.answer("/v1/models", &format!(r#"{{"object":"list","data":[{{"id":"/home/{URL_MARK}/models/m.gguf","object":"model","owned_by":"me"}}]}}"#));
    let mut cmd = Record::new(&out)
        .ask_runtime()
        .args([
            "--warmup",
            "1",
            "--gpu",
            "nvidia-smi",
            "--gpu-interval-ms",
            "20",
        ])
        .env("OPENAI_API_KEY", KEY)
        .env("TRACELAB_BASE_URL", &url)
        .env("PATH", crate::gpu::path_with(&smi))
        .command();
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    assert_clean("the arguments", args.join(" ").as_bytes());
    let output = run(&mut cmd);
    assert!(output.status.success());

    // The key really was sent, and the answer really held the canary.
    let requests = server.requests();
    assert_eq!(server.completions().len(), 6);
    assert!(requests.len() > 6, "the runtime was asked too");
    assert!(requests
        .iter()
        .all(|r| r.authorization.as_deref() == Some(&format!("Bearer {KEY}")[..])));
    let trace = load(&out);
    assert!(trace.attempts.iter().all(|a| a.outcome.is_success()));
    assert_eq!(trace.header.capabilities.gpu_telemetry, "nvidia-smi");
    let runtime = trace
        .header
        .conditions
        .runtime
        .as_ref()
        .expect("the runtime");
    assert_eq!(runtime.model_id.as_deref(), Some("m.gguf"), "{runtime:?}");

    assert_clean("the trace", &std::fs::read(&out).unwrap());
    assert_clean("stdout", &output.stdout);
    assert_clean("stderr", &output.stderr);
    for log in ["nvidia-smi.args", "nvidia-smi.env"] {
        assert_clean(log, &std::fs::read(smi.join(log)).unwrap());
    }

    // A failing run's messages do not echo the URL either.
    let out = dir.join("refused.jsonl");
    let output = Record::new(&out)
        .env("OPENAI_API_KEY", KEY)
        .env(
            "TRACELAB_BASE_URL",
            format!("http://{}/v1?tenant={URL_MARK}", refused_addr()),
        )
        .run();
    assert_eq!(output.status.code(), Some(3), "every attempt failed");
    assert_clean("the refused trace", &std::fs::read(&out).unwrap());
    assert_clean("stdout (refused)", &output.stdout);
    assert_clean("stderr (refused)", &output.stderr);
    let output = Record::new(&dir.join("bad.jsonl"))
        .env("TRACELAB_BASE_URL", format!("gopher://{URL_MARK}/{KEY}"))
        .run();
    assert!(!output.status.success());
    assert_clean("the error for a bad URL", &output.stderr);
}
