//! Trace format v1 as JSON Lines: one record per line, the header first.
//!
//! Every line is read in a single pass into a flat record whose fields cover every kind; only
//! when a line fails do we parse it again with a path-tracking deserializer, so the common case
//! stays fast and the error still names the field.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};

use crate::error::ParseError;
use crate::trace::*;
use crate::units::round_to_microsecond;

/// A line longer than this is not a trace record (an attempt with 100,000 events is ~2 MB).
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// Parses a whole trace in format v1. `file` names the source in error messages.
pub fn parse_jsonl(file: &str, text: &str) -> Result<Trace, ParseError> {
    parse_jsonl_inner(text).map_err(|e| e.in_file(file))
}

fn parse_jsonl_inner(text: &str) -> Result<Trace, ParseError> {
    let mut parts = JsonlParts::default();
    // Room for every line at once: grown by doubling, a million attempts held the old and the
    // new buffer together (a third more memory at the peak, which a browser tab keeps).
    parts.reserve(newlines(text.as_bytes()) + 1);
    parts.feed(text)?;
    parts.finish()
}

/// A JSON Lines trace read from its text in pieces, cut anywhere: each line is read as soon as
/// it is whole, so only the line being cut is held beside the attempts. [`parse_jsonl`] is this
/// with one piece, so both read alike, errors and warnings included.
#[derive(Default)]
pub(crate) struct JsonlParts {
    reader: LineReader,
    trace: Trace,
    /// The start of a line whose end is in a later piece (at most a record's length of it).
    partial: String,
    /// How much more of that line came than `partial` keeps: a line longer than a record may
    /// be is refused when it ends, and is not held meanwhile.
    dropped: usize,
    /// The last byte of that line so far was a `\r` (not counted in its length when it ends it).
    dropped_cr: bool,
    /// Lines read so far.
    lines: usize,
}

impl JsonlParts {
    /// Makes room for this many attempts at once; a guess too big for the memory left is
    /// dropped (the attempts then grow as they come).
    pub(crate) fn reserve(&mut self, attempts: usize) {
        let _ = self.trace.attempts.try_reserve_exact(attempts);
    }

    pub(crate) fn feed(&mut self, mut piece: &str) -> Result<(), ParseError> {
        if !self.partial.is_empty() || self.dropped > 0 {
            let Some(end) = piece.find('\n') else {
                self.keep(piece);
                return Ok(());
            };
            self.keep(&piece[..end]);
            self.end_kept_line(false)?;
            piece = &piece[end + 1..];
        }
        while let Some(end) = piece.find('\n') {
            self.line(&piece[..end], false)?;
            piece = &piece[end + 1..];
        }
        self.keep(piece);
        Ok(())
    }

    /// Keeps `fragment` of the line being cut, up to what a record may hold (with a byte order
    /// mark and a `\r`); beyond that only its length.
    fn keep(&mut self, fragment: &str) {
        if fragment.is_empty() {
            return;
        }
        if self.dropped == 0 && self.partial.len() + fragment.len() <= MAX_LINE_BYTES + 4 {
            self.partial.push_str(fragment);
        } else {
            self.dropped += fragment.len();
            self.dropped_cr = fragment.ends_with('\r');
        }
    }

    /// The line that was being cut has ended.
    fn end_kept_line(&mut self, by_eof: bool) -> Result<(), ParseError> {
        let line = std::mem::take(&mut self.partial);
        if self.dropped == 0 {
            return self.line(&line, by_eof);
        }
        // Too long to be a record: refused as `LineReader::line` refuses it, with its length
        // as it counts it (no byte order mark on the first line, no `\r` at the end).
        self.lines += 1;
        let bom = if self.lines == 1 && line.starts_with('\u{feff}') {
            '\u{feff}'.len_utf8()
        } else {
            0
        };
        let len = line.len() + self.dropped - bom - usize::from(self.dropped_cr);
        Err(too_long(len).at_line(self.lines))
    }

    fn line(&mut self, raw_line: &str, by_eof: bool) -> Result<(), ParseError> {
        self.lines += 1;
        match self.reader.line(self.lines, raw_line, by_eof)? {
            Line::Attempt(attempt) => self.trace.attempts.push(*attempt),
            Line::Gpu(sample) => self.trace.gpu.push(sample),
            Line::Engine(sample) => self.trace.engine.push(*sample),
            // Only the last line can be cut off (`by_eof`): nothing follows it.
            Line::CutOff | Line::Other => {}
        }
        Ok(())
    }

    /// After the last piece: the last line (ended by the end of the text when it is not empty,
    /// so it may be cut off), then the header, footer and warnings.
    pub(crate) fn finish(mut self) -> Result<Trace, ParseError> {
        let by_eof = !self.partial.is_empty() || self.dropped > 0;
        self.end_kept_line(by_eof)?;
        let read = self.reader.finish()?;
        let mut trace = self.trace;
        trace.attempts.shrink_to_fit();
        trace.header = read.header;
        trace.footer = read.footer;
        trace.warnings = read.warnings;
        Ok(trace)
    }
}

/// How many lines end in `bytes`.
fn newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count()
}

