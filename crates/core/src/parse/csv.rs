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

/// Reads one record (RFC 4180) from the start of `text`: cells split at commas, a quoted cell
/// may hold commas, quotes (`""`) and line breaks. Whitespace around an unquoted cell is trimmed
/// (hand-typed tables write `R1, success`); a quoted cell is kept exactly, which is how
/// [`csv_cell`] writes a value with surrounding spaces — so reading and writing are symmetric.
/// Returns the cells, the bytes consumed (with the record's line break) and the line breaks
/// inside quotes.
fn read_record(text: &str) -> Result<(Vec<String>, usize, usize), String> {
    let bytes = text.as_bytes();
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut i = 0;
    let mut breaks = 0;
    loop {
        // Start of a cell: leading blanks, then maybe an opening quote.
        let mut j = i;
        while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
            j += 1;
        }
        if j < bytes.len() && bytes[j] == b'"' {
            i = j + 1;
            loop {
                let Some(off) = text[i..].find('"') else {
                    return Err("a quoted cell is not closed".into());
                };
                breaks += text[i..i + off].bytes().filter(|&b| b == b'\n').count();
                cell.push_str(&text[i..i + off]);
                i += off + 1;
                if bytes.get(i) == Some(&b'"') {
                    cell.push('"');
                    i += 1;
                } else {
                    break;
                }
            }
            // After the closing quote: blanks, then the end of the cell (anything else is kept).
            let rest_end = text[i..].find([',', '\n']).map_or(bytes.len(), |o| i + o);
            let tail = text[i..rest_end].trim_end_matches('\r');
            if !tail.trim().is_empty() {
                cell.push_str(tail.trim_end());
            }
            i = rest_end;
        } else {
            let end = text[i..].find([',', '\n']).map_or(bytes.len(), |o| i + o);
            cell.push_str(text[i..end].trim_end_matches('\r').trim());
            i = end;
        }
        cells.push(std::mem::take(&mut cell));
        match bytes.get(i) {
            Some(b',') => i += 1,
            Some(b'\n') => return Ok((cells, i + 1, breaks)),
            _ => return Ok((cells, i, breaks)),
        }
    }
}

/// Splits one CSV record into cells (RFC 4180 quoting, `""` for a quote inside quotes; a quoted
/// cell may hold a line break).
pub fn split_csv_line(line: &str) -> Result<Vec<String>, String> {
    let (cells, used, _) = read_record(line)?;
    if used < line.len() {
        return Err("more than one record: a line break outside quotes".into());
    }
    Ok(cells)
}

