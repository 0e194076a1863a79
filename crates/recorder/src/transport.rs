//! The recorder's HTTP client: its own keep-alive pool over hyper's connection API, so that
//! which connection each request rides on is a fact it decides and records, not a race.
//!
//! - A response body is read to its end and its connection goes back to the pool only once
//!   hyper says it can take the next request ([`Lease::give_back`]): N sequential requests ride
//!   one connection, a closed loop of C workers opens C. The warm-up can open the connections
//!   the measured phase will use ([`Transport::warm`]), so measured times carry no connect.
//! - An idle connection is looked at before it is reused (a non-blocking peek): one the server
//!   closed, or that has unasked-for bytes waiting (a 408 before a close, a TLS alert), is
//!   dropped without sending anything on it. A reply that says `Connection: close` (or is
//!   HTTP/1.0 without keep-alive) never puts its connection back. A request is resent only when
//!   it provably never reached the server: hyper gave it back unwritten, its write failed before
//!   it was complete (with no byte of answer), the kernel says the server's FIN had arrived
//!   before the request's first byte was written (it is then not written at all), the server's
//!   FIN acknowledged none of its bytes and the server's kernel then reset them (its socket was
//!   gone: no program read them), or HTTP/2 refused the stream. Anything else is the attempt's
//!   failure, never a second request the server may also have processed. A server that closes
//!   every connection just after its reply (llama.cpp's `llama-server` does, 17–140 µs later,
//!   while its header says keep-alive) races the next request; so until a reused connection
//!   has been answered, a connection is pooled only [`SETTLE`] after its reply and still open,
//!   and once one is seen closed that soon, none is reused again: each request opens its own,
//!   as the server does in fact. The rules above resend what still loses a race, nothing else.
//! - The connector timestamps every read at the socket (`first_byte_ms` is the first response
//!   byte, not the end of the headers) and, on Linux, asks the kernel for each read's receive
//!   times (SO_TIMESTAMPNS: of its oldest byte and of its newest), so the delay the recorder
//!   adds to its own timestamps is measured in every run ([`ConnState::lateness`]), against
//!   the read that carried each event's bytes, not an earlier one that carried only framing.
//!
//! TLS is rustls with the bundled Mozilla roots plus any `--ca-cert`.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper::Uri;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tracelab_core::trace::ConnectionPolicy;

/// How long an idle pooled connection is kept.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// How many times one request is resent when it provably never reached the server.
pub const MAX_RESENDS: u32 = 4;
/// How long a finished response may take to release its connection before it is dropped.
const GIVE_BACK_TIMEOUT: Duration = Duration::from_millis(500);

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
            tls_roots: self.https.then(|| {
                if self.ca_cert.is_some() {
                    "bundled+ca-cert"
                } else {
                    "bundled"
                }
                .into()
            }),
            keep_alive: true,
            pool_idle_timeout_s: POOL_IDLE_TIMEOUT.as_secs_f64(),
            resend_unanswered_on_reused: MAX_RESENDS,
            timing_includes_connect: true,
        }
    }
}

/// Receive times the kernel gave the latest reads of one connection, in a ring: an attempt
/// finds the latest read since its last event.
const RX_RING: usize = 64;

/// One read's receive times (ns since the Unix epoch): of its oldest byte, and of its newest
/// (the kernel stamps a read with the last buffer it copies from, so a one-byte read gives the
/// oldest and the read of the rest the newest).
#[derive(Debug, Default, Clone, Copy)]
pub struct RxStamp {
    oldest: i64,
    newest: i64,
}

struct RxLog {
    count: u64,
    ring: [RxStamp; RX_RING],
}

impl Default for RxLog {
    fn default() -> Self {
        RxLog {
            count: 0,
            ring: [RxStamp::default(); RX_RING],
        }
    }
}

/// How late the recorder is, at the moment it timestamps what one read carried, against the
/// kernel's receive times of that read's bytes (ms).
#[derive(Debug, Default, Clone, Copy)]
pub struct ReadLateness {
    /// Against the read's oldest byte: an upper bound for anything the read completed.
    pub oldest_ms: f64,
    /// Against its newest byte: the delay of whatever the read's last bytes completed.
    pub newest_ms: f64,
    /// A read came in since the previous call: the bytes the previous call judged ended a read.
    pub new_read: bool,
}

/// What one connection has carried; shared between its socket and the attempts that use it.
#[derive(Default)]
pub struct ConnState {
    io: Mutex<IoState>,
    rx: Mutex<RxLog>,
    /// The socket, while it is open: a peek before reuse goes through it (cleared before the
    /// socket closes, so a peek never reads another socket that reused the number).
    #[cfg(unix)]
    fd: Mutex<Option<std::os::fd::RawFd>>,
    /// A second handle on the socket, taken as it closes under a request that met the server's
    /// FIN with no answer: the kernel's verdict on that request (reset or acknowledged) can
    /// still be read after hyper drops the connection ([`ConnState::provably_unread`]).
    #[cfg(unix)]
    held: Mutex<Option<std::os::fd::OwnedFd>>,
}

#[derive(Default, Clone, Copy)]
struct IoState {
    /// Bytes were written and nothing has been read since: the last request has no answer yet.
    unanswered: bool,
    /// A write of the current request failed: it never went out whole.
    write_failed: bool,
    /// When the first byte after the latest write arrived.
    first_read: Option<Instant>,
    /// Bytes read since the latest write, and the first few of them (to name what came back).
    read_since_write: u64,
    head: [u8; 8],
    /// The same over the connection's whole life (HTTP/2 writes between its reads).
    conn_read: u64,
    conn_head: [u8; 8],
    /// The kernel's count of our bytes the server acknowledged, just before the current
    /// request's first byte was written (Linux `tcpi_bytes_acked`; None where unknown).
    acked_before: Option<u64>,
    /// The server's FIN had arrived before the current request's first write: it was not written.
    fin_before_write: bool,
    /// A read met the server's FIN (end of stream) while the current request had no answer.
    fin_unanswered: bool,
    /// When the current request's first byte was handed to the kernel (stamped just before
    /// that write): on a connection already open, the request's start as the wire sees it.
    request_out: Option<Instant>,
}

