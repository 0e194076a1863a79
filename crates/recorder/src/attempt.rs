//! One attempt: send the streaming request, timestamp everything that arrives on the run's
//! clock, and classify how it ended.
//!
//! Each read is timestamped the moment it is handed over, before any parsing, and every SSE
//! event completed by that read gets that time. How late that time is (the recorder's own
//! error) is measured per event against the kernel's receive time of the read that brought
//! the event's last bytes: its newest byte when the event ends the read (known once the next
//! body frame needed a new read), else its oldest. TTFT is the first event that carried non-empty
//! output (content, reasoning or a tool call); a role-only first chunk is a first byte, not a token.
//!
//! A complete success is an HTTP 2xx event stream in which a normal finish reason arrived
//! before `[DONE]` or the end of the body; `[DONE]` or the end without one, or an abort-type
//! finish reason, is `stream_broken`. What one attempt keeps is bounded: at most
//! [`MAX_EVENTS`] event times (the rest are counted, not listed) and [`MAX_ANSWER_BYTES`] of
//! answer text for the rubric, so one endless stream can neither exhaust memory nor write a
//! trace line too long to read.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{
    HeaderValue, ACCEPT, ACCEPT_ENCODING, AUTHORIZATION, CONTENT_TYPE, USER_AGENT,
};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;
use tracelab_core::{
    write, Attempt, Outcome, Phase, PromptSend, Quality, ReasoningStart, SessionTurn, StreamEvent,
};

use crate::clock::Clock;
use crate::openai::{identity, interpret, ChunkIdentity, Finish, Payload, Usage};
use crate::prompts::Rubric;
use crate::sse::{SseDecoder, SseEvent};
use crate::transport::{
    body_error_class, Body, ConnWatch, Lease, ReadLateness, RxCursor, Transport, OUT_OF_FILES,
};

/// Where and how requests are sent. The key lives only here, marked sensitive.
pub struct Endpoint {
    pub transport: Transport,
    pub url: hyper::Uri,
    pub auth: Option<HeaderValue>,
    pub timeout: Duration,
    pub first_token_timeout: Duration,
}

impl Endpoint {
    /// `auth` is the raw key, sent as a bearer token and never printed.
    pub fn new(
        transport: Transport,
        url: url::Url,
        key: Option<&str>,
        timeout: Duration,
        first_token_timeout: Duration,
    ) -> Result<Endpoint, String> {
        let auth = match key {
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    "the API key holds characters an HTTP header cannot carry; check the variable named by --api-key-env".to_string()
                })?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let url = url
            .as_str()
            .parse::<hyper::Uri>()
            .map_err(|_| "--base-url is not a URL an HTTP request can go to; expected something like http://localhost:8000/v1".to_string())?;
        Ok(Endpoint {
            transport,
            url,
            auth,
            timeout,
            first_token_timeout,
        })
    }

    fn request(&self, body: Bytes) -> hyper::Request<Full<Bytes>> {
        let mut request = hyper::Request::new(Full::new(body));
        *request.method_mut() = hyper::Method::POST;
        *request.uri_mut() = self.url.clone();
        let headers = request.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        // Without it a server may compress (RFC 9110: no Accept-Encoding means any coding),
        // and a compressed stream could not be timed event by event.
        headers.insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        headers.insert(
            USER_AGENT,
            HeaderValue::from_static(concat!("tracelab/", env!("CARGO_PKG_VERSION"))),
        );
        if let Some(auth) = &self.auth {
            headers.insert(AUTHORIZATION, auth.clone());
        }
        request
    }
}

