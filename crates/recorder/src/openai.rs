//! The OpenAI-compatible wire format: the streaming request body and what one SSE data payload
//! means for the measurement (output or not, reasoning or content, finish, usage, error).
//!
//! Servers differ: vLLM and SGLang send `reasoning_content`, Ollama and some proxies `reasoning`,
//! llama.cpp a role-only first chunk, and most a final usage chunk with empty `choices`. Only the
//! facts are extracted here; the response text is handed to the rubric and never kept.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{json, Value};

/// Which endpoint to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Api {
    /// `POST {base}/chat/completions` with one user message.
    Chat,
    /// `POST {base}/completions` with a plain prompt.
    Completions,
}

impl Api {
    pub fn name(self) -> &'static str {
        match self {
            Api::Chat => "chat",
            Api::Completions => "completions",
        }
    }

    pub fn path(self) -> &'static str {
        match self {
            Api::Chat => "chat/completions",
            Api::Completions => "completions",
        }
    }
}

/// The streaming request body. `stream_options.include_usage` asks for the usage chunk so token
/// counts come from the server rather than from counting chunks.
pub fn request_body(api: Api, model: &str, prompt: &str, max_tokens: u32) -> Vec<u8> {
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    let object = body.as_object_mut().expect("an object");
    match api {
        Api::Chat => object.insert(
            "messages".into(),
            json!([{ "role": "user", "content": prompt }]),
        ),
        Api::Completions => object.insert("prompt".into(), json!(prompt)),
    };
    serde_json::to_vec(&body).expect("a body always serialises")
}

/// Token counts reported by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub reasoning_tokens: Option<u32>,
    /// `prompt_tokens_details.cached_tokens`: prompt tokens served from the server's cache.
    pub cached_tokens: Option<u32>,
}

/// How a choice said it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// The model ended its answer: `stop`, `tool_calls`, `content_filter`, TGI's `eos_token` /
    /// `stop_sequence`, … — any reason that is neither `length` nor an abort.
    Normal,
    /// `length`: the output limit was reached (a complete answer as far as the request asked).
    Length,
    /// The server gave up on the request (`abort`, `error`, `cancelled`): a failure, whatever
    /// came before. Holds the reason when it is a short identifier (it is the server's word).
    Aborted(String),
}

/// Finish reasons that mean the request was abandoned, not answered. vLLM
/// (`vllm/v1/engine/__init__.py` FINISH_REASON_STRINGS: stop, length, abort, error, repetition)
/// and SGLang (`FINISH_ABORT.to_json` type `abort`) send these for aborted or failed requests;
/// `cancelled` / `canceled` / `aborted` are the spellings other proxies use.
pub const ABORT_REASONS: [&str; 5] = ["abort", "aborted", "error", "cancelled", "canceled"];

/// What one data payload carried.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Delta {
    /// Non-empty answer text arrived (content, or `text` for completions), or a tool call's
    /// name or arguments.
    pub content: bool,
    /// Non-empty `reasoning_content` / `reasoning` arrived: output too, but kept apart.
    pub reasoning: bool,
    /// A choice carried `"content": ""` (or `"text": ""`) with no finish reason and no role:
    /// llama.cpp sends this for a token whose bytes are an incomplete UTF-8 character, so it is
    /// a token whose text comes with a later chunk.
    pub empty_content: bool,
    pub finish: Option<Finish>,
    pub usage: Option<Usage>,
    /// llama.cpp's `timings.cache_n` (its final chunk): prompt tokens reused from its cache.
    pub cache_n: Option<u32>,
}

impl Finish {
    pub fn is_normal(&self) -> bool {
        !matches!(self, Finish::Aborted(_))
    }
}

impl Delta {
    /// The event carried output tokens (a role-only or empty chunk does not).
    pub fn is_output(&self) -> bool {
        self.content || self.reasoning
    }
}

/// The meaning of one SSE event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    Done,
    Chunk(Delta),
    /// The server reported an error inside a 2xx stream; the string is a short, non-secret class.
    Error(String),
    /// Not JSON, or JSON that is not a chunk.
    Malformed,
}

#[derive(Deserialize)]
struct RawChunk<'a> {
    #[serde(default, borrow)]
    choices: Option<Vec<RawChoice<'a>>>,
    #[serde(default)]
    usage: Option<RawUsage>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default, borrow)]
    object: Option<Cow<'a, str>>,
    #[serde(default)]
    code: Option<Value>,
    #[serde(default, rename = "type")]
    kind: Option<Value>,
    #[serde(default)]
    timings: Option<RawTimings>,
}

