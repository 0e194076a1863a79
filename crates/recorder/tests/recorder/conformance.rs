//! The conformance corpus: whole stream bodies replayed byte for byte by the scripted server,
//! each with the outcome, TTFT presence and event count the recorder must give.
//!
//! Two kinds of case, kept apart:
//! - **real**: captures of real servers in `../shared/fixtures/streams/*.sse`, read in place
//!   (see its SOURCES.md; never copied here). The captures keep the bytes, not the timing, so
//!   each event is sent as its own frame 1 ms after the previous one.
//! - **hand-written**: bodies written for this test from the chunk shapes each server's source
//!   documents (file named beside each case). They stand in for servers no real capture exists of.

use std::path::PathBuf;
use std::time::Duration;

use tracelab_core::Outcome;

use crate::server::{Script, ScriptedServer, Step};
use crate::{by_id, load, record_once};

enum Body {
    /// A file in ../shared/fixtures/streams/.
    Real(&'static str),
    /// Events written here (each string is one `data:` payload; the framing is added).
    Hand(&'static [&'static str]),
}

struct Case {
    id: &'static str,
    server: &'static str,
    body: Body,
    outcome: Outcome,
    ttft: bool,
    events: usize,
    output_tokens: Option<u32>,
    /// The start of the attempt's `detail`, when it must have one.
    detail: Option<&'static str>,
}

fn streams_dir() -> PathBuf {
    let dir = crate::fixtures("streams");
    assert!(
        dir.is_dir(),
        "the real stream captures are missing: expected {}; {}",
        dir.display(),
        crate::FIXTURES_MISSING
    );
    dir
}

const LLAMA_CPP_PYTHON_ROLE: &str = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"tiny.gguf","choices":[{"index":0,"delta":{"role":"assistant"},"logprobs":null,"finish_reason":null}]}"#;

