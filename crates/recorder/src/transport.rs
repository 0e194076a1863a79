//! The recorder's HTTP client: hyper's keep-alive pool over our own connector, which
//! timestamps every read at the socket (so `first_byte_ms` is the first response byte, not the
//! end of the headers) and remembers what each connection carried, so that a request swallowed
//! unanswered by a keep-alive connection the server had already closed is resent, not recorded
//! as a server failure. TLS is rustls with the bundled Mozilla roots plus any `--ca-cert`.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::Uri;
use hyper_util::client::legacy::connect::{capture_connection, Connected, Connection};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tracelab_core::trace::ConnectionPolicy;

/// How long an idle pooled connection is kept.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// How many times one request is resent after reused connections closed without answering.
pub const MAX_RESENDS: u32 = 4;

/// Which HTTP version is spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.1 over http://; over https:// ALPN picks HTTP/2 or HTTP/1.1.
    Negotiated,
    /// HTTP/2 without negotiation (h2c over http://).
    Http2PriorKnowledge,
}

/// Everything that shapes connections, recorded in the header's `conditions.connection`.
#[derive(Debug, Clone)]
pub struct Options {
    pub protocol: Protocol,
    pub connect_timeout: Option<Duration>,
    /// Extra trusted roots (PEM) from `--ca-cert`.
    pub ca_cert: Option<std::path::PathBuf>,
    pub https: bool,
}

impl Options {
    /// The policy as written to the trace header.
    pub fn policy(&self) -> ConnectionPolicy {
        ConnectionPolicy {
            protocol: match (self.protocol, self.https) {
                (Protocol::Http2PriorKnowledge, _) => "h2-prior-knowledge",
                (Protocol::Negotiated, true) => "alpn",
                (Protocol::Negotiated, false) => "http/1.1",
            }
            .into(),
            tls_roots: self.https.then(|| if self.ca_cert.is_some() { "bundled+ca-cert" } else { "bundled" }.into()),
            keep_alive: true,
            pool_idle_timeout_s: POOL_IDLE_TIMEOUT.as_secs_f64(),
            resend_unanswered_on_reused: MAX_RESENDS,
            timing_includes_connect: true,
        }
    }
}

/// What one connection has carried; shared between its socket and the attempts that use it.
#[derive(Default)]
pub struct ConnState {
    /// Attempts that got this connection so far (a later one finds it reused).
    claims: AtomicU32,
    io: Mutex<IoState>,
}

#[derive(Default, Clone, Copy)]
struct IoState {
    /// Bytes were written and nothing has been read since: the last request has no answer yet.
    unanswered: bool,
    /// When the first byte after the latest write arrived.
    first_read: Option<Instant>,
    /// Bytes read since the latest write, and the first few of them (to name what came back).
    read_since_write: u64,
    head: [u8; 8],
    /// The same over the connection's whole life (HTTP/2 writes between its reads).
    conn_read: u64,
    conn_head: [u8; 8],
}

impl ConnState {
    /// Takes the connection for one attempt; true when an earlier attempt had it.
    fn claim(&self) -> bool {
        self.claims.fetch_add(1, Ordering::Relaxed) > 0
    }

