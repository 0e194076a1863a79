//! What served the run, asked of the server itself before it starts: each engine's own info
//! endpoints (read in each engine's source), then what every stream chunk carries (`model`,
//! `system_fingerprint`). Written to the header as `conditions.runtime`. Unknown stays `None`,
//! never guessed; a model path keeps its file name only; no host, URL, UUID or key is kept.
//!
//! The endpoints, relative to the server's root (the base URL without its `/v1`):
//! - `GET /v1/models` (OpenAI): `id`, `owned_by` (`vllm`, `sglang`, `llamacpp`), vLLM's and
//!   SGLang's `root` and `max_model_len`, llama.cpp's `meta.n_ctx` / `meta.n_ctx_train`;
//! - `GET /version` (vLLM `{"version"}`, SGLang); `GET /props` (llama.cpp `build_info`,
//!   `model_path`, `default_generation_settings.n_ctx`); `GET /info` (TGI `model_id`,
//!   `model_sha`, `version`, `max_total_tokens`); `GET /get_model_info` (SGLang `model_path`);
//!   `GET /api/version` and `POST /api/show` (Ollama); `GET /openapi.json` (only to recognise
//!   llama-cpp-python, whose FastAPI title names it and whose version is the app's).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{
    HeaderValue, ACCEPT, ACCEPT_ENCODING, AUTHORIZATION, CONTENT_TYPE, USER_AGENT,
};
use serde_json::Value;
use tracelab_core::trace::Runtime;

use crate::transport::{Body, ConnWatch, Transport};

/// How long one question may take. The endpoints are asked all at once, so a server that never
/// answers costs this (twice for Ollama's follow-up), not this per endpoint (main spent 7 × 3 s).
/// Not shorter: llama-cpp-python builds its `/openapi.json` (the page that names it) on the
/// first ask, which took over 2 s on a 2-core machine under load, and the engine went unnamed.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(5);

/// The endpoints asked, in the order they are listed in `conditions.runtime.asked`.
pub const ENDPOINTS: &str =
    "/v1/models, /version, /props, /info, /get_model_info, /api/version, /openapi.json";
/// The most of one answer read (a `/props` with a chat template is tens of KiB).
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// One answer: the status and, on 2xx, the JSON body.
enum Answer {
    Json(Value),
    Status(u16),
    NotJson,
    /// No reply within the time allowed, or no connection.
    Silent,
}

impl Answer {
    fn said(&self) -> String {
        match self {
            Answer::Json(_) => "200".into(),
            Answer::Status(s) => s.to_string(),
            Answer::NotJson => "200, not JSON".into(),
            Answer::Silent => "no answer".into(),
        }
    }

    fn json(&self) -> Option<&Value> {
        match self {
            Answer::Json(v) => Some(v),
            _ => None,
        }
    }
}

/// Asks the server at `root` (scheme, host, port and any path prefix before `/v1`) what it is.
/// `models_url` is the base URL's `/models`; `auth` the bearer key, if any; `model` the id sent.
pub async fn probe(
    client: &Transport,
    root: &url::Url,
    models_url: &url::Url,
    auth: Option<&HeaderValue>,
    model: &str,
) -> Runtime {
    let mut asked = Vec::new();
    let mut ask = |path: &str, answer: &Answer| asked.push(format!("{path} {}", answer.said()));
    let join = |path: &str| {
        let mut u = root.clone();
        let base = u.path().trim_end_matches('/').to_string();
        u.set_path(&format!("{base}{path}"));
        u.set_query(None);
        u
    };
    let urls = [
        "/version",
        "/props",
        "/info",
        "/get_model_info",
        "/api/version",
        "/openapi.json",
    ]
    .map(join);
    let (models, version, props, info, sglang, ollama, openapi) = tokio::join!(
        get(client, models_url, auth),
        get(client, &urls[0], auth),
        get(client, &urls[1], auth),
        get(client, &urls[2], auth),
        get(client, &urls[3], auth),
        get(client, &urls[4], auth),
        get(client, &urls[5], auth),
    );
    ask("/v1/models", &models);
    ask("/version", &version);
    ask("/props", &props);
    ask("/info", &info);
    ask("/get_model_info", &sglang);
    ask("/api/version", &ollama);
    let show = if ollama.json().is_some() {
        let a = post(
            client,
            &join("/api/show"),
            auth,
            serde_json::json!({ "model": model }),
        )
        .await;
        ask("/api/show", &a);
        Some(a)
    } else {
        None
    };
    ask("/openapi.json", &openapi);
    let mut r = read_answers(
        &Answers {
            models: models.json(),
            version: version.json(),
            props: props.json(),
            info: info.json(),
            sglang: sglang.json(),
            ollama: ollama.json(),
            show: show.as_ref().and_then(Answer::json),
            openapi: openapi.json(),
        },
        model,
    );
    r.asked = asked;
    if r.engine.is_none() && r.engine_version.is_none() && r.model_id.is_none() {
        r.note =
            Some("the server answered none of the engines' info endpoints: runtime unknown".into());
    }
    r
}

