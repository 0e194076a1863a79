//! The classroom CSV form: one row per attempt, times in seconds, a missing TTFT as an empty
//! cell. Optional `# key: value` lines before the header row carry the window, its cost and the
//! threshold, so a class can share one small file.

use std::collections::HashMap;

use crate::error::ParseError;
use crate::trace::*;

/// Columns every classroom CSV must have.
pub const REQUIRED_COLUMNS: [&str; 4] = ["id", "outcome", "ttft_s", "quality"];
/// Columns that may be present.
pub const OPTIONAL_COLUMNS: [&str; 10] = [
    "business_id",
    "attempt",
    "phase",
    "http_status",
    "start_s",
    "first_byte_s",
    "e2e_s",
    "input_tokens",
    "output_tokens",
    "detail",
];

/// Splits one CSV line into cells (RFC 4180 quoting, `""` for a quote inside quotes).
pub fn split_csv_line(line: &str) -> Result<Vec<String>, String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut at_cell_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    cell.push('"');
                }
                '"' => quoted = false,
                _ => cell.push(c),
            }
        } else {
            match c {
                '"' if at_cell_start => {
                    quoted = true;
                    at_cell_start = false;
                }
                ',' => {
                    cells.push(std::mem::take(&mut cell));
                    at_cell_start = true;
                }
                _ => {
                    cell.push(c);
                    at_cell_start = false;
                }
            }
        }
    }
    if quoted {
        return Err("a quoted cell is not closed".into());
    }
    cells.push(cell);
    Ok(cells)
}

/// Quotes a cell when it needs it.
pub fn csv_cell(value: &str) -> String {
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_string()
    }
}

/// Parses the classroom CSV form.
pub fn parse_csv(file: &str, text: &str) -> Result<Trace, ParseError> {
    parse_csv_inner(text).map_err(|e| e.in_file(file))
}

fn parse_csv_inner(text: &str) -> Result<Trace, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut header = Header::default();
    header.conditions.arrival = None;
    let mut defaults = HeaderDefaults { ttft_threshold_s: None, comparison: None };
    let mut window_s: Option<(f64, usize)> = None;
    let mut cost: Option<(f64, usize)> = None;
    let mut currency: Option<String> = None;
    let mut columns: Option<HashMap<String, usize>> = None;
    let mut column_count = 0;
    let mut trace = Trace::default();
    let mut seen_ids: HashMap<String, usize> = HashMap::new();

    for (index, raw) in text.split('\n').enumerate() {
        let line_no = index + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.len() > super::jsonl::MAX_LINE_BYTES {
            return Err(ParseError::new("this line is far too long for a CSV row").at_line(line_no));
        }
        if line.trim().is_empty() {
            continue;
        }
        if columns.is_none() {
            if let Some(comment) = line.trim_start().strip_prefix('#') {
                let Some((key, value)) = comment.split_once(':') else { continue };
                let (key, value) = (key.trim(), value.trim());
                let number = |field: &str| -> Result<f64, ParseError> {
                    value.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| {
                        ParseError::new(format!("`{value}` is not a number")).at_line(line_no).field(field.to_string())
                    })
                };
                match key {
                    "window_s" => window_s = Some((number("window_s")?, line_no)),
                    "window_cost" => cost = Some((number("window_cost")?, line_no)),
                    "currency" => currency = Some(value.to_string()),
                    "ttft_threshold_s" => defaults.ttft_threshold_s = Some(number("ttft_threshold_s")?),
                    "comparison" => {
                        defaults.comparison = Some(crate::Comparison::from_code(value).ok_or_else(|| {
                            ParseError::new(format!("`{value}` is not a comparison; use le or lt"))
                                .at_line(line_no)
                                .field("comparison")
                        })?)
                    }
                    "model" => header.conditions.model = Some(value.to_string()),
                    _ => {}
                }
                continue;
            }
            let names = split_csv_line(line).map_err(|m| ParseError::new(m).at_line(line_no))?;
            let mut map = HashMap::new();
            for (i, name) in names.iter().enumerate() {
                map.insert(name.trim().to_ascii_lowercase(), i);
            }
            for required in REQUIRED_COLUMNS {
                if !map.contains_key(required) {
                    return Err(ParseError::new(format!(
                        "the header row has no `{required}` column; a classroom CSV needs {}",
                        REQUIRED_COLUMNS.join(", ")
                    ))
                    .at_line(line_no)
                    .field(required));
                }
            }
            column_count = names.len();
            columns = Some(map);
            continue;
        }
        let cols = columns.as_ref().expect("set above");
        let cells = split_csv_line(line).map_err(|m| ParseError::new(m).at_line(line_no))?;
        if cells.len() != column_count {
            return Err(ParseError::new(format!(
                "this row has {} cells but the header row has {column_count} columns",
                cells.len()
            ))
            .at_line(line_no));
        }
        let attempt = parse_row(cols, &cells).map_err(|e| e.at_line(line_no))?;
        if let Some(first) = seen_ids.insert(attempt.id.clone(), line_no) {
            return Err(ParseError::new(format!(
                "duplicate attempt id `{}` (first used on line {first})",
                attempt.id
            ))
            .at_line(line_no)
            .field("id"));
        }
        trace.attempts.push(attempt);
    }
    if columns.is_none() {
        return Err(ParseError::new(format!(
            "the file is empty: a classroom CSV starts with a header row ({}, …)",
            REQUIRED_COLUMNS.join(", ")
        )));
    }
    if let Some((length_s, line)) = window_s {
        header.window = Some(Window { start_ms: 0.0, length_s });
        super::jsonl::validate_header(&header).map_err(|e| e.at_line(line).field("window_s"))?;
    }
    if let Some((amount, line)) = cost {
        header.window_cost = Some(Money { amount, currency: currency.unwrap_or_default() });
        super::jsonl::validate_header(&header).map_err(|e| e.at_line(line).field("window_cost"))?;
    }
    if defaults.ttft_threshold_s.is_some() || defaults.comparison.is_some() {
        header.defaults = Some(defaults);
    }
    // The classroom form has no footer: its rows are the whole table by construction.
    trace.footer = Some(Footer {
        finished_cleanly: true,
        attempts: trace.attempts.len() as u64,
        gpu_samples: 0,
    });
    trace.header = header;
    Ok(trace)
}

