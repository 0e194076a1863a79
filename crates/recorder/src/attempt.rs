//! One attempt: send the streaming request, timestamp everything that arrives on the run's
//! clock, and classify how it ended.
//!
//! Each read is timestamped the moment it is handed over, before any parsing, and every SSE
//! event completed by that read gets that time. TTFT is the first event that carried non-empty
//! output (content or reasoning); a role-only first chunk is a first byte, not a token.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, USER_AGENT};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;
use tracelab_core::{write, Attempt, Outcome, Phase, Quality, StreamEvent};

use crate::clock::Clock;
use crate::openai::{interpret, Payload, Usage};
use crate::prompts::Rubric;
use crate::sse::{SseDecoder, SseEvent};
use crate::transport::{body_error_class, Body, Transport};

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
        Ok(Endpoint { transport, url, auth, timeout, first_token_timeout })
    }

    fn request(&self, body: Bytes) -> hyper::Request<Full<Bytes>> {
        let mut request = hyper::Request::new(Full::new(body));
        *request.method_mut() = hyper::Method::POST;
        *request.uri_mut() = self.url.clone();
        let headers = request.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        headers.insert(USER_AGENT, HeaderValue::from_static(concat!("tracelab/", env!("CARGO_PKG_VERSION"))));
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
}

/// An attempt as measured, with the facts the core has no field for yet.
#[derive(Debug, Clone)]
pub struct Measured {
    pub attempt: Attempt,
    /// Half-open ranges of event indices whose output was reasoning (`reasoning_content`).
    pub reasoning_events: Vec<[usize; 2]>,
    pub reasoning_tokens: Option<u32>,
    /// Times the request went out again after a reused connection closed unanswered.
    pub resent: u32,
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
        write::attempt_line_with(&self.attempt, &extra)
    }
}