/// What one line held, for the caller to keep (the header, footer and warnings stay in the
/// [`LineReader`]).
pub(crate) enum Line {
    Attempt(Box<Attempt>),
    Gpu(GpuSample),
    /// One scrape of the serving engine's own metrics (`--server-metrics`).
    Engine(Box<engine::EngineSample>),
    /// A cut-off last line, already noted in the warnings: reading stops.
    CutOff,
    /// A header, a footer, a blank line or a record of a kind this version skips.
    Other,
}

/// What a trace says besides its attempts and GPU samples.
pub(crate) struct LinesRead {
    pub(crate) header: Header,
    pub(crate) footer: Option<Footer>,
    pub(crate) warnings: Vec<String>,
}

/// Reads a trace line by line, the same way whether the lines come from one string
/// ([`parse_jsonl`]) or from a stream ([`super::stream`]): the checks, errors and warnings live
/// here once. Attempt ids are kept (for duplicates) in a packed table, about 16 bytes + the id
/// + 8 to 16 bytes of slots per attempt.
#[derive(Default)]
pub(crate) struct LineReader {
    header: Option<Header>,
    footer: Option<Footer>,
    warnings: Vec<String>,
    /// Attempt id → the line that first used it.
    ids: crate::strtable::StrTable<usize>,
    /// The caller checks the ids itself (in memory that does not grow with the trace:
    /// `tracelab export` and `merge` sort them on disk), so none is kept here.
    ids_elsewhere: bool,
    attempts: u64,
    /// (session id, turn) → the business id that turn belongs to and the line that first sent
    /// it: a turn is sent once, its retries (same business id) aside. Empty without sessions.
    turns: std::collections::HashMap<(String, u32), (String, usize)>,
}

impl LineReader {
    /// A reader that leaves the duplicate-id check to its caller (see [`duplicate_id`]).
    pub(crate) fn ids_elsewhere() -> LineReader {
        LineReader {
            ids_elsewhere: true,
            ..LineReader::default()
        }
    }

    /// A session's turn number is one user turn: a second attempt with it must be a retry of
    /// the first (the same business id).
    fn check_turn(&mut self, attempt: &Attempt, line_no: usize) -> Result<(), ParseError> {
        let Some(t) = &attempt.session else {
            return Ok(());
        };
        match self.turns.entry((t.session_id.clone(), t.turn)) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert((attempt.business_id.clone(), line_no));
                Ok(())
            }
            std::collections::hash_map::Entry::Occupied(o) => {
                let (business, first) = o.get();
                if *business == attempt.business_id {
                    Ok(())
                } else {
                    Err(ParseError::new(format!(
                        "session `{}` repeats turn {} (first on line {first}); a turn is sent once, and a retry of it keeps its business_id `{business}`",
                        t.session_id, t.turn
                    ))
                    .at_line(line_no)
                    .field("turn"))
                }
            }
        }
    }

    pub(crate) fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// One line (without its `\n`). `by_eof`: it was ended by the end of the text, not by a
    /// newline, so it may be a line the writer was stopped in the middle of.
    pub(crate) fn line(
        &mut self,
        line_no: usize,
        raw_line: &str,
        by_eof: bool,
    ) -> Result<Line, ParseError> {
        let raw_line = if line_no == 1 {
            raw_line.strip_prefix('\u{feff}').unwrap_or(raw_line)
        } else {
            raw_line
        };
        let line = raw_line.strip_suffix('\r').unwrap_or(raw_line);
        if line.len() > MAX_LINE_BYTES {
            return Err(too_long(line.len()).at_line(line_no));
        }
        if line.trim().is_empty() {
            return Ok(Line::Other);
        }
        let record: RawRecord = match serde_json::from_str(line) {
            Ok(record) => record,
            Err(err) => {
                // A recorder killed mid-write leaves a cut-off last line; every finished attempt
                // before it is still good, so keep them and say what was dropped.
                if by_eof && self.header.is_some() && err.is_eof() {
                    self.warnings.push(format!(
                        "line {line_no} is cut off (the writer was probably stopped while writing it); ignored"
                    ));
                    return Ok(Line::CutOff);
                }
                parse_own_fields(line, err).map_err(|e| e.at_line(line_no))?
            }
        };
        let kind = match record.kind.as_deref() {
            Some(kind) => kind,
            None => {
                return Err(ParseError::new(
                    "every record needs a `kind`: header, attempt, gpu or footer",
                )
                .at_line(line_no)
                .field("kind"))
            }
        };
        if self.header.is_none() && kind != "header" {
            return Err(ParseError::new(format!(
                "the first record must be the header (`\"kind\": \"header\"`), found `{kind}`"
            ))
            .at_line(line_no)
            .field("kind"));
        }
        match kind {
            "header" => {
                if self.header.is_some() {
                    return Err(ParseError::new("a second header; a trace has exactly one")
                        .at_line(line_no)
                        .field("kind"));
                }
                self.header = Some(parse_header(line).map_err(|e| e.at_line(line_no))?);
                Ok(Line::Other)
            }
            "attempt" => {
                let attempt = record.into_attempt().map_err(|e| e.at_line(line_no))?;
                self.check_turn(&attempt, line_no)?;
                if self.ids_elsewhere {
                    self.attempts += 1;
                    return Ok(Line::Attempt(Box::new(attempt)));
                }
                let mut fresh = false;
                let first = *self
                    .ids
                    .entry(&attempt.id, || {
                        fresh = true;
                        line_no
                    })
                    .map_err(|_| {
                        ParseError::new(
                            "more than 4,294,967,294 attempts: more than a trace may hold",
                        )
                        .at_line(line_no)
                        .field("id")
                    })?;
                if !fresh {
                    return Err(duplicate_id(&attempt.id, first, line_no));
                }
                self.attempts += 1;
                Ok(Line::Attempt(Box::new(attempt)))
            }
            "gpu" => Ok(Line::Gpu(
                record.into_gpu().map_err(|e| e.at_line(line_no))?,
            )),
            "footer" => {
                self.footer = Some(record.into_footer().map_err(|e| e.at_line(line_no))?);
                Ok(Line::Other)
            }
            // Few (one per scrape), so read on their own rather than through the flat record,
            // and through a `Value` like the header: no second copy of their deserializers.
            "engine" => {
                let value: serde_json::Value = serde_json::from_str(line).map_err(|e| {
                    ParseError::new(format!(
                        "an engine record: {}",
                        strip_position(&e.to_string())
                    ))
                    .at_line(line_no)
                })?;
                let sample = engine::EngineSample::deserialize(&value).map_err(|e| {
                    let text = e.to_string();
                    let field = [
                        "t_ms",
                        "engine",
                        "source",
                        "waiting",
                        "running",
                        "kv_cache",
                        "preemptions_per_s",
                        "queue_time",
                        "ttft",
                    ]
                    .into_iter()
                    .find(|f| text.contains(&format!("`{f}`")));
                    let err = ParseError::new(format!(
                        "an engine record: {}",
                        text.split(" at line").next().unwrap_or(&text)
                    ))
                    .at_line(line_no);
                    match field {
                        Some(f) => err.field(f),
                        None => err,
                    }
                })?;
                if !sample.t_ms.is_finite() {
                    return Err(ParseError::new(
                        "an engine record's `t_ms` must be a number of milliseconds",
                    )
                    .at_line(line_no)
                    .field("t_ms"));
                }
                Ok(Line::Engine(Box::new(sample)))
            }
            other => {
                self.warnings.push(format!(
                    "line {line_no}: record kind `{other}` is not known to this version; skipped"
                ));
                Ok(Line::Other)
            }
        }
    }

    /// After the last line: the header (a trace without one is refused) and the warnings.
    pub(crate) fn finish(mut self) -> Result<LinesRead, ParseError> {
        let header = self.header.ok_or_else(|| {
            ParseError::new(
                "the file is empty: a trace starts with a header record (see docs/trace-format.md)",
            )
        })?;
        if let Some(footer) = self.footer {
            if footer.attempts != self.attempts {
                self.warnings.push(format!(
                    "the footer counts {} attempts but the file holds {}",
                    footer.attempts, self.attempts
                ));
            }
        }
        Ok(LinesRead {
            header,
            footer: self.footer,
            warnings: self.warnings,
        })
    }
}