/// Quotes a cell when it needs it: a comma, quote or line break, or surrounding whitespace
/// (which the reader trims from an unquoted cell).
pub fn csv_cell(value: &str) -> String {
    let padded = value.starts_with(char::is_whitespace) || value.ends_with(char::is_whitespace);
    if padded || value.contains([',', '"', '\n', '\r']) {
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
    let mut defaults = HeaderDefaults {
        ttft_threshold_s: None,
        comparison: None,
    };
    let mut window_s: Option<(f64, usize)> = None;
    let mut cost: Option<(f64, usize)> = None;
    let mut currency: Option<String> = None;
    let mut columns: Option<HashMap<String, usize>> = None;
    let mut column_count = 0;
    let mut trace = Trace::default();
    let mut seen_ids: HashMap<String, usize> = HashMap::new();

    let mut pos = 0;
    let mut line_no = 0;
    while pos < text.len() {
        line_no += 1;
        let rest = &text[pos..];
        let raw = rest.split('\n').next().unwrap_or("");
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.len() > super::jsonl::MAX_LINE_BYTES {
            return Err(ParseError::new("this line is far too long for a CSV row").at_line(line_no));
        }
        if line.trim().is_empty() || (columns.is_none() && line.trim_start().starts_with('#')) {
            if columns.is_none() {
                if let Some(comment) = line.trim_start().strip_prefix('#') {
                    read_comment(
                        comment,
                        line_no,
                        &mut window_s,
                        &mut cost,
                        &mut currency,
                        &mut defaults,
                        &mut header,
                    )?;
                }
            }
            pos += raw.len() + 1;
            continue;
        }
        let (cells, used, breaks) =
            read_record(rest).map_err(|m| ParseError::new(m).at_line(line_no))?;
        if used > super::jsonl::MAX_LINE_BYTES {
            return Err(ParseError::new("this row is far too long for a CSV row").at_line(line_no));
        }
        let row_line = line_no;
        pos += used;
        line_no += breaks;
        let Some(cols) = columns.as_ref() else {
            let mut map = HashMap::new();
            for (i, name) in cells.iter().enumerate() {
                let name = name.trim().to_ascii_lowercase();
                if map.insert(name.clone(), i).is_some() {
                    return Err(ParseError::new(format!(
                        "the header row names the column `{name}` twice; which one holds the values is ambiguous"
                    ))
                    .at_line(row_line)
                    .field(name));
                }
            }
            for required in REQUIRED_COLUMNS {
                if !map.contains_key(required) {
                    return Err(ParseError::new(format!(
                        "the header row has no `{required}` column; a classroom CSV needs {}",
                        REQUIRED_COLUMNS.join(", ")
                    ))
                    .at_line(row_line)
                    .field(required));
                }
            }
            column_count = cells.len();
            columns = Some(map);
            continue;
        };
        let line_no = row_line;
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
        header.window = Some(Window {
            start_ms: 0.0,
            length_s,
        });
        super::jsonl::validate_header(&header).map_err(|e| e.at_line(line).field("window_s"))?;
    }
    if let Some((amount, line)) = cost {
        header.window_cost = Some(Money {
            amount,
            currency: currency.unwrap_or_default(),
        });
        super::jsonl::validate_header(&header).map_err(|e| e.at_line(line).field("window_cost"))?;
    }
    if defaults.ttft_threshold_s.is_some() || defaults.comparison.is_some() {
        header.defaults = Some(defaults);
        super::jsonl::validate_header(&header).map_err(|e| e.field("ttft_threshold_s"))?;
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

/// One `# key: value` line before the header row (the window, its cost, the threshold, …).
fn read_comment(
    comment: &str,
    line_no: usize,
    window_s: &mut Option<(f64, usize)>,
    cost: &mut Option<(f64, usize)>,
    currency: &mut Option<String>,
    defaults: &mut HeaderDefaults,
    header: &mut Header,
) -> Result<(), ParseError> {
    let Some((key, value)) = comment.split_once(':') else {
        return Ok(());
    };
    let (key, value) = (key.trim(), value.trim());
    let number = |field: &str| -> Result<f64, ParseError> {
        value
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| {
                ParseError::new(format!("`{value}` is not a number"))
                    .at_line(line_no)
                    .field(field.to_string())
            })
    };
    match key {
        "window_s" => *window_s = Some((number("window_s")?, line_no)),
        "window_cost" => *cost = Some((number("window_cost")?, line_no)),
        "currency" => *currency = Some(value.to_string()),
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
    Ok(())
}

fn parse_row(cols: &HashMap<String, usize>, cells: &[String]) -> Result<Attempt, ParseError> {
    // Cells come trimmed unless quoted (see `read_record`): a quoted " a " is its own id, so ids
    // and details are taken exactly; numbers and keywords are trimmed even when quoted.
    let exact = |name: &str| {
        cols.get(name)
            .map(|&i| cells[i].as_str())
            .filter(|v| !v.is_empty())
    };
    let cell = |name: &str| exact(name).map(str::trim).filter(|v| !v.is_empty());
    let seconds = |name: &str| -> Result<Option<f64>, ParseError> {
        match cell(name) {
            None => Ok(None),
            Some(v) => {
                let parsed: f64 = v.parse().map_err(|_| {
                    ParseError::new(format!("`{v}` is not a number of seconds"))
                        .field(name.to_string())
                })?;
                if !parsed.is_finite() {
                    return Err(
                        ParseError::new(format!("`{v}` is not a time")).field(name.to_string())
                    );
                }
                if parsed < 0.0 {
                    return Err(
                        ParseError::new(format!("negative time {v} s")).field(name.to_string())
                    );
                }
                if parsed * 1e3 > crate::trace::MAX_TIME_MS {
                    return Err(ParseError::new(format!(
                        "{v} s is past the longest time a trace may hold (10^12 s, about 31,700 years)"
                    ))
                    .field(name.to_string()));
                }
                // Seconds to ms rounded to a microsecond, exactly as the threshold is, so a cell
                // equal to the threshold compares equal (1.001 × 1000 is 1000.9999999999999).
                Ok(Some(crate::units::ms_from_s(parsed)))
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
    let id = exact("id")
        .ok_or_else(|| ParseError::new("every row needs an id").field("id"))?
        .to_string();
    let http_status = cell("http_status")
        .map(|v| {
            v.parse::<u16>().map_err(|_| {
                ParseError::new(format!("`{v}` is not an HTTP status")).field("http_status")
            })
        })
        .transpose()?;
    let outcome_name = cell("outcome")
        .ok_or_else(|| ParseError::new("every row needs an outcome").field("outcome"))?;
    let outcome = Outcome::from_name(outcome_name, http_status).map_err(|m| {
        let field = if outcome_name == "http_error" {
            "http_status"
        } else {
            "outcome"
        };
        ParseError::new(m).field(field)
    })?;
    let quality_name = cell("quality").unwrap_or("");
    let quality = Quality::from_name(quality_name).ok_or_else(|| {
        ParseError::new(format!(
            "unknown quality `{quality_name}`; expected pass, fail or not_evaluated"
        ))
        .field("quality")
    })?;
    let phase = match cell("phase") {
        None | Some("measure") => Phase::Measure,
        Some("warmup") => Phase::Warmup,
        Some(other) => {
            return Err(ParseError::new(format!(
                "unknown phase `{other}`; expected warmup or measure"
            ))
            .field("phase"))
        }
    };
    let ttft_ms = seconds("ttft_s")?;
    let e2e_ms = seconds("e2e_s")?;
    if let (Some(t), Some(e)) = (ttft_ms, e2e_ms) {
        if t > e {
            return Err(
                ParseError::new("the first token cannot come after the end").field("ttft_s")
            );
        }
    }
    if matches!(
        outcome,
        Outcome::TimeoutBeforeFirstToken | Outcome::ConnectError
    ) && ttft_ms.is_some()
    {
        return Err(ParseError::new(format!(
            "outcome `{}` received no token: leave ttft_s empty (missing, not 0)",
            outcome.name()
        ))
        .field("ttft_s"));
    }
    Ok(Attempt {
        business_id: exact("business_id").unwrap_or(&id).to_string(),
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
        detail: exact("detail").map(str::to_string),
        quality,
        input_tokens: count("input_tokens")?,
        output_tokens: count("output_tokens")?,
        tokens_from_usage: false,
        event_tokens_estimated: false,
        reasoning: None,
        prompt: None,
        session: None,
    })
}
