//! A scripted OpenAI-compatible streaming server for the recorder's tests and fidelity bench.
//!
//! Each request's script is chosen from its prompt text, so one recorder run can meet every
//! fault at once. The server logs, per request, its version, key and the instant each token
//! frame was handed to hyper — the ground truth the fidelity bench compares the recorder with.
//! HTTP/1.1 and HTTP/2 (prior knowledge) are served on the same port, and https:// with a
//! private CA. A dev-only crate: the recorder's test suite (`tests/recorder`) and its fidelity
//! bench (`benches/fidelity.rs`) both depend on it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::sync::mpsc;

/// One step of a response body.
#[derive(Debug, Clone)]
pub enum Step {
    Sleep(Duration),
    /// A role-only first chunk (no token).
    Role,
    /// A content event carrying `text` (the tokens the usage will count are up to the script).
    Token(String),
    Reasoning(String),
    /// A chunk whose content is `""` (llama.cpp's byte token of an incomplete UTF-8 character).
    Empty,
    Finish,
    /// A final chunk with this finish reason (`length`, `abort`, …).
    FinishWith(String),
    /// `events` content events as fast as the connection takes them, `per_frame` to a frame.
    Flood {
        events: u32,
        per_frame: u32,
    },
    /// `data:` lines of 64 KiB with no blank line ever, until the client goes away.
    EndlessData,
    /// The usage chunk with empty `choices`.
    Usage {
        prompt: u32,
        completion: u32,
    },
    Done,
    /// An SSE comment (keep-alive).
    Comment,
    /// Exact bytes (a malformed event, an error object, …).
    Raw(String),
    /// Kill the connection (h1: close mid-body; h2: reset the stream).
    Abort,
    /// Send nothing more and never end.
    Hang,
}

#[derive(Debug, Clone)]
pub struct Script {
    pub status: u16,
    /// Before the response head (a server queueing the request).
    pub head_delay: Duration,
    pub steps: Vec<Step>,
    pub crlf: bool,
    /// Steps with no sleep between them go out as one frame (several events in one read).
    pub coalesce: bool,
    /// Every event is sent as two frames this far apart (an event split across reads).
    pub split: Option<Duration>,
    /// Response headers set after the defaults (a `content-type` here replaces the default).
    pub headers: Vec<(String, String)>,
}

impl Script {
    pub fn new(steps: Vec<Step>) -> Script {
        Script {
            status: 200,
            head_delay: Duration::ZERO,
            steps,
            crlf: false,
            coalesce: false,
            split: None,
            headers: vec![],
        }
    }

    /// A well-behaved stream: role chunk, `n` tokens (`ttft`, then `itl` apart), finish, usage, [DONE].
    pub fn ok(ttft: Duration, itl: Duration, n: u32) -> Script {
        let mut steps = vec![Step::Role, Step::Sleep(ttft)];
        for i in 0..n {
            if i > 0 {
                steps.push(Step::Sleep(itl));
            }
            steps.push(Step::Token("tok ".into()));
        }
        steps.extend([
            Step::Finish,
            Step::Usage {
                prompt: 7,
                completion: n,
            },
            Step::Done,
        ]);
        Script::new(steps)
    }

    pub fn status(code: u16) -> Script {
        Script {
            status: code,
            ..Script::new(vec![Step::Raw(
                r#"{"error":{"message":"scripted","type":"scripted"}}"#.into(),
            )])
        }
    }
}

/// What the server saw of one request.
#[derive(Debug, Clone)]
pub struct RequestLog {
    pub key: String,
    pub path: String,
    pub version: hyper::Version,
    pub authorization: Option<String>,
    /// The request's `Accept-Encoding`, when it sent one.
    pub accept_encoding: Option<String>,
    /// Which accepted connection (numbered from 0) carried it.
    pub connection: usize,
    pub received: Instant,
    /// When each frame carrying token events was handed over, with how many token events.
    pub token_frames: Vec<(Instant, u32)>,
    /// The request's `max_tokens`, when it sent one.
    pub max_tokens: Option<u64>,
    /// The chat request's `messages` as sent (empty for other requests): what a session's turn
    /// carried on the wire.
    pub messages: Vec<serde_json::Value>,
}

type Log = Arc<Mutex<Vec<Arc<Mutex<RequestLog>>>>>;
type Writes = Arc<Mutex<std::collections::HashMap<usize, Vec<Instant>>>>;

/// A server socket that notes when each of its writes returned.
struct StampedWrites {
    stream: tokio::net::TcpStream,
    connection: usize,
    writes: Writes,
}

