//! Chrome trace-event JSON, which opens in Perfetto (ui.perfetto.dev) and chrome://tracing.
//!
//! - One track per concurrent slot: attempts are packed onto the fewest tracks on which none
//!   overlaps another, so the number of tracks is the run's peak concurrency.
//! - Each attempt is a slice named after its verdict (Perfetto colours slices by name; the
//!   `cname` gives chrome://tracing the same colours), with the attempt's facts as arguments; its
//!   TTFT is a nested slice and each stream event an instant event.
//! - Attempts without clock positions (LLMPerf, vLLM without `start_times`) go to a separate
//!   process, laid end to end, which its name says.
//! - GPU utilisation and memory are counter tracks.
//!
//! Times are whole microseconds (the trace's resolution), so nesting survives the importers'
//! float-to-integer conversion.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::{self, Write};

use serde_json::{json, Value};

use crate::format::trim_num;
use crate::settings::Settings;
use crate::trace::{Attempt, GpuSample, Header, Phase, Trace};
use crate::verdict::{verdict, Latency, Reason};

const PID_ATTEMPTS: u32 = 1;
const PID_NO_CLOCK: u32 = 2;
const PID_GPU: u32 = 3;

fn us(ms: f64) -> i64 {
    (ms * 1000.0).round() as i64
}

/// The attempt's extent from its own start, in ms: its E2E, else the last moment it is known
/// to have been alive.
fn extent_ms(a: &Attempt) -> f64 {
    a.e2e_ms
        .or_else(|| {
            [a.ttft_ms, a.first_byte_ms, a.events.last().map(|e| e.at_ms)]
                .into_iter()
                .flatten()
                .reduce(f64::max)
        })
        .unwrap_or(0.0)
}

/// The slice's name (its colour in Perfetto) and chrome://tracing colour.
fn verdict_name(a: &Attempt, settings: &Settings) -> (String, &'static str) {
    let v = verdict(a, settings);
    let threshold = trim_num(settings.ttft_threshold_s);
    let (name, cname) = match v.reason {
        None => ("qualified".to_string(), "good"),
        Some(Reason::Failure) => (format!("failure: {}", a.outcome), "terrible"),
        Some(Reason::Quality) => (
            format!("not qualified: quality {}", a.quality.name()),
            "yellow",
        ),
        Some(Reason::Latency) => match v.latency {
            Latency::NoToken => ("not qualified: no token".to_string(), "bad"),
            _ => (format!("not qualified: TTFT over {threshold} s"), "bad"),
        },
    };
    if a.phase == Phase::Warmup {
        (format!("warm-up · {name}"), "grey")
    } else {
        (name, cname)
    }
}

fn args(a: &Attempt, settings: &Settings) -> Value {
    let v = verdict(a, settings);
    json!({
        "id": a.id,
        "business_id": a.business_id,
        "attempt": a.attempt,
        "phase": match a.phase { Phase::Warmup => "warmup", Phase::Measure => "measure" },
        "outcome": a.outcome.to_string(),
        "detail": a.detail,
        "quality": a.quality.name(),
        "qualified": v.qualified,
        "reason": v.reason.map(Reason::code),
        "ttft_ms": a.ttft_ms,
        "e2e_ms": a.e2e_ms,
        "stream_events": a.events.len(),
        "input_tokens": a.input_tokens,
        "output_tokens": a.output_tokens,
        "start_ms": a.start_ms,
    })
}

fn meta(pid: u32, tid: Option<u32>, name: &str, value: Value) -> Value {
    let mut e = json!({"ph": "M", "pid": pid, "name": name, "args": value});
    if let Some(tid) = tid {
        e["tid"] = json!(tid);
    }
    e
}

/// Where the events go: written out one by one as they are made, so the export holds only its
/// own text (≈ 0.5 KB per attempt plus ≈ 0.15 KB per stream event), never a tree of values per
/// event (the earlier build needed ~19.5 KB of memory per attempt).
struct Events<'w, W: Write> {
    out: &'w mut W,
    first: bool,
}

impl<W: Write> Events<'_, W> {
    fn push(&mut self, event: Value) -> fmt::Result {
        if !self.first {
            self.out.write_char(',')?;
        }
        self.first = false;
        write!(self.out, "{event}")
    }
}