    fn io(&self) -> IoState {
        *self.io.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wrote(&self) {
        let mut io = self.io.lock().unwrap_or_else(|p| p.into_inner());
        if !io.unanswered {
            *io = IoState { unanswered: true, conn_read: io.conn_read, conn_head: io.conn_head, ..IoState::default() };
        }
    }

    /// Passes a write's result through, noting that bytes went out.
    fn noted(&self, poll: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        if let Poll::Ready(Ok(n)) = poll {
            if n > 0 {
                self.wrote();
            }
        }
        poll
    }

    fn read(&self, bytes: &[u8], at: Instant) {
        let mut io = self.io.lock().unwrap_or_else(|p| p.into_inner());
        if io.first_read.is_none() {
            io.first_read = Some(at);
        }
        let seen = io.read_since_write as usize;
        for (i, b) in bytes.iter().enumerate().take(io.head.len().saturating_sub(seen)) {
            io.head[seen + i] = *b;
        }
        io.read_since_write += bytes.len() as u64;
        let seen = io.conn_read as usize;
        for (i, b) in bytes.iter().enumerate().take(io.conn_head.len().saturating_sub(seen)) {
            io.conn_head[seen + i] = *b;
        }
        io.conn_read += bytes.len() as u64;
        io.unanswered = false;
    }
}

/// The pooled client with the run's connection policy.
pub struct Transport {
    client: Client<Connector, Full<Bytes>>,
    h2_prior: bool,
}

/// A response head and what the socket saw of it.
pub struct Sent {
    pub response: hyper::Response<Incoming>,
    /// The first response byte (HTTP/1.1: the socket read; HTTP/2: the decoded head, as
    /// streams share one socket).
    pub first_byte: Instant,
    /// How many times the request went out again after a reused connection closed unanswered.
    pub resent: u32,
}

/// Why no response head came, as a fixed phrase for the trace.
pub struct SendError {
    pub class: &'static str,
    pub resent: u32,
}

impl Transport {
    pub fn new(options: &Options) -> Result<Transport, String> {
        let tls = if options.https { Some(tls_config(options)?) } else { None };
        let h2_prior = options.protocol == Protocol::Http2PriorKnowledge;
        let connector = Connector { tls, connect_timeout: options.connect_timeout, h2: h2_prior };
        let mut builder = Client::builder(TokioExecutor::new());
        builder.pool_idle_timeout(POOL_IDLE_TIMEOUT).pool_timer(hyper_util::rt::TokioTimer::new());
        if h2_prior {
            builder.http2_only(true);
        }
        Ok(Transport { client: builder.build(connector), h2_prior })
    }

    /// Sends the request, resending it while it was lost unanswered on a reused connection.
    pub async fn send(&self, make: impl Fn() -> hyper::Request<Full<Bytes>>) -> Result<Sent, SendError> {
        let mut resent = 0;
        loop {
            let mut request = make();
            let capture = capture_connection(&mut request);
            let result = self.client.request(request).await;
            let now = Instant::now();
            let state = capture.connection_metadata().as_ref().and_then(|c| {
                let mut ext = hyper::http::Extensions::new();
                c.get_extras(&mut ext);
                ext.get::<Arc<ConnState>>().cloned()
            });
            let reused = state.as_ref().map(|s| s.claim());
            match result {
                Ok(response) => {
                    let first_byte = match (&state, response.version()) {
                        (Some(s), v) if v < hyper::Version::HTTP_2 => s.io().first_read.unwrap_or(now).min(now),
                        _ => now,
                    };
                    return Ok(Sent { response, first_byte, resent });
                }
                Err(e) => {
                    let io = state.as_ref().map(|s| s.io());
                    let unanswered = match io {
                        Some(io) if !self.h2_prior && !is_h2(&e) => io.unanswered,
                        // HTTP/2 says so itself: a refused stream was never processed.
                        Some(_) => h2_refused(&e),
                        None => false,
                    };
                    if reused == Some(true) && unanswered && resent < MAX_RESENDS {
                        resent += 1;
                        continue;
                    }
                    return Err(SendError { class: request_error_class(&e, io.as_ref(), self.h2_prior), resent });
                }
            }
        }
    }
}

/// A response body read chunk by chunk (trailers skipped).
pub struct Body(pub Incoming);

impl Body {
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, hyper::Error> {
        loop {
            match self.0.frame().await {
                None => return Ok(None),
                Some(Err(e)) => return Err(e),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        return Ok(Some(data));
                    }
                }
            }
        }
    }
}