/// One request to send.
pub struct Job {
    pub id: String,
    pub phase: Phase,
    /// When the schedule wanted it sent, from the run's origin.
    pub intended_ms: f64,
    pub body: Bytes,
    pub rubric: Option<Arc<Rubric>>,
    /// The request's `max_tokens`: the output count when the server stops on `length` without
    /// reporting usage.
    pub max_tokens: Option<u32>,
    /// Which prompt it sends, in which round, and whether that prompt went out before in this
    /// run (`cached_tokens` is filled in from the reply).
    pub prompt: Option<PromptSend>,
    /// A workload replay's request: the input and output tokens the file asked for, kept
    /// beside what the server reports serving.
    pub intended_tokens: Option<(u32, u32)>,
    /// The session turn it is (`record --sessions`; `cached_tokens` is filled in from the
    /// reply). Its reply is then kept in memory for the next turn ([`Measured::answer`]).
    pub session: Option<SessionTurn>,
}

/// The most stream events whose times one attempt lists. Beyond it events are counted
/// (`events_omitted`, `events_omitted_tokens`) but not listed, so an attempt line stays far
/// below the trace reader's 8 MiB line limit (an event is at most ~25 bytes of JSON).
pub const MAX_EVENTS: usize = 100_000;

/// The most answer text kept for the rubric; a longer answer is not judged (`not_evaluated`).
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// An attempt as measured, with the facts the core has no field for yet.
#[derive(Debug, Clone)]
pub struct Measured {
    pub attempt: Attempt,
    /// Half-open ranges of event indices whose output was reasoning (`reasoning_content`).
    pub reasoning_events: Vec<[usize; 2]>,
    pub reasoning_tokens: Option<u32>,
    /// Times the request went out again after it provably never reached the server.
    pub resent: u32,
    /// The request went out on a connection opened for it (its times include the connect).
    pub new_connection: bool,
    /// The recorder could not send it at all (it ran out of open files): the client's failure.
    pub not_sent: bool,
    /// How late the recorder's timestamp of the first token was against the kernel's receive
    /// time of its bytes (ms), and of every listed output event.
    pub first_token_lateness_ms: Option<f64>,
    pub event_lateness_ms: Vec<f32>,
    /// Output events after the first [`MAX_EVENTS`], counted but not listed, and their tokens.
    pub events_omitted: u64,
    pub events_omitted_tokens: u64,
    /// The model and `system_fingerprint` its first chunk named (for the header's runtime).
    pub identity: ChunkIdentity,
    /// The workload file's input and output tokens for this request (`--workload`).
    pub intended_tokens: Option<(u32, u32)>,
    /// A session turn's complete reply, for the next turn's history only: never written.
    pub answer: Option<String>,
}

impl Measured {
    /// The trace line: the core's attempt record plus `reasoning_events` / `reasoning_tokens`
    /// when there were any (fields the core's parser ignores).
    pub fn line(&self) -> String {
        let mut extra = Map::new();
        if !self.reasoning_events.is_empty() {
            extra.insert("reasoning_events".into(), json!(self.reasoning_events));
        }
        if let Some(n) = self.reasoning_tokens {
            extra.insert("reasoning_tokens".into(), Value::from(n));
        }
        if self.resent > 0 {
            extra.insert("resent".into(), Value::from(self.resent));
        }
        extra.insert("new_connection".into(), Value::from(self.new_connection));
        if self.not_sent {
            extra.insert("not_sent".into(), Value::from(true));
        }
        if let Some((input, output)) = self.intended_tokens {
            extra.insert("intended_input_tokens".into(), Value::from(input));
            extra.insert("intended_output_tokens".into(), Value::from(output));
        }
        if let Some(answer) = &self.answer {
            // The reply's fingerprint, not its text: which reply the next turn resent.
            extra.insert(
                "answer_sha256".into(),
                Value::from(crate::conversation::answer_sha256(answer)),
            );
        }
        if self.events_omitted > 0 {
            extra.insert("events_omitted".into(), Value::from(self.events_omitted));
            extra.insert(
                "events_omitted_tokens".into(),
                Value::from(self.events_omitted_tokens),
            );
        }
        write::attempt_line_with(&self.attempt, &extra)
    }
}

