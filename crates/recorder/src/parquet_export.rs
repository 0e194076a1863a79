//! `tracelab export --format parquet`: one row per attempt (every field of trace format v1, the
//! stream events as a list column of `{at_ms, tokens}`), the header as file metadata — for
//! DuckDB, Polars, Spark or Trino when a trace outgrows a browser tab.
//!
//! The writer lives in the recorder, not the core: the core stays free of heavy dependencies and
//! builds for wasm. Only Parquet's plain encoding is used (no compression codec is linked).

use std::path::Path;
use std::sync::Arc;

use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use tracelab_core::{write, Phase, Trace};

/// The columns, in the order they are written. Times are ms on the run's clock as in the JSON
/// Lines format; `ttft_ms` and `e2e_ms` are the durations the core measures from them.
const SCHEMA: &str = "
message tracelab_attempt {
  REQUIRED BYTE_ARRAY id (STRING);
  REQUIRED BYTE_ARRAY business_id (STRING);
  REQUIRED INT32 attempt;
  REQUIRED BYTE_ARRAY phase (STRING);
  OPTIONAL DOUBLE intended_start_ms;
  OPTIONAL DOUBLE start_ms;
  OPTIONAL DOUBLE first_byte_ms;
  OPTIONAL DOUBLE first_token_ms;
  OPTIONAL DOUBLE end_ms;
  OPTIONAL DOUBLE ttft_ms;
  OPTIONAL DOUBLE e2e_ms;
  REQUIRED BYTE_ARRAY outcome (STRING);
  OPTIONAL INT32 http_status;
  OPTIONAL BYTE_ARRAY detail (STRING);
  REQUIRED BYTE_ARRAY quality (STRING);
  OPTIONAL INT64 input_tokens;
  OPTIONAL INT64 output_tokens;
  REQUIRED BOOLEAN tokens_from_usage;
  REQUIRED BOOLEAN event_tokens_estimated;
  REQUIRED group events (LIST) {
    REPEATED group list {
      REQUIRED group element {
        REQUIRED DOUBLE at_ms;
        REQUIRED INT64 tokens;
      }
    }
  }
}";

/// Rows per row group: bounded memory per group whatever the trace's size.
const ROW_GROUP: usize = 65_536;

fn err(e: parquet::errors::ParquetError) -> String {
    format!("cannot write the Parquet file: {e}")
}

/// One optional column: values of the present rows, definition level 1 / 0 per row.
fn optional<T: Copy>(rows: impl Iterator<Item = Option<T>>) -> (Vec<T>, Vec<i16>) {
    let (mut values, mut defs) = (Vec::new(), Vec::new());
    for v in rows {
        defs.push(i16::from(v.is_some()));
        values.extend(v);
    }
    (values, defs)
}

fn text(s: &str) -> ByteArray {
    ByteArray::from(s.as_bytes().to_vec())
}