/// Where an attempt stands in its connection's reads, for [`ConnState::lateness`].
#[derive(Debug, Default, Clone, Copy)]
pub struct RxCursor {
    seen: u64,
    /// The read used for the previous event.
    last: Option<RxStamp>,
}

fn now_epoch_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

impl ConnState {
    fn io(&self) -> IoState {
        *self.io.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wrote(&self, failed: bool) {
        let mut io = self.io.lock().unwrap_or_else(|p| p.into_inner());
        if !io.unanswered {
            *io = IoState {
                unanswered: true,
                conn_read: io.conn_read,
                conn_head: io.conn_head,
                acked_before: io.acked_before,
                fin_before_write: io.fin_before_write,
                request_out: io.request_out,
                ..IoState::default()
            };
        }
        io.write_failed |= failed;
    }

    /// Before an HTTP/1.1 write: at a request's first byte, asks the kernel whether the server's
    /// FIN has already arrived. If it has, the request is not written (an error, so hyper fails
    /// it and [`Transport::send`] resends it: nothing went out); else the acknowledged count is
    /// kept to judge a close that crosses the request.
    fn before_write(&self) -> io::Result<()> {
        let mut io = self.io.lock().unwrap_or_else(|p| p.into_inner());
        if io.unanswered {
            return Ok(()); // the rest of a request already going out
        }
        let facts = self.tcp_facts();
        io.fin_before_write = facts.is_some_and(|f| f.fin_arrived);
        io.acked_before = facts.and_then(|f| f.bytes_acked);
        if io.fin_before_write {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the server closed the connection before the request was written",
            ));
        }
        // Last, so nothing of ours lies between this stamp and the write that follows it.
        io.request_out = Some(Instant::now());
        Ok(())
    }

    fn tcp_facts(&self) -> Option<TcpFacts> {
        #[cfg(target_os = "linux")]
        {
            let fd = self.fd.lock().unwrap_or_else(|p| p.into_inner());
            tcp_facts(*fd.as_ref()?)
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// A read met the end of the stream (the server's FIN).
    fn read_end(&self) {
        let mut io = self.io.lock().unwrap_or_else(|p| p.into_inner());
        if io.unanswered && io.read_since_write == 0 {
            io.fin_unanswered = true;
        }
    }

    /// Whether the server provably never read the current request, once the connection failed
    /// under it with no answer: its FIN came before the first byte was written, or its FIN
    /// acknowledged none of the request's bytes and its kernel then reset them (a reset, not an
    /// acknowledgement, answers bytes that reach a socket no program holds any more). Waits up
    /// to `within` for that reset, on the socket kept open for the verdict.
    async fn provably_unread(&self, within: Duration) -> bool {
        let io = self.io();
        if io.fin_before_write {
            return true;
        }
        let (Some(before), true, 0) = (io.acked_before, io.fin_unanswered, io.read_since_write)
        else {
            return false;
        };
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // hyper may still be dropping the connection: read the socket while it is open,
            // then through the handle kept as it closed.
            let mut held: Option<std::os::fd::OwnedFd> = None;
            let deadline = Instant::now() + within;
            loop {
                if held.is_none() {
                    held = self.held.lock().unwrap_or_else(|p| p.into_inner()).take();
                }
                let facts = match &held {
                    Some(h) => tcp_facts(h.as_raw_fd()),
                    None => self.tcp_facts(),
                };
                match facts {
                    Some(f) if f.bytes_acked != Some(before) => return false, // the server took some of it
                    Some(f) if f.reset => return true,
                    Some(_) => {}
                    None => return false,
                }
                if Instant::now() >= deadline {
                    return false;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (before, within);
            false
        }
    }

    /// Passes a write's result through, noting that bytes went out (or that a write failed).
    fn noted(&self, poll: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        match &poll {
            Poll::Ready(Ok(n)) if *n > 0 => self.wrote(false),
            Poll::Ready(Err(_)) => self.wrote(true),
            _ => {}
        }
        poll
    }

    fn read(&self, bytes: &[u8], at: Instant) {
        let mut io = self.io.lock().unwrap_or_else(|p| p.into_inner());
        if io.first_read.is_none() {
            io.first_read = Some(at);
        }
        let seen = io.read_since_write as usize;
        for (i, b) in bytes
            .iter()
            .enumerate()
            .take(io.head.len().saturating_sub(seen))
        {
            io.head[seen + i] = *b;
        }
        io.read_since_write += bytes.len() as u64;
        let seen = io.conn_read as usize;
        for (i, b) in bytes
            .iter()
            .enumerate()
            .take(io.conn_head.len().saturating_sub(seen))
        {
            io.conn_head[seen + i] = *b;
        }
        io.conn_read += bytes.len() as u64;
        io.unanswered = false;
    }

    fn received_at(&self, stamp: RxStamp) {
        let mut rx = self.rx.lock().unwrap_or_else(|p| p.into_inner());
        let slot = (rx.count % RX_RING as u64) as usize;
        rx.ring[slot] = stamp;
        rx.count += 1;
    }

    /// The first byte after the latest request was written, if any came (a head that is still
    /// trickling in when the first-token timeout fires has one).
    pub fn first_byte(&self) -> Option<Instant> {
        let io = self.io();
        io.first_read.filter(|_| io.read_since_write > 0)
    }

    /// How late the caller is, now, against the kernel's receive times of the read whose bytes
    /// it is timestamping: the latest read since its previous call (hyper hands over a body
    /// frame as soon as a read brings any of it, so the bytes that complete it came in that
    /// read; earlier reads since then carried framing, such as a chunk's trailing CRLF that
    /// arrived an inter-token gap before the next token), or, when no read came in between
    /// (the bytes were already buffered), the same read as last time. None without kernel
    /// receive times.
    pub fn lateness(&self, cursor: &mut RxCursor) -> Option<ReadLateness> {
        let now = now_epoch_ns();
        let rx = self.rx.lock().unwrap_or_else(|p| p.into_inner());
        let new_read = rx.count > cursor.seen;
        if new_read {
            cursor.last = Some(rx.ring[((rx.count - 1) % RX_RING as u64) as usize]);
            cursor.seen = rx.count;
        }
        let ms = |at: i64| (now - at).max(0) as f64 / 1e6;
        cursor.last.map(|r| ReadLateness {
            oldest_ms: ms(r.oldest),
            newest_ms: ms(r.newest),
            new_read,
        })
    }

    /// Where the connection's reads stand now: an attempt starts its cursor here, as the
    /// request goes out, so no read that belongs to an earlier request is ever counted as this
    /// one's (a kept-alive connection's ring holds the last one's reads).
    pub fn cursor_now(&self) -> RxCursor {
        RxCursor {
            seen: self.rx.lock().unwrap_or_else(|p| p.into_inner()).count,
            last: None,
        }
    }

    /// Whether an idle connection can carry another request: still open, and nothing waiting
    /// on it that nobody asked for.
    fn reusable(&self) -> bool {
        #[cfg(unix)]
        {
            let fd = self.fd.lock().unwrap_or_else(|p| p.into_inner());
            let Some(fd) = *fd else { return false };
            let mut byte = 0u8;
            // SAFETY: a one-byte peek into a local buffer on a socket this state keeps open
            // (the lock is held, and the socket clears it before closing).
            let n = unsafe {
                libc::recv(
                    fd,
                    (&mut byte as *mut u8).cast(),
                    1,
                    libc::MSG_PEEK | libc::MSG_DONTWAIT,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                return e.kind() == io::ErrorKind::WouldBlock;
            }
            false // 0: the server closed it; > 0: bytes nobody asked for
        }
        #[cfg(not(unix))]
        true
    }
}

/// What the kernel says of a TCP connection (Linux `TCP_INFO`).
#[derive(Debug, Clone, Copy)]
struct TcpFacts {
    /// The server's FIN has arrived (the socket left ESTABLISHED for CLOSE_WAIT or beyond).
    fin_arrived: bool,
    /// The connection was reset (TCP_CLOSE).
    reset: bool,
    /// Our bytes the server has acknowledged (`tcpi_bytes_acked`, Linux 4.1+).
    bytes_acked: Option<u64>,
}

/// The head of Linux's `struct tcp_info` as far as `tcpi_bytes_received` (uapi/linux/tcp.h):
/// eight one-byte fields, 24 `__u32`, then `__u64`s. libc's struct stops before these.
#[cfg(target_os = "linux")]
#[repr(C)]
#[derive(Default)]
struct TcpInfoHead {
    state: u8,
    bytes: [u8; 7],
    words: [u32; 24],
    pacing_rate: u64,
    max_pacing_rate: u64,
    bytes_acked: u64,
    bytes_received: u64,
}

#[cfg(target_os = "linux")]
fn tcp_facts(fd: std::os::fd::RawFd) -> Option<TcpFacts> {
    const TCP_ESTABLISHED: u8 = 1;
    const TCP_CLOSE: u8 = 7;
    let mut info = TcpInfoHead::default();
    let mut len = std::mem::size_of::<TcpInfoHead>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into a local struct of that size.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut TcpInfoHead).cast(),
            &mut len,
        )
    };
    if rc != 0 || len < 1 {
        return None;
    }
    let acked_end = std::mem::offset_of!(TcpInfoHead, bytes_acked) + std::mem::size_of::<u64>();
    Some(TcpFacts {
        fin_arrived: info.state != TCP_ESTABLISHED,
        reset: info.state == TCP_CLOSE,
        bytes_acked: (len as usize >= acked_end).then_some(info.bytes_acked),
    })
}