/// Sends `job` and measures it until it ends, times out or `cancel` fires.
pub async fn run(
    endpoint: &Endpoint,
    clock: &Clock,
    job: Job,
    cancel: &CancellationToken,
) -> Measured {
    let t0 = Instant::now();
    let job_body = job.body.clone();
    let mut m = Meter::new(t0, clock, job);
    let end_deadline = t0 + endpoint.timeout;
    let first_deadline = t0 + endpoint.first_token_timeout.min(endpoint.timeout);
    let sleep = tokio::time::sleep_until(first_deadline.into());
    tokio::pin!(sleep);

    let watch = ConnWatch::default();
    let sent = tokio::select! {
        biased;
        r = endpoint.transport.send(|| endpoint.request(job_body.clone()), &watch) => r,
        _ = &mut sleep => {
            // A head still trickling in has a first byte: keep it, and say what arrived.
            m.first_byte = watch.first_byte();
            m.new_connection = watch.opened();
            let detail = if m.first_byte.is_some() {
                "the response head was still arriving at the first-token timeout (its first byte came)"
            } else {
                "no response before the first-token timeout"
            };
            return m.end(Outcome::TimeoutBeforeFirstToken, Instant::now(), Some(detail));
        }
        _ = cancel.cancelled() => {
            m.new_connection = watch.opened();
            return m.end(Outcome::Cancelled, Instant::now(), None);
        }
    };
    let t_head = Instant::now();
    let sent = match sent {
        Ok(sent) => sent,
        Err(e) => {
            m.resent = e.resent;
            m.new_connection = e.new_connection;
            m.not_sent = e.class == OUT_OF_FILES;
            return m.end(Outcome::ConnectError, t_head, Some(e.class));
        }
    };
    m.resent = sent.resent;
    m.new_connection = sent.new_connection;
    // On a connection already open the request starts when its first byte goes to the kernel,
    // not when this task was first polled: under load a worker can wait milliseconds for a
    // thread between the two, and that wait is the recorder's, not the server's. A request
    // that opened its connection keeps the earlier start, so its connect stays inside its
    // times (`timing_includes_connect`).
    if let (false, Some(out)) = (sent.new_connection, sent.request_out) {
        m.t0 = out.max(m.t0);
    }
    m.first_byte = Some(sent.first_byte);
    let lease = sent.lease;
    let mut cursor = sent.cursor;
    let status = sent.response.status();
    if !status.is_success() {
        let measured = m.end(
            Outcome::HttpError {
                status: status.as_u16(),
            },
            t_head,
            None,
        );
        // An error's body is short: read it so the connection serves the next request.
        let mut body = Body(sent.response.into_body());
        if body.drain(64 * 1024, DRAIN_TIMEOUT).await {
            lease.give_back().await;
        }
        return measured;
    }
    if let Some(why) = not_an_event_stream(sent.response.headers()) {
        return m.end_owned(Outcome::StreamBroken, t_head, Some(why));
    }
    let mut response = Body(sent.response.into_body());
    let measured = stream(
        &mut m,
        &mut response,
        &lease,
        &mut cursor,
        &mut sleep,
        end_deadline,
        cancel,
    )
    .await;
    // A complete answer: read the body to its end (the chunked terminator after [DONE]) so its
    // connection serves the next request instead of closing. The attempt's times are already
    // fixed; this only decides whether the next one pays a connect.
    if measured.attempt.outcome.is_success() && response.drain(64 * 1024, DRAIN_TIMEOUT).await {
        lease.give_back().await;
    }
    measured
}

/// How long the end of a finished body may take to arrive before its connection is dropped.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(500);