/// The error for attempt `id` used again on line `line`, first on line `first`.
pub fn duplicate_id(id: &str, first: usize, line: usize) -> ParseError {
    ParseError::new(format!(
        "duplicate attempt id `{id}` (first used on line {first}); a retry is a new attempt with its own id and the same business_id"
    ))
    .at_line(line)
    .field("id")
}

/// The error for a line longer than [`MAX_LINE_BYTES`] (`len` without its line ending).
pub(crate) fn too_long(len: usize) -> ParseError {
    ParseError::new(format!(
        "this line is {} long; one record may be at most {} — is this really a trace file?",
        human_bytes(len),
        human_bytes(MAX_LINE_BYTES)
    ))
}

/// The top-level fields each record kind reads (keep in step with [`RawRecord`]).
const ATTEMPT_FIELDS: &[&str] = &[
    "kind",
    "id",
    "business_id",
    "attempt",
    "phase",
    "intended_start_ms",
    "start_ms",
    "first_byte_ms",
    "first_token_ms",
    "events",
    "end_ms",
    "outcome",
    "http_status",
    "detail",
    "quality",
    "input_tokens",
    "output_tokens",
    "tokens_from_usage",
    "event_tokens_estimated",
    "last_token_ms",
    "first_reasoning_ms",
    "first_content_ms",
    "reasoning_events",
    "prompt_index",
    "repetition",
    "prompt_repeat",
    "cached_tokens",
    "session_id",
    "turn",
    "history_tokens",
];
const GPU_FIELDS: &[&str] = &[
    "kind",
    "t_ms",
    "node",
    "gpu",
    "util_pct",
    "mem_used_mib",
    "mem_total_mib",
];
const FOOTER_FIELDS: &[&str] = &["kind", "finished_cleanly", "attempts", "gpu_samples"];