impl StampedWrites {
    fn note(&self, poll: &Poll<std::io::Result<usize>>) {
        if let Poll::Ready(Ok(n)) = poll {
            if *n > 0 {
                self.writes
                    .lock()
                    .unwrap()
                    .entry(self.connection)
                    .or_default()
                    .push(Instant::now());
            }
        }
    }
}

impl tokio::io::AsyncRead for StampedWrites {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for StampedWrites {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_write(cx, data);
        this.note(&poll);
        poll
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.note(&poll);
        poll
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

pub struct ScriptedServer {
    pub addr: SocketAddr,
    log: Log,
    /// TCP connections accepted so far.
    accepted: Arc<std::sync::atomic::AtomicUsize>,
    /// Per plain-TCP connection, when each socket write returned (the bytes were then in the
    /// kernel, and on loopback already in the client's receive queue): the ground truth the
    /// fidelity bench holds the recorder's own timing error against.
    writes: Writes,
    /// JSON answers for paths other than the completions (an engine's info endpoints).
    info: Info,
    /// Answer `POST /tokenize` with the request's whitespace-separated words as its tokens.
    tokenize: Arc<std::sync::atomic::AtomicBool>,
    runtime: Option<tokio::runtime::Runtime>,
}

type Info = Arc<Mutex<std::collections::HashMap<String, String>>>;

impl ScriptedServer {
    /// Answers `GET`/`POST path` with `json` (200, application/json) from now on: an engine's
    /// info endpoint (`/version`, `/props`, …). Every other path but the completions is a 404.
    pub fn answer(&self, path: &str, json: &str) {
        self.info
            .lock()
            .unwrap()
            .insert(path.to_string(), json.to_string());
    }

    /// From now on answer `POST /tokenize` as vLLM does (`{"count", "tokens"}`), counting one
    /// token per whitespace-separated word of `prompt` (or llama.cpp's `content`): a tokenizer
    /// whose count the test knows.
    pub fn tokenize_words(&self) {
        self.tokenize
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The requests to the completions endpoints only (not the info endpoints).
    pub fn completions(&self) -> Vec<RequestLog> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/completions"))
            .collect()
    }

    pub fn start(script: impl Fn(&str) -> Script + Send + Sync + 'static) -> ScriptedServer {
        ScriptedServer::start_with_threads(1, script)
    }

    pub fn start_with_threads(
        threads: usize,
        script: impl Fn(&str) -> Script + Send + Sync + 'static,
    ) -> ScriptedServer {
        ScriptedServer::start_on(threads, None, script)
    }

