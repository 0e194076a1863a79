//! The whole baseline contract, as `tracelab record` writes it and `report` / `compare` read it:
//! the runtime asked of the server (real captured info answers, read in place from
//! `../shared/fixtures/servers/`), which prompt each attempt sent and whether it was a repeat,
//! the cached prompt tokens the server reported, the first reasoning and first answer token of a
//! real DeepSeek reasoning stream, and `compare --vary`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tracelab_core::{FirstToken, Settings};
use tracelab_recorder::runtime::{read_answers, Answers};

use crate::conformance::replay;
use crate::server::{Script, ScriptedServer};
use crate::{by_id, fixtures, load, prompts, run, temp_dir, tracelab, Record};

fn server_fixture(name: &str) -> String {
    let path = fixtures("servers").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the capture {}: {e}; {}",
            path.display(),
            crate::FIXTURES_MISSING
        )
    })
}

fn stream_fixture(name: &str) -> String {
    let path = fixtures("streams").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the capture {}: {e}; {}",
            path.display(),
            crate::FIXTURES_MISSING
        )
    })
}

#[test]
fn real_info_answers_name_the_runtime_and_nothing_is_guessed() {
    let json =
        |name: &str| serde_json::from_str::<serde_json::Value>(&server_fixture(name)).unwrap();
    // llama.cpp b10452's /v1/models (real, go-vcr cassette): owned_by llamacpp, meta.n_ctx 16384.
    let models = json("llamacpp_b10452_v1_models.json");
    let r = read_answers(
        &Answers {
            models: Some(&models),
            ..Answers::default()
        },
        "none-of-them",
    );
    assert_eq!(r.engine.as_deref(), Some("llama.cpp"), "{r:?}");
    assert_eq!(
        r.max_context,
        Some(16384),
        "the configured context, not n_ctx_train: {r:?}"
    );
    assert!(
        r.model_id.is_some() && !r.model_id.as_deref().unwrap().starts_with('/'),
        "{r:?}"
    );
    assert_eq!(r.engine_version, None, "the model list names no build");
    // vLLM 0.4.3's /version alone: a version, but /version is also SGLang's, so no engine.
    let version = json("vllm_0.4.3_version.json");
    let r = read_answers(
        &Answers {
            version: Some(&version),
            ..Answers::default()
        },
        "m",
    );
    assert_eq!(
        (r.engine.as_deref(), r.engine_version.as_deref()),
        (None, Some("0.4.3"))
    );
    // With vLLM's model list beside it, the engine is known.
    let vllm_models = serde_json::json!({"object":"list","data":[{"id":"m","owned_by":"vllm","root":"m","max_model_len":2048}]});
    let r = read_answers(
        &Answers {
            version: Some(&version),
            models: Some(&vllm_models),
            ..Answers::default()
        },
        "m",
    );
    assert_eq!(
        (
            r.engine.as_deref(),
            r.engine_version.as_deref(),
            r.max_context
        ),
        (Some("vllm"), Some("0.4.3"), Some(2048))
    );
    // Ollama's documented /api/version.
    let ollama = json("ollama_docs_api_version_example.json");
    let r = read_answers(
        &Answers {
            ollama: Some(&ollama),
            ..Answers::default()
        },
        "llama3.2",
    );
    assert_eq!(
        (r.engine.as_deref(), r.engine_version.as_deref()),
        (Some("ollama"), Some("0.5.1"))
    );
}