/// The slow path for a line the flat record could not read. Every kind shares one flat record,
/// so a field that one kind does not know but another reads with a different type (an attempt
/// carrying `"gpu": "A100"`, a record of an unknown kind with `"attempt": "A3"`) would fail the
/// line although unknown fields are to be ignored and unknown kinds skipped. Read the line again
/// keeping only the fields its own kind reads; what still fails is a real error.
fn parse_own_fields<'a>(line: &str, err: serde_json::Error) -> Result<RawRecord<'a>, ParseError> {
    use serde_json::Value;
    let mut fields = match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => {
            return Err(ParseError::new(
                "a record must be a JSON object: { \"kind\": …, … }",
            ))
        }
        Err(_) => return Err(describe_json_error(line, err)),
    };
    let own: &[&str] = match fields.get("kind").and_then(Value::as_str) {
        Some("attempt") => ATTEMPT_FIELDS,
        Some("gpu") => GPU_FIELDS,
        Some("footer") => FOOTER_FIELDS,
        // The header is read by its own deserializer; an unknown kind is skipped by the caller.
        _ => &["kind"],
    };
    fields.retain(|key, _| own.contains(&key.as_str()));
    let own_line = Value::Object(fields);
    RawRecord::deserialize(own_line.clone()).map_err(|_| {
        // Reading from a value (not from text) also gives "invalid type: integer `1`, expected …"
        // where serde_json's text reader reports a wrongly typed enum (`"phase": 1`) as a syntax
        // error.
        match own_line {
            Value::Object(fields) => locate_record_field(&fields)
                .unwrap_or_else(|| ParseError::new(strip_position(&err.to_string()))),
            _ => ParseError::new(strip_position(&err.to_string())),
        }
    })
}

/// Names the field that stops a record from being read: each field is tried alone, so the
/// first one that fails on its own is the culprit. (A path-tracking deserializer would do the
/// same, at the price of a copy of every deserializer in the browser's download.)
fn locate_record_field(fields: &serde_json::Map<String, serde_json::Value>) -> Option<ParseError> {
    fields.iter().find_map(|(key, value)| {
        let mut alone = serde_json::Map::new();
        alone.insert(key.clone(), value.clone());
        RawRecord::deserialize(serde_json::Value::Object(alone))
            .err()
            .map(|e| {
                let message = strip_position(&e.to_string());
                let path = refine_path(key, value, &message);
                ParseError::new(message).field(path)
            })
    })
}

/// Narrows a failing field to the value inside it that serde complained about
/// ("invalid type: string \"two\"" inside `events` → `events[0][1]`).
fn refine_path(key: &str, value: &serde_json::Value, message: &str) -> String {
    use serde_json::Value;
    let culprit = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        .and_then(|rest| rest.split(", expected").next());
    let Some(culprit) = culprit else {
        return key.to_string();
    };
    let matches = |v: &Value| -> bool {
        match v {
            Value::String(s) => culprit == format!("string {s:?}"),
            Value::Bool(b) => culprit == format!("boolean `{b}`"),
            Value::Null => culprit == "null",
            Value::Number(n) => {
                culprit.ends_with(&format!("`{n}`"))
                    || culprit.ends_with(&format!("`{}`", n.as_f64().unwrap_or(f64::NAN)))
            }
            Value::Array(_) => culprit == "sequence",
            Value::Object(_) => culprit == "map",
        }
    };
    fn search(v: &Value, path: String, matches: &dyn Fn(&Value) -> bool) -> Option<String> {
        match v {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| search(item, format!("{path}[{i}]"), matches)),
            Value::Object(map) => map
                .iter()
                .find_map(|(k, item)| search(item, format!("{path}.{k}"), matches)),
            leaf => matches(leaf).then_some(path),
        }
    }
    match value {
        Value::Array(_) | Value::Object(_) => {
            search(value, key.to_string(), &matches).unwrap_or_else(|| key.to_string())
        }
        _ => key.to_string(),
    }
}

fn human_bytes(n: usize) -> String {
    if n >= 1024 * 1024 {
        format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0))
    } else if n >= 1024 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{n} bytes")
    }
}

fn describe_json_error(line: &str, err: serde_json::Error) -> ParseError {
    match err.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => ParseError::new(
            // serde_json's own "at line 1 column c" counts lines within this one record, not the
            // file, so it is stripped: the caller adds the file's line number.
            format!(
                "not valid JSON at column {}: {}",
                err.column(),
                strip_position(&err.to_string())
            ),
        ),
        _ => match serde_json::from_str::<serde_json::Value>(line) {
            Ok(serde_json::Value::Object(fields)) => locate_record_field(&fields)
                .unwrap_or_else(|| ParseError::new(strip_position(&err.to_string()))),
            _ => ParseError::new(strip_position(&err.to_string())),
        },
    }
}

fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