/// Pushes one attempt at `ts` (µs) on `(pid, tid)`: the slice, its TTFT, its stream events.
/// Saturating arithmetic: the parsers bound every time (`MAX_TIME_MS`), but a trace built in
/// code may not be, and a wrapped `ts` would draw garbage.
fn push_attempt<W: Write>(
    events: &mut Events<'_, W>,
    a: &Attempt,
    settings: &Settings,
    pid: u32,
    tid: u32,
    ts: i64,
    end: i64,
) -> fmt::Result {
    let (name, cname) = verdict_name(a, settings);
    events.push(json!({
        "ph": "X", "pid": pid, "tid": tid, "ts": ts, "dur": end.saturating_sub(ts),
        "name": name, "cat": "attempt", "cname": cname, "args": args(a, settings),
    }))?;
    let rel = |ms: f64| ts.saturating_add(us(ms)).min(end);
    if let Some(t) = a.ttft_ms {
        events.push(json!({
            "ph": "X", "pid": pid, "tid": tid, "ts": ts, "dur": rel(t).saturating_sub(ts),
            "name": "TTFT", "cat": "ttft", "cname": "rail_response",
            "args": {"id": a.id, "ttft_ms": t},
        }))?;
    }
    if let Some(fb) = a.first_byte_ms {
        events.push(json!({
            "ph": "i", "s": "t", "pid": pid, "tid": tid, "ts": rel(fb),
            "name": "first byte", "cat": "first_byte", "args": {"id": a.id},
        }))?;
    }
    for (i, e) in a.events.iter().enumerate() {
        events.push(json!({
            "ph": "i", "s": "t", "pid": pid, "tid": tid, "ts": rel(e.at_ms),
            "name": "stream event", "cat": "stream_event",
            "args": {"id": a.id, "index": i, "tokens": e.tokens, "at_ms": e.at_ms},
        }))?;
    }
    Ok(())
}

/// The trace as Chrome trace-event JSON (`{"traceEvents": [...]}`), verdicts judged under
/// `settings`. Memory: the text itself (see [`write_perfetto`] to send it elsewhere as it is made).
pub fn perfetto(trace: &Trace, settings: &Settings) -> String {
    let mut out = String::new();
    write_perfetto(trace, settings, &mut out).expect("writing to a String cannot fail");
    out
}

/// [`perfetto`] written to `out` as it is made: the export itself holds only the timed
/// attempts' order (24 bytes per attempt), whatever the trace's size. A trace too large to hold
/// goes through [`PerfettoWriter`] instead (`tracelab export` sorts it on disk).
pub fn write_perfetto<W: Write>(trace: &Trace, settings: &Settings, out: &mut W) -> fmt::Result {
    let mut timed: Vec<(i64, i64, &Attempt)> = trace
        .attempts
        .iter()
        .filter_map(|a| extent_us(a).map(|(start, end)| (start, end, a)))
        .collect();
    // Stable: attempts with the same extent keep the file's order.
    timed.sort_by_key(|(start, end, _)| (*start, *end));
    let mut slots = Slots::default();
    for (start, end, _) in &timed {
        slots.place(*start, *end);
    }
    let untimed = trace.attempts.iter().any(|a| a.start_ms.is_none());
    let mut writer = PerfettoWriter::start(
        out,
        &trace.header,
        settings,
        slots.count(),
        untimed,
        !trace.gpu.is_empty(),
    )?;
    for (_, _, a) in &timed {
        writer.timed(a)?;
    }
    for a in trace.attempts.iter().filter(|a| a.start_ms.is_none()) {
        writer.untimed(a)?;
    }
    for s in &trace.gpu {
        writer.gpu(s)?;
    }
    writer.finish()
}

/// An attempt's place on the run's clock, in whole µs: its start and the end of its extent;
/// `None` without a clock position. The timed attempts are written in the order of this pair
/// (the file's order among equal pairs).
pub fn extent_us(a: &Attempt) -> Option<(i64, i64)> {
    let start = us(a.start_ms?);
    Some((start, start.saturating_add(us(extent_ms(a)))))
}

/// Attempts packed onto tracks, in the order of [`extent_us`]: the lowest free slot whose previous
/// attempt has ended. Memory: the slots in use, so the run's peak concurrency.
#[derive(Default)]
pub struct Slots {
    busy: BinaryHeap<Reverse<(i64, u32)>>,
    free: BinaryHeap<Reverse<u32>>,
    slots: u32,
}

impl Slots {
    /// The slot (from 1) of the next attempt, spanning `start..end` µs.
    pub fn place(&mut self, start: i64, end: i64) -> u32 {
        while let Some(Reverse((busy_until, slot))) = self.busy.peek().copied() {
            if busy_until <= start {
                self.busy.pop();
                self.free.push(Reverse(slot));
            } else {
                break;
            }
        }
        let slot = match self.free.pop() {
            Some(Reverse(slot)) => slot,
            None => {
                self.slots += 1;
                self.slots
            }
        };
        self.busy.push(Reverse((end, slot)));
        slot
    }

    /// How many slots the attempts placed so far needed.
    pub fn count(&self) -> u32 {
        self.slots
    }
}

/// The export written piece by piece, for a caller that hands the attempts over without holding
/// them: [`PerfettoWriter::start`] with the number of slots (a first pass of [`Slots`] over the
/// timed attempts in order), then the timed attempts in the order of [`extent_us`], the untimed
/// ones in the file's order, the GPU samples, and [`PerfettoWriter::finish`]. [`write_perfetto`]
/// is this over a trace in memory, so both write the same bytes.
pub struct PerfettoWriter<'w, W: Write> {
    events: Events<'w, W>,
    settings: &'w Settings,
    slots: Slots,
    /// Where the next attempt without a clock position goes (µs).
    untimed_at: i64,
}