    /// Serves https:// with a certificate for 127.0.0.1 signed by a fresh private CA, offering
    /// `alpn` (e.g. `h2`, `http/1.1`); returns the CA certificate as PEM.
    pub fn start_tls(
        alpn: &[&str],
        script: impl Fn(&str) -> Script + Send + Sync + 'static,
    ) -> (ScriptedServer, String) {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, SanType};
        let ca_key = KeyPair::generate().expect("a CA key");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "tracelab test CA");
        let ca = ca_params.self_signed(&ca_key).expect("a CA certificate");
        let key = KeyPair::generate().expect("a server key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("server params");
        params.subject_alt_names = vec![SanType::IpAddress("127.0.0.1".parse().unwrap())];
        let cert = params
            .signed_by(&key, &ca, &ca_key)
            .expect("a server certificate");
        let der_key = tokio_rustls::rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der())
            .expect("a key");
        let provider = std::sync::Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let mut config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], der_key)
            .expect("a TLS server config");
        config.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        (
            ScriptedServer::start_on(1, Some(acceptor), script),
            ca.pem(),
        )
    }

    fn start_on(
        threads: usize,
        tls: Option<tokio_rustls::TlsAcceptor>,
        script: impl Fn(&str) -> Script + Send + Sync + 'static,
    ) -> ScriptedServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .thread_name("scripted-server")
            .build()
            .expect("a runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("an address");
        let log: Log = Arc::default();
        let script = Arc::new(script);
        let server_log = log.clone();
        let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = accepted.clone();
        let writes: Writes = Arc::default();
        let server_writes = writes.clone();
        let info: Info = Arc::default();
        let server_info = info.clone();
        let tokenize: Arc<std::sync::atomic::AtomicBool> = Arc::default();
        let server_tokenize = tokenize.clone();
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let connection = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let _ = stream.set_nodelay(true);
                let (script, log, tls, writes, info) = (
                    script.clone(),
                    server_log.clone(),
                    tls.clone(),
                    server_writes.clone(),
                    server_info.clone(),
                );
                let tokenize = server_tokenize.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        handle(
                            req,
                            script.clone(),
                            log.clone(),
                            info.clone(),
                            tokenize.clone(),
                            connection,
                        )
                    });
                    let builder =
                        hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    match tls {
                        None => {
                            let stamped = StampedWrites {
                                stream,
                                connection,
                                writes,
                            };
                            let _ = builder
                                .serve_connection(TokioIo::new(stamped), service)
                                .await;
                        }
                        Some(tls) => {
                            let Ok(stream) = tls.accept(stream).await else {
                                return;
                            };
                            let _ = builder
                                .serve_connection(TokioIo::new(stream), service)
                                .await;
                        }
                    }
                });
            }
        });
        ScriptedServer {
            addr,
            log,
            accepted,
            writes,
            info,
            tokenize,
            runtime: Some(runtime),
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn https_url(&self) -> String {
        format!("https://{}/v1", self.addr)
    }

    pub fn requests(&self) -> Vec<RequestLog> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.lock().unwrap().clone())
            .collect()
    }

    pub fn request_count(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    /// When each socket write on plain-TCP connection `connection` returned.
    pub fn writes(&self, connection: usize) -> Vec<Instant> {
        self.writes
            .lock()
            .unwrap()
            .get(&connection)
            .cloned()
            .unwrap_or_default()
    }

    /// TCP connections the server accepted.
    pub fn connections(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// A port nothing listens on.
pub fn refused_addr() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    addr
}

async fn handle<F: Fn(&str) -> Script>(
    req: Request<Incoming>,
    script: Arc<F>,
    log: Log,
    info: Info,
    tokenize: Arc<std::sync::atomic::AtomicBool>,
    connection: usize,
) -> Result<Response<ScriptBody>, Infallible> {
    let received = Instant::now();
    let version = req.version();
    let path = req.uri().path().to_string();
    let authorization = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let accept_encoding = req
        .headers()
        .get("accept-encoding")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let key = json["messages"][0]["content"]
        .as_str()
        .or(json["prompt"].as_str())
        .unwrap_or("")
        .to_string();
    let entry = Arc::new(Mutex::new(RequestLog {
        key: key.clone(),
        path: path.clone(),
        version,
        authorization,
        accept_encoding,
        connection,
        received,
        token_frames: vec![],
        max_tokens: json["max_tokens"].as_u64(),
        messages: json["messages"].as_array().cloned().unwrap_or_default(),
    }));
    log.lock().unwrap().push(entry.clone());

    let (tx, rx) = mpsc::channel(64);
    let body = ScriptBody { rx, log: entry };
    if path == "/tokenize" && tokenize.load(std::sync::atomic::Ordering::Relaxed) {
        let text = json["prompt"]
            .as_str()
            .or(json["content"].as_str())
            .unwrap_or("");
        let count = text.split_whitespace().count();
        let answer = serde_json::json!({"count": count, "tokens": (0..count).collect::<Vec<_>>()})
            .to_string();
        let _ = tx.try_send(Item::Data(Bytes::from(answer), 0));
        drop(tx);
        return Ok(Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(body)
            .unwrap());
    }
    if let Some(answer) = info.lock().unwrap().get(&path).cloned() {
        let _ = tx.try_send(Item::Data(Bytes::from(answer), 0));
        drop(tx);
        return Ok(Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(body)
            .unwrap());
    }
    if path != "/v1/chat/completions" && path != "/v1/completions" {
        let _ = tx.try_send(Item::Data(
            Bytes::from_static(b"{\"error\":\"no such route\"}"),
            0,
        ));
        drop(tx);
        return Ok(Response::builder().status(404).body(body).unwrap());
    }
    let chat = path == "/v1/chat/completions";
    let script = script(&key);
    if !script.head_delay.is_zero() {
        tokio::time::sleep(script.head_delay).await;
    }
    let status = script.status;
    let headers = script.headers.clone();
    tokio::spawn(play(script, chat, tx));
    let content_type = if status == 200 {
        "text/event-stream"
    } else {
        "application/json"
    };
    let mut response = Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(body)
        .unwrap();
    for (name, value) in headers {
        let name = hyper::header::HeaderName::from_bytes(name.as_bytes()).unwrap();
        response.headers_mut().insert(name, value.parse().unwrap());
    }
    Ok(response)
}

fn event(json: &serde_json::Value, eol: &str) -> String {
    format!("data: {json}{eol}{eol}")
}

fn render(step: &Step, chat: bool, eol: &str) -> (String, u32) {
    use serde_json::json;
    let choice = |delta: serde_json::Value, text: &str, finish: Option<&str>| {
        if chat {
            json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        } else {
            json!({"object": "text_completion", "choices": [{"index": 0, "text": text, "finish_reason": finish}]})
        }
    };
    match step {
        Step::Role => (
            event(
                &choice(json!({"role": "assistant", "content": ""}), "", None),
                eol,
            ),
            0,
        ),
        Step::Token(t) => (event(&choice(json!({"content": t}), t, None), eol), 1),
        Step::Reasoning(t) => (
            event(
                &choice(json!({"reasoning_content": t, "content": null}), t, None),
                eol,
            ),
            1,
        ),
        Step::Empty => (event(&choice(json!({"content": ""}), "", None), eol), 0),
        Step::Finish => (event(&choice(json!({}), "", Some("stop")), eol), 0),
        Step::FinishWith(reason) => (event(&choice(json!({}), "", Some(reason)), eol), 0),
        Step::Usage { prompt, completion } => (
            event(
                &json!({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}),
                eol,
            ),
            0,
        ),
        Step::Done => (format!("data: [DONE]{eol}{eol}"), 0),
        Step::Comment => (format!(": keep-alive{eol}{eol}"), 0),
        Step::Raw(s) => (s.replace('\n', eol), 0),
        Step::Sleep(_) | Step::Abort | Step::Hang | Step::Flood { .. } | Step::EndlessData => {
            (String::new(), 0)
        }
    }
}

enum Item {
    Data(Bytes, u32),
    Fail,
}

async fn play(script: Script, chat: bool, tx: mpsc::Sender<Item>) {
    let eol = if script.crlf { "\r\n" } else { "\n" };
    let mut pending = String::new();
    let mut pending_tokens = 0;
    async fn send(
        tx: &mpsc::Sender<Item>,
        text: &mut String,
        tokens: &mut u32,
        split: Option<Duration>,
    ) -> bool {
        if text.is_empty() {
            return true;
        }
        let whole = std::mem::take(text);
        let n = std::mem::take(tokens);
        if let Some(gap) = split {
            let cut = whole.len() / 2;
            if tx
                .send(Item::Data(Bytes::from(whole[..cut].to_string()), 0))
                .await
                .is_err()
            {
                return false;
            }
            tokio::time::sleep(gap).await;
            return tx
                .send(Item::Data(Bytes::from(whole[cut..].to_string()), n))
                .await
                .is_ok();
        }
        tx.send(Item::Data(Bytes::from(whole), n)).await.is_ok()
    }
    for step in &script.steps {
        match step {
            Step::Sleep(d) => {
                if !send(&tx, &mut pending, &mut pending_tokens, script.split).await {
                    return;
                }
                tokio::time::sleep(*d).await;
            }
            Step::Abort => {
                let _ = send(&tx, &mut pending, &mut pending_tokens, script.split).await;
                let _ = tx.send(Item::Fail).await;
                return;
            }
            Step::Hang => {
                let _ = send(&tx, &mut pending, &mut pending_tokens, script.split).await;
                tx.closed().await;
                return;
            }
            Step::Flood { events, per_frame } => {
                if !send(&tx, &mut pending, &mut pending_tokens, script.split).await {
                    return;
                }
                let one = render(&Step::Token("t".into()), chat, eol).0;
                let mut left = *events;
                while left > 0 {
                    let n = left.min((*per_frame).max(1));
                    left -= n;
                    if tx
                        .send(Item::Data(Bytes::from(one.repeat(n as usize)), n))
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            }
            Step::EndlessData => {
                if !send(&tx, &mut pending, &mut pending_tokens, script.split).await {
                    return;
                }
                let line = Bytes::from(format!("data: {}{eol}", "x".repeat(64 * 1024)));
                while tx.send(Item::Data(line.clone(), 0)).await.is_ok() {}
                return;
            }
            step => {
                let (text, tokens) = render(step, chat, eol);
                pending.push_str(&text);
                pending_tokens += tokens;
                if !script.coalesce
                    && !send(&tx, &mut pending, &mut pending_tokens, script.split).await
                {
                    return;
                }
            }
        }
    }
    let _ = send(&tx, &mut pending, &mut pending_tokens, script.split).await;
}

/// The response body: frames from the script, each token frame timestamped as hyper takes it.
pub struct ScriptBody {
    rx: mpsc::Receiver<Item>,
    log: Arc<Mutex<RequestLog>>,
}

impl Body for ScriptBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(Item::Data(bytes, tokens))) => {
                if tokens > 0 {
                    self.log
                        .lock()
                        .unwrap()
                        .token_frames
                        .push((Instant::now(), tokens));
                }
                Poll::Ready(Some(Ok(Frame::data(bytes))))
            }
            Poll::Ready(Some(Item::Fail)) => Poll::Ready(Some(Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "scripted drop",
            )))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}