fn parse_header(line: &str) -> Result<Header, ParseError> {
    // Through a `Value`, as `locate_header_field` reads it: one copy of the header's
    // deserializers in the lab's download instead of two (one line, so speed does not matter).
    let value: serde_json::Value = serde_json::from_str(line)
        .map_err(|err| ParseError::new(format!("header: {}", strip_position(&err.to_string()))))?;
    let header: Header = Header::deserialize(&value).map_err(|err| {
        let message = strip_position(&err.to_string());
        let located = locate_header_field(&value);
        let (parent, message) = located.unwrap_or((None, message));
        let err = ParseError::new(format!("header: {message}"));
        // serde reports a missing field at its parent; name the field itself.
        let missing = message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next());
        match (parent, missing) {
            (None, None) => err,
            (Some(parent), None) => err.field(parent),
            (None, Some(name)) => err.field(name),
            (Some(parent), Some(name)) => err.field(format!("{parent}.{name}")),
        }
    })?;
    // The lab never reads a simulation record or a peer tool's figures and does not carry their
    // readers (its second bundle checks the figures on entry); every other reader checks them
    // here, so a bad one is refused with its field like any other.
    #[cfg(not(target_arch = "wasm32"))]
    {
        if let Some(simulation) = &header.simulation {
            simulation.read()?;
        }
        if let Some(source) = &header.source {
            source.figures.read()?;
        }
    }
    if header.schema != SCHEMA_NAME {
        return Err(ParseError::new(format!(
            "this is not a Trace Lab trace: `schema` is `{}`, expected `{SCHEMA_NAME}`",
            header.schema
        ))
        .field("schema"));
    }
    if header.version > SCHEMA_VERSION {
        return Err(ParseError::new(format!(
            "written in trace format v{}, newer than this version reads (v{SCHEMA_VERSION}); update Trace Lab",
            header.version
        ))
        .field("version"));
    }
    if header.version == 0 {
        return Err(ParseError::new("trace format versions start at 1").field("version"));
    }
    validate_header(&header)?;
    Ok(header)
}

/// Finds which of the header's fields fails, trying each on its own with its own type.
fn locate_header_field(v: &serde_json::Value) -> Option<(Option<String>, String)> {
    let object = v.as_object()?;
    fn fails<T: serde::de::DeserializeOwned>(v: &serde_json::Value) -> Option<String> {
        // By reference, as `parse_header` reads: the same copy of each deserializer.
        T::deserialize(v)
            .err()
            .map(|e| strip_position(&e.to_string()))
    }
    type Check = fn(&serde_json::Value) -> Option<String>;
    let checks: [(&str, Check); 10] = [
        ("schema", fails::<String>),
        ("version", fails::<u32>),
        ("tool", fails::<Tool>),
        ("wall_clock_anchor_utc", fails::<Option<String>>),
        ("conditions", fails::<Conditions>),
        ("capabilities", fails::<Capabilities>),
        ("window", fails::<Option<Window>>),
        ("window_cost", fails::<Option<Money>>),
        ("defaults", fails::<Option<HeaderDefaults>>),
        ("source", fails::<Option<Source>>),
    ];
    checks.iter().find_map(|(key, check)| {
        let value = object.get(*key)?;
        check(value).map(|message| (Some(refine_path(key, value, &message)), message))
    })
}

/// Checks the header's numbers (also used for headers built by importers and the recorder).
pub fn validate_header(header: &Header) -> Result<(), ParseError> {
    if let Some(sha) = &header.conditions.prompt_set_sha256 {
        // Shown shortened in the lab; a hash is hex digits, nothing else.
        if sha.is_empty() || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            let shown: String = sha.chars().take(20).collect();
            return Err(ParseError::new(format!(
                "a prompt-set hash is hexadecimal digits (0-9, a-f), got `{shown}`"
            ))
            .field("conditions.prompt_set_sha256"));
        }
    }
    if let Some(window) = header.window {
        if !(window.length_s.is_finite() && window.length_s > 0.0) {
            return Err(ParseError::new(format!(
                "the window must be longer than 0 s, got {}",
                window.length_s
            ))
            .field("window.length_s"));
        }
        if !(MIN_WINDOW_S..=MAX_WINDOW_S).contains(&window.length_s) {
            return Err(ParseError::new(format!(
                "the window must be between 1 µs and 10^12 s (the limits of a trace), got {} s",
                window.length_s
            ))
            .field("window.length_s"));
        }
        if !(window.start_ms.is_finite() && window.start_ms >= 0.0) {
            return Err(
                ParseError::new("the window cannot start before the run's origin")
                    .field("window.start_ms"),
            );
        }
        time_field(window.start_ms, "window.start_ms")?;
    }
    if let Some(cost) = &header.window_cost {
        if !(cost.amount.is_finite() && cost.amount >= 0.0) {
            return Err(
                ParseError::new(format!("a cost cannot be negative, got {}", cost.amount))
                    .field("window_cost.amount"),
            );
        }
        if cost.amount > MAX_COST {
            return Err(ParseError::new(format!(
                "a window cost may be at most 10^12 (in any currency), got {}",
                cost.amount
            ))
            .field("window_cost.amount"));
        }
        if cost.currency.chars().any(char::is_control) {
            return Err(ParseError::new(
                "a currency cannot hold a line break or other control character",
            )
            .field("window_cost.currency"));
        }
    }
    if let Some(defaults) = &header.defaults {
        if let Some(t) = defaults.ttft_threshold_s {
            if !(t.is_finite() && t >= 0.0) {
                return Err(ParseError::new(format!(
                    "the TTFT threshold cannot be negative, got {t}"
                ))
                .field("defaults.ttft_threshold_s"));
            }
            if t > MAX_WINDOW_S {
                return Err(ParseError::new(format!(
                    "the TTFT threshold may be at most 10^12 s, got {t}"
                ))
                .field("defaults.ttft_threshold_s"));
            }
        }
    }
    Ok(())
}

/// A `null` and an absent field mean different things for `start_ms`: null says "no clock
/// positions", absent is a mistake.
fn present<'de, D, T>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(de).map(Some)
}