/// Reads the event stream until the attempt ends.
async fn stream(
    m: &mut Meter<'_>,
    response: &mut Body,
    lease: &Lease,
    cursor: &mut RxCursor,
    sleep: &mut std::pin::Pin<&mut tokio::time::Sleep>,
    end_deadline: Instant,
    cancel: &CancellationToken,
) -> Measured {
    let mut decoder = SseDecoder::new();
    let mut events: Vec<SseEvent> = Vec::new();
    let mut on_end_deadline = false;
    loop {
        let read = tokio::select! {
            biased;
            r = response.chunk() => r,
            _ = sleep.as_mut() => {
                let now = Instant::now();
                return match (m.finished(), m.ttft) {
                    // The answer was complete; only the closing [DONE] never came.
                    (true, _) => {
                        let at = m.last_event.unwrap_or(now);
                        m.end(Outcome::Success, at, Some("no [DONE] or end of stream after finish_reason"))
                    }
                    (false, Some(_)) => m.end(Outcome::TimeoutAfterFirstToken, now, None),
                    (false, None) => m.end(Outcome::TimeoutBeforeFirstToken, now, None),
                };
            }
            _ = cancel.cancelled() => return m.end(Outcome::Cancelled, Instant::now(), None),
        };
        let t = Instant::now();
        let lateness = lease.state().lateness(cursor);
        // The previous frame's last event ended its read only if this frame needed a new one.
        m.settle_lateness(lateness.is_some_and(|l| l.new_read));
        m.chunk = ChunkNote {
            lateness,
            ..ChunkNote::default()
        };
        let at_end = match read {
            Ok(Some(bytes)) => {
                if let Err(e) = decoder.feed(&bytes, &mut events) {
                    return m.end(Outcome::StreamBroken, t, Some(e.class()));
                }
                m.chunk.ends_mid_event = decoder.mid_event();
                false
            }
            Ok(None) => {
                if let Err(e) = decoder.finish(&mut events) {
                    return m.end(Outcome::StreamBroken, t, Some(e.class()));
                }
                true
            }
            Err(e) => {
                return if m.finished() {
                    m.end(
                        Outcome::Success,
                        t,
                        Some("connection dropped after finish_reason"),
                    )
                } else {
                    m.end(Outcome::StreamBroken, t, Some(body_error_class(&e)))
                };
            }
        };
        m.chunk.events = events.len();
        for event in events.drain(..) {
            match m.on_event(&event, t) {
                Step::Continue => {}
                Step::Done if m.finished() => return m.end(Outcome::Success, t, None),
                Step::Done => {
                    let detail = if m.ttft.is_some() {
                        "[DONE] without a finish_reason: the answer was cut off"
                    } else {
                        "[DONE] without a finish_reason or any token: the request was interrupted"
                    };
                    return m.end(Outcome::StreamBroken, t, Some(detail));
                }
                Step::Broken(detail) => return m.end_owned(Outcome::StreamBroken, t, Some(detail)),
            }
        }
        if at_end {
            return if m.finished() {
                m.end(Outcome::Success, t, None)
            } else {
                m.end(
                    Outcome::StreamBroken,
                    t,
                    Some("stream ended before a finish_reason (and without [DONE])"),
                )
            };
        }
        if m.ttft.is_some() && !on_end_deadline {
            on_end_deadline = true;
            sleep.as_mut().reset(end_deadline.into());
        }
    }
}

enum Step {
    Continue,
    Done,
    Broken(String),
}

/// What has been seen of one attempt so far.
struct Meter<'a> {
    t0: Instant,
    clock: &'a Clock,
    job: Job,
    first_byte: Option<Instant>,
    ttft: Option<Instant>,
    /// The first reasoning and the first answer token (the course's TTFT), apart.
    first_reasoning: Option<Instant>,
    first_content: Option<Instant>,
    /// llama.cpp's `timings.cache_n`, when its final chunk carries it.
    cache_n: Option<u32>,
    identity: Option<ChunkIdentity>,
    last_event: Option<Instant>,
    events: Vec<StreamEvent>,
    reasoning_events: Vec<[usize; 2]>,
    /// Output events past [`MAX_EVENTS`] and their (estimated or known) tokens.
    events_omitted: u64,
    events_omitted_tokens: u64,
    /// Empty-content chunks (llama.cpp's byte tokens) not yet added to an event: each is one
    /// token, added to the next output event, or to the last one at the end.
    pending_empty: u32,
    usage: Option<Usage>,
    /// The finish reason seen, normal or not.
    finish: Option<Finish>,
    /// Every output event carried a cumulative `completion_tokens` (vLLM's continuous usage),
    /// so the tokens per event are known rather than estimated.
    per_event_usage: bool,
    last_completion_tokens: u32,
    /// The answer, kept in memory for the rubric and a session's next turn only.
    text: Option<String>,
    resent: u32,
    new_connection: bool,
    not_sent: bool,
    first_token_lateness_ms: Option<f64>,
    event_lateness_ms: Vec<f32>,
    /// The read being handled: how late its timestamp was, and what it carried.
    chunk: ChunkNote,
    /// Samples of the frame just handled whose choice between the read's newest and oldest
    /// byte waits for the next frame: hyper hands a read's frames over one at a time, so only
    /// the next frame's need for a new read shows that this one ended the read.
    pending: Vec<PendingSample>,
}