#[derive(Deserialize)]
struct RawTimings {
    #[serde(default)]
    cache_n: Option<u32>,
}

/// What a chunk says about the server: the model it served and its `system_fingerprint`.
#[derive(Debug, Clone, Deserialize, Default)]
pub struct ChunkIdentity {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub system_fingerprint: Option<String>,
}

/// Reads a chunk's identity (once per attempt, so every chunk is not made to allocate it).
pub fn identity(data: &str) -> ChunkIdentity {
    serde_json::from_str(data).unwrap_or_default()
}

#[derive(Deserialize)]
struct RawChoice<'a> {
    #[serde(default, borrow)]
    delta: Option<RawDelta<'a>>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct RawDelta<'a> {
    #[serde(default, borrow)]
    role: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(default)]
    tool_calls: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct RawUsage {
    #[serde(default)]
    prompt_tokens: Option<u32>,
    #[serde(default)]
    completion_tokens: Option<u32>,
    #[serde(default)]
    completion_tokens_details: Option<RawDetails>,
    #[serde(default)]
    prompt_tokens_details: Option<RawPromptDetails>,
}

#[derive(Deserialize)]
struct RawDetails {
    #[serde(default)]
    reasoning_tokens: Option<u32>,
}

#[derive(Deserialize)]
struct RawPromptDetails {
    #[serde(default)]
    cached_tokens: Option<u32>,
}

/// Interprets one event. Answer text is appended to `text` when the caller evaluates a rubric.
pub fn interpret(event_type: Option<&str>, data: &str, text: Option<&mut String>) -> Payload {
    if data.trim() == "[DONE]" {
        return Payload::Done;
    }
    let chunk: RawChunk = match serde_json::from_str(data) {
        Ok(chunk) => chunk,
        Err(_) if event_type == Some("error") => {
            return Payload::Error("server error event in stream".into())
        }
        Err(_) => return Payload::Malformed,
    };
    if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
        return Payload::Error(error_class(&error));
    }
    if chunk.object.as_deref() == Some("error") || event_type == Some("error") {
        let mut fields = serde_json::Map::new();
        if let Some(kind) = chunk.kind {
            fields.insert("type".into(), kind);
        }
        if let Some(code) = chunk.code {
            fields.insert("code".into(), code);
        }
        return Payload::Error(error_class(&Value::Object(fields)));
    }
    let mut delta = Delta {
        usage: chunk.usage.map(Usage::from),
        cache_n: chunk.timings.and_then(|t| t.cache_n),
        ..Delta::default()
    };
    // An object without `choices` (a usage-only record, a server's own extra) carries no output;
    // it is not a fault.
    let choices = chunk.choices.unwrap_or_default();
    let mut text = text;
    for choice in &choices {
        let content = choice
            .delta
            .as_ref()
            .and_then(|d| d.content.as_deref())
            .or(choice.text.as_deref());
        let finish_reason = choice.finish_reason.as_deref().filter(|r| !r.is_empty());
        match content {
            Some("") => {
                let role = choice.delta.as_ref().is_some_and(|d| d.role.is_some());
                if !role && finish_reason.is_none() {
                    delta.empty_content = true;
                }
            }
            Some(content) => {
                delta.content = true;
                if let Some(text) = text.as_deref_mut() {
                    text.push_str(content);
                }
            }
            None => {}
        }
        if let Some(d) = &choice.delta {
            let reasoning = d.reasoning_content.as_deref().or(d.reasoning.as_deref());
            if reasoning.is_some_and(|r| !r.is_empty()) {
                delta.reasoning = true;
            }
            if d.tool_calls
                .as_deref()
                .is_some_and(|calls| calls.iter().any(tool_call_has_output))
            {
                delta.content = true;
            }
        }
        if let Some(reason) = finish_reason {
            let lower = reason.to_ascii_lowercase();
            let finish = if ABORT_REASONS.contains(&lower.as_str()) {
                Finish::Aborted(if is_identifier(reason) {
                    reason.to_string()
                } else {
                    "abort".into()
                })
            } else if lower == "length" {
                Finish::Length
            } else {
                Finish::Normal
            };
            // One aborted choice makes the whole answer incomplete.
            if !matches!(delta.finish, Some(Finish::Aborted(_))) {
                delta.finish = Some(finish);
            }
        }
    }
    if delta.is_output() {
        delta.empty_content = false;
    }
    Payload::Chunk(delta)
}