#[test]
fn a_recorded_run_writes_the_runtime_the_prompts_and_the_reuse() {
    // llama.cpp b10452: its real /v1/models answer and its real stream (with system_fingerprint
    // and usage), replayed for every request.
    let body = stream_fixture("../servers/llamacpp_b10452_chat_stream_system_fingerprint.sse");
    let script = replay(&body);
    let server = ScriptedServer::start(move |_| script.clone());
    server.answer(
        "/v1/models",
        &server_fixture("llamacpp_b10452_v1_models.json"),
    );
    let dir = temp_dir("baseline-record");
    let out = dir.join("t.jsonl");
    let output = Record::new(&out)
        .server(&server)
        .ask_runtime()
        .prompts(&prompts(&dir, &["a", "b"]))
        .args([
            "--repetitions",
            "2",
            "--warmup",
            "1",
            "--quiet",
            "--cache-state",
            "cold",
        ])
        .run();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trace = load(&out);
    let runtime = trace
        .header
        .conditions
        .runtime
        .as_ref()
        .expect("conditions.runtime");
    assert_eq!(runtime.engine.as_deref(), Some("llama.cpp"), "{runtime:?}");
    assert_eq!(
        runtime.system_fingerprint.as_deref(),
        Some("b10452-b94041a98"),
        "{runtime:?}"
    );
    assert_eq!(
        runtime.engine_version.as_deref(),
        Some("b10452-b94041a98"),
        "the build, from the streams: {runtime:?}"
    );
    assert_eq!(runtime.max_context, Some(16384));
    assert!(
        runtime.asked.iter().any(|a| a == "/props 404"),
        "{:?}",
        runtime.asked
    );
    assert!(
        runtime.asked.iter().all(|a| a.starts_with('/')),
        "paths only, never a URL: {:?}",
        runtime.asked
    );
    let reuse = trace
        .header
        .conditions
        .prefix_reuse
        .as_ref()
        .expect("conditions.prefix_reuse");
    assert!(reuse.by_design);
    assert_eq!(reuse.before_run, "cold");
    // Every attempt says which prompt it sent, in which round, and whether it went out before.
    for (id, index, repetition, repeat) in [
        ("a.w1", 0, 1, false),
        ("b.w1", 1, 1, false),
        ("a.r1", 0, 1, true),
        ("b.r2", 1, 2, true),
    ] {
        let p = by_id(&trace, id)
            .prompt
            .unwrap_or_else(|| panic!("{id} has no prompt record"));
        assert_eq!(
            (p.index, p.repetition, p.repeat),
            (index, repetition, repeat),
            "{id}"
        );
    }
    // The file says so in the documented fields.
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("\"prompt_index\":1")
            && text.contains("\"prompt_repeat\":true")
            && text.contains("\"runtime\"")
    );
    // report splits TTFT by first send and repeat, with the five checks.
    let report = run(tracelab().arg("report").arg(&out));
    let card = String::from_utf8(report.stdout).unwrap();
    assert!(
        card.contains("TTFT by prompt reuse") && card.contains("first send of a prompt: n = 0"),
        "{card}"
    );
    assert!(
        card.contains("Runtime (as the server said): llama.cpp b10452-b94041a98 · model ")
            && card.contains("context 16384 · prompts repeated: yes · cache before the run: cold"),
        "{card}"
    );
    assert!(
        card.contains("This run counts as a baseline: not yet"),
        "{card}"
    );
    assert!(
        card.contains("✓ 1 One contract: yes"),
        "the header writes the whole contract down: {card}"
    );
    assert!(card.contains("✓ 2 Warm-up apart: yes"), "{card}");
}