/// One output event's lateness, not yet settled ([`Meter::settle_lateness`]).
struct PendingSample {
    first_token: bool,
    late: ReadLateness,
    /// The event's end is the frame's end (no later event or partial event in it).
    ends_frame: bool,
}

#[derive(Default)]
struct ChunkNote {
    lateness: Option<ReadLateness>,
    /// Events the frame completed, and how many of them were handled so far.
    events: usize,
    handled: usize,
    /// The frame ended inside an event (its last bytes belong to one not yet complete).
    ends_mid_event: bool,
}

fn ms_between(from: Instant, to: Instant) -> f64 {
    to.saturating_duration_since(from).as_secs_f64() * 1000.0
}

impl<'a> Meter<'a> {
    fn new(t0: Instant, clock: &'a Clock, job: Job) -> Meter<'a> {
        let text = (job.rubric.is_some() || job.session.is_some()).then(String::new);
        Meter {
            t0,
            clock,
            job,
            first_byte: None,
            ttft: None,
            first_reasoning: None,
            first_content: None,
            cache_n: None,
            identity: None,
            last_event: None,
            events: Vec::new(),
            reasoning_events: Vec::new(),
            events_omitted: 0,
            events_omitted_tokens: 0,
            pending_empty: 0,
            usage: None,
            finish: None,
            per_event_usage: true,
            last_completion_tokens: 0,
            text,
            resent: 0,
            new_connection: false,
            not_sent: false,
            first_token_lateness_ms: None,
            event_lateness_ms: Vec::new(),
            chunk: ChunkNote::default(),
            pending: Vec::new(),
        }
    }

    /// One lateness sample per listed output event, the first token's apart, settled once the
    /// next frame shows whether this one ended its read.
    fn note_lateness(&mut self, first_token: bool) {
        let Some(late) = self.chunk.lateness else {
            return;
        };
        let ends_frame = self.chunk.handled == self.chunk.events && !self.chunk.ends_mid_event;
        self.pending.push(PendingSample {
            first_token,
            late,
            ends_frame,
        });
    }

    /// Settles the pending samples: against the read's newest byte for the event that ended
    /// both its frame and its read (`read_ended`), else against the read's oldest byte (an upper
    /// bound: the event's last byte came somewhere in the read, before any later bytes).
    fn settle_lateness(&mut self, read_ended: bool) {
        for p in std::mem::take(&mut self.pending) {
            let late = if p.ends_frame && read_ended {
                p.late.newest_ms
            } else {
                p.late.oldest_ms
            };
            if p.first_token {
                self.first_token_lateness_ms = Some(late);
            }
            self.event_lateness_ms.push(late as f32);
        }
    }

    /// A normal finish reason was seen (an abort ends the attempt when it arrives).
    fn finished(&self) -> bool {
        self.finish.as_ref().is_some_and(Finish::is_normal)
    }

    fn on_event(&mut self, event: &SseEvent, t: Instant) -> Step {
        self.chunk.handled += 1;
        let delta = match interpret(event.event.as_deref(), &event.data, self.text.as_mut()) {
            Payload::Done => return Step::Done,
            Payload::Error(class) => return Step::Broken(class),
            Payload::Malformed => {
                return Step::Broken("malformed SSE data (not a JSON chunk)".into())
            }
            Payload::Chunk(delta) => delta,
        };
        if self.identity.is_none() {
            self.identity = Some(identity(&event.data));
        }
        if delta.cache_n.is_some() {
            self.cache_n = delta.cache_n;
        }
        if self
            .text
            .as_ref()
            .is_some_and(|text| text.len() > MAX_ANSWER_BYTES)
        {
            self.text = None; // too long to judge: quality stays not_evaluated
        }
        if let Some(usage) = delta.usage {
            self.usage = Some(usage);
        }
        if delta.empty_content {
            self.pending_empty = self.pending_empty.saturating_add(1);
        }
        if delta.is_output() {
            let cumulative = delta.usage.and_then(|u| u.completion_tokens);
            let tokens = match cumulative {
                Some(c) if c > self.last_completion_tokens => {
                    let n = c - self.last_completion_tokens;
                    self.last_completion_tokens = c;
                    self.pending_empty = 0; // already inside the server's count
                    n
                }
                _ => {
                    self.per_event_usage = false;
                    std::mem::take(&mut self.pending_empty).saturating_add(1)
                }
            };
            let first_token = self.ttft.is_none();
            self.ttft.get_or_insert(t);
            if delta.reasoning {
                self.first_reasoning.get_or_insert(t);
            }
            if delta.content {
                self.first_content.get_or_insert(t);
            }
            self.last_event = Some(t);
            let index = self.events.len();
            if index >= MAX_EVENTS {
                self.events_omitted += 1;
                self.events_omitted_tokens += u64::from(tokens);
            } else {
                self.note_lateness(first_token);
                self.events.push(StreamEvent {
                    at_ms: ms_between(self.t0, t),
                    tokens,
                });
                if delta.reasoning {
                    match self.reasoning_events.last_mut() {
                        Some(range) if range[1] == index => range[1] = index + 1,
                        _ => self.reasoning_events.push([index, index + 1]),
                    }
                }
            }
        } else if delta.usage.is_some() || delta.finish.is_some() {
            self.last_event = Some(t);
        }
        match delta.finish {
            Some(Finish::Aborted(reason)) => {
                return Step::Broken(format!(
                    "finish_reason \"{reason}\": the server aborted the request"
                ));
            }
            Some(finish) => self.finish = Some(finish),
            None => {}
        }
        Step::Continue
    }

    fn end(&mut self, outcome: Outcome, t_end: Instant, detail: Option<&str>) -> Measured {
        self.end_owned(outcome, t_end, detail.map(str::to_string))
    }

    fn end_owned(&mut self, outcome: Outcome, t_end: Instant, detail: Option<String>) -> Measured {
        // Byte tokens after the last visible one belong to the last event.
        if self.pending_empty > 0 && self.per_event_usage_unknown() {
            if self.events_omitted > 0 {
                self.events_omitted_tokens += u64::from(self.pending_empty);
            } else if let Some(last) = self.events.last_mut() {
                last.tokens = last.tokens.saturating_add(self.pending_empty);
            }
        }
        // No frame follows to tell: the last frame's samples take the bound that always holds.
        self.settle_lateness(false);
        let rel = |t: Option<Instant>| t.map(|t| ms_between(self.t0, t));
        let quality = match (&self.job.rubric, &self.text) {
            (Some(rubric), Some(text)) if outcome.is_success() => {
                if rubric.passes(text) {
                    Quality::Pass
                } else {
                    Quality::Fail
                }
            }
            _ => Quality::NotEvaluated,
        };
        let reported = self.usage.and_then(|u| u.completion_tokens);
        let counted: u64 = self.events.iter().map(|e| u64::from(e.tokens)).sum::<u64>()
            + self.events_omitted_tokens;
        let has_events = !self.events.is_empty() || self.events_omitted > 0;
        let event_tokens_estimated =
            has_events && !self.per_event_usage && reported.map(u64::from) != Some(counted);
        // The server's usage when it reports one; else what was observed (one per chunk, byte
        // tokens included). A `length` finish does not mean exactly max_tokens: a server may
        // finish a multi-byte character past the limit (llama-cpp-python does).
        let completion = match reported {
            Some(n) => Some(n),
            None if has_events => Some(u32::try_from(counted).unwrap_or(u32::MAX)),
            None if matches!(self.finish, Some(Finish::Length)) && outcome.is_success() => {
                self.job.max_tokens
            }
            None => None,
        };
        let attempt = Attempt {
            business_id: self.job.id.clone(),
            id: self.job.id.clone(),
            attempt: 1,
            phase: self.job.phase,
            intended_start_ms: Some(self.job.intended_ms),
            start_ms: Some(self.clock.ms(self.t0)),
            first_byte_ms: rel(self.first_byte),
            ttft_ms: rel(self.ttft),
            events: std::mem::take(&mut self.events),
            last_token_ms: None,
            e2e_ms: Some(ms_between(self.t0, t_end)),
            outcome,
            detail,
            quality,
            input_tokens: self.usage.and_then(|u| u.prompt_tokens),
            output_tokens: completion,
            tokens_from_usage: self.usage.is_some(),
            event_tokens_estimated,
            reasoning: self.first_reasoning.map(|r| ReasoningStart {
                first_reasoning_ms: ms_between(self.t0, r),
                first_content_ms: rel(self.first_content),
            }),
            prompt: self.job.prompt.map(|p| PromptSend {
                cached_tokens: self.usage.and_then(|u| u.cached_tokens).or(self.cache_n),
                ..p
            }),
            session: self.job.session.clone().map(|s| SessionTurn {
                cached_tokens: self.usage.and_then(|u| u.cached_tokens).or(self.cache_n),
                ..s
            }),
        };
        // Only a complete reply can be resent as the conversation's history.
        let answer = match (&self.job.session, outcome.is_success()) {
            (Some(_), true) => self.text.take(),
            _ => None,
        };
        Measured {
            answer,
            attempt,
            reasoning_events: std::mem::take(&mut self.reasoning_events),
            reasoning_tokens: self.usage.and_then(|u| u.reasoning_tokens),
            resent: self.resent,
            new_connection: self.new_connection,
            not_sent: self.not_sent,
            first_token_lateness_ms: self.first_token_lateness_ms,
            event_lateness_ms: std::mem::take(&mut self.event_lateness_ms),
            events_omitted: self.events_omitted,
            events_omitted_tokens: self.events_omitted_tokens,
            identity: self.identity.take().unwrap_or_default(),
            intended_tokens: self.job.intended_tokens,
        }
    }

    /// Whether per-event counts are estimated (no cumulative usage on every output event).
    fn per_event_usage_unknown(&self) -> bool {
        !self.per_event_usage || self.events.is_empty()
    }
}

/// Why a 2xx reply is not an event stream, from its headers: another content type (a server
/// that ignored `stream: true` answers `application/json`; a proxy's login page is `text/html`)
/// or a compressed body (this client asks for none, so it cannot decode one). A reply without
/// a content type is read and judged by its bytes.
fn not_an_event_stream(headers: &hyper::header::HeaderMap) -> Option<String> {
    let clean = |v: &HeaderValue| {
        let text = v
            .to_str()
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if !text.is_empty()
            && text.len() <= 60
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/.+-_".contains(&b))
        {
            text
        } else {
            "(unreadable)".to_string()
        }
    };
    if let Some(encoding) = headers.get(hyper::header::CONTENT_ENCODING) {
        let encoding = clean(encoding);
        if encoding != "identity" {
            return Some(format!("not an event stream: content-encoding {encoding}"));
        }
    }
    let content_type = clean(headers.get(CONTENT_TYPE)?);
    (content_type != "text/event-stream")
        .then(|| format!("not an event stream: content-type {content_type}"))
}