/// How long a request whose connection met the server's FIN may wait for the kernel's verdict
/// on its bytes (the reset comes one round trip after them).
const VERDICT_WAIT: Duration = Duration::from_millis(50);

/// An HTTP/1.1 connection idle in the pool.
struct Idle {
    send: http1::SendRequest<Full<Bytes>>,
    state: Arc<ConnState>,
    since: Instant,
}

/// A connection the pool hands out.
enum Conn {
    H1(http1::SendRequest<Full<Bytes>>),
    H2(http2::SendRequest<Full<Bytes>>),
}

#[derive(Default)]
struct Pool {
    /// Idle HTTP/1.1 connections per origin (`scheme://authority`), most recently used last.
    idle: HashMap<String, Vec<Idle>>,
    /// The one HTTP/2 connection per origin, shared by every request to it.
    h2: HashMap<String, (http2::SendRequest<Full<Bytes>>, Arc<ConnState>)>,
}

struct Inner {
    connector: Connector,
    h2_prior: bool,
    pool: Mutex<Pool>,
    /// Opens of an origin's HTTP/2 connection wait on each other, so concurrent first requests
    /// share one connection.
    h2_opening: tokio::sync::Mutex<()>,
    /// TLS negotiated HTTP/1.1 once: no need to wait for one another's opens any more.
    alpn_h1: std::sync::atomic::AtomicBool,
    /// What the server does after a reply, learnt as the run goes: a request rode a reused
    /// connection and was answered (it keeps connections alive), or a connection was closed
    /// within [`CLOSES_AFTER_REPLY`] of its reply (it closes after each; never reused again).
    kept_alive: std::sync::atomic::AtomicBool,
    closes_after_reply: std::sync::atomic::AtomicBool,
}

/// Until the server is seen to keep a connection alive, a connection goes back to the pool only
/// this long after its reply ended, and only if it is still open then: a server that closes
/// after every reply (llama-server does, 17–140 µs later; a test server on a loaded machine,
/// a few ms) has closed it by then, instead of the next request racing the close into a
/// socket about to be gone. The wait follows the attempt's last timestamp, so no measured time
/// holds it; it is paid until one reused connection has been answered.
const SETTLE: Duration = Duration::from_millis(10);

