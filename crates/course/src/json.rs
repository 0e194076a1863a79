//! Reading the course's JSON files (course.json, an exported progress or card file) with the failing field named.

use serde::Deserialize;
use serde_json::Value;

use tracelab_core::error::ParseError;

use crate::MAX_IMPORT_BYTES;

/// Where a value fails: its path (`lessons[2].exercises[0].answer`) and why.
pub(crate) type Found = Option<(String, String)>;
pub(crate) type Locate = fn(&Value, &str) -> Found;

/// serde's message without serde_json's position.
pub(crate) fn clean(e: &serde_json::Error) -> String {
    let message = e.to_string();
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    }
}

/// A JSON syntax error, with its line and column.
pub(crate) fn json_error(e: &serde_json::Error, file: &str) -> ParseError {
    let message = e.to_string();
    let message = match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    };
    let error = ParseError::new(format!(
        "not valid JSON at column {}: {message}",
        e.column()
    ))
    .in_file(file);
    if e.line() > 0 {
        error.at_line(e.line())
    } else {
        error
    }
}

/// Deserialises `value`; on failure, `locate` names the field at fault (see `locate.rs`).
pub(crate) fn from_value<T: for<'de> Deserialize<'de>>(
    value: Value,
    locate: Locate,
    file: &str,
) -> Result<T, ParseError> {
    // From an owned value, as `parse/jsonl.rs` does, so the browser's download holds one kind of
    // deserializer for these types.
    match serde_json::from_value::<T>(value.clone()) {
        Ok(t) => Ok(t),
        Err(e) => {
            let (path, message) = locate(&value, "").unwrap_or_else(|| (String::new(), clean(&e)));
            let error = ParseError::new(message).in_file(file);
            Err(if path.is_empty() {
                error
            } else {
                error.field(path)
            })
        }
    }
}

/// Reads a JSON file the lab exported (progress, card): size, emptiness and `kind` checked, then
/// deserialised with the failing field named by `locate`.
pub(crate) fn read_export<T: for<'de> Deserialize<'de>>(
    text: &str,
    kind: &str,
    file: &str,
    locate: Locate,
) -> Result<T, ParseError> {
    if text.len() > MAX_IMPORT_BYTES {
        return Err(ParseError::new(format!(
            "the file is larger than {} MiB",
            MAX_IMPORT_BYTES / (1024 * 1024)
        ))
        .in_file(file));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(ParseError::new("the file is empty").in_file(file));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| json_error(&e, file))?;
    let Some(object) = value.as_object() else {
        return Err(ParseError::new(format!(
            "expected a JSON object, found {}",
            json_kind(&value)
        ))
        .in_file(file));
    };
    match object.get("kind") {
        Some(Value::String(k)) if k == kind => {}
        Some(other) => {
            return Err(ParseError::new(format!("expected `{kind}`, found {other}"))
                .field("kind")
                .in_file(file));
        }
        None => {
            return Err(
                ParseError::new(format!("missing: this is not a `{kind}` file"))
                    .field("kind")
                    .in_file(file),
            )
        }
    }
    match object.get("version") {
        Some(v) if v.as_u64() == Some(1) => {}
        Some(v) => {
            return Err(
                ParseError::new(format!("this Trace Lab reads version 1, found {v}"))
                    .field("version")
                    .in_file(file),
            );
        }
        None => return Err(ParseError::new("missing").field("version").in_file(file)),
    }
    from_value(value, locate, file)
}

pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
