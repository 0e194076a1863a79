//! `tracelab export --format parquet`: one row per attempt (every field of trace format v1, the
//! stream events as a list column of `{at_ms, tokens}`, the shard and its clock offset), the
//! header as file metadata — for DuckDB, Polars, Spark or Trino when a trace outgrows a browser
//! tab. Written a row group at a time ([`ParquetRows`]), zstd-compressed; the schema is
//! documented in docs/parquet.md.
//!
//! The writer lives in the recorder, not the core: the core stays free of heavy dependencies and
//! builds for wasm.

use std::io::Write;
use std::sync::Arc;

use parquet::basic::{Compression, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use serde_json::Value;
use tracelab_core::{write, Attempt, Header, Phase, Trace};

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
  OPTIONAL INT32 shard;
  OPTIONAL BYTE_ARRAY run_id (STRING);
  OPTIONAL DOUBLE clock_offset_ms;
}";

/// Rows per row group at most: DuckDB's own row group size (it reads a file's row groups in
/// parallel, one per thread); a trace of long streams closes its groups earlier
/// ([`GROUP_EVENTS`]). The writer holds one group's attempts.
pub const ROW_GROUP: usize = 122_880;

/// A group is also closed once its attempts hold this many stream events (16 bytes each in
/// memory, and again in the column being written): memory is set by the events a group holds,
/// so with ~50 events per attempt a group is ~20,000 rows and the writer stays under ~60 MB
/// (at 4 M events per group it took 215 MB).
const GROUP_EVENTS: usize = 1 << 20;

/// zstd's own default level: on the synthetic benchmark trace a third of the uncompressed size.
const ZSTD_LEVEL: i32 = 3;

/// The columns that put a shard's rows beside the other shards' (`tracelab record --shard`):
/// the same on every row of a file, so DuckDB or Spark reading every shard's file at once can
/// group by shard and place every time on one timeline without `tracelab merge`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunColumns {
    /// The header's `shard.index`; null for a trace that is not a shard.
    pub shard: Option<u32>,
    /// The header's `shard.run_id`, shared by every shard of one run.
    pub run_id: Option<String>,
    /// Milliseconds from the Unix epoch to the trace's time 0 (its `wall_clock_anchor_utc`), so
    /// `clock_offset_ms + start_ms` is the UTC instant, on one timeline across shards (the shift
    /// `tracelab merge` applies, before its choice of the earliest shard as 0).
    pub clock_offset_ms: Option<f64>,
}

impl RunColumns {
    /// From the header's wall-clock anchor and, for a JSON Lines trace, its first record as
    /// written (the `shard` object is the recorder's, not part of the parsed header).
    pub fn of(anchor_utc: Option<&str>, first_record: Option<&Value>) -> RunColumns {
        let shard = first_record.and_then(|h| h.get("shard"));
        RunColumns {
            shard: shard
                .and_then(|s| s.get("index"))
                .and_then(Value::as_u64)
                .and_then(|i| u32::try_from(i).ok()),
            run_id: shard
                .and_then(|s| s.get("run_id"))
                .and_then(Value::as_str)
                .map(str::to_string),
            clock_offset_ms: anchor_utc.and_then(crate::shard::rfc3339_epoch_ms),
        }
    }
}

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

/// Writes `trace`'s attempts to `out` (see [`ParquetRows`]).
pub fn write<W: Write + Send>(trace: &Trace, run: RunColumns, out: W) -> Result<(), String> {
    let mut rows = ParquetRows::new(out, &trace.header, run)?;
    for a in &trace.attempts {
        rows.push(a.clone())?;
    }
    rows.finish()
}

/// The Parquet file written as the attempts come, one row group at a time ([`ROW_GROUP`] rows
/// or [`GROUP_EVENTS`] stream events, whichever comes first). The header (conditions, window,
/// capabilities, source) goes into the file's key-value metadata as `tracelab.header` (the JSON
/// Lines header record), its conditions also alone as `tracelab.conditions`.
pub struct ParquetRows<W: Write + Send> {
    writer: SerializedFileWriter<W>,
    run: RunColumns,
    group: Vec<Attempt>,
    events: usize,
    rows_per_group: usize,
}

impl<W: Write + Send> ParquetRows<W> {
    pub fn new(out: W, header: &Header, run: RunColumns) -> Result<Self, String> {
        Self::with_group_rows(out, header, run, ROW_GROUP)
    }