fn parse_row(cols: &HashMap<String, usize>, cells: &[String]) -> Result<Attempt, ParseError> {
    let cell = |name: &str| cols.get(name).map(|&i| cells[i].trim()).filter(|v| !v.is_empty());
    let seconds = |name: &str| -> Result<Option<f64>, ParseError> {
        match cell(name) {
            None => Ok(None),
            Some(v) => {
                let parsed: f64 = v.parse().map_err(|_| {
                    ParseError::new(format!("`{v}` is not a number of seconds")).field(name.to_string())
                })?;
                if !parsed.is_finite() {
                    return Err(ParseError::new(format!("`{v}` is not a time")).field(name.to_string()));
                }
                if parsed < 0.0 {
                    return Err(ParseError::new(format!("negative time {v} s")).field(name.to_string()));
                }
                // Seconds to ms rounded to a microsecond, exactly as the threshold is, so a cell
                // equal to the threshold compares equal (1.001 × 1000 is 1000.9999999999999).
                Ok(Some((parsed * 1e6).round() / 1e3))
            }
        }
    };
    let count = |name: &str| -> Result<Option<u32>, ParseError> {
        cell(name)
            .map(|v| {
                v.parse::<u32>().map_err(|_| {
                    ParseError::new(format!("`{v}` is not a whole number")).field(name.to_string())
                })
            })
            .transpose()
    };
    let id = cell("id").ok_or_else(|| ParseError::new("every row needs an id").field("id"))?.to_string();
    let http_status = cell("http_status")
        .map(|v| v.parse::<u16>().map_err(|_| ParseError::new(format!("`{v}` is not an HTTP status")).field("http_status")))
        .transpose()?;
    let outcome_name = cell("outcome").ok_or_else(|| ParseError::new("every row needs an outcome").field("outcome"))?;
    let outcome = Outcome::from_name(outcome_name, http_status).map_err(|m| {
        let field = if outcome_name == "http_error" { "http_status" } else { "outcome" };
        ParseError::new(m).field(field)
    })?;
    let quality_name = cell("quality").unwrap_or("");
    let quality = Quality::from_name(quality_name).ok_or_else(|| {
        ParseError::new(format!("unknown quality `{quality_name}`; expected pass, fail or not_evaluated")).field("quality")
    })?;
    let phase = match cell("phase") {
        None | Some("measure") => Phase::Measure,
        Some("warmup") => Phase::Warmup,
        Some(other) => {
            return Err(ParseError::new(format!("unknown phase `{other}`; expected warmup or measure")).field("phase"))
        }
    };
    let ttft_ms = seconds("ttft_s")?;
    let e2e_ms = seconds("e2e_s")?;
    if let (Some(t), Some(e)) = (ttft_ms, e2e_ms) {
        if t > e {
            return Err(ParseError::new("the first token cannot come after the end").field("ttft_s"));
        }
    }
    if matches!(outcome, Outcome::TimeoutBeforeFirstToken | Outcome::ConnectError) && ttft_ms.is_some() {
        return Err(ParseError::new(format!(
            "outcome `{}` received no token: leave ttft_s empty (missing, not 0)",
            outcome.name()
        ))
        .field("ttft_s"));
    }
    Ok(Attempt {
        business_id: cell("business_id").unwrap_or(&id).to_string(),
        id,
        attempt: count("attempt")?.unwrap_or(1),
        phase,
        intended_start_ms: None,
        start_ms: seconds("start_s")?,
        first_byte_ms: seconds("first_byte_s")?,
        ttft_ms,
        events: Vec::new(),
        last_token_ms: None,
        e2e_ms,
        outcome,
        detail: cell("detail").map(str::to_string),
        quality,
        input_tokens: count("input_tokens")?,
        output_tokens: count("output_tokens")?,
        tokens_from_usage: false,
        event_tokens_estimated: false,
    })
}