fn tls_config(options: &Options) -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    if let Some(path) = &options.ca_cert {
        let name = path.display();
        let pem = std::fs::read(path).map_err(|e| format!("cannot read --ca-cert {name}: {e}"))?;
        let mut added = 0;
        for (i, cert) in CertificateDer::pem_slice_iter(&pem).enumerate() {
            let cert = cert.map_err(|e| format!("--ca-cert {name}: certificate {} is not valid PEM: {e}", i + 1))?;
            roots
                .add(cert)
                .map_err(|e| format!("--ca-cert {name}: certificate {} cannot be a trusted root: {e}", i + 1))?;
            added += 1;
        }
        if added == 0 {
            return Err(format!("--ca-cert {name} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = match options.protocol {
        Protocol::Negotiated => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        Protocol::Http2PriorKnowledge => vec![b"h2".to_vec()],
    };
    Ok(Arc::new(config))
}

#[derive(Clone)]
struct Connector {
    tls: Option<Arc<rustls::ClientConfig>>,
    connect_timeout: Option<Duration>,
    h2: bool,
}

type Connecting = Pin<Box<dyn Future<Output = Result<TokioIo<Metered>, io::Error>> + Send>>;

impl tower_service::Service<Uri> for Connector {
    type Response = TokioIo<Metered>;
    type Error = io::Error;
    type Future = Connecting;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Connecting {
        let this = self.clone();
        Box::pin(async move {
            let https = uri.scheme_str() == Some("https");
            let host = uri.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_string();
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            let connect = TcpStream::connect((host.as_str(), port));
            let tcp = match this.connect_timeout {
                Some(limit) => tokio::time::timeout(limit, connect)
                    .await
                    .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))??,
                None => connect.await?,
            };
            tcp.set_nodelay(true)?;
            let (stream, h2) = match (&this.tls, https) {
                (Some(config), true) => {
                    let name = rustls::pki_types::ServerName::try_from(host)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                    let tls = tokio_rustls::TlsConnector::from(config.clone()).connect(name, tcp).await?;
                    let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
                    (Stream::Tls(Box::new(tls)), h2)
                }
                _ => (Stream::Plain(tcp), this.h2),
            };
            Ok(TokioIo::new(Metered { stream, state: Arc::default(), h2 }))
        })
    }
}

enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

/// A connection's socket, noting each write and timestamping each read as it is handed over.
pub struct Metered {
    stream: Stream,
    state: Arc<ConnState>,
    h2: bool,
}

impl Connection for Metered {
    fn connected(&self) -> Connected {
        let connected = Connected::new().extra(self.state.clone());
        if self.h2 {
            connected.negotiated_h2()
        } else {
            connected
        }
    }
}

impl AsyncRead for Metered {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = match &mut this.stream {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        };
        if let Poll::Ready(Ok(())) = poll {
            let new = &buf.filled()[before..];
            if !new.is_empty() {
                this.state.read(new, Instant::now());
            }
        }
        poll
    }
}