/// A tool-call delta carries generated tokens when it has a non-empty function name or arguments.
fn tool_call_has_output(call: &Value) -> bool {
    let function = &call["function"];
    ["name", "arguments"]
        .iter()
        .any(|k| function[k].as_str().is_some_and(|s| !s.is_empty()))
}

impl From<RawUsage> for Usage {
    fn from(u: RawUsage) -> Usage {
        Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            reasoning_tokens: u.completion_tokens_details.and_then(|d| d.reasoning_tokens),
            cached_tokens: u.prompt_tokens_details.and_then(|d| d.cached_tokens),
        }
    }
}

/// "server error object in stream (type overloaded_error)": the error's type and code are kept
/// only when they look like identifiers, because a message may quote the prompt.
fn error_class(error: &Value) -> String {
    let mut class = String::from("server error object in stream");
    let mut parts = Vec::new();
    for key in ["type", "code"] {
        let value = match error.get(key) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        if is_identifier(&value) {
            parts.push(format!("{key} {value}"));
        }
    }
    if !parts.is_empty() {
        class.push_str(&format!(" ({})", parts.join(", ")));
    }
    class
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 40
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(data: &str) -> Delta {
        match interpret(None, data, None) {
            Payload::Chunk(d) => d,
            other => panic!("not a chunk: {other:?}"),
        }
    }

    #[test]
    fn role_only_and_empty_chunks_are_not_output() {
        assert!(!chunk(r#"{"choices":[{"delta":{"role":"assistant"}}]}"#).is_output());
        assert!(!chunk(r#"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#).is_output());
        assert!(!chunk(r#"{"choices":[{"delta":{"content":null}}]}"#).is_output());
    }

    #[test]
    fn content_and_reasoning_are_output_kept_apart() {
        let c = chunk(r#"{"choices":[{"delta":{"content":"Hi"}}]}"#);
        assert!(c.content && !c.reasoning);
        let r = chunk(r#"{"choices":[{"delta":{"reasoning_content":"hmm","content":null}}]}"#);
        assert!(r.reasoning && !r.content && r.is_output());
        assert!(chunk(r#"{"choices":[{"delta":{"reasoning":"hmm"}}]}"#).reasoning);
    }

    #[test]
    fn completions_text_is_output() {
        assert!(chunk(r#"{"choices":[{"text":"x","finish_reason":null}]}"#).content);
    }

    #[test]
    fn usage_chunk_with_empty_choices() {
        let u = chunk(
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":30,"completion_tokens_details":{"reasoning_tokens":5}}}"#,
        );
        assert!(!u.is_output());
        assert_eq!(
            u.usage,
            Some(Usage {
                prompt_tokens: Some(12),
                completion_tokens: Some(30),
                reasoning_tokens: Some(5),
                cached_tokens: None
            })
        );
        let cached = chunk(
            r#"{"choices":[],"usage":{"prompt_tokens":6,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}}"#,
        );
        assert_eq!(cached.usage.unwrap().cached_tokens, Some(4));
        let llama = chunk(
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}],"timings":{"cache_n":7,"prompt_n":3}}"#,
        );
        assert_eq!(llama.cache_n, Some(7));
        assert_eq!(
            chunk(r#"{"usage":{"completion_tokens":3}}"#)
                .usage
                .unwrap()
                .completion_tokens,
            Some(3)
        );
    }

    #[test]
    fn finish_reason_is_seen_and_aborts_are_told_apart() {
        assert_eq!(
            chunk(r#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#).finish,
            Some(Finish::Length)
        );
        for normal in [
            "stop",
            "tool_calls",
            "function_call",
            "content_filter",
            "eos_token",
            "stop_sequence",
            "repetition",
        ] {
            let d = chunk(&format!(
                r#"{{"choices":[{{"delta":{{}},"finish_reason":"{normal}"}}]}}"#
            ));
            assert_eq!(d.finish, Some(Finish::Normal), "{normal}");
        }
        for abort in ["abort", "error", "cancelled", "ABORT"] {
            let d = chunk(&format!(
                r#"{{"choices":[{{"delta":{{}},"finish_reason":"{abort}"}}]}}"#
            ));
            assert_eq!(d.finish, Some(Finish::Aborted(abort.into())), "{abort}");
        }
        assert_eq!(
            chunk(r#"{"choices":[{"delta":{"content":"a"},"finish_reason":null}]}"#).finish,
            None
        );
        assert_eq!(
            chunk(r#"{"choices":[{"delta":{},"finish_reason":""}]}"#).finish,
            None,
            "an empty reason is no reason"
        );
        // SGLang's abort: finish_reason "abort" (its FINISH_ABORT) is a failure however it is cased.
        let two = chunk(
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"abort"},{"index":1,"delta":{},"finish_reason":"stop"}]}"#,
        );
        assert_eq!(
            two.finish,
            Some(Finish::Aborted("abort".into())),
            "one aborted choice spoils the answer"
        );
    }

    #[test]
    fn empty_content_chunks_are_told_apart_from_role_and_final_chunks() {
        // llama.cpp: a byte token of an incomplete UTF-8 character streams as "".
        assert!(
            chunk(r#"{"choices":[{"delta":{"content":""},"finish_reason":null}]}"#).empty_content
        );
        assert!(chunk(r#"{"choices":[{"text":"","finish_reason":null}]}"#).empty_content);
        // The role chunk, the final chunk and a content chunk are not.
        assert!(
            !chunk(
                r#"{"choices":[{"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#
            )
            .empty_content
        );
        assert!(
            !chunk(r#"{"choices":[{"delta":{"content":""},"finish_reason":"stop"}]}"#)
                .empty_content
        );
        assert!(!chunk(r#"{"choices":[{"delta":{"content":"a"}}]}"#).empty_content);
        assert!(!chunk(r#"{"choices":[{"delta":{}}]}"#).empty_content);
        assert!(
            !chunk(r#"{"choices":[{"delta":{"content":"","reasoning_content":"x"}}]}"#)
                .empty_content
        );
    }

    #[test]
    fn tool_call_deltas_are_output() {
        let d = chunk(
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}]}}]}"#,
        );
        assert!(d.is_output());
        let named = chunk(
            r#"{"choices":[{"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":""}}]}}]}"#,
        );
        assert!(named.is_output());
        assert!(!chunk(
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":""}}]}}]}"#
        )
        .is_output());
    }

    #[test]
    fn done_error_and_malformed() {
        assert_eq!(interpret(None, "[DONE]", None), Payload::Done);
        assert_eq!(interpret(None, "{\"choices\": [", None), Payload::Malformed);
        assert_eq!(interpret(None, "42", None), Payload::Malformed);
        assert_eq!(
            interpret(None, r#"{"timings":{"predicted_ms":3}}"#, None),
            Payload::Chunk(Delta::default())
        );
        assert_eq!(
            interpret(
                None,
                r#"{"error":{"message":"the prompt was: secret","type":"overloaded_error","code":529}}"#,
                None
            ),
            Payload::Error(
                "server error object in stream (type overloaded_error, code 529)".into()
            )
        );
        assert_eq!(
            interpret(
                None,
                r#"{"object":"error","message":"boom","type":"BadRequestError","code":400}"#,
                None
            ),
            Payload::Error("server error object in stream (type BadRequestError, code 400)".into())
        );
        assert_eq!(
            interpret(Some("error"), "not json at all", None),
            Payload::Error("server error event in stream".into())
        );
        let Payload::Error(class) =
            interpret(None, r#"{"error":{"type":"has spaces: leak?"}}"#, None)
        else {
            panic!()
        };
        assert_eq!(class, "server error object in stream");
    }

    #[test]
    fn text_is_collected_only_when_asked() {
        let mut text = String::new();
        interpret(
            None,
            r#"{"choices":[{"delta":{"content":"Hel"}}]}"#,
            Some(&mut text),
        );
        interpret(
            None,
            r#"{"choices":[{"delta":{"reasoning_content":"think"}}]}"#,
            Some(&mut text),
        );
        interpret(
            None,
            r#"{"choices":[{"delta":{"content":"lo"}}]}"#,
            Some(&mut text),
        );
        assert_eq!(text, "Hello");
    }

    #[test]
    fn request_bodies() {
        let chat: Value = serde_json::from_slice(&request_body(Api::Chat, "m", "p", 8)).unwrap();
        assert_eq!(chat["messages"][0]["content"], "p");
        assert_eq!(chat["stream_options"]["include_usage"], true);
        let completions: Value =
            serde_json::from_slice(&request_body(Api::Completions, "m", "p", 8)).unwrap();
        assert_eq!(completions["prompt"], "p");
        assert_eq!(completions["max_tokens"], 8);
    }
}