/// The JSON answers, by endpoint (what [`read_answers`] reads; tests feed it real captures).
#[derive(Default)]
pub struct Answers<'a> {
    pub models: Option<&'a Value>,
    pub version: Option<&'a Value>,
    pub props: Option<&'a Value>,
    pub info: Option<&'a Value>,
    pub sglang: Option<&'a Value>,
    pub ollama: Option<&'a Value>,
    pub show: Option<&'a Value>,
    pub openapi: Option<&'a Value>,
}

fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .and_then(clean)
}

/// A value fit for the header: printable, short, and a path cut to its file name.
pub fn clean(s: &str) -> Option<String> {
    let s = s.trim();
    let name = if s.contains('/') || s.contains('\\') {
        // A path or a repo name: a repo id (`org/name`) stays whole, a filesystem path keeps its
        // file name only (it may name a user's directory).
        let looks_like_path = s.starts_with('/')
            || s.starts_with('~')
            || s.starts_with('.')
            || s.contains('\\')
            || s.matches('/').count() > 1
            || s.contains(":/");
        if looks_like_path {
            s.rsplit(['/', '\\']).next().unwrap_or(s)
        } else {
            s
        }
    } else {
        s
    };
    let name: String = name.chars().filter(|c| !c.is_control()).take(200).collect();
    (!name.is_empty()).then_some(name)
}

fn count(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_u64).filter(|&n| n > 0)
}