#[test]
fn a_reasoning_stream_keeps_both_first_tokens_and_ttft_follows_the_course() {
    // DeepSeek deepseek-reasoner (real capture): 198 reasoning events, then the answer.
    let body = stream_fixture("deepseek_reasoner_reasoning_content.sse");
    let script = replay(&body);
    let server = ScriptedServer::start(move |_| script.clone());
    let dir = temp_dir("baseline-reasoning");
    let out = dir.join("t.jsonl");
    let output = Record::new(&out)
        .server(&server)
        .prompts(&prompts(&dir, &["q"]))
        .args(["--quiet", "--timeout", "30"])
        .run();
    assert!(output.status.success());
    let trace = load(&out);
    let a = by_id(&trace, "q.r1");
    let r = a.reasoning.expect("the reasoning was kept apart");
    let content = r.first_content_ms.expect("the answer began");
    assert_eq!(
        a.ttft_ms,
        Some(r.first_reasoning_ms),
        "first_token_ms stays the first output of any kind"
    );
    assert!(
        content > r.first_reasoning_ms + 100.0,
        "~198 reasoning events 1 ms apart come first: {r:?}"
    );
    assert_eq!(a.ttft_under(FirstToken::Content), Some(content));
    assert_eq!(
        a.prompt.and_then(|p| p.cached_tokens),
        Some(0),
        "usage.prompt_tokens_details.cached_tokens"
    );
    let runtime = trace.header.conditions.runtime.as_ref().unwrap();
    assert_eq!(
        runtime.system_fingerprint.as_deref(),
        Some("fp_393bca965e_prod0623_fp8_kvcache")
    );
    assert_eq!(
        runtime.model_id.as_deref(),
        Some("deepseek-reasoner"),
        "from the stream, as no endpoint was asked"
    );
    // report: the course's definition by default, the other on request, each saying which.
    let json = |extra: &[&str]| {
        let o = run(tracelab().arg("report").arg(&out).arg("--json").args(extra));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let (course, any) = (json(&[]), json(&["--first-token", "any"]));
    let p50 = |v: &serde_json::Value| v["ttft_p50_s"].as_f64().unwrap();
    assert_eq!(course["first_token"], "content");
    let run_checks = course["run_checks"]
        .as_array()
        .expect("report --json carries the run checks");
    assert!(
        run_checks.iter().any(|l| l
            .as_str()
            .unwrap()
            .starts_with("This run counts as a baseline")),
        "{run_checks:?}"
    );
    assert!(
        course["baseline"]["checks"].as_array().unwrap().len() == 5
            && course["intervals"]["ttft_p50_s"].is_object()
    );
    // One key per figure: each interval sits under its figure's own key.
    for key in [
        "ttft_p50_s",
        "ttft_p95_s",
        "failure_rate",
        "joint_rate",
        "goodput_per_s",
        "e2e_p50_s",
        "e2e_p95_s",
    ] {
        assert!(
            course.get(key).is_some() && course["intervals"].get(key).is_some(),
            "{key}: {}",
            course["intervals"]
        );
    }
    assert_eq!(any["first_token"], "any_output");
    assert!(
        p50(&course) > p50(&any) + 0.1,
        "{} vs {}",
        p50(&course),
        p50(&any)
    );
    let card = |extra: &[&str]| {
        String::from_utf8(run(tracelab().arg("report").arg(&out).args(extra)).stdout).unwrap()
    };
    assert!(
        // The recorder writes each attempt's intended start, so the figure also names its origin.
        card(&[]).contains("P50 TTFT (successes, first answer token, from the actual start)"),
        "{}",
        card(&[])
    );
    assert!(card(&["--first-token", "any"])
        .contains("P50 TTFT (successes, reasoning included, from the actual start)"));
    assert!(card(&["--lang", "zh"]).contains("首个回答 token"));
    // The card-json export carries the choice and every interval too (an open bound null, with why).
    let exported = dir.join("card.json");
    run(tracelab()
        .arg("export")
        .arg(&out)
        .args(["--format", "card-json", "--output"])
        .arg(&exported));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&exported).unwrap()).unwrap();
    assert_eq!(v["first_token"], "content");
    assert!(
        v["intervals"]["ttft_tail"]["hi"].is_null()
            && v["intervals"]["ttft_tail"]["note"]["en"]
                .as_str()
                .unwrap()
                .contains("n ≥ 72"),
        "{}",
        v["intervals"]
    );
    assert_eq!(v["baseline"]["checks"].as_array().unwrap().len(), 5);
    let _ = Settings::default();
}

