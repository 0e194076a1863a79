//! Naming the field that stops a file from being read, without a path-tracking deserializer (which
//! would put a second copy of every deserializer in the browser's download; see
//! `tracelab_core::parse::jsonl`): the JSON value is walked with the schema's field names and each part is
//! tried with its own type, so the first part that fails on its own is the culprit.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::exercise::Exercise;
use crate::feedback::Answer;
use crate::json::{clean, json_kind, read_export, Found, Locate};
use crate::map::{SystemMap, MAP_KIND};
use tracelab_core::error::ParseError;

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A part read with its own type.
pub(crate) fn leaf<T: DeserializeOwned>(v: &Value, path: &str) -> Found {
    serde_json::from_value::<T>(v.clone())
        .err()
        .map(|e| (path.to_string(), clean(&e)))
}

pub(crate) fn list(v: &Value, path: &str, item: Locate) -> Found {
    match v {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| item(x, &format!("{path}[{i}]"))),
        _ => leaf::<Vec<Value>>(v, path),
    }
}

pub(crate) fn map(v: &Value, path: &str, item: Locate) -> Found {
    match v {
        Value::Object(entries) => entries.iter().find_map(|(k, x)| item(x, &join(path, k))),
        _ => leaf::<std::collections::BTreeMap<String, Value>>(v, path),
    }
}

pub(crate) fn optional(v: &Value, path: &str, inner: Locate) -> Found {
    if v.is_null() {
        None
    } else {
        inner(v, path)
    }
}

/// An object with these fields (name, required, how to read it); `strict` refuses others.
pub(crate) fn object(
    v: &Value,
    path: &str,
    fields: &[(&str, bool, Locate)],
    strict: bool,
) -> Found {
    let Value::Object(o) = v else {
        return Some((
            path.to_string(),
            format!("expected an object, found {}", json_kind(v)),
        ));
    };
    if strict {
        if let Some(k) = o
            .keys()
            .find(|k| !fields.iter().any(|(name, _, _)| name == k))
        {
            let names: Vec<String> = fields.iter().map(|(n, _, _)| format!("`{n}`")).collect();
            return Some((
                join(path, k),
                format!("unknown field `{k}`, expected one of {}", names.join(", ")),
            ));
        }
    }
    fields
        .iter()
        .find_map(|(name, required, read)| match o.get(*name) {
            None if *required => Some((join(path, name), format!("missing field `{name}`"))),
            None => None,
            Some(x) => read(x, &join(path, name)),
        })
}

pub(crate) fn string(v: &Value, p: &str) -> Found {
    leaf::<String>(v, p)
}
pub(crate) fn opt_string(v: &Value, p: &str) -> Found {
    leaf::<Option<String>>(v, p)
}
fn text(v: &Value, p: &str) -> Found {
    object(v, p, &[("en", true, string), ("zh", true, string)], false)
}
fn opt_text(v: &Value, p: &str) -> Found {
    optional(v, p, text)
}
fn pairs(v: &Value, p: &str) -> Found {
    map(v, p, |x, p| match x {
        Value::String(_) | Value::Number(_) => None,
        other => Some((
            p.to_string(),
            format!(
                "a setting must be a string or a number, found {}",
                json_kind(other)
            ),
        )),
    })
}
fn opt_pairs(v: &Value, p: &str) -> Found {
    optional(v, p, pairs)
}
pub(crate) fn strings(v: &Value, p: &str) -> Found {
    list(v, p, string)
}

pub(crate) fn course(v: &Value, p: &str) -> Found {
    object(
        v,
        p,
        &[
            ("version", true, leaf::<u32>),
            ("lessons", true, |v, p| list(v, p, lesson)),
            ("self_check", false, |v, p| {
                list(v, p, |v, p| {
                    object(v, p, &[("id", true, string), ("text", true, text)], true)
                })
            }),
            ("card_fields", false, |v, p| {
                list(v, p, |v, p| {
                    object(v, p, &[("id", true, string), ("help", true, text)], true)
                })
            }),
        ],
        true,
    )
}

fn lesson(v: &Value, p: &str) -> Found {
    object(
        v,
        p,
        &[
            ("id", true, string),
            ("number", true, leaf::<u32>),
            ("title", true, text),
            ("summary", false, opt_text),
            ("text", true, text),
            ("steps", false, |v, p| list(v, p, step)),
            ("exercises", false, |v, p| list(v, p, exercise)),
        ],
        true,
    )
}