/// A connection the server closed this soon after its reply says the server closes after
/// each (an idle timeout is seconds).
const CLOSES_AFTER_REPLY: Duration = Duration::from_millis(500);

/// The pooled client with the run's connection policy.
#[derive(Clone)]
pub struct Transport {
    inner: Arc<Inner>,
}

/// A response head and what the socket saw of it.
pub struct Sent {
    pub response: hyper::Response<Incoming>,
    /// The first response byte (HTTP/1.1: the socket read; HTTP/2: the decoded head, as
    /// streams share one socket).
    pub first_byte: Instant,
    /// How many times the request went out again after it provably never reached the server.
    pub resent: u32,
    /// The request went out on a connection opened for it (its times include the connect).
    pub new_connection: bool,
    /// The connection, to hand back once the body has been read to its end.
    pub lease: Lease,
    /// The connection's reads as the request went out (see [`ConnState::lateness`]).
    pub cursor: RxCursor,
    /// HTTP/1.1: when the request's first byte was handed to the kernel (stamped just before
    /// that write). None over HTTP/2, whose streams share one connection's writes.
    pub request_out: Option<Instant>,
}

/// Why no response head came, as a fixed phrase for the trace.
pub struct SendError {
    pub class: &'static str,
    pub resent: u32,
    /// A connection was opened for the request (or tried).
    pub new_connection: bool,
}

/// The connection one response is riding on. [`Lease::give_back`] returns it to the pool once
/// its body was read to the end; dropped instead, the connection is closed (a response cut off
/// leaves it in no state to reuse).
pub struct Lease {
    origin: String,
    conn: Option<(http1::SendRequest<Full<Bytes>>, Arc<ConnState>)>,
    transport: Option<Arc<Inner>>,
    state: Arc<ConnState>,
    /// The reply let the connection carry another request ([`keeps_alive`]).
    keep: bool,
}

impl Lease {
    /// The connection's state (its reads' receive times, for the timing error).
    pub fn state(&self) -> &Arc<ConnState> {
        &self.state
    }

    /// Back into the pool, as soon as hyper says the connection can take the next request
    /// (the body must have been read to its end first). HTTP/2 streams need nothing.
    pub async fn give_back(mut self) {
        let (Some((mut send, state)), Some(inner), true) =
            (self.conn.take(), self.transport.take(), self.keep)
        else {
            return;
        };
        match tokio::time::timeout(GIVE_BACK_TIMEOUT, send.ready()).await {
            Ok(Ok(())) => {
                let since = Instant::now();
                if inner.closes_after_reply.load(Ordering::Relaxed) {
                    return;
                }
                if !inner.kept_alive.load(Ordering::Relaxed) {
                    // Here, after the attempt's times are fixed, not before the next request:
                    // the wait is never inside a measured time.
                    tokio::time::sleep(SETTLE).await;
                    if send.is_closed() || !state.reusable() {
                        inner.closes_after_reply.store(true, Ordering::Relaxed);
                        return;
                    }
                }
                let mut pool = inner.pool.lock().unwrap_or_else(|p| p.into_inner());
                pool.idle
                    .entry(std::mem::take(&mut self.origin))
                    .or_default()
                    .push(Idle { send, state, since });
            }
            // Closed by the server as its reply ended, though the reply said keep-alive: it
            // closes after each reply (llama-server does), so none is reused from now on.
            Ok(Err(_)) => inner.closes_after_reply.store(true, Ordering::Relaxed),
            Err(_) => {}
        }
    }
}

/// Where the connection a request is riding on can be seen while the request is under way: a
/// first-token timeout reads the first byte of a head still trickling in, and whether a
/// connection was opened for it (so an attempt cut off in its connect still says so).
#[derive(Default)]
pub struct ConnWatch {
    state: Mutex<Option<Arc<ConnState>>>,
    opened: std::sync::atomic::AtomicBool,
}

impl ConnWatch {
    /// The first byte of an answer, if one came on the request's connection.
    pub fn first_byte(&self) -> Option<Instant> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|c| c.first_byte())
    }

    /// A connection was opened (or its opening began) for the request.
    pub fn opened(&self) -> bool {
        self.opened.load(Ordering::Relaxed)
    }

    fn riding(&self, state: &Arc<ConnState>) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(state.clone());
    }

    fn opening(&self) {
        self.opened.store(true, Ordering::Relaxed);
    }
}

/// Whether a reply lets its connection carry another request (RFC 9112 §9.3): not when it
/// says `Connection: close`, nor an HTTP/1.0 reply that does not say `keep-alive`.
fn keeps_alive(response: &hyper::Response<Incoming>) -> bool {
    keeps_alive_parts(response.version(), response.headers())
}

fn keeps_alive_parts(version: hyper::Version, headers: &hyper::HeaderMap) -> bool {
    let has = |token: &str| {
        headers
            .get_all(hyper::header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    };
    if has("close") {
        return false;
    }
    version != hyper::Version::HTTP_10 || has("keep-alive")
}

fn origin(uri: &Uri) -> String {
    format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("http"),
        uri.authority().map(|a| a.as_str()).unwrap_or("")
    )
}

/// A connection request as the connector takes it (host, port, TLS).
fn target(uri: &Uri) -> Uri {
    let mut parts = hyper::http::uri::Parts::default();
    parts.scheme = uri.scheme().cloned();
    parts.authority = uri.authority().cloned();
    parts.path_and_query = Some(hyper::http::uri::PathAndQuery::from_static("/"));
    Uri::from_parts(parts).unwrap_or_else(|_| uri.clone())
}

