//! Real workload files read into arrivals: the Azure LLM inference trace's CSV
//! (`TIMESTAMP,ContextTokens,GeneratedTokens`) and Mooncake's JSON Lines (`timestamp`,
//! `input_length`, `output_length`, `hash_ids`). Both say when each request arrived and how many
//! tokens went in and came out, never how it was served: a replay makes the outcomes itself.
//!
//! Times are kept to the microsecond, as a trace keeps them. Azure writes 7 fractional digits
//! (100 ns); a fraction finer than 1 µs is rounded and counted (`sub_us_rounded`), never dropped
//! silently. The window, the speed-up and the cap on idle gaps are applied in one place,
//! [`Workload::replay`], which the recorder and the simulator both use.

use serde_json::{json, Map, Value};

use crate::error::ParseError;

/// Mooncake's prefix block: each `hash_ids` entry stands for 512 prompt tokens (the last block of
/// a prompt may be partial). The reader checks every row against it.
pub const MOONCAKE_BLOCK_TOKENS: u32 = 512;

/// Which kind of file it is, decided from its content (never its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Azure's CSV: an absolute timestamp (no zone) and the two token counts.
    AzureCsv,
    /// Mooncake's JSON Lines: ms from the first request, the two lengths and the prefix blocks.
    MooncakeJsonl,
}

impl Layout {
    /// The name written in a trace's header.
    pub fn name(self) -> &'static str {
        match self {
            Layout::AzureCsv => "azure-csv",
            Layout::MooncakeJsonl => "mooncake-jsonl",
        }
    }
}

/// One request of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The 1-based line of the file it came from.
    pub line: usize,
    /// When it arrived, in µs after the file's first request.
    pub at_us: u64,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// Mooncake's prefix blocks (`hash_ids`), [`MOONCAKE_BLOCK_TOKENS`] tokens each: requests
    /// sharing a block share that part of the prompt. Empty for Azure.
    pub blocks: Vec<u64>,
}

/// A workload file as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// The file's name without its directory (a local path is never kept).
    pub file: String,
    pub sha256: String,
    pub layout: Layout,
    pub requests: Vec<Request>,
    /// Timestamps whose fraction went below the microsecond and were rounded to it.
    pub sub_us_rounded: usize,
}

/// How a workload is replayed: a window of the file, a speed-up and a cap on idle gaps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Replay {
    /// Replay this many times faster than the file (2 halves every gap).
    pub speedup: f64,
    /// Start the window this many seconds after the file's first request (file time).
    pub from_s: f64,
    /// The window's length in file seconds; None: to the end of the file.
    pub for_s: Option<f64>,
    /// No gap between two sends is longer than this in the replay (seconds, after the
    /// speed-up); longer ones are cut to it and everything after moves earlier.
    pub max_idle_s: Option<f64>,
}

impl Default for Replay {
    fn default() -> Replay {
        Replay {
            speedup: 1.0,
            from_s: 0.0,
            for_s: None,
            max_idle_s: None,
        }
    }
}

/// One request as the replay sends it.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// Its position in the file (0-based among the file's requests).
    pub index: usize,
    /// When the replay sends it, ms from the replay's start (rounded to the microsecond).
    pub at_ms: f64,
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub blocks: Vec<u64>,
}

/// The requests a replay sends, in order, and what the idle cap removed.
#[derive(Debug, Clone, PartialEq)]
pub struct Replayed {
    pub requests: Vec<Planned>,
    /// Replay seconds cut from idle gaps longer than `max_idle_s`.
    pub idle_cut_s: f64,
    /// How many gaps were cut.
    pub gaps_cut: usize,
}

/// A replay parameter that cannot be used, named as its flag without `--`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "--{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ReplayError {}

fn replay_error(field: &str, message: impl Into<String>) -> ReplayError {
    ReplayError {
        field: field.into(),
        message: message.into(),
    }
}

/// The hexadecimal sha256 of `bytes`, for the header (a rerun proves it replayed the same file).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The file name of `path` without its directory, for errors and the header.
pub fn file_name(path: &str) -> String {
    path.rsplit(['/', '\\']).next().unwrap_or(path).to_string()
}