#[derive(Deserialize)]
struct RawRecord<'a> {
    #[serde(borrow, default)]
    kind: Option<Cow<'a, str>>,
    // attempt
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    business_id: Option<Cow<'a, str>>,
    #[serde(default)]
    attempt: Option<u32>,
    #[serde(default)]
    phase: Option<Phase>,
    #[serde(default)]
    intended_start_ms: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    start_ms: Option<Option<f64>>,
    #[serde(default)]
    first_byte_ms: Option<f64>,
    #[serde(default)]
    first_token_ms: Option<f64>,
    #[serde(default)]
    events: Option<Vec<(f64, u32)>>,
    #[serde(default)]
    last_token_ms: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    end_ms: Option<Option<f64>>,
    #[serde(borrow, default)]
    outcome: Option<Cow<'a, str>>,
    #[serde(default)]
    http_status: Option<u16>,
    #[serde(default)]
    detail: Option<String>,
    #[serde(borrow, default)]
    quality: Option<Cow<'a, str>>,
    #[serde(default)]
    input_tokens: Option<u32>,
    #[serde(default)]
    output_tokens: Option<u32>,
    #[serde(default)]
    tokens_from_usage: Option<bool>,
    #[serde(default)]
    event_tokens_estimated: Option<bool>,
    #[serde(default)]
    first_reasoning_ms: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    first_content_ms: Option<Option<f64>>,
    #[serde(default)]
    reasoning_events: Option<Vec<[u64; 2]>>,
    #[serde(default)]
    prompt_index: Option<u32>,
    #[serde(default)]
    repetition: Option<u32>,
    #[serde(default)]
    prompt_repeat: Option<bool>,
    #[serde(default)]
    cached_tokens: Option<u32>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    turn: Option<u32>,
    #[serde(default)]
    history_tokens: Option<u32>,
    // gpu
    #[serde(default)]
    t_ms: Option<f64>,
    #[serde(default)]
    node: Option<u32>,
    #[serde(default)]
    gpu: Option<u32>,
    #[serde(default)]
    util_pct: Option<f64>,
    #[serde(default)]
    mem_used_mib: Option<f64>,
    #[serde(default)]
    mem_total_mib: Option<f64>,
    // footer
    #[serde(default)]
    finished_cleanly: Option<bool>,
    #[serde(default)]
    attempts: Option<u64>,
    #[serde(default)]
    gpu_samples: Option<u64>,
}

/// The first reasoning and first answer token of an attempt, from its explicit fields, or
/// derived from `reasoning_events` (traces recorded before those fields existed); `None` when
/// the source kept no reasoning apart. The first token must be the earlier of the two.
fn reasoning_start(
    first_reasoning: Option<f64>,
    first_content: Option<Option<f64>>,
    reasoning_events: Option<&[[u64; 2]]>,
    events: &[StreamEvent],
    first_token: Option<f64>,
) -> Result<Option<ReasoningStart>, ParseError> {
    let start = match (first_reasoning, first_content) {
        (Some(first_reasoning_ms), content) => ReasoningStart {
            first_reasoning_ms,
            first_content_ms: content.flatten(),
        },
        (None, Some(_)) => {
            return Err(ParseError::new("first_content_ms is written with first_reasoning_ms (alone, first_token_ms says it)").field("first_content_ms"));
        }
        (None, None) => {
            let Some(ranges) = reasoning_events.filter(|r| !r.is_empty()) else {
                return Ok(None);
            };
            let in_reasoning = |i: usize| {
                ranges
                    .iter()
                    .any(|&[from, to]| (from..to).contains(&(i as u64)))
            };
            for (k, &[from, to]) in ranges.iter().enumerate() {
                if from >= to || to > events.len() as u64 {
                    return Err(ParseError::new(format!(
                        "[{from}, {to}) is not a range of this attempt's {} events",
                        events.len()
                    ))
                    .field(format!("reasoning_events[{k}]")));
                }
            }
            let first = |reasoning: bool| {
                events
                    .iter()
                    .enumerate()
                    .find(|(i, e)| e.tokens > 0 && in_reasoning(*i) == reasoning)
                    .map(|(_, e)| e.at_ms)
            };
            let Some(first_reasoning_ms) = first(true) else {
                return Ok(None);
            };
            ReasoningStart {
                first_reasoning_ms,
                first_content_ms: first(false),
            }
        }
    };
    let earliest = start
        .first_content_ms
        .map_or(start.first_reasoning_ms, |c| {
            c.min(start.first_reasoning_ms)
        });
    if first_token.is_none_or(|t| (t - earliest).abs() > 0.0005) {
        return Err(ParseError::new(format!(
            "first_token_ms must be the earlier of the first reasoning and the first answer token ({} ms from the start); it is {}",
            earliest,
            first_token.map_or("absent".to_string(), |t| format!("{t} ms"))
        ))
        .field("first_token_ms"));
    }
    Ok(Some(start))
}

fn missing(field: &str, kind: &str) -> ParseError {
    ParseError::new(format!("missing field `{field}` in this {kind} record")).field(field)
}