impl Transport {
    pub fn new(options: &Options) -> Result<Transport, String> {
        let tls = if options.https {
            Some(tls_config(options)?)
        } else {
            None
        };
        let h2_prior = options.protocol == Protocol::Http2PriorKnowledge;
        let connector = Connector {
            tls,
            connect_timeout: options.connect_timeout,
            h2: h2_prior,
        };
        Ok(Transport {
            inner: Arc::new(Inner {
                connector,
                h2_prior,
                pool: Mutex::default(),
                h2_opening: tokio::sync::Mutex::new(()),
                alpn_h1: std::sync::atomic::AtomicBool::new(false),
                kept_alive: std::sync::atomic::AtomicBool::new(false),
                closes_after_reply: std::sync::atomic::AtomicBool::new(false),
            }),
        })
    }

    /// The server was seen closing a connection right after its reply (see [`SETTLE`]).
    pub fn closes_after_reply(&self) -> bool {
        self.inner.closes_after_reply.load(Ordering::Relaxed)
    }

    /// Opens connections to `uri`'s origin until `n` are idle in the pool (HTTP/2: one), so the
    /// requests that follow pay no connect. Returns how many are open; stops at the first
    /// connection that fails (the measured phase then meets the same failure itself).
    pub async fn warm(&self, uri: &Uri, n: usize) -> usize {
        let key = origin(uri);
        loop {
            let have = {
                let mut pool = self.inner.pool.lock().unwrap_or_else(|p| p.into_inner());
                pool.h2.retain(|_, (send, _)| !send.is_closed());
                if pool.h2.contains_key(&key) {
                    return 1;
                }
                let idle = pool.idle.entry(key.clone()).or_default();
                idle.retain(|c| !c.send.is_closed() && c.since.elapsed() < POOL_IDLE_TIMEOUT);
                idle.len()
            };
            if have >= n {
                return have;
            }
            match self.open(uri).await {
                Ok((Conn::H1(send), state)) => {
                    let mut pool = self.inner.pool.lock().unwrap_or_else(|p| p.into_inner());
                    pool.idle.entry(key.clone()).or_default().push(Idle {
                        send,
                        state,
                        since: Instant::now(),
                    });
                }
                Ok((Conn::H2(send), state)) => {
                    let mut pool = self.inner.pool.lock().unwrap_or_else(|p| p.into_inner());
                    pool.h2.insert(key.clone(), (send, state));
                    return 1;
                }
                Err(_) => return have,
            }
        }
    }

    /// A new connection, handshaken and driven by its own task.
    async fn open(
        &self,
        uri: &Uri,
    ) -> Result<(Conn, Arc<ConnState>), Box<dyn std::error::Error + Send + Sync>> {
        let io = self.inner.connector.connect(&target(uri)).await?;
        let state = io.inner().state.clone();
        if io.inner().h2 {
            let (send, conn) = http2::Builder::new(TokioExecutor::new())
                .handshake(io)
                .await?;
            tokio::spawn(conn);
            Ok((Conn::H2(send), state))
        } else {
            let (send, conn) = http1::Builder::new().handshake(io).await?;
            tokio::spawn(conn);
            Ok((Conn::H1(send), state))
        }
    }

    /// A connection for one request: a live idle one, the origin's HTTP/2 one, or a new one
    /// (true when new).
    async fn checkout(
        &self,
        uri: &Uri,
        watch: &ConnWatch,
    ) -> Result<(Conn, Arc<ConnState>, bool), Box<dyn std::error::Error + Send + Sync>> {
        let key = origin(uri);
        loop {
            let found = {
                let mut pool = self.inner.pool.lock().unwrap_or_else(|p| p.into_inner());
                match pool.h2.get(&key) {
                    Some((send, state)) if !send.is_closed() => {
                        return Ok((Conn::H2(send.clone()), state.clone(), false))
                    }
                    Some(_) => {
                        pool.h2.remove(&key);
                    }
                    None => {}
                }
                pool.idle.get_mut(&key).and_then(Vec::pop)
            };
            match found {
                Some(idle) if self.inner.closes_after_reply.load(Ordering::Relaxed) => drop(idle),
                Some(idle) => {
                    if idle.since.elapsed() < POOL_IDLE_TIMEOUT
                        && !idle.send.is_closed()
                        && idle.state.reusable()
                    {
                        return Ok((Conn::H1(idle.send), idle.state, false));
                    }
                    // Closed by the server, timed out, or not clean: dropped, nothing sent on it.
                    if idle.since.elapsed() < CLOSES_AFTER_REPLY {
                        self.inner.closes_after_reply.store(true, Ordering::Relaxed);
                    }
                }
                None => break,
            }
        }
        if self.inner.h2_prior
            || (self.inner.connector.tls.is_some() && !self.inner.alpn_h1.load(Ordering::Relaxed))
        {
            // Possibly HTTP/2: one opens at a time, and a second waiter finds the first's.
            let _opening = self.inner.h2_opening.lock().await;
            if let Some((send, state)) = self
                .inner
                .pool
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .h2
                .get(&key)
            {
                if !send.is_closed() {
                    return Ok((Conn::H2(send.clone()), state.clone(), false));
                }
            }
            watch.opening();
            let (conn, state) = self.open(uri).await?;
            match &conn {
                Conn::H2(send) => {
                    self.inner
                        .pool
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .h2
                        .insert(key, (send.clone(), state.clone()));
                }
                // The server chose HTTP/1.1: later connections open side by side.
                Conn::H1(_) => self.inner.alpn_h1.store(true, Ordering::Relaxed),
            }
            return Ok((conn, state, true));
        }
        watch.opening();
        let (conn, state) = self.open(uri).await?;
        Ok((conn, state, true))
    }