/// Reads a workload file. `name` is how errors and the header name it (its directory is
/// dropped). Every request is checked before any is returned: nothing is sent from a bad file.
pub fn read(name: &str, bytes: &[u8]) -> Result<Workload, ParseError> {
    let file = file_name(name);
    let err = |line: usize, field: &str, message: String| {
        ParseError::new(message)
            .at_line(line)
            .field(field)
            .in_file(&file)
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        err(
            line,
            "layout",
            "the file is not UTF-8 text; a workload is Azure's CSV or Mooncake's JSON Lines".into(),
        )
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Lines with their 1-based numbers; CRLF (Azure's) and a missing final newline are fine.
    let lines = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .filter(|(_, l)| !l.trim().is_empty());
    let mut lines = lines.peekable();
    let Some(&(first_line, first)) = lines.peek() else {
        return Err(
            ParseError::new("the file is empty: a workload needs at least one request")
                .in_file(&file),
        );
    };
    let (layout, mut requests, sub_us_rounded) = if first.trim_start().starts_with('{') {
        let (requests, rounded) = read_mooncake(lines, &err)?;
        (Layout::MooncakeJsonl, requests, rounded)
    } else {
        lines.next();
        let columns = csv_columns(first).ok_or_else(|| {
            err(
                first_line,
                "layout",
                format!(
                    "unknown workload layout (first line `{}`): expected Azure's CSV header \
                     `TIMESTAMP,ContextTokens,GeneratedTokens` or Mooncake's JSON Lines \
                     ({{\"timestamp\", \"input_length\", \"output_length\", \"hash_ids\"}})",
                    first.chars().take(80).collect::<String>()
                ),
            )
        })?;
        let (requests, rounded) = read_azure(lines, columns, &err)?;
        (Layout::AzureCsv, requests, rounded)
    };
    if requests.is_empty() {
        return Err(ParseError::new("the file has a header but no request").in_file(&file));
    }
    // Offsets from the first request (Mooncake's already are; Azure's are absolute).
    let origin = requests[0].at_us;
    for r in &mut requests {
        r.at_us -= origin;
    }
    Ok(Workload {
        file,
        sha256: sha256_hex(bytes),
        layout,
        requests,
        sub_us_rounded,
    })
}

/// The positions of Azure's three columns, in any order; None when the header is not Azure's.
fn csv_columns(header: &str) -> Option<[usize; 3]> {
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let at = |n: &str| names.iter().position(|c| c.eq_ignore_ascii_case(n));
    Some([
        at("TIMESTAMP")?,
        at("ContextTokens")?,
        at("GeneratedTokens")?,
    ])
}

type Err<'a> = &'a dyn Fn(usize, &str, String) -> ParseError;

fn read_azure<'a>(
    lines: impl Iterator<Item = (usize, &'a str)>,
    [t, input, output]: [usize; 3],
    err: Err,
) -> Result<(Vec<Request>, usize), ParseError> {
    let names = ["TIMESTAMP", "ContextTokens", "GeneratedTokens"];
    let mut out: Vec<Request> = Vec::new();
    let mut rounded = 0;
    let mut previous: Option<(i128, usize)> = None;
    for (line, text) in lines {
        let cells: Vec<&str> = text.split(',').map(str::trim).collect();
        let cell = |i: usize, name: &str| {
            cells
                .get(i)
                .copied()
                .filter(|c| !c.is_empty())
                .ok_or_else(|| err(line, name, format!("{name} is missing")))
        };
        let stamp = cell(t, names[0])?;
        let ns = azure_ns(stamp).ok_or_else(|| {
            err(line, names[0], format!("`{stamp}` is not a time like 2023-11-16 18:15:46.6805900 (date, time, up to 9 fractional digits)"))
        })?;
        if let Some((before, before_line)) = previous {
            if ns < before {
                return Err(err(line, names[0], format!("`{stamp}` is earlier than line {before_line}'s: a workload's timestamps never decrease")));
            }
        }
        previous = Some((ns, line));
        if ns % 1000 != 0 {
            rounded += 1;
        }
        out.push(Request {
            line,
            at_us: 0, // set below, from the first request
            input_tokens: tokens(cell(input, names[1])?, line, names[1], err)?,
            output_tokens: tokens(cell(output, names[2])?, line, names[2], err)?,
            blocks: Vec::new(),
        });
        // Keep the absolute time in µs (rounded to nearest) until the origin is known.
        let us = (ns + 500).div_euclid(1000);
        out.last_mut().expect("just pushed").at_us = u64::try_from(us)
            .map_err(|_| err(line, names[0], format!("`{stamp}` is before 1970")))?;
    }
    Ok((out, rounded))
}

/// A token count: a whole number of at least 1.
fn tokens(cell: &str, line: usize, field: &str, err: Err) -> Result<u32, ParseError> {
    match cell.parse::<u64>() {
        Ok(0) => Err(err(
            line,
            field,
            format!("{field} is 0: every request has at least one token in and one out"),
        )),
        Ok(n) => u32::try_from(n).map_err(|_| {
            err(
                line,
                field,
                format!("{field} {n} is more tokens than any server takes"),
            )
        }),
        Err(_) if cell.starts_with('-') => {
            Err(err(line, field, format!("{field} `{cell}` is negative")))
        }
        Err(_) => Err(err(
            line,
            field,
            format!("{field} `{cell}` is not a whole number of tokens"),
        )),
    }
}

/// Nanoseconds since 1970-01-01 of `YYYY-MM-DD HH:MM:SS[.f…]` (no zone: the file's own clock;
/// only differences are used). Every fractional digit is kept, up to 9.
fn azure_ns(s: &str) -> Option<i128> {
    let (date, time) = s.split_once([' ', 'T'])?;
    let mut d = date.splitn(3, '-');
    let num = |p: &str, len: usize| {
        (p.len() == len && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<i64>().ok())
            .flatten()
    };
    let (y, m, day) = (num(d.next()?, 4)?, num(d.next()?, 2)?, num(d.next()?, 2)?);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.splitn(3, ':');
    let (hh, mm, ss) = (num(t.next()?, 2)?, num(t.next()?, 2)?, num(t.next()?, 2)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    if frac.len() > 9
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || (time.contains('.') && frac.is_empty())
    {
        return None;
    }
    let frac_ns = if frac.is_empty() {
        0
    } else {
        frac.parse::<i128>().ok()? * 10i128.pow(9 - frac.len() as u32)
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    Some(i128::from(secs) * 1_000_000_000 + frac_ns)
}

fn read_mooncake<'a>(
    lines: impl Iterator<Item = (usize, &'a str)>,
    err: Err,
) -> Result<(Vec<Request>, usize), ParseError> {
    let mut out: Vec<Request> = Vec::new();
    let mut rounded = 0;
    for (line, text) in lines {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            err(
                line,
                "layout",
                format!("not a JSON object on one line: {e}"),
            )
        })?;
        let Value::Object(row) = value else {
            return Err(err(line, "layout", "not a JSON object; Mooncake's rows are {\"timestamp\", \"input_length\", \"output_length\", \"hash_ids\"}".into()));
        };
        if out.is_empty() && !(row.contains_key("timestamp") && row.contains_key("input_length")) {
            return Err(err(
                line,
                "layout",
                "unknown workload layout: a JSON row without `timestamp` and `input_length` (Mooncake's keys)".into(),
            ));
        }
        let ms = match row.get("timestamp") {
            None | Some(Value::Null) => {
                return Err(err(line, "timestamp", "timestamp is missing".into()))
            }
            Some(Value::Number(n)) => n.as_f64().filter(|v| v.is_finite()).unwrap_or(f64::NAN),
            Some(other) => {
                return Err(err(
                    line,
                    "timestamp",
                    format!("timestamp {other} is not a number of ms"),
                ))
            }
        };
        if !(0.0..=1e15).contains(&ms) {
            return Err(err(
                line,
                "timestamp",
                format!("timestamp {ms} must be a number of ms from 0 (the first request) up"),
            ));
        }
        let us_exact = ms * 1000.0;
        let us = us_exact.round();
        if (us - us_exact).abs() > 1e-6 {
            rounded += 1;
        }
        let us = us as u64;
        if let Some(before) = out.last() {
            if us < before.at_us {
                return Err(err(
                    line,
                    "timestamp",
                    format!("timestamp {ms} is earlier than line {}'s: a workload's timestamps never decrease", before.line),
                ));
            }
        }
        let length = |field: &str| -> Result<u32, ParseError> {
            match row.get(field) {
                None | Some(Value::Null) => Err(err(line, field, format!("{field} is missing"))),
                Some(Value::Number(n)) => tokens(&n.to_string(), line, field, err),
                Some(other) => Err(err(
                    line,
                    field,
                    format!("{field} {other} is not a whole number of tokens"),
                )),
            }
        };
        let (input_tokens, output_tokens) = (length("input_length")?, length("output_length")?);
        let blocks = match row.get("hash_ids") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(ids)) => ids
                .iter()
                .map(|v| {
                    v.as_u64().ok_or_else(|| {
                        err(
                            line,
                            "hash_ids",
                            format!("hash_ids holds {v}, not a block id (a whole number from 0)"),
                        )
                    })
                })
                .collect::<Result<Vec<u64>, _>>()?,
            Some(other) => {
                return Err(err(
                    line,
                    "hash_ids",
                    format!("hash_ids {other} is not a list of block ids"),
                ))
            }
        };
        let needed = input_tokens.div_ceil(MOONCAKE_BLOCK_TOKENS) as usize;
        if !blocks.is_empty() && blocks.len() != needed {
            return Err(err(
                line,
                "hash_ids",
                format!(
                    "{} blocks, but input_length {input_tokens} fills {needed} of Mooncake's {MOONCAKE_BLOCK_TOKENS}-token blocks",
                    blocks.len()
                ),
            ));
        }
        out.push(Request {
            line,
            at_us: us,
            input_tokens,
            output_tokens,
            blocks,
        });
    }
    Ok((out, rounded))
}