/// Writes `trace`'s attempts to `path`; the header (conditions, window, capabilities, source)
/// goes into the file's key-value metadata as `tracelab.header` (the JSON Lines header record),
/// its conditions also alone as `tracelab.conditions`.
pub fn write(trace: &Trace, path: &Path) -> Result<(), String> {
    let schema = Arc::new(parse_message_type(SCHEMA).map_err(err)?);
    let props = Arc::new(WriterProperties::builder().set_created_by(concat!("tracelab ", env!("CARGO_PKG_VERSION")).into()).build());
    let file = std::fs::File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mut writer = SerializedFileWriter::new(file, schema, props).map_err(err)?;
    let header = write::header_line(&trace.header);
    writer.append_key_value_metadata(KeyValue::new("tracelab.header".into(), header));
    let conditions = serde_json::to_string(&trace.header.conditions).map_err(|e| e.to_string())?;
    writer.append_key_value_metadata(KeyValue::new("tracelab.conditions".into(), conditions));

    for group in trace.attempts.chunks(ROW_GROUP) {
        let mut rg = writer.next_row_group().map_err(err)?;
        // Absolute times as the JSON Lines writer derives them: start + the measured offset.
        let abs = |a: &tracelab_core::Attempt, rel: Option<f64>| rel.map(|r| a.start_ms.unwrap_or(0.0) + r);
        let mut column = 0;
        while let Some(mut col) = rg.next_column().map_err(err)? {
            match column {
                0 | 1 | 3 | 11 | 14 => {
                    let values: Vec<ByteArray> = group
                        .iter()
                        .map(|a| match column {
                            0 => text(&a.id),
                            1 => text(&a.business_id),
                            3 => text(match a.phase {
                                Phase::Warmup => "warmup",
                                Phase::Measure => "measure",
                            }),
                            11 => text(a.outcome.name()),
                            _ => text(a.quality.name()),
                        })
                        .collect();
                    col.typed::<ByteArrayType>().write_batch(&values, None, None).map_err(err)?;
                }
                2 => {
                    let values: Vec<i32> = group.iter().map(|a| a.attempt as i32).collect();
                    col.typed::<Int32Type>().write_batch(&values, None, None).map_err(err)?;
                }
                4..=10 => {
                    let (values, defs) = optional(group.iter().map(|a| match column {
                        4 => a.intended_start_ms,
                        5 => a.start_ms,
                        6 => abs(a, a.first_byte_ms),
                        7 => abs(a, a.ttft_ms),
                        8 => abs(a, a.e2e_ms),
                        9 => a.ttft_ms,
                        _ => a.e2e_ms,
                    }));
                    col.typed::<DoubleType>().write_batch(&values, Some(&defs), None).map_err(err)?;
                }
                12 => {
                    let (values, defs) = optional(group.iter().map(|a| a.outcome.http_status().map(i32::from)));
                    col.typed::<Int32Type>().write_batch(&values, Some(&defs), None).map_err(err)?;
                }
                13 => {
                    let mut defs = Vec::new();
                    let values: Vec<ByteArray> = group
                        .iter()
                        .filter_map(|a| {
                            defs.push(i16::from(a.detail.is_some()));
                            a.detail.as_deref().map(text)
                        })
                        .collect();
                    col.typed::<ByteArrayType>().write_batch(&values, Some(&defs), None).map_err(err)?;
                }
                15 | 16 => {
                    let (values, defs) = optional(group.iter().map(|a| {
                        if column == 15 { a.input_tokens } else { a.output_tokens }.map(i64::from)
                    }));
                    col.typed::<Int64Type>().write_batch(&values, Some(&defs), None).map_err(err)?;
                }
                17 | 18 => {
                    let values: Vec<bool> = group
                        .iter()
                        .map(|a| if column == 17 { a.tokens_from_usage } else { a.event_tokens_estimated })
                        .collect();
                    col.typed::<BoolType>().write_batch(&values, None, None).map_err(err)?;
                }
                19 | 20 => {
                    // The list: an attempt without events is one empty-list entry (definition 0);
                    // each event is definition 1, repetition 0 for an attempt's first and 1 after.
                    let (mut defs, mut reps) = (Vec::new(), Vec::new());
                    let (mut at, mut tokens) = (Vec::new(), Vec::new());
                    for a in group {
                        if a.events.is_empty() {
                            defs.push(0);
                            reps.push(0);
                        }
                        for (i, e) in a.events.iter().enumerate() {
                            defs.push(1);
                            reps.push(i16::from(i > 0));
                            at.push(a.start_ms.unwrap_or(0.0) + e.at_ms);
                            tokens.push(i64::from(e.tokens));
                        }
                    }
                    if column == 19 {
                        col.typed::<DoubleType>().write_batch(&at, Some(&defs), Some(&reps)).map_err(err)?;
                    } else {
                        col.typed::<Int64Type>().write_batch(&tokens, Some(&defs), Some(&reps)).map_err(err)?;
                    }
                }
                other => return Err(format!("the Parquet schema has an unexpected column {other} (a bug)")),
            }
            col.close().map_err(err)?;
            column += 1;
        }
        rg.close().map_err(err)?;
    }
    writer.close().map_err(err)?;
    Ok(())
}