    /// Sends the request, resending it only while it provably never reached the server.
    pub async fn send(
        &self,
        make: impl Fn() -> hyper::Request<Full<Bytes>>,
        watch: &ConnWatch,
    ) -> Result<Sent, SendError> {
        let mut resent = 0;
        let mut new_connection = false;
        loop {
            let mut request = make();
            let uri = request.uri().clone();
            let (conn, state, fresh) = match self.checkout(&uri, watch).await {
                Ok(c) => c,
                Err(e) => {
                    let class = request_error_class(e.as_ref(), None, self.inner.h2_prior, true);
                    return Err(SendError {
                        class,
                        resent,
                        new_connection: true,
                    });
                }
            };
            new_connection |= fresh;
            watch.riding(&state);
            let key = origin(&uri);
            // Where the connection's reads stand as this request goes out.
            let cursor = state.cursor_now();
            let result: Result<std::convert::Infallible, (hyper::Error, bool)> = match conn {
                Conn::H1(mut send) => {
                    set_origin_form(&mut request);
                    if send.ready().await.is_err() {
                        // Closed before anything was written: another connection, a bounded
                        // number of times (a server that closes every connection at once would
                        // otherwise be reconnected to for ever).
                        if resent < MAX_RESENDS {
                            resent += 1;
                            continue;
                        }
                        return Err(SendError {
                            class: "connection closed before the request could be written",
                            resent,
                            new_connection,
                        });
                    }
                    match send.try_send_request(request).await {
                        Ok(response) => {
                            let first_byte = state
                                .io()
                                .first_read
                                .unwrap_or_else(Instant::now)
                                .min(Instant::now());
                            // A reply that closes its connection leaves nothing to pool (the
                            // sender stays with the lease until the body is read).
                            let keep = keeps_alive(&response);
                            if !fresh {
                                self.inner.kept_alive.store(true, Ordering::Relaxed);
                            }
                            let lease = Lease {
                                origin: key,
                                conn: Some((send, state.clone())),
                                transport: Some(self.inner.clone()),
                                state,
                                keep,
                            };
                            let request_out = lease.state.io().request_out;
                            return Ok(Sent {
                                response,
                                first_byte,
                                resent,
                                new_connection,
                                lease,
                                cursor,
                                request_out,
                            });
                        }
                        Err(mut e) => {
                            // Never written: hyper gave the request back. Sent again, boundedly.
                            if e.take_message().is_some() && resent < MAX_RESENDS {
                                resent += 1;
                                continue;
                            }
                            Err((e.into_error(), false))
                        }
                    }
                }
                Conn::H2(mut send) => match send.try_send_request(request).await {
                    Ok(response) => {
                        let lease = Lease {
                            origin: key,
                            conn: None,
                            transport: None,
                            state,
                            keep: true,
                        };
                        return Ok(Sent {
                            response,
                            first_byte: Instant::now(),
                            resent,
                            new_connection,
                            lease,
                            cursor,
                            request_out: None,
                        });
                    }
                    Err(mut e) => {
                        if e.take_message().is_some() && resent < MAX_RESENDS {
                            self.inner
                                .pool
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .h2
                                .remove(&key);
                            resent += 1;
                            continue;
                        }
                        Err((e.into_error(), true))
                    }
                },
            };
            let Err((e, h2)) = result;
            // Provably never received: HTTP/2 refused the stream, or (HTTP/1.1) on a reused
            // connection a write failed before the request was out whole and no byte answered,
            // or the kernel shows the server had closed before reading it (see the module doc).
            let never_received = if h2 {
                h2_refused(&e)
            } else {
                let io = state.io();
                (!fresh && io.write_failed && io.read_since_write == 0)
                    || state.provably_unread(VERDICT_WAIT).await
            };
            let io = state.io();
            if !h2 && !fresh && io.read_since_write == 0 {
                // Closed under a request right after the previous reply: it closes after each.
                self.inner.closes_after_reply.store(true, Ordering::Relaxed);
            }
            if never_received && resent < MAX_RESENDS {
                resent += 1;
                continue;
            }
            let class = if !h2
                && !fresh
                && io.read_since_write == 0
                && !io.write_failed
                && hyper_closed_early(&e)
            {
                "the server closed its kept-alive connection after the request was sent, with no answer (not resent: it may have received it)"
            } else {
                request_error_class(&e, Some(&io), self.inner.h2_prior, false)
            };
            return Err(SendError {
                class,
                resent,
                new_connection,
            });
        }
    }
}