impl Replay {
    /// Every parameter checked, each refusal naming its flag.
    pub fn check(&self) -> Result<(), ReplayError> {
        if !(self.speedup.is_finite() && self.speedup > 0.0 && self.speedup <= 1e6) {
            return Err(replay_error(
                "speedup",
                format!(
                    "must be above 0 (2 replays twice as fast), got {}",
                    self.speedup
                ),
            ));
        }
        if !(self.from_s.is_finite() && self.from_s >= 0.0) {
            return Err(replay_error(
                "from",
                format!("must be 0 s or later in the file, got {}", self.from_s),
            ));
        }
        if let Some(f) = self.for_s {
            if !(f.is_finite() && f > 0.0) {
                return Err(replay_error("for", format!("must be above 0 s, got {f}")));
            }
        }
        if let Some(m) = self.max_idle_s {
            if !(m.is_finite() && m > 0.0) {
                return Err(replay_error(
                    "max-idle",
                    format!("must be above 0 s, got {m}"),
                ));
            }
        }
        Ok(())
    }
}

/// Rounds ms to the microsecond a trace keeps.
fn ms_at_us(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

impl Workload {
    /// The file's span, first request to last, in seconds.
    pub fn span_s(&self) -> f64 {
        self.requests.last().map_or(0.0, |r| r.at_us as f64 / 1e6)
    }

    /// The requests `replay` sends, and when. In order: the window is cut in the file's own
    /// seconds (`from ≤ t < from + for`) and re-based so its first request leaves at 0; the
    /// gaps are divided by the speed-up; then any gap still longer than the idle cap is cut to
    /// it. Each time is rounded to the microsecond once, at the end.
    pub fn replay(&self, replay: &Replay) -> Result<Replayed, ReplayError> {
        replay.check()?;
        let from_us = replay.from_s * 1e6;
        let until_us = replay.for_s.map_or(f64::INFINITY, |f| from_us + f * 1e6);
        let window: Vec<(usize, &Request)> = self
            .requests
            .iter()
            .enumerate()
            .filter(|(_, r)| (r.at_us as f64) >= from_us && (r.at_us as f64) < until_us)
            .collect();
        let Some(&(_, first)) = window.first() else {
            return Err(replay_error(
                "from",
                format!(
                    "the window from {} s{} holds no request of {} (its requests span 0 – {:.3} s); choose an earlier --from or a longer --for",
                    replay.from_s,
                    replay.for_s.map(|f| format!(" for {f} s")).unwrap_or_default(),
                    self.file,
                    self.span_s()
                ),
            ));
        };
        let origin_us = first.at_us;
        let cap_ms = replay.max_idle_s.map(|s| s * 1000.0);
        let (mut shift_ms, mut gaps_cut, mut previous_ms) = (0.0, 0, 0.0);
        let mut requests = Vec::with_capacity(window.len());
        for (index, r) in window {
            let scaled_ms = (r.at_us - origin_us) as f64 / 1000.0 / replay.speedup;
            if let Some(cap) = cap_ms {
                let gap = scaled_ms - previous_ms;
                if gap > cap {
                    shift_ms += gap - cap;
                    gaps_cut += 1;
                }
            }
            previous_ms = scaled_ms;
            requests.push(Planned {
                index,
                at_ms: ms_at_us(scaled_ms - shift_ms),
                input_tokens: r.input_tokens,
                output_tokens: r.output_tokens,
                blocks: r.blocks.clone(),
            });
        }
        Ok(Replayed {
            requests,
            idle_cut_s: ms_at_us(shift_ms) / 1000.0,
            gaps_cut,
        })
    }

    /// The header's `workload` record: the file by name and hash (never a path), its layout and
    /// the replay's parameters. The caller adds how prompt lengths were made (`input_lengths`).
    pub fn header_record(&self, replay: &Replay, replayed: &Replayed) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("file".into(), json!(self.file));
        m.insert("sha256".into(), json!(self.sha256));
        m.insert("layout".into(), json!(self.layout.name()));
        m.insert("file_requests".into(), json!(self.requests.len()));
        m.insert("speedup".into(), json!(replay.speedup));
        m.insert("from_s".into(), json!(replay.from_s));
        m.insert("for_s".into(), json!(replay.for_s));
        m.insert("max_idle_s".into(), json!(replay.max_idle_s));
        m.insert("requests".into(), json!(replayed.requests.len()));
        m.insert("idle_cut_s".into(), json!(replayed.idle_cut_s));
        if self.layout == Layout::MooncakeJsonl {
            m.insert("block_tokens".into(), json!(MOONCAKE_BLOCK_TOKENS));
        }
        m.insert("sub_us_rounded".into(), json!(self.sub_us_rounded));
        m
    }
}