/// Reads the answers into a runtime: what each engine's endpoint says, nothing guessed.
pub fn read_answers(a: &Answers, model: &str) -> Runtime {
    let mut r = Runtime::default();
    // The OpenAI model list: the entry for the model sent, else the only one.
    let entry = a
        .models
        .and_then(|m| m["data"].as_array())
        .and_then(|data| {
            data.iter()
                .find(|d| d["id"].as_str() == Some(model))
                .or(if data.len() == 1 { data.first() } else { None })
        });
    if let Some(e) = entry {
        r.model_id = text(e.get("id"));
        r.engine = match e["owned_by"].as_str() {
            Some("vllm") => Some("vllm".into()),
            Some("sglang") => Some("sglang".into()),
            Some("llamacpp") => Some("llama.cpp".into()),
            _ => None,
        };
        r.max_context = count(e.get("max_model_len")).or(count(e.pointer("/meta/n_ctx")));
    }
    // llama.cpp's /props.
    if let Some(p) = a
        .props
        .filter(|p| p.get("build_info").is_some() || p.get("default_generation_settings").is_some())
    {
        r.engine = Some("llama.cpp".into());
        r.engine_version = text(p.get("build_info")).or(r.engine_version);
        r.max_context = count(p.pointer("/default_generation_settings/n_ctx")).or(r.max_context);
        if r.model_id.is_none() {
            r.model_id = text(p.get("model_path"));
        }
    }
    // TGI's /info.
    if let Some(i) = a.info.filter(|i| i.get("model_id").is_some()) {
        r.engine = Some("tgi".into());
        r.engine_version = text(i.get("version"));
        r.model_id = text(i.get("model_id")).or(r.model_id.take());
        r.model_revision = text(i.get("model_sha"));
        r.max_context = count(i.get("max_total_tokens")).or(r.max_context);
    }
    // SGLang's /get_model_info.
    if a.sglang.is_some_and(|s| s.get("model_path").is_some()) && r.engine.is_none() {
        r.engine = Some("sglang".into());
    }
    // vLLM's and SGLang's /version: {"version": "…"}.
    if let Some(v) = a.version.and_then(|v| text(v.get("version"))) {
        if matches!(r.engine.as_deref(), Some("vllm" | "sglang")) || r.engine.is_none() {
            r.engine_version = Some(v);
        }
    }
    // Ollama.
    if let Some(v) = a.ollama.and_then(|v| text(v.get("version"))) {
        r.engine = Some("ollama".into());
        r.engine_version = Some(v);
        if let Some(show) = a.show {
            r.max_context = show["parameters"].as_str().and_then(|p| {
                p.lines().find_map(|l| {
                    l.trim()
                        .strip_prefix("num_ctx")
                        .and_then(|n| n.trim().parse::<u64>().ok())
                })
            });
            if r.model_id.is_none() {
                r.model_id = clean(model);
            }
        }
    }
    // llama-cpp-python: a FastAPI app whose title names it.
    if let Some(info) = a.openapi.map(|o| &o["info"]) {
        if info["title"]
            .as_str()
            .is_some_and(|t| t.contains("llama.cpp Python"))
            && r.engine.is_none()
        {
            r.engine = Some("llama-cpp-python".into());
            r.engine_version = text(info.get("version"));
        }
    }
    r
}

/// What the streams said, folded in at the end of the run: the fingerprint, and the served
/// model where no endpoint named it.
pub fn add_streams(r: &mut Runtime, fingerprints: &[String], models: &[String]) {
    if let Some(first) = fingerprints.first() {
        r.system_fingerprint = clean(first);
        if fingerprints.len() > 1 {
            let note = format!(
                "the streams' system_fingerprint changed during the run ({} values)",
                fingerprints.len()
            );
            r.note = Some(match r.note.take() {
                Some(n) => format!("{n}; {note}"),
                None => note,
            });
        }
        // llama.cpp's fingerprint is its build (`b10452-b94041a98`): its version when /props
        // was not there to say it.
        if r.engine.as_deref() == Some("llama.cpp") && r.engine_version.is_none() {
            r.engine_version = r.system_fingerprint.clone();
        }
    }
    if r.model_id.is_none() {
        r.model_id = models.first().and_then(|m| clean(m));
    }
}