fn step(v: &Value, p: &str) -> Found {
    object(
        v,
        p,
        &[
            ("id", true, string),
            ("label", true, text),
            ("sample", false, opt_string),
            ("diagram", false, opt_string),
            ("settings", false, pairs),
            ("row", false, leaf::<Option<usize>>),
            ("focus", false, opt_string),
        ],
        true,
    )
}

fn explained(v: &Value, p: &str) -> Found {
    object(
        v,
        p,
        &[
            ("id", true, string),
            ("text", true, text),
            ("explain", true, text),
        ],
        true,
    )
}

fn exercise(v: &Value, p: &str) -> Found {
    let fields: [(&str, bool, Locate); 22] = [
        ("id", true, string),
        ("kind", true, string),
        ("prompt", true, text),
        ("hint", false, opt_text),
        ("explain", false, opt_text),
        ("sample", false, opt_string),
        ("settings", false, opt_pairs),
        ("metric", false, opt_string),
        ("answer", false, leaf::<Option<f64>>),
        ("tolerance", false, leaf::<Option<f64>>),
        ("unit", false, opt_string),
        ("mistakes", false, |v, p| {
            optional(v, p, |v, p| {
                list(v, p, |v, p| {
                    object(
                        v,
                        p,
                        &[
                            ("value", true, leaf::<f64>),
                            ("settings", false, opt_pairs),
                            ("explain", true, text),
                        ],
                        true,
                    )
                })
            })
        }),
        ("options", false, |v, p| {
            optional(v, p, |v, p| {
                list(v, p, |v, p| {
                    object(
                        v,
                        p,
                        &[
                            ("id", true, string),
                            ("text", true, text),
                            ("correct", false, leaf::<bool>),
                            ("explain", true, text),
                        ],
                        true,
                    )
                })
            })
        }),
        ("multiple", false, leaf::<Option<bool>>),
        ("diagram", false, opt_string),
        ("distractors", false, |v, p| {
            optional(v, p, |v, p| {
                object(
                    v,
                    p,
                    &[
                        ("numerator", true, |v, p| list(v, p, explained)),
                        ("denominator", true, |v, p| list(v, p, explained)),
                        ("unit", true, |v, p| list(v, p, explained)),
                    ],
                    true,
                )
            })
        }),
        ("checklist", false, |v, p| {
            optional(v, p, |v, p| {
                list(v, p, |v, p| {
                    object(v, p, &[("id", true, string), ("text", true, text)], true)
                })
            })
        }),
        ("min_checked", false, leaf::<Option<usize>>),
        ("min_chars", false, leaf::<Option<usize>>),
        ("busy_pct", false, leaf::<Option<f64>>),
        ("min_rows", false, leaf::<Option<usize>>),
        ("min_steps", false, leaf::<Option<usize>>),
    ];
    // The parts first; then the whole, whose own checks (a field that does not belong to the
    // kind, a field the kind needs) are reported at the exercise.
    object(v, p, &fields, true).or_else(|| leaf::<Exercise>(v, p))
}

pub(crate) fn answer(v: &Value, p: &str) -> Found {
    let fields: [(&str, bool, Locate); 9] = [
        ("kind", true, string),
        ("value", false, leaf::<Option<f64>>),
        ("chosen", false, |v, p| optional(v, p, strings)),
        ("numerator", false, opt_string),
        ("denominator", false, opt_string),
        ("unit", false, opt_string),
        ("text", false, opt_string),
        ("checked", false, |v, p| optional(v, p, strings)),
        ("map", false, |v, p| optional(v, p, locate_map)),
    ];
    object(v, p, &fields, false).or_else(|| leaf::<Answer>(v, p))
}

fn map_step(v: &Value, p: &str) -> Found {
    object(
        v,
        p,
        &[("name", false, string), ("role", false, string)],
        false,
    )
}

/// Names the field that stops a learner's system map (a file, or a `draw_map` answer) from being
/// read; the map itself is `map.rs`'s.
pub(crate) fn locate_map(v: &Value, p: &str) -> Found {
    let fields: [(&str, bool, Locate); 6] = [
        ("steps", false, |v, p| list(v, p, map_step)),
        ("failure", false, leaf::<Option<usize>>),
        ("failure_note", false, string),
        ("sample", false, leaf::<Option<usize>>),
        ("clock", false, string),
        ("training", false, |v, p| list(v, p, map_step)),
    ];
    object(v, p, &fields, false)
}

impl SystemMap {
    /// Reads [`SystemMap::to_json`]'s file: missing fields are empty, a wrong type is an error
    /// naming the field, a file of another kind is refused.
    pub fn from_json(text: &str) -> Result<SystemMap, ParseError> {
        read_export(text, MAP_KIND, "system map", locate_map)
    }
}