/// Sends `job` and measures it until it ends, times out or `cancel` fires.
pub async fn run(endpoint: &Endpoint, clock: &Clock, job: Job, cancel: &CancellationToken) -> Measured {
    let t0 = Instant::now();
    let job_body = job.body.clone();
    let mut m = Meter::new(t0, clock, job);
    let end_deadline = t0 + endpoint.timeout;
    let first_deadline = t0 + endpoint.first_token_timeout.min(endpoint.timeout);
    let sleep = tokio::time::sleep_until(first_deadline.into());
    tokio::pin!(sleep);

    let sent = tokio::select! {
        biased;
        r = endpoint.transport.send(|| endpoint.request(job_body.clone())) => r,
        _ = &mut sleep => {
            return m.end(Outcome::TimeoutBeforeFirstToken, Instant::now(), Some("no response before the first-token timeout"));
        }
        _ = cancel.cancelled() => return m.end(Outcome::Cancelled, Instant::now(), None),
    };
    let t_head = Instant::now();
    let sent = match sent {
        Ok(sent) => sent,
        Err(e) => {
            m.resent = e.resent;
            return m.end(Outcome::ConnectError, t_head, Some(e.class));
        }
    };
    m.resent = sent.resent;
    m.first_byte = Some(sent.first_byte);
    let status = sent.response.status();
    let mut response = Body(sent.response.into_body());
    if !status.is_success() {
        return m.end(Outcome::HttpError { status: status.as_u16() }, t_head, None);
    }

    let mut decoder = SseDecoder::new();
    let mut events: Vec<SseEvent> = Vec::new();
    let mut on_end_deadline = false;
    loop {
        let read = tokio::select! {
            biased;
            r = response.chunk() => r,
            _ = &mut sleep => {
                let now = Instant::now();
                return match (m.finished, m.ttft) {
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
        let at_end = match read {
            Ok(Some(bytes)) => {
                if let Err(e) = decoder.feed(&bytes, &mut events) {
                    return m.end(Outcome::StreamBroken, t, Some(e.class()));
                }
                false
            }
            Ok(None) => {
                if let Err(e) = decoder.finish(&mut events) {
                    return m.end(Outcome::StreamBroken, t, Some(e.class()));
                }
                true
            }
            Err(e) => {
                return if m.finished {
                    m.end(Outcome::Success, t, Some("connection dropped after finish_reason"))
                } else {
                    m.end(Outcome::StreamBroken, t, Some(body_error_class(&e)))
                };
            }
        };
        for event in events.drain(..) {
            match m.on_event(&event, t) {
                Step::Continue => {}
                Step::Done => return m.end(Outcome::Success, t, None),
                Step::Broken(detail) => return m.end_owned(Outcome::StreamBroken, t, Some(detail)),
            }
        }
        if at_end {
            return if m.finished {
                m.end(Outcome::Success, t, None)
            } else {
                m.end(Outcome::StreamBroken, t, Some("stream ended before [DONE] or a finish_reason"))
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
    last_event: Option<Instant>,
    events: Vec<StreamEvent>,
    reasoning_events: Vec<[usize; 2]>,
    usage: Option<Usage>,
    finished: bool,
    /// Every output event carried a cumulative `completion_tokens` (vLLM's continuous usage),
    /// so the tokens per event are known rather than estimated.
    per_event_usage: bool,
    last_completion_tokens: u32,
    /// The answer, kept in memory for the rubric only.
    text: Option<String>,
    resent: u32,
}

fn ms_between(from: Instant, to: Instant) -> f64 {
    to.saturating_duration_since(from).as_secs_f64() * 1000.0
}

impl<'a> Meter<'a> {
    fn new(t0: Instant, clock: &'a Clock, job: Job) -> Meter<'a> {
        let text = job.rubric.as_ref().map(|_| String::new());
        Meter {
            t0,
            clock,
            job,
            first_byte: None,
            ttft: None,
            last_event: None,
            events: Vec::new(),
            reasoning_events: Vec::new(),
            usage: None,
            finished: false,
            per_event_usage: true,
            last_completion_tokens: 0,
            text,
            resent: 0,
        }
    }

    fn on_event(&mut self, event: &SseEvent, t: Instant) -> Step {
        let delta = match interpret(event.event.as_deref(), &event.data, self.text.as_mut()) {
            Payload::Done => return Step::Done,
            Payload::Error(class) => return Step::Broken(class),
            Payload::Malformed => return Step::Broken("malformed SSE data (not a JSON chunk)".into()),
            Payload::Chunk(delta) => delta,
        };
        if let Some(usage) = delta.usage {
            self.usage = Some(usage);
        }
        if delta.is_output() {
            let cumulative = delta.usage.and_then(|u| u.completion_tokens);
            let tokens = match cumulative {
                Some(c) if c > self.last_completion_tokens => {
                    let n = c - self.last_completion_tokens;
                    self.last_completion_tokens = c;
                    n
                }
                _ => {
                    self.per_event_usage = false;
                    1
                }
            };
            let index = self.events.len();
            self.events.push(StreamEvent { at_ms: ms_between(self.t0, t), tokens });
            self.ttft.get_or_insert(t);
            self.last_event = Some(t);
            if delta.reasoning {
                match self.reasoning_events.last_mut() {
                    Some(range) if range[1] == index => range[1] = index + 1,
                    _ => self.reasoning_events.push([index, index + 1]),
                }
            }
        } else if delta.usage.is_some() || delta.finished {
            self.last_event = Some(t);
        }
        if delta.finished {
            self.finished = true;
        }
        Step::Continue
    }

    fn end(self, outcome: Outcome, t_end: Instant, detail: Option<&str>) -> Measured {
        self.end_owned(outcome, t_end, detail.map(str::to_string))
    }

    fn end_owned(self, outcome: Outcome, t_end: Instant, detail: Option<String>) -> Measured {
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
        let completion = self.usage.and_then(|u| u.completion_tokens);
        let event_tokens_estimated = !self.events.is_empty()
            && !self.per_event_usage
            && completion != Some(self.events.len() as u32);
        let attempt = Attempt {
            business_id: self.job.id.clone(),
            id: self.job.id,
            attempt: 1,
            phase: self.job.phase,
            intended_start_ms: Some(self.job.intended_ms),
            start_ms: Some(self.clock.ms(self.t0)),
            first_byte_ms: rel(self.first_byte),
            ttft_ms: rel(self.ttft),
            events: self.events,
            last_token_ms: None,
            e2e_ms: Some(ms_between(self.t0, t_end)),
            outcome,
            detail,
            quality,
            input_tokens: self.usage.and_then(|u| u.prompt_tokens),
            output_tokens: completion,
            tokens_from_usage: self.usage.is_some(),
            event_tokens_estimated,
        };
        Measured {
            attempt,
            reasoning_events: self.reasoning_events,
            reasoning_tokens: self.usage.and_then(|u| u.reasoning_tokens),
            resent: self.resent,
        }
    }
}