    /// [`ParquetRows::new`] with smaller row groups (the tests check that a group is written
    /// before the next attempts are read).
    pub fn with_group_rows(
        out: W,
        header: &Header,
        run: RunColumns,
        rows_per_group: usize,
    ) -> Result<Self, String> {
        let schema = Arc::new(parse_message_type(SCHEMA).map_err(err)?);
        let level = ZstdLevel::try_new(ZSTD_LEVEL).map_err(err)?;
        let props = Arc::new(
            WriterProperties::builder()
                .set_created_by(concat!("tracelab ", env!("CARGO_PKG_VERSION")).into())
                .set_compression(Compression::ZSTD(level))
                .build(),
        );
        let mut writer = SerializedFileWriter::new(out, schema, props).map_err(err)?;
        writer.append_key_value_metadata(KeyValue::new(
            "tracelab.header".into(),
            write::header_line(header),
        ));
        let conditions = serde_json::to_string(&header.conditions).map_err(|e| e.to_string())?;
        writer.append_key_value_metadata(KeyValue::new("tracelab.conditions".into(), conditions));
        Ok(ParquetRows {
            writer,
            run,
            group: Vec::new(),
            events: 0,
            rows_per_group: rows_per_group.max(1),
        })
    }

    /// The next attempt, in the order rows are wanted (the trace's own).
    pub fn push(&mut self, a: Attempt) -> Result<(), String> {
        self.events += a.events.len();
        self.group.push(a);
        if self.group.len() >= self.rows_per_group || self.events >= GROUP_EVENTS {
            self.flush()?;
        }
        Ok(())
    }

    /// The last group and the footer; the file is complete when this returns.
    pub fn finish(mut self) -> Result<(), String> {
        self.flush()?;
        self.writer.close().map_err(err)?;
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        if self.group.is_empty() {
            return Ok(());
        }
        write_group(&mut self.writer, &self.group, &self.run)?;
        self.group.clear();
        self.events = 0;
        Ok(())
    }
}

/// One row group: each column in schema order.
fn write_group<W: Write + Send>(
    writer: &mut SerializedFileWriter<W>,
    group: &[Attempt],
    run: &RunColumns,
) -> Result<(), String> {
    let mut rg = writer.next_row_group().map_err(err)?;
    // Absolute times as the JSON Lines writer derives them: start + the measured offset.
    let abs = |a: &Attempt, rel: Option<f64>| rel.map(|r| a.start_ms.unwrap_or(0.0) + r);
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
                col.typed::<ByteArrayType>()
                    .write_batch(&values, None, None)
                    .map_err(err)?;
            }
            2 => {
                let values: Vec<i32> = group.iter().map(|a| a.attempt as i32).collect();
                col.typed::<Int32Type>()
                    .write_batch(&values, None, None)
                    .map_err(err)?;
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
                col.typed::<DoubleType>()
                    .write_batch(&values, Some(&defs), None)
                    .map_err(err)?;
            }
            12 => {
                let (values, defs) =
                    optional(group.iter().map(|a| a.outcome.http_status().map(i32::from)));
                col.typed::<Int32Type>()
                    .write_batch(&values, Some(&defs), None)
                    .map_err(err)?;
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
                col.typed::<ByteArrayType>()
                    .write_batch(&values, Some(&defs), None)
                    .map_err(err)?;
            }
            15 | 16 => {
                let (values, defs) = optional(group.iter().map(|a| {
                    if column == 15 {
                        a.input_tokens
                    } else {
                        a.output_tokens
                    }
                    .map(i64::from)
                }));
                col.typed::<Int64Type>()
                    .write_batch(&values, Some(&defs), None)
                    .map_err(err)?;
            }
            17 | 18 => {
                let values: Vec<bool> = group
                    .iter()
                    .map(|a| {
                        if column == 17 {
                            a.tokens_from_usage
                        } else {
                            a.event_tokens_estimated
                        }
                    })
                    .collect();
                col.typed::<BoolType>()
                    .write_batch(&values, None, None)
                    .map_err(err)?;
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
                    col.typed::<DoubleType>()
                        .write_batch(&at, Some(&defs), Some(&reps))
                        .map_err(err)?;
                } else {
                    col.typed::<Int64Type>()
                        .write_batch(&tokens, Some(&defs), Some(&reps))
                        .map_err(err)?;
                }
            }
            21 => {
                let (values, defs) = optional(group.iter().map(|_| run.shard.map(|i| i as i32)));
                col.typed::<Int32Type>()
                    .write_batch(&values, Some(&defs), None)
                    .map_err(err)?;
            }
            22 => {
                let (values, defs) = optional(group.iter().map(|_| run.run_id.as_deref()));
                let values: Vec<ByteArray> = values.into_iter().map(text).collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&values, Some(&defs), None)
                    .map_err(err)?;
            }
            23 => {
                let (values, defs) = optional(group.iter().map(|_| run.clock_offset_ms));
                col.typed::<DoubleType>()
                    .write_batch(&values, Some(&defs), None)
                    .map_err(err)?;
            }
            other => {
                return Err(format!(
                    "the Parquet schema has an unexpected column {other} (a bug)"
                ))
            }
        }
        col.close().map_err(err)?;
        column += 1;
    }
    rg.close().map_err(err)?;
    Ok(())
}