/// Records 3 prompts × 3 rounds against a vLLM-like server whose /version says `version`.
fn record_vllm(dir: &Path, name: &str, version: &str) -> PathBuf {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(5), Duration::from_millis(1), 3)
    });
    server.answer("/v1/models", r#"{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm","root":"m","max_model_len":4096}]}"#);
    server.answer("/version", &format!(r#"{{"version":"{version}"}}"#));
    let out = dir.join(name);
    let output = Record::new(&out)
        .server(&server)
        .ask_runtime()
        .prompts(&prompts(dir, &["a", "b", "c"]))
        .args(["--repetitions", "3", "--warmup", "1", "--quiet"])
        .run();
    assert!(output.status.success());
    out
}

#[test]
fn compare_names_the_engine_version_that_changed_and_vary_makes_it_the_variable() {
    let dir = temp_dir("baseline-vary");
    let base = record_vllm(&dir, "base.jsonl", "0.11.0");
    let new = record_vllm(&dir, "new.jsonl", "0.11.1");
    assert_eq!(
        load(&base)
            .header
            .conditions
            .runtime
            .as_ref()
            .unwrap()
            .engine_version
            .as_deref(),
        Some("0.11.0")
    );
    let broken = tracelab()
        .arg("compare")
        .arg(&base)
        .arg(&new)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&broken.stdout).to_string();
    assert_eq!(broken.status.code(), Some(5), "{text}");
    assert!(
        text.contains("✗ runtime.engine_version: base 0.11.0 · new 0.11.1 (must match)"),
        "{text}"
    );
    let varied = tracelab()
        .arg("compare")
        .arg(&base)
        .arg(&new)
        .args(["--vary", "engine_version"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&varied.stdout).to_string();
    assert_eq!(varied.status.code(), Some(0), "{text}");
    assert!(
        text.contains("Contract holds: engine_version changed on purpose"),
        "{text}"
    );
    assert!(
        text.contains(
            "~ runtime.engine_version: base 0.11.0 · new 0.11.1 (the variable under test"
        ),
        "{text}"
    );
    assert!(text.contains("Five checks for"), "{text}");
    assert!(
        text.contains("TTFT by prompt reuse (successes):"),
        "each run's split by first send and repeat: {text}"
    );
    // An unknown condition is refused, naming what can be varied.
    let bad = tracelab()
        .arg("compare")
        .arg(&base)
        .arg(&new)
        .args(["--vary", "weather"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("runtime, engine_version"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    // Two reruns of one contract: the fifth check reads their spread, and JSON carries it all.
    let rerun = record_vllm(&dir, "rerun.jsonl", "0.11.0");
    let json = run(tracelab()
        .arg("compare")
        .arg(&base)
        .arg(&rerun)
        .arg("--json"));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let checks = &v["baselines"][0]["verdict"]["checks"];
    assert_eq!(checks[0]["key"], "contract");
    assert_ne!(
        checks[4]["evidence"]["en"].as_str().unwrap_or(""),
        "",
        "{checks}"
    );
    assert!(
        checks[4]["evidence"]["en"]
            .as_str()
            .unwrap()
            .starts_with("2 runs"),
        "{checks}"
    );
    assert!(v["runs"][0]["intervals"]["items"].is_array());
    assert_eq!(
        v["runs"][0]["reuse"]["repeat"]["n"], 9,
        "3 prompts × 3 rounds, each sent in the warm-up first"
    );
}

/// `record --runs 3`: three independent runs under one contract, each its own file and seed,
/// then each figure's interval between the runs; existing files are refused before anything is
/// sent; a sweep asks for its replications another way.
#[test]
fn record_runs_replications_and_gives_the_interval_between_runs() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(5), Duration::from_millis(1), 3)
    });
    let (record, out) = Record::fresh("replications", &["a", "b", "c"]);
    let o = record.server(&server).args(["--runs", "3"]).run();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let files: Vec<_> = (1..=3)
        .map(|k| {
            out.with_file_name(format!(
                "{}-run-{k}.jsonl",
                out.file_stem().unwrap().to_string_lossy()
            ))
        })
        .collect();
    for f in &files {
        assert_eq!(crate::load(f).attempts.len(), 3, "{}", f.display());
    }
    assert!(
        !out.exists(),
        "the runs are named -run-K, not the bare --output"
    );
    assert!(
        stdout.contains("3 runs under one contract")
            && stdout.contains("95 % interval between runs"),
        "{stdout}"
    );
    assert!(
        stdout.contains("tracelab compare") && stdout.contains("--vs"),
        "{stdout}"
    );
    assert_eq!(server.request_count(), 9);
    // Again without --force: run 1's file exists, and nothing is sent.
    let o = Record::new(&out)
        .server(&server)
        .args(["--runs", "3"])
        .run();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--force"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(server.request_count(), 9, "nothing was sent");
}