/// How many of `requests`' blocks were already sent by an earlier request of the same replay:
/// a prefix the server could serve from its cache. Per request, in order.
pub fn blocks_seen_before(requests: &[Planned]) -> Vec<u32> {
    let mut seen = std::collections::HashSet::new();
    requests
        .iter()
        .map(|r| {
            let before = r.blocks.iter().filter(|b| seen.contains(*b)).count() as u32;
            seen.extend(r.blocks.iter().copied());
            before
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn azure(rows: &str) -> Result<Workload, ParseError> {
        read(
            "dir/a.csv",
            format!("TIMESTAMP,ContextTokens,GeneratedTokens\r\n{rows}").as_bytes(),
        )
    }

    #[test]
    fn azure_keeps_every_fractional_digit_to_the_microsecond() {
        let w = azure("2023-11-16 18:15:46.6805900,374,44\r\n2023-11-16 18:15:50.9951690,396,109\r\n2023-11-16 18:15:50.9951695,1,1").unwrap();
        assert_eq!(w.file, "a.csv", "no directory");
        assert_eq!(
            w.requests.iter().map(|r| r.at_us).collect::<Vec<_>>(),
            [0, 4_314_579, 4_314_580]
        );
        assert_eq!(
            w.sub_us_rounded, 1,
            "the 7th digit 5 is rounded and counted"
        );
        // A day boundary and a month boundary count whole days.
        let w = azure("2023-02-28 23:59:59.9,1,1\r\n2023-03-01 00:00:00.1,1,1").unwrap();
        assert_eq!(w.requests[1].at_us, 200_000);
    }

    #[test]
    fn bad_rows_name_file_line_and_field() {
        let e = azure("2023-11-16 18:15:46.68,374,44\r\n2023-11-16 18:15:45.00,1,1").unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.field.as_deref()),
            ("a.csv", Some(3), Some("TIMESTAMP"))
        );
        assert!(e.to_string().contains("never decrease"), "{e}");
        let e = azure("2023-11-16 18:15:46.68,0,44").unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(2), Some("ContextTokens"))
        );
        let e = azure("2023-11-16 18:15:46.68,12,").unwrap_err();
        assert_eq!(
            (e.line, e.field.as_deref()),
            (Some(2), Some("GeneratedTokens"))
        );
        assert!(e.message.contains("missing"));
        let e = azure("2023-11-16 18:15:46.68,-3,4").unwrap_err();
        assert!(e.message.contains("negative"), "{e}");
        let e = azure("yesterday,3,4").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("TIMESTAMP"));
        let e = read("x.csv", b"time,in,out\n1,2,3").unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(1), Some("layout")));
        assert!(
            e.message
                .contains("TIMESTAMP,ContextTokens,GeneratedTokens"),
            "{e}"
        );
    }

    #[test]
    fn mooncake_rows_are_checked() {
        let ok = read("m.jsonl", b"{\"timestamp\": 5, \"input_length\": 513, \"output_length\": 2, \"hash_ids\": [7, 8]}\n").unwrap();
        assert_eq!(ok.requests[0].blocks, [7, 8]);
        assert_eq!(ok.requests[0].at_us, 0, "offsets from the first request");
        for (row, line, field) in [
            ("{\"timestamp\": -1, \"input_length\": 1, \"output_length\": 1}", 2, "timestamp"),
            ("{\"timestamp\": 3, \"input_length\": 1, \"output_length\": 1}", 2, "timestamp"),
            ("{\"timestamp\": 9, \"input_length\": 0, \"output_length\": 1}", 2, "input_length"),
            ("{\"timestamp\": 9, \"input_length\": 1}", 2, "output_length"),
            ("{\"timestamp\": 9, \"input_length\": \"ten\", \"output_length\": 1}", 2, "input_length"),
            ("{\"timestamp\": 9, \"input_length\": 1025, \"output_length\": 1, \"hash_ids\": [1, 2]}", 2, "hash_ids"),
        ] {
            let text = format!("{{\"timestamp\": 4, \"input_length\": 1, \"output_length\": 1}}\n{row}\n");
            let e = read("m.jsonl", text.as_bytes()).unwrap_err();
            assert_eq!((e.file.as_str(), e.line, e.field.as_deref()), ("m.jsonl", Some(line), Some(field)), "{row}: {e}");
        }
        let e = read("m.jsonl", b"{\"ts\": 1}\n").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("layout"));
    }

    #[test]
    fn window_speedup_and_idle_cap_in_one_place() {
        let text = "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n\
                    {\"timestamp\": 1000, \"input_length\": 2, \"output_length\": 1}\n\
                    {\"timestamp\": 1500, \"input_length\": 3, \"output_length\": 1}\n\
                    {\"timestamp\": 61500, \"input_length\": 4, \"output_length\": 1}\n\
                    {\"timestamp\": 62000, \"input_length\": 5, \"output_length\": 1}\n";
        let w = read("m.jsonl", text.as_bytes()).unwrap();
        let at = |r: Replay| {
            w.replay(&r)
                .unwrap()
                .requests
                .iter()
                .map(|p| (p.index, p.at_ms))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            at(Replay {
                speedup: 2.0,
                ..Replay::default()
            }),
            [(0, 0.0), (1, 500.0), (2, 750.0), (3, 30750.0), (4, 31000.0)]
        );
        assert_eq!(
            at(Replay {
                from_s: 1.0,
                for_s: Some(60.6),
                ..Replay::default()
            }),
            [(1, 0.0), (2, 500.0), (3, 60500.0)]
        );
        let capped = w
            .replay(&Replay {
                speedup: 2.0,
                max_idle_s: Some(1.0),
                ..Replay::default()
            })
            .unwrap();
        assert_eq!(
            capped.requests.iter().map(|p| p.at_ms).collect::<Vec<_>>(),
            [0.0, 500.0, 750.0, 1750.0, 2000.0]
        );
        assert_eq!((capped.gaps_cut, capped.idle_cut_s), (1, 29.0));
        let e = w
            .replay(&Replay {
                from_s: 100.0,
                ..Replay::default()
            })
            .unwrap_err();
        assert_eq!(e.field, "from");
        assert_eq!(
            w.replay(&Replay {
                speedup: 0.0,
                ..Replay::default()
            })
            .unwrap_err()
            .field,
            "speedup"
        );
    }

    #[test]
    fn blocks_seen_before_counts_shared_prefixes() {
        let p = |blocks: &[u64]| Planned {
            index: 0,
            at_ms: 0.0,
            input_tokens: 1,
            output_tokens: 1,
            blocks: blocks.to_vec(),
        };
        assert_eq!(
            blocks_seen_before(&[p(&[0, 1, 2]), p(&[0, 3]), p(&[0, 1, 3, 4])]),
            [0, 1, 3]
        );
    }
}