fn corpus() -> Vec<Case> {
    use Body::{Hand, Real};
    let case = |id, server, body, outcome, ttft, events, output_tokens, detail| Case {
        id,
        server,
        body,
        outcome,
        ttft,
        events,
        output_tokens,
        detail,
    };
    vec![
        // ---- real captures ----
        case(
            "vllm-usage",
            "vLLM 0.24.0 (Crusoe)",
            Real("vllm0240_crusoe_llama33_70b_usage_chunk.sse"),
            Outcome::Success,
            true,
            13,
            Some(14),
            None,
        ),
        case(
            "openai-text",
            "OpenAI gpt-4o-mini",
            Real("openai_gpt4omini_text_role_first_usage_chunk.sse"),
            Outcome::Success,
            true,
            8,
            Some(9),
            None,
        ),
        case(
            "openai-tools",
            "OpenAI gpt-4o-mini",
            Real("openai_gpt4omini_toolcall_usage_chunk.sse"),
            Outcome::Success,
            true,
            6,
            Some(15),
            None,
        ),
        case(
            "deepseek-reasoning",
            "DeepSeek deepseek-reasoner",
            Real("deepseek_reasoner_reasoning_content.sse"),
            Outcome::Success,
            true,
            209,
            Some(212),
            None,
        ),
        case(
            "openrouter-error",
            "OpenRouter (Minimax)",
            Real("openrouter_minimax_error_midstream.sse"),
            Outcome::StreamBroken,
            true,
            2,
            None,
            Some("server error object in stream (code 400)"),
        ),
        // ---- hand-written from documented shapes ----
        // llama-cpp-python llama_cpp/server/app.py get_event_publisher: with interrupt_requests
        // a newer request makes it send [DONE] and stop; a role-only first chunk came before.
        case(
            "llama-cpp-python-interrupted",
            "llama-cpp-python",
            Hand(&[LLAMA_CPP_PYTHON_ROLE, "[DONE]"]),
            Outcome::StreamBroken,
            false,
            0,
            None,
            Some("[DONE] without a finish_reason or any token"),
        ),
        // The same server, not interrupted: byte tokens of an incomplete UTF-8 character stream as "".
        case(
            "llama-cpp-python-bytes",
            "llama-cpp-python",
            Hand(&[
                LLAMA_CPP_PYTHON_ROLE,
                r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"tiny.gguf","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}"#,
                r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"tiny.gguf","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":null}]}"#,
                r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"tiny.gguf","choices":[{"index":0,"delta":{"content":"é"},"logprobs":null,"finish_reason":null}]}"#,
                r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"tiny.gguf","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}"#,
                "[DONE]",
            ]),
            Outcome::Success,
            true,
            2,
            Some(3),
            None,
        ),
        // llama.cpp's own server (tools/server): role chunk with content null, a final chunk
        // with `timings`, then the usage chunk with empty choices.
        case(
            "llama-server",
            "llama.cpp server",
            Hand(&[
                r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1,"id":"chatcmpl-2","model":"m","system_fingerprint":"b1","object":"chat.completion.chunk"}"#,
                r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Hello"}}],"created":1,"id":"chatcmpl-2","model":"m","system_fingerprint":"b1","object":"chat.completion.chunk"}"#,
                r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" world"}}],"created":1,"id":"chatcmpl-2","model":"m","system_fingerprint":"b1","object":"chat.completion.chunk"}"#,
                r#"{"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1,"id":"chatcmpl-2","model":"m","system_fingerprint":"b1","object":"chat.completion.chunk","timings":{"prompt_n":5,"predicted_n":2,"predicted_ms":3.1}}"#,
                r#"{"choices":[],"created":1,"id":"chatcmpl-2","model":"m","system_fingerprint":"b1","object":"chat.completion.chunk","usage":{"completion_tokens":2,"prompt_tokens":5,"total_tokens":7}}"#,
                "[DONE]",
            ]),
            Outcome::Success,
            true,
            2,
            Some(2),
            None,
        ),
        // vLLM vllm/v1/engine/__init__.py FINISH_REASON_STRINGS includes "abort": an aborted
        // request streams a last choice with finish_reason "abort".
        case(
            "vllm-abort",
            "vLLM",
            Hand(&[
                r#"{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
                r#"{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Par"},"logprobs":null,"finish_reason":null}]}"#,
                r#"{"id":"chatcmpl-3","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"abort","stop_reason":null}]}"#,
                "[DONE]",
            ]),
            Outcome::StreamBroken,
            true,
            1,
            None,
            Some("finish_reason \"abort\""),
        ),
        // vLLM's streaming error (serving_engine create_streaming_error_response): {"error": {...}}.
        case(
            "vllm-error-object",
            "vLLM",
            Hand(&[
                r#"{"id":"chatcmpl-4","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"A"},"logprobs":null,"finish_reason":null}]}"#,
                r#"{"error":{"object":"error","message":"the prompt said: secret","type":"BadRequestError","param":null,"code":400}}"#,
                "[DONE]",
            ]),
            Outcome::StreamBroken,
            true,
            1,
            None,
            Some("server error object in stream (type BadRequestError, code 400)"),
        ),
        // SGLang python/sglang/srt/managers/schedule_batch.py FINISH_ABORT.to_json: type "abort"
        // (without a status code it reaches the client as finish_reason "abort").
        case(
            "sglang-abort",
            "SGLang",
            Hand(&[
                r#"{"id":"5","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}"#,
                r#"{"id":"5","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":null,"content":"Hi","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}"#,
                r#"{"id":"5","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"abort","matched_stop":null}],"usage":null}"#,
                "[DONE]",
            ]),
            Outcome::StreamBroken,
            true,
            1,
            None,
            Some("finish_reason \"abort\""),
        ),
        // SGLang with an abort that carries a status: an error object (object "error").
        case(
            "sglang-error",
            "SGLang",
            Hand(&[
                r#"{"id":"6","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}"#,
                r#"{"object":"error","message":"Input is too long","type":"BadRequestError","param":null,"code":400}"#,
                "[DONE]",
            ]),
            Outcome::StreamBroken,
            false,
            0,
            None,
            Some("server error object in stream (type BadRequestError, code 400)"),
        ),
        // SGLang reasoning parser: reasoning_content deltas before content.
        case(
            "sglang-reasoning",
            "SGLang",
            Hand(&[
                r#"{"id":"7","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null},"finish_reason":null}],"usage":null}"#,
                r#"{"id":"7","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"Let me think"},"finish_reason":null}],"usage":null}"#,
                r#"{"id":"7","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Yes","reasoning_content":null},"finish_reason":null}],"usage":null}"#,
                r#"{"id":"7","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":null},"finish_reason":"stop","matched_stop":2}],"usage":null}"#,
                r#"{"id":"7","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":5,"total_tokens":9}}"#,
                "[DONE]",
            ]),
            Outcome::Success,
            true,
            2,
            Some(5),
            None,
        ),
        // TGI router/src/lib.rs FinishReason: length, eos_token, stop_sequence.
        case(
            "tgi-eos-token",
            "TGI",
            Hand(&[
                r#"{"object":"chat.completion.chunk","id":"","created":1,"model":"m","system_fingerprint":"2.0.1-native","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"logprobs":null,"finish_reason":null}]}"#,
                r#"{"object":"chat.completion.chunk","id":"","created":1,"model":"m","system_fingerprint":"2.0.1-native","choices":[{"index":0,"delta":{"role":"assistant","content":"!"},"logprobs":null,"finish_reason":"eos_token"}]}"#,
                "[DONE]",
            ]),
            Outcome::Success,
            true,
            2,
            Some(2),
            None,
        ),
        // TGI streams an error as {"error": "<text>", "error_type": "..."}.
        case(
            "tgi-error",
            "TGI",
            Hand(&[
                r#"{"object":"chat.completion.chunk","id":"","created":1,"model":"m","system_fingerprint":"2.0.1-native","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"logprobs":null,"finish_reason":null}]}"#,
                r#"{"error":"Request failed during generation: Server error: CUDA out of memory","error_type":"generation"}"#,
            ]),
            Outcome::StreamBroken,
            true,
            1,
            None,
            Some("server error object in stream"),
        ),
        // Ollama openai/openai.go toChunk: role on every chunk, finish_reason on the last one
        // (whose content is ""), usage chunk when include_usage is asked for.
        case(
            "ollama-v1",
            "Ollama /v1",
            Hand(&[
                r#"{"id":"chatcmpl-8","object":"chat.completion.chunk","created":1,"model":"llama3.2","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"The"},"finish_reason":null}]}"#,
                r#"{"id":"chatcmpl-8","object":"chat.completion.chunk","created":1,"model":"llama3.2","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":" sky"},"finish_reason":null}]}"#,
                r#"{"id":"chatcmpl-8","object":"chat.completion.chunk","created":1,"model":"llama3.2","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}"#,
                r#"{"id":"chatcmpl-8","object":"chat.completion.chunk","created":1,"model":"llama3.2","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}"#,
                "[DONE]",
            ]),
            Outcome::Success,
            true,
            2,
            Some(2),
            None,
        ),
        // Ollama's thinking models stream `reasoning`, not `reasoning_content`.
        case(
            "ollama-reasoning",
            "Ollama /v1",
            Hand(&[
                r#"{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Hmm"},"finish_reason":null}]}"#,
                r#"{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"Blue"},"finish_reason":null}]}"#,
                r#"{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}"#,
                "[DONE]",
            ]),
            Outcome::Success,
            true,
            2,
            Some(2),
            None,
        ),
        // OpenAI's documented stream_options.include_usage: every chunk has "usage": null, then
        // a usage-only chunk with empty choices.
        case(
            "openai-usage-only-final",
            "OpenAI (documented shape)",
            Hand(&[
                r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}],"usage":null}"#,
                r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":null}"#,
                r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#,
                r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#,
                "[DONE]",
            ]),
            Outcome::Success,
            true,
            1,
            Some(1),
            None,
        ),
        // A cut answer: a few tokens, then [DONE] with no finish reason at all.
        case(
            "cut-answer",
            "any (llama-cpp-python interrupting a started answer)",
            Hand(&[
                LLAMA_CPP_PYTHON_ROLE,
                r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"tiny.gguf","choices":[{"index":0,"delta":{"content":"Once"},"logprobs":null,"finish_reason":null}]}"#,
                r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"tiny.gguf","choices":[{"index":0,"delta":{"content":" upon"},"logprobs":null,"finish_reason":null}]}"#,
                "[DONE]",
            ]),
            Outcome::StreamBroken,
            true,
            2,
            None,
            Some("[DONE] without a finish_reason: the answer was cut off"),
        ),
    ]
}