impl AsyncWrite for Metered {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = match &mut this.stream {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, data),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, data),
        };
        this.state.noted(poll)
    }

    fn poll_write_vectored(self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = match &mut this.stream {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        };
        this.state.noted(poll)
    }

    fn is_write_vectored(&self) -> bool {
        match &self.stream {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().stream {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().stream {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Every error in a chain, looking inside I/O errors (whose `source` skips the wrapped error).
fn chain<'a>(e: &'a (dyn std::error::Error + 'static)) -> Vec<&'a (dyn std::error::Error + 'static)> {
    let mut out = Vec::new();
    let mut next = Some(e);
    while let Some(err) = next {
        out.push(err);
        next = match err.downcast_ref::<io::Error>().and_then(|io| io.get_ref()) {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => err.source(),
        };
    }
    out
}

fn is_h2(e: &(dyn std::error::Error + 'static)) -> bool {
    chain(e).iter().any(|s| s.is::<h2::Error>())
}

fn h2_refused(e: &(dyn std::error::Error + 'static)) -> bool {
    chain(e)
        .iter()
        .filter_map(|s| s.downcast_ref::<h2::Error>())
        .any(|h| h.reason() == Some(h2::Reason::REFUSED_STREAM))
}

/// The first I/O error kind in an error's chain, as a fixed phrase. Error texts themselves are
/// never kept or printed: they can hold the URL.
pub fn io_class(e: &(dyn std::error::Error + 'static)) -> Option<&'static str> {
    for s in chain(e) {
        if let Some(io) = s.downcast_ref::<io::Error>() {
            use io::ErrorKind::*;
            if io.raw_os_error() == Some(libc::EMFILE) || io.raw_os_error() == Some(libc::ENFILE) {
                return Some("the recorder ran out of open files (not a server failure): raise `ulimit -n`");
            }
            let class = match io.kind() {
                ConnectionRefused => "connection refused",
                ConnectionReset => "connection reset",
                ConnectionAborted => "connection aborted",
                TimedOut => "timed out",
                UnexpectedEof => "connection closed early",
                BrokenPipe => "connection closed early",
                AddrNotAvailable => "address not available",
                _ => continue,
            };
            return Some(class);
        }
    }
    None
}

fn chain_mentions(e: &(dyn std::error::Error + 'static), words: &[&str]) -> bool {
    chain(e).iter().any(|s| {
        let text = s.to_string().to_lowercase();
        words.iter().any(|w| text.contains(w))
    })
}

fn tls_class(e: &(dyn std::error::Error + 'static)) -> Option<&'static str> {
    let rustls = chain(e).into_iter().find_map(|s| s.downcast_ref::<rustls::Error>())?;
    use rustls::{CertificateError as C, Error as E};
    Some(match rustls {
        E::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => {
            "TLS certificate not trusted: pass --ca-cert FILE with the CA that signed the server's certificate (PEM)"
        }
        E::InvalidCertificate(C::NotValidForName | C::NotValidForNameContext { .. }) => {
            "TLS certificate is for another host name than the one in --base-url"
        }
        E::InvalidCertificate(C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. }) => {
            "TLS certificate expired or not yet valid"
        }
        E::InvalidCertificate(_) => "TLS certificate not accepted",
        E::InvalidMessage(_) => "TLS handshake failed: the server did not answer in TLS (is it plain http://?)",
        _ => "TLS handshake failed",
    })
}

/// Why no response head came: a fixed phrase for the trace's `detail`. `io` is what the
/// connection received since the request was written, to name an unparsable reply.
fn request_error_class(e: &hyper_util::client::legacy::Error, io: Option<&IoState>, h2_prior: bool) -> &'static str {
    if let Some(class) = tls_class(e) {
        return class;
    }
    if chain_mentions(e, &["dns error", "failed to lookup"]) {
        return "DNS lookup failed";
    }
    let received = io.map_or(0, |io| io.read_since_write);
    let head = io.map(|io| &io.head[..(io.read_since_write as usize).min(io.head.len())]).unwrap_or(&[]);
    if h2_prior {
        let conn_head = io.map(|io| &io.conn_head[..(io.conn_read as usize).min(io.conn_head.len())]).unwrap_or(&[]);
        if conn_head.starts_with(b"HTTP/1") {
            return "the server answered in HTTP/1.x to HTTP/2 prior knowledge: drop --http2-prior-knowledge";
        }
        if !conn_head.is_empty() && is_h2(e) {
            return "not an HTTP/2 reply to HTTP/2 prior knowledge: does the server speak h2c? (drop --http2-prior-knowledge)";
        }
        // The server closed while our preface was still going out, so its answer (an HTTP/1.x
        // 400, from a server that speaks only HTTP/1.1) was never read: say what is likely.
        if io.is_some_and(|io| io.conn_read == 0) && !e.is_connect() {
            return "connection closed during the HTTP/2 prior-knowledge handshake, before any reply: an HTTP/1-only server does that; drop --http2-prior-knowledge";
        }
    }
    if received > 0 && !b"HTTP/".starts_with(&head[..head.len().min(5)]) {
        return "the reply is not HTTP (its first bytes are not a status line)";
    }
    let hyper_error = chain(e).into_iter().find_map(|s| s.downcast_ref::<hyper::Error>());
    if let Some(h) = hyper_error {
        if h.is_parse() || h.is_parse_status() {
            return "the reply's status line or headers are not valid HTTP";
        }
        if h.is_incomplete_message() && received > 0 {
            return "connection closed in the middle of the response head";
        }
        if h.is_incomplete_message() {
            return "connection closed before a response";
        }
    }
    if let Some(class) = io_class(e) {
        return class;
    }
    if received > 0 {
        "connection failed in the middle of the response head"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "connection closed before a response"
    }
}

/// Why a 2xx stream stopped early.
pub fn body_error_class(e: &hyper::Error) -> &'static str {
    match io_class(e) {
        Some(class) => class,
        None if chain_mentions(e, &["reset", "go_away", "goaway"]) => "stream reset by the server",
        None => "connection dropped mid-stream",
    }
}