fn hyper_closed_early(e: &(dyn std::error::Error + 'static)) -> bool {
    chain(e)
        .iter()
        .filter_map(|s| s.downcast_ref::<hyper::Error>())
        .any(|h| h.is_incomplete_message())
        || matches!(
            io_class(e),
            Some("connection reset" | "connection closed early" | "connection aborted")
        )
}

/// HTTP/1.1 requests carry the path only (the connection names the host); `Host` is set from
/// the URL, as a browser would.
fn set_origin_form(request: &mut hyper::Request<Full<Bytes>>) {
    let uri = request.uri().clone();
    if let Some(authority) = uri.authority() {
        if let Ok(host) = hyper::header::HeaderValue::from_str(authority.as_str()) {
            request
                .headers_mut()
                .entry(hyper::header::HOST)
                .or_insert(host);
        }
    }
    let path = uri
        .path_and_query()
        .cloned()
        .unwrap_or_else(|| hyper::http::uri::PathAndQuery::from_static("/"));
    *request.uri_mut() = Uri::from(path);
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

    /// Reads what is left (at most `limit` bytes, for at most `within`), so the connection can
    /// carry the next request; true when the body ended.
    pub async fn drain(&mut self, limit: usize, within: Duration) -> bool {
        let mut read = 0;
        let rest = async {
            loop {
                match self.chunk().await {
                    Ok(None) => return true,
                    Ok(Some(b)) => {
                        read += b.len();
                        if read > limit {
                            return false;
                        }
                    }
                    Err(_) => return false,
                }
            }
        };
        tokio::time::timeout(within, rest).await.unwrap_or(false)
    }
}

fn tls_config(options: &Options) -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(path) = &options.ca_cert {
        let name = path.display();
        let pem = std::fs::read(path).map_err(|e| format!("cannot read --ca-cert {name}: {e}"))?;
        let mut added = 0;
        for (i, cert) in CertificateDer::pem_slice_iter(&pem).enumerate() {
            let cert = cert.map_err(|e| {
                format!(
                    "--ca-cert {name}: certificate {} is not valid PEM: {e}",
                    i + 1
                )
            })?;
            roots.add(cert).map_err(|e| {
                format!(
                    "--ca-cert {name}: certificate {} cannot be a trusted root: {e}",
                    i + 1
                )
            })?;
            added += 1;
        }
        if added == 0 {
            return Err(format!(
                "--ca-cert {name} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
            ));
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

/// A connect that failed, kept whole so its cause can be named.
#[derive(Debug)]
struct ConnectError(io::Error);

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "connect failed: {}", self.0)
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl Connector {
    async fn connect(&self, uri: &Uri) -> Result<TokioIo<Metered>, ConnectError> {
        let https = uri.scheme_str() == Some("https");
        let host = uri
            .host()
            .unwrap_or_default()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let connect = TcpStream::connect((host.as_str(), port));
        let tcp = match self.connect_timeout {
            Some(limit) => tokio::time::timeout(limit, connect)
                .await
                .map_err(|_| {
                    ConnectError(io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))
                })?
                .map_err(ConnectError)?,
            None => connect.await.map_err(ConnectError)?,
        };
        tcp.set_nodelay(true).map_err(ConnectError)?;
        let state: Arc<ConnState> = Arc::default();
        let tcp = TimedTcp::new(tcp, state.clone());
        let (stream, h2) = match (&self.tls, https) {
            (Some(config), true) => {
                let name = rustls::pki_types::ServerName::try_from(host)
                    .map_err(|e| ConnectError(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
                let tls = tokio_rustls::TlsConnector::from(config.clone())
                    .connect(name, tcp)
                    .await
                    .map_err(ConnectError)?;
                let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
                (Stream::Tls(Box::new(tls)), h2)
            }
            _ => (Stream::Plain(tcp), self.h2),
        };
        Ok(TokioIo::new(Metered { stream, state, h2 }))
    }
}

/// A TCP socket whose reads carry the kernel's receive time of their first byte (Linux,
/// SO_TIMESTAMPNS), noted in the connection's state; elsewhere a plain socket.
struct TimedTcp {
    tcp: TcpStream,
    state: Arc<ConnState>,
    stamped: bool,
}

impl TimedTcp {
    fn new(tcp: TcpStream, state: Arc<ConnState>) -> TimedTcp {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            *state.fd.lock().unwrap_or_else(|p| p.into_inner()) = Some(tcp.as_raw_fd());
        }
        let stamped = enable_receive_timestamps(&tcp);
        TimedTcp {
            tcp,
            state,
            stamped,
        }
    }
}

impl Drop for TimedTcp {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            // A request met the server's FIN with no answer: keep the socket for the verdict
            // (before the number is cleared, so a reader always finds one or the other).
            let io = self.state.io();
            if io.fin_unanswered && io.acked_before.is_some() {
                use std::os::fd::AsFd;
                if let Ok(held) = self.tcp.as_fd().try_clone_to_owned() {
                    *self.state.held.lock().unwrap_or_else(|p| p.into_inner()) = Some(held);
                }
            }
            *self.state.fd.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
    }
}

#[cfg(target_os = "linux")]
fn enable_receive_timestamps(tcp: &TcpStream) -> bool {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: setsockopt on an open socket with a pointer to a local int of the stated size.
    unsafe {
        libc::setsockopt(
            tcp.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn enable_receive_timestamps(_: &TcpStream) -> bool {
    false
}

/// One `recvmsg` into `buf` with the receive time its control message carries (ns since the
/// epoch): the kernel's stamp of the last buffer the call copied from.
#[cfg(target_os = "linux")]
fn recv_stamped(
    fd: std::os::fd::RawFd,
    buf: &mut [std::mem::MaybeUninit<u8>],
) -> io::Result<(usize, Option<i64>)> {
    let mut control = [0u64; 16];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is plain data; every pointer set below is valid for the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: recvmsg into `buf` (its length given) and the local control buffer.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n == 0 {
        return Ok((0, None));
    }
    let mut stamp = None;
    // SAFETY: walking the control messages the kernel wrote into `control`.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
            {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const libc::timespec);
                stamp = Some(ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64);
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok((n as usize, stamp))
}

/// One read: the first byte alone, whose stamp is the oldest byte's (a one-byte read copies
/// from the oldest buffer waiting), then the rest, whose stamp is the newest's. Returns the
/// bytes read and both times.
#[cfg(target_os = "linux")]
fn read_stamped(
    fd: std::os::fd::RawFd,
    buf: &mut [std::mem::MaybeUninit<u8>],
) -> io::Result<(usize, Option<RxStamp>)> {
    if buf.is_empty() {
        return Ok((0, None));
    }
    let (n, oldest) = recv_stamped(fd, &mut buf[..1])?;
    if n == 0 {
        return Ok((0, None));
    }
    let mut total = 1usize;
    let mut newest = oldest;
    if buf.len() > 1 {
        // An error or nothing more here is the next read's business: one byte was read.
        if let Ok((m, stamp)) = recv_stamped(fd, &mut buf[1..]) {
            total += m;
            if m > 0 {
                newest = stamp.or(newest);
            }
        }
    }
    Ok((
        total,
        oldest.map(|oldest| RxStamp {
            oldest,
            newest: newest.unwrap_or(oldest).max(oldest),
        }),
    ))
}

impl AsyncRead for TimedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        #[cfg(target_os = "linux")]
        if this.stamped {
            use std::os::fd::AsRawFd;
            loop {
                match this.tcp.poll_read_ready(cx) {
                    Poll::Ready(Ok(())) => {}
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => return Poll::Pending,
                }
                let fd = this.tcp.as_raw_fd();
                // SAFETY: `read_stamped` writes only initialised bytes, and we mark as filled
                // exactly the count it returns.
                let unfilled = unsafe { buf.unfilled_mut() };
                match this
                    .tcp
                    .try_io(tokio::io::Interest::READABLE, || read_stamped(fd, unfilled))
                {
                    Ok((n, stamp)) => {
                        // SAFETY: the first `n` bytes of the unfilled part were just written.
                        unsafe { buf.assume_init(n) };
                        buf.advance(n);
                        if let Some(at) = stamp {
                            this.state.received_at(at);
                        }
                        return Poll::Ready(Ok(()));
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
        }
        let _ = this.stamped;
        Pin::new(&mut this.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for TimedTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, data)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}

enum Stream {
    Plain(TimedTcp),
    Tls(Box<tokio_rustls::client::TlsStream<TimedTcp>>),
}

/// A connection's socket, noting each write and timestamping each read as it is handed over.
pub struct Metered {
    stream: Stream,
    state: Arc<ConnState>,
    h2: bool,
}

impl AsyncRead for Metered {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
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
            } else if buf.remaining() > 0 && !this.h2 {
                this.state.read_end();
            }
        }
        poll
    }
}

impl Metered {
    /// HTTP/2 multiplexes its streams, so a FIN there is the connection's affair (hyper's).
    fn before_write(&self) -> io::Result<()> {
        if self.h2 {
            return Ok(());
        }
        self.state.before_write()
    }
}

impl AsyncWrite for Metered {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Err(e) = this.before_write() {
            return this.state.noted(Poll::Ready(Err(e)));
        }
        let poll = match &mut this.stream {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, data),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, data),
        };
        this.state.noted(poll)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Err(e) = this.before_write() {
            return this.state.noted(Poll::Ready(Err(e)));
        }
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

/// The detail of a request the recorder could not send: its own failure, not the server's.
pub const OUT_OF_FILES: &str =
    "the recorder ran out of open files (not a server failure): raise `ulimit -n`";

/// Every error in a chain, looking inside I/O errors (whose `source` skips the wrapped error).
fn chain<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Vec<&'a (dyn std::error::Error + 'static)> {
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
                return Some(OUT_OF_FILES);
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
    let rustls = chain(e)
        .into_iter()
        .find_map(|s| s.downcast_ref::<rustls::Error>())?;
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
fn request_error_class(
    e: &(dyn std::error::Error + 'static),
    io: Option<&IoState>,
    h2_prior: bool,
    connecting: bool,
) -> &'static str {
    if let Some(class) = tls_class(e) {
        return class;
    }
    if chain_mentions(e, &["dns error", "failed to lookup"]) {
        return "DNS lookup failed";
    }
    let received = io.map_or(0, |io| io.read_since_write);
    let head = io
        .map(|io| &io.head[..(io.read_since_write as usize).min(io.head.len())])
        .unwrap_or(&[]);
    if h2_prior {
        let conn_head = io
            .map(|io| &io.conn_head[..(io.conn_read as usize).min(io.conn_head.len())])
            .unwrap_or(&[]);
        if conn_head.starts_with(b"HTTP/1") {
            return "the server answered in HTTP/1.x to HTTP/2 prior knowledge: drop --http2-prior-knowledge";
        }
        if !conn_head.is_empty() && is_h2(e) {
            return "not an HTTP/2 reply to HTTP/2 prior knowledge: does the server speak h2c? (drop --http2-prior-knowledge)";
        }
        // The server closed while our preface was still going out, so its answer (an HTTP/1.x
        // 400, from a server that speaks only HTTP/1.1) was never read: say what is likely.
        if io.is_some_and(|io| io.conn_read == 0) && !connecting {
            return "connection closed during the HTTP/2 prior-knowledge handshake, before any reply: an HTTP/1-only server does that; drop --http2-prior-knowledge";
        }
    }
    if received > 0 && !b"HTTP/".starts_with(&head[..head.len().min(5)]) {
        return "the reply is not HTTP (its first bytes are not a status line)";
    }
    let hyper_error = chain(e)
        .into_iter()
        .find_map(|s| s.downcast_ref::<hyper::Error>());
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
    } else if connecting {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernel_tells_a_fin_that_came_before_a_write_and_what_the_server_acknowledged() {
        use std::io::{Read, Write};
        use std::os::fd::AsRawFd;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let open = tcp_facts(client.as_raw_fd()).expect("TCP_INFO on Linux");
        assert!(!open.fin_arrived && !open.reset);
        let acked = open.bytes_acked.expect("tcpi_bytes_acked (Linux 4.1+)");
        client.write_all(b"first request").unwrap();
        let mut got = [0u8; 13];
        server.read_exact(&mut got).unwrap();
        drop(server); // read everything, then closed: a FIN that acknowledges the 13 bytes
        std::thread::sleep(Duration::from_millis(50));
        let closed = tcp_facts(client.as_raw_fd()).unwrap();
        assert!(closed.fin_arrived, "the FIN is in before any further write");
        assert_eq!(
            closed.bytes_acked,
            Some(acked + 13),
            "what the server's kernel took"
        );
        // A write now reaches a socket no program holds: the kernel answers with a reset and
        // acknowledges none of it.
        client.write_all(b"second").unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let reset = tcp_facts(client.as_raw_fd()).unwrap();
        assert!(reset.reset, "{reset:?}");
        assert_eq!(
            reset.bytes_acked,
            Some(acked + 13),
            "none of the second request was acknowledged"
        );
    }

    #[test]
    fn a_reply_that_closes_its_connection_is_not_kept() {
        let reply = |version, connection: Option<&str>| {
            let mut r = hyper::Response::builder().version(version);
            if let Some(c) = connection {
                r = r.header(hyper::header::CONNECTION, c);
            }
            r.body(()).unwrap()
        };
        let keeps = |r: hyper::Response<()>| keeps_alive_parts(r.version(), r.headers());
        assert!(keeps(reply(hyper::Version::HTTP_11, None)));
        assert!(keeps(reply(hyper::Version::HTTP_11, Some("keep-alive"))));
        assert!(!keeps(reply(hyper::Version::HTTP_11, Some("Close"))));
        assert!(!keeps(reply(
            hyper::Version::HTTP_11,
            Some("upgrade, close")
        )));
        assert!(!keeps(reply(hyper::Version::HTTP_10, None)));
        assert!(keeps(reply(hyper::Version::HTTP_10, Some("Keep-Alive"))));
    }
}