fn request(
    uri: &hyper::Uri,
    method: hyper::Method,
    body: Bytes,
    auth: Option<&HeaderValue>,
) -> hyper::Request<Full<Bytes>> {
    let json = !body.is_empty();
    let mut request = hyper::Request::new(Full::new(body));
    *request.method_mut() = method;
    *request.uri_mut() = uri.clone();
    let headers = request.headers_mut();
    headers.insert(
        USER_AGENT,
        HeaderValue::from_static(concat!("tracelab/", env!("CARGO_PKG_VERSION"))),
    );
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
    if json {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    if let Some(auth) = auth {
        headers.insert(AUTHORIZATION, auth.clone());
    }
    request
}

async fn get(client: &Transport, url: &url::Url, auth: Option<&HeaderValue>) -> Answer {
    send(client, url, hyper::Method::GET, Bytes::new(), auth).await
}

async fn post(
    client: &Transport,
    url: &url::Url,
    auth: Option<&HeaderValue>,
    body: Value,
) -> Answer {
    send(
        client,
        url,
        hyper::Method::POST,
        Bytes::from(body.to_string()),
        auth,
    )
    .await
}

/// POSTs `body` to `url` and reads a JSON answer (the tokenize endpoints a workload replay
/// calibrates its prompts with); Err says how it answered instead (`404`, `no answer`).
pub async fn post_json(
    client: &Transport,
    url: &url::Url,
    auth: Option<&HeaderValue>,
    body: Value,
) -> Result<Value, String> {
    match post(client, url, auth, body).await {
        Answer::Json(v) => Ok(v),
        other => Err(other.said()),
    }
}

async fn send(
    client: &Transport,
    url: &url::Url,
    method: hyper::Method,
    body: Bytes,
    auth: Option<&HeaderValue>,
) -> Answer {
    let Ok(uri) = url.as_str().parse::<hyper::Uri>() else {
        return Answer::Silent;
    };
    let go = async {
        let watch = ConnWatch::default();
        let Ok(sent) = client
            .send(|| request(&uri, method.clone(), body.clone(), auth), &watch)
            .await
        else {
            return Answer::Silent;
        };
        let status = sent.response.status();
        let mut reader = Body(sent.response.into_body());
        let mut bytes = Vec::new();
        loop {
            match reader.chunk().await {
                Ok(Some(chunk)) => {
                    bytes.extend_from_slice(&chunk);
                    if bytes.len() > MAX_ANSWER_BYTES {
                        return Answer::NotJson;
                    }
                }
                Ok(None) => break,
                Err(_) => return Answer::Silent,
            }
        }
        sent.lease.give_back().await;
        if !status.is_success() {
            return Answer::Status(status.as_u16());
        }
        serde_json::from_slice(&bytes).map_or(Answer::NotJson, Answer::Json)
    };
    tokio::time::timeout(ASK_TIMEOUT, go)
        .await
        .unwrap_or(Answer::Silent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_keep_their_file_name_and_repo_ids_stay_whole() {
        assert_eq!(
            clean("/home/ana/models/tiny.gguf").as_deref(),
            Some("tiny.gguf")
        );
        assert_eq!(clean("C:\\Users\\ana\\m.gguf").as_deref(), Some("m.gguf"));
        assert_eq!(
            clean("meta-llama/Llama-3.1-8B-Instruct").as_deref(),
            Some("meta-llama/Llama-3.1-8B-Instruct")
        );
        assert_eq!(
            clean("/gpfs/scratch/bsc98/bsc098069/llama-2-7b").as_deref(),
            Some("llama-2-7b")
        );
        assert_eq!(clean("   "), None);
    }

    #[test]
    fn each_engine_is_read_from_its_own_endpoint() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        let models = v(
            r#"{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm","root":"/models/m","max_model_len":4096}]}"#,
        );
        let version = v(r#"{"version":"0.11.0"}"#);
        let r = read_answers(
            &Answers {
                models: Some(&models),
                version: Some(&version),
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
            (Some("vllm"), Some("0.11.0"), Some(4096))
        );
        let info = v(
            r#"{"model_id":"org/m","model_sha":"abc123","version":"3.2.1","max_total_tokens":8192,"router":"text-generation-router"}"#,
        );
        let r = read_answers(
            &Answers {
                info: Some(&info),
                ..Answers::default()
            },
            "tgi",
        );
        assert_eq!(
            (
                r.engine.as_deref(),
                r.model_id.as_deref(),
                r.model_revision.as_deref(),
                r.max_context
            ),
            (Some("tgi"), Some("org/m"), Some("abc123"), Some(8192))
        );
        let props = v(
            r#"{"default_generation_settings":{"n_ctx":2048},"model_path":"/srv/models/q.gguf","build_info":"b6283-abc"}"#,
        );
        let r = read_answers(
            &Answers {
                props: Some(&props),
                ..Answers::default()
            },
            "x",
        );
        assert_eq!(
            (
                r.engine.as_deref(),
                r.engine_version.as_deref(),
                r.model_id.as_deref(),
                r.max_context
            ),
            (
                Some("llama.cpp"),
                Some("b6283-abc"),
                Some("q.gguf"),
                Some(2048)
            )
        );
        let none = read_answers(&Answers::default(), "x");
        assert_eq!(none, Runtime::default());
    }
}