impl<'w, W: Write> PerfettoWriter<'w, W> {
    /// Writes the opening and the tracks' names. `slots`: the tracks the timed attempts need;
    /// `untimed`: whether any attempt has no clock position; `gpu`: whether there are GPU samples.
    pub fn start(
        out: &'w mut W,
        header: &Header,
        settings: &'w Settings,
        slots: u32,
        untimed: bool,
        gpu: bool,
    ) -> Result<Self, fmt::Error> {
        // The keys in the order serde_json sorts them, as the export has always been written.
        let source = header.source.as_ref().map(|s| s.tool.clone());
        let other = json!({
            "producer": "Trace Lab",
            "imported_from": source,
            "model": header.conditions.model,
            "ttft_threshold_s": settings.ttft_threshold_s,
            "comparison": settings.comparison.code(),
            "gpu_telemetry": header.capabilities.gpu_telemetry,
            "colours": "slice name = verdict: qualified (green), failure (dark red), not qualified: TTFT over the threshold / no token (red), quality (yellow), warm-up (grey)",
        });
        write!(
            out,
            "{{\"displayTimeUnit\":\"ms\",\"otherData\":{other},\"traceEvents\":["
        )?;
        let mut events = Events { out, first: true };
        if slots > 0 {
            events.push(meta(
                PID_ATTEMPTS,
                None,
                "process_name",
                json!({"name": "Attempts (client clock) — one track per concurrent slot"}),
            ))?;
            events.push(meta(
                PID_ATTEMPTS,
                None,
                "process_sort_index",
                json!({"sort_index": 1}),
            ))?;
            for slot in 1..=slots {
                events.push(meta(
                    PID_ATTEMPTS,
                    Some(slot),
                    "thread_name",
                    json!({"name": format!("slot {slot}")}),
                ))?;
                events.push(meta(
                    PID_ATTEMPTS,
                    Some(slot),
                    "thread_sort_index",
                    json!({"sort_index": slot}),
                ))?;
            }
        }
        if untimed {
            events.push(meta(
                PID_NO_CLOCK,
                None,
                "process_name",
                json!({"name": "Attempts without clock positions — laid end to end, not their real timing"}),
            ))?;
            events.push(meta(
                PID_NO_CLOCK,
                None,
                "process_sort_index",
                json!({"sort_index": 2}),
            ))?;
            events.push(meta(
                PID_NO_CLOCK,
                Some(1),
                "thread_name",
                json!({"name": "one after another"}),
            ))?;
        }
        if gpu {
            events.push(meta(
                PID_GPU,
                None,
                "process_name",
                json!({"name": format!("GPU telemetry ({})", header.capabilities.gpu_telemetry)}),
            ))?;
            events.push(meta(
                PID_GPU,
                None,
                "process_sort_index",
                json!({"sort_index": 3}),
            ))?;
        }
        Ok(PerfettoWriter {
            events,
            settings,
            slots: Slots::default(),
            untimed_at: 0,
        })
    }

    /// The next attempt with a clock position, in the order of [`extent_us`].
    pub fn timed(&mut self, a: &Attempt) -> fmt::Result {
        let Some((start, end)) = extent_us(a) else {
            return self.untimed(a);
        };
        let slot = self.slots.place(start, end);
        push_attempt(
            &mut self.events,
            a,
            self.settings,
            PID_ATTEMPTS,
            slot,
            start,
            end,
        )
    }

    /// The next attempt without a clock position: laid end to end, 1 ms apart, on one track.
    pub fn untimed(&mut self, a: &Attempt) -> fmt::Result {
        let at = self.untimed_at;
        let end = at.saturating_add(us(extent_ms(a)));
        push_attempt(&mut self.events, a, self.settings, PID_NO_CLOCK, 1, at, end)?;
        self.untimed_at = end.saturating_add(1000);
        Ok(())
    }

    /// One GPU sample as counters: a utilisation and a memory track per GPU.
    pub fn gpu(&mut self, s: &GpuSample) -> fmt::Result {
        let ts = us(s.t_ms);
        self.events.push(json!({
            "ph": "C", "pid": PID_GPU, "tid": 0, "ts": ts,
            "name": format!("GPU {} utilisation %", s.gpu), "args": {"util %": s.util_pct},
        }))?;
        self.events.push(json!({
            "ph": "C", "pid": PID_GPU, "tid": 0, "ts": ts,
            "name": format!("GPU {} memory MiB", s.gpu),
            "args": {"used MiB": s.mem_used_mib, "free MiB": (s.mem_total_mib - s.mem_used_mib).max(0.0)},
        }))
    }

    pub fn finish(self) -> fmt::Result {
        self.events.out.write_str("]}")
    }
}