/// The body of a case, exactly as sent; real captures are read in place.
fn body(case: &Case) -> String {
    match &case.body {
        Body::Real(file) => {
            let path = streams_dir().join(file);
            std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read the capture {}: {e}", path.display()))
        }
        Body::Hand(events) => events.iter().map(|e| format!("data: {e}\n\n")).collect(),
    }
}

/// One frame per event (each ends after its blank line), 1 ms apart (the baseline tests replay
/// real captures with it too).
pub(crate) fn replay(body: &str) -> Script {
    let mut steps = Vec::new();
    for event in body.split_inclusive("\n\n") {
        steps.push(Step::Raw(event.to_string()));
        steps.push(Step::Sleep(Duration::from_millis(1)));
    }
    Script::new(steps)
}

#[test]
fn the_conformance_corpus() {
    let cases = corpus();
    let scripts: Vec<(String, Script)> = cases
        .iter()
        .map(|c| (c.id.to_string(), replay(&body(c))))
        .collect();
    let server = ScriptedServer::start(move |key| {
        scripts
            .iter()
            .find(|(id, _)| id == key)
            .map(|(_, s)| s.clone())
            .unwrap_or_else(|| panic!("no case {key}"))
    });
    let ids: Vec<&str> = cases.iter().map(|c| c.id).collect();
    let extra = [
        "--quiet",
        "--concurrency",
        "8",
        "--timeout",
        "30",
        "--max-tokens",
        "64",
    ];
    let (output, out) = record_once("conformance", &server, &ids, &extra);
    assert_eq!(output.status.code(), Some(0));
    let trace = load(&out);
    assert_eq!(trace.attempts.len(), cases.len());
    let mut wrong = Vec::new();
    for c in &cases {
        let a = by_id(&trace, &format!("{}.r1", c.id));
        let got = (a.outcome, a.ttft_ms.is_some(), a.events.len());
        if got != (c.outcome, c.ttft, c.events) {
            wrong.push(format!(
                "{} ({}): expected {:?}, got {got:?} [{:?}]",
                c.id,
                c.server,
                (c.outcome, c.ttft, c.events),
                a.detail
            ));
        }
        if let Some(n) = c.output_tokens {
            if a.output_tokens != Some(n) {
                wrong.push(format!(
                    "{}: output tokens {:?}, expected {n}",
                    c.id, a.output_tokens
                ));
            }
        }
        match (c.detail, a.detail.as_deref()) {
            (Some(want), Some(got)) if got.starts_with(want) => {}
            (Some(want), got) => wrong.push(format!(
                "{}: detail {got:?}, expected one starting {want:?}",
                c.id
            )),
            (None, _) => {}
        }
        if c.ttft {
            assert_eq!(
                a.ttft_ms,
                a.events.first().map(|e| e.at_ms),
                "{}: TTFT is the first event",
                c.id
            );
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        !text.contains("secret") && !text.contains("CUDA"),
        "no server text is kept"
    );
}