fn time_field(value: f64, field: &str) -> Result<f64, ParseError> {
    if !value.is_finite() {
        return Err(ParseError::new(format!("`{value}` is not a time")).field(field));
    }
    if value < 0.0 {
        return Err(ParseError::new(format!(
            "negative time {value} ms; times are offsets from the run's origin and cannot be negative"
        ))
        .field(field));
    }
    if value > MAX_TIME_MS {
        return Err(ParseError::new(format!(
            "{value} ms is past the latest time a trace may hold (10^15 ms, about 31,700 years after the run's origin)"
        ))
        .field(field));
    }
    Ok(value)
}

impl<'a> RawRecord<'a> {
    fn into_attempt(self) -> Result<Attempt, ParseError> {
        const KIND: &str = "attempt";
        let id = self.id.ok_or_else(|| missing("id", KIND))?.into_owned();
        if id.is_empty() {
            return Err(ParseError::new("an attempt id cannot be empty").field("id"));
        }
        let phase = self.phase.ok_or_else(|| missing("phase", KIND))?;
        let outcome_name = self.outcome.ok_or_else(|| missing("outcome", KIND))?;
        let outcome = Outcome::from_name(&outcome_name, self.http_status).map_err(|m| {
            let field = if outcome_name == "http_error" {
                "http_status"
            } else {
                "outcome"
            };
            ParseError::new(m).field(field)
        })?;
        let quality_name = self.quality.ok_or_else(|| missing("quality", KIND))?;
        let quality = Quality::from_name(&quality_name).ok_or_else(|| {
            ParseError::new(format!(
                "unknown quality `{quality_name}`; expected pass, fail or not_evaluated"
            ))
            .field("quality")
        })?;
        let start = self
            .start_ms
            .ok_or_else(|| {
                ParseError::new(
                    "missing field `start_ms` in this attempt record (write null when the source kept no clock positions)",
                )
                .field("start_ms")
            })?
            .map(|s| time_field(s, "start_ms"))
            .transpose()?;
        let end = self
            .end_ms
            .ok_or_else(|| {
                ParseError::new("missing field `end_ms` in this attempt record (null when unknown)")
                    .field("end_ms")
            })?
            .map(|s| time_field(s, "end_ms"))
            .transpose()?;
        // With no clock positions the other times are already measured from the attempt's start.
        let origin = start.unwrap_or(0.0);
        let relative = |value: Option<f64>, field: &str| -> Result<Option<f64>, ParseError> {
            match value {
                None => Ok(None),
                Some(v) => {
                    let v = time_field(v, field)?;
                    if v < origin {
                        return Err(ParseError::new(format!(
                            "{field} ({v} ms) is before the attempt's start_ms ({origin} ms)"
                        ))
                        .field(field));
                    }
                    Ok(Some(round_to_microsecond(v - origin)))
                }
            }
        };
        let intended_start_ms = self
            .intended_start_ms
            .map(|v| time_field(v, "intended_start_ms"))
            .transpose()?;
        let first_byte_ms = relative(self.first_byte_ms, "first_byte_ms")?;
        let ttft_ms = relative(self.first_token_ms, "first_token_ms")?;
        let last_token_ms = relative(self.last_token_ms, "last_token_ms")?;
        let e2e_ms = relative(end, "end_ms")?;
        if let (Some(last), Some(first)) = (last_token_ms, ttft_ms) {
            if last < first {
                return Err(
                    ParseError::new("the last token cannot come before the first")
                        .field("last_token_ms"),
                );
            }
        }
        if let (Some(last), Some(e2e)) = (last_token_ms, e2e_ms) {
            if last > e2e {
                return Err(ParseError::new("the last token cannot come after the end")
                    .field("last_token_ms"));
            }
        }
        if let (Some(ttft), Some(e2e)) = (ttft_ms, e2e_ms) {
            if ttft > e2e {
                return Err(ParseError::new("the first token cannot come after the end")
                    .field("first_token_ms"));
            }
        }
        if let (Some(first_byte), Some(e2e)) = (first_byte_ms, e2e_ms) {
            if first_byte > e2e {
                return Err(ParseError::new("the first byte cannot come after the end")
                    .field("first_byte_ms"));
            }
        }
        let mut events = Vec::with_capacity(self.events.as_ref().map_or(0, Vec::len));
        let mut previous = 0.0;
        for (i, (at, tokens)) in self.events.unwrap_or_default().into_iter().enumerate() {
            let field = format!("events[{i}]");
            let at = time_field(at, &field)?;
            if at < origin {
                return Err(ParseError::new(format!(
                    "event at {at} ms is before the attempt's start"
                ))
                .field(field));
            }
            let rel = round_to_microsecond(at - origin);
            if rel < previous {
                return Err(ParseError::new("events must be in arrival order").field(field));
            }
            if let Some(e2e) = e2e_ms {
                if rel > e2e {
                    return Err(ParseError::new("an event cannot come after the end").field(field));
                }
            }
            previous = rel;
            events.push(StreamEvent { at_ms: rel, tokens });
        }
        match outcome {
            Outcome::TimeoutBeforeFirstToken | Outcome::ConnectError if ttft_ms.is_some() => {
                return Err(ParseError::new(format!(
                    "an attempt with outcome `{}` received no token, so first_token_ms must be absent (TTFT is missing, not 0)",
                    outcome.name()
                ))
                .field("first_token_ms"));
            }
            // A recorded success has a clock, so its end is known. A source that kept no clock
            // positions (`start_ms: null`, e.g. a classroom table) may not have it, exactly as the
            // classroom CSV's optional `e2e_s`; the attempt then simply has no E2E sample.
            Outcome::Success if e2e_ms.is_none() && start.is_some() => {
                return Err(
                    ParseError::new("a successful attempt needs its end_ms").field("end_ms")
                );
            }
            _ => {}
        }
        let reasoning = reasoning_start(
            relative(self.first_reasoning_ms, "first_reasoning_ms")?,
            self.first_content_ms
                .map(|c| relative(c, "first_content_ms"))
                .transpose()?,
            self.reasoning_events.as_deref(),
            &events,
            ttft_ms,
        )?;
        let session = match (self.session_id, self.turn) {
            (None, None) => {
                if self.history_tokens.is_some() {
                    return Err(ParseError::new(
                        "history_tokens belongs to a session's turn: write session_id and turn with it",
                    )
                    .field("history_tokens"));
                }
                None
            }
            (Some(session_id), Some(turn)) => {
                if session_id.is_empty() {
                    return Err(ParseError::new("a session id cannot be empty").field("session_id"));
                }
                if turn == 0 {
                    return Err(ParseError::new(
                        "turn counts a session's turns from 1; 0 is not a turn",
                    )
                    .field("turn"));
                }
                Some(SessionTurn {
                    session_id,
                    turn,
                    history_tokens: self.history_tokens,
                    cached_tokens: None,
                })
            }
            (Some(_), None) => return Err(ParseError::new(
                "session_id and turn go together: this attempt names a session but not its turn",
            )
            .field("turn")),
            (None, Some(_)) => return Err(ParseError::new(
                "session_id and turn go together: this attempt names a turn but not its session",
            )
            .field("session_id")),
        };
        let no_prompt = self.prompt_index.is_none()
            && self.repetition.is_none()
            && self.prompt_repeat.is_none();
        let (session, cached_alone) = match session {
            Some(mut t) if no_prompt => {
                t.cached_tokens = self.cached_tokens;
                (Some(t), true)
            }
            other => (other, false),
        };
        let prompt = match (self.prompt_index, self.repetition, self.prompt_repeat) {
            (None, None, None) if self.cached_tokens.is_none() || cached_alone => None,
            (Some(index), Some(repetition), Some(repeat)) => {
                if repetition == 0 {
                    return Err(
                        ParseError::new("repetition counts rounds from 1").field("repetition")
                    );
                }
                Some(PromptSend {
                    index,
                    repetition,
                    repeat,
                    cached_tokens: self.cached_tokens,
                })
            }
            (index, repetition, _) => {
                let field = if index.is_none() {
                    "prompt_index"
                } else if repetition.is_none() {
                    "repetition"
                } else {
                    "prompt_repeat"
                };
                return Err(ParseError::new(
                    "prompt_index, repetition and prompt_repeat go together (cached_tokens with them, or with a session's turn): write all three or none",
                )
                .field(field));
            }
        };
        let business_id = match self.business_id {
            Some(b) if !b.is_empty() => b.into_owned(),
            _ => id.clone(),
        };
        Ok(Attempt {
            id,
            business_id,
            attempt: self.attempt.unwrap_or(1),
            phase,
            intended_start_ms,
            start_ms: start,
            first_byte_ms,
            ttft_ms,
            events,
            last_token_ms,
            e2e_ms,
            outcome,
            detail: self.detail,
            quality,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            tokens_from_usage: self.tokens_from_usage.unwrap_or(false),
            event_tokens_estimated: self.event_tokens_estimated.unwrap_or(false),
            reasoning,
            prompt,
            session,
        })
    }

    fn into_gpu(self) -> Result<GpuSample, ParseError> {
        const KIND: &str = "gpu";
        let sample = GpuSample {
            t_ms: time_field(self.t_ms.ok_or_else(|| missing("t_ms", KIND))?, "t_ms")?,
            node: self.node,
            gpu: self.gpu.ok_or_else(|| missing("gpu", KIND))?,
            util_pct: self.util_pct.ok_or_else(|| missing("util_pct", KIND))?,
            mem_used_mib: self
                .mem_used_mib
                .ok_or_else(|| missing("mem_used_mib", KIND))?,
            mem_total_mib: self
                .mem_total_mib
                .ok_or_else(|| missing("mem_total_mib", KIND))?,
        };
        if !(0.0..=100.0).contains(&sample.util_pct) {
            return Err(ParseError::new(format!(
                "utilisation must be 0–100 %, got {}",
                sample.util_pct
            ))
            .field("util_pct"));
        }
        if sample.mem_used_mib < 0.0 || sample.mem_total_mib < 0.0 {
            return Err(ParseError::new("memory cannot be negative").field("mem_used_mib"));
        }
        Ok(sample)
    }

    fn into_footer(self) -> Result<Footer, ParseError> {
        const KIND: &str = "footer";
        Ok(Footer {
            finished_cleanly: self
                .finished_cleanly
                .ok_or_else(|| missing("finished_cleanly", KIND))?,
            attempts: self.attempts.ok_or_else(|| missing("attempts", KIND))?,
            gpu_samples: self.gpu_samples.unwrap_or(0),
        })
    }
}
