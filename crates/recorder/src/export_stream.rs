//! `tracelab export` of a JSON Lines trace as a stream: the attempts go from the core's streamed
//! reader (`tracelab_core::parse::stream::visit`) to the output one at a time, so memory never
//! grows with the file. Every format writes the bytes its whole-trace export writes:
//!
//! - CSV: each row as its attempt is read, in the file's order;
//! - the cards: the streamed index `tracelab report` uses (~120 bytes per attempt), then the card
//!   (a trace with a peer tool's own figures is left to the whole-file export, which recomputes
//!   them from the attempts);
//! - Perfetto: slices are written in start order, and a trace's attempts are in the order they
//!   finished, so they are sorted on disk first ([`crate::spill`]), beside the output;
//! - Parquet: a row group at a time ([`crate::parquet_export::ParquetRows`]).

use std::fmt;
use std::io::{self, BufRead, Write};
use std::path::Path;

use tracelab_core::export::{self, CardFacts, PerfettoWriter, Slots};
use tracelab_core::parse::stream::{self, StreamError};
use tracelab_core::{Attempt, Header, Lang, Metrics, Settings};

use crate::parquet_export::{ParquetRows, RunColumns};
use crate::spill::Spill;

/// What to write (the formats of `tracelab export`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    CardMd,
    CardJson,
    Perfetto,
    Parquet,
}

/// Why a streamed export stopped.
#[derive(Debug)]
pub enum ExportError {
    /// The trace (or an option) was refused, or reading it failed: the message says which.
    Read(String),
    /// Writing the output failed.
    Write(io::Error),
}

impl From<io::Error> for ExportError {
    fn from(e: io::Error) -> Self {
        ExportError::Write(e)
    }
}

/// What a streamed export did.
#[derive(Debug, PartialEq, Eq)]
pub enum Done {
    Written,
    /// Nothing was written: this trace's card recomputes a peer tool's own figures, which needs
    /// its attempts together (the whole-file export does it).
    NeedsWhole,
}

/// Where and how: the card's name for the trace, its language, where Perfetto's sort runs go,
/// and the Parquet file's run columns.
pub struct Options<'a> {
    pub source: &'a str,
    pub lang: Lang,
    pub sort_dir: &'a Path,
    /// Bytes per sorted run (Perfetto); [`crate::spill::RUN_BYTES`] outside the tests.
    pub run_bytes: usize,
    /// Rows per Parquet row group; [`crate::parquet_export::ROW_GROUP`] outside the tests.
    pub group_rows: usize,
    pub run: RunColumns,
}

/// Exports the trace `reader` reads (one that `stream::streamable` accepted) to `out`.
/// `settings_for` gives the settings from the header (`tracelab export`'s options).
pub fn export<R: BufRead, W: Write + Send>(
    name: &str,
    reader: R,
    format: Format,
    settings_for: impl FnOnce(&Header) -> Result<Settings, String>,
    options: &Options,
    out: W,
) -> Result<Done, ExportError> {
    match format {
        Format::Csv => csv(name, reader, settings_for, out),
        Format::CardMd | Format::CardJson => card(name, reader, format, settings_for, options, out),
        Format::Perfetto => perfetto(name, reader, settings_for, options, out),
        Format::Parquet => parquet(name, reader, settings_for, options, out),
    }
}

fn read_error(name: &str, e: StreamError) -> ExportError {
    match e {
        StreamError::Io(e) => ExportError::Read(format!("cannot read {name}: {e}")),
        StreamError::Parse(e) => ExportError::Read(e.to_string()),
    }
}

/// The core's `visit` with one error type: the trace's refusal, a bad option, or a write error.
fn visit<R: BufRead, S>(
    name: &str,
    reader: R,
    start: impl FnOnce(&Header) -> Result<S, ExportError>,
    each: impl FnMut(&mut S, Attempt) -> Result<(), ExportError>,
) -> Result<(S, stream::Rest), ExportError> {
    stream::visit(name, reader, start, each).map_err(|e| read_error(name, e))?
}

fn csv<R: BufRead, W: Write>(
    name: &str,
    reader: R,
    settings_for: impl FnOnce(&Header) -> Result<Settings, String>,
    out: W,
) -> Result<Done, ExportError> {
    let mut out = Some(out);
    let ((_, mut out), _) = visit(
        name,
        reader,
        |header| {
            let settings = settings_for(header).map_err(ExportError::Read)?;
            let mut out = out.take().expect("the header comes once");
            out.write_all(export::attempts_csv_head(header, &settings).as_bytes())?;
            Ok((settings, out))
        },
        |(settings, out), a| Ok(out.write_all(export::attempts_csv_row(&a, settings).as_bytes())?),
    )?;
    out.flush()?;
    Ok(Done::Written)
}

fn card<R: BufRead, W: Write>(
    name: &str,
    reader: R,
    format: Format,
    settings_for: impl FnOnce(&Header) -> Result<Settings, String>,
    options: &Options,
    mut out: W,
) -> Result<Done, ExportError> {
    let streamed = match stream::read(name, reader, settings_for).map_err(|e| read_error(name, e))? {
        Ok(streamed) => streamed,
        Err(bad_option) => return Err(ExportError::Read(bad_option)),
    };
    if streamed.header.has_peer_figures() {
        return Ok(Done::NeedsWhole);
    }
    let settings = &streamed.settings;
    let metrics = Metrics::compute(&streamed.index, settings);
    let facts = CardFacts::of_streamed(&streamed);
    let text = if format == Format::CardMd {
        export::card_markdown_of(options.source, &facts, settings, &metrics, options.lang)
    } else {
        let view = streamed.card_view();
        export::json_text(&export::card_json_value_of(options.source, &facts, &view, settings, &metrics, options.lang))
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(Done::Written)
}

/// `fmt::Write` over an `io::Write`, keeping the first I/O error (Perfetto's writer is `fmt`).
struct FmtOut<W: Write> {
    out: W,
    error: Option<io::Error>,
}

impl<W: Write> fmt::Write for FmtOut<W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.out.write_all(s.as_bytes()).map_err(|e| {
            self.error.get_or_insert(e);
            fmt::Error
        })
    }
}

impl<W: Write> FmtOut<W> {
    fn check(&mut self, r: fmt::Result) -> Result<(), ExportError> {
        r.map_err(|_| ExportError::Write(self.error.take().unwrap_or_else(|| io::Error::other("formatting failed"))))
    }
}

fn perfetto<R: BufRead, W: Write>(
    name: &str,
    reader: R,
    settings_for: impl FnOnce(&Header) -> Result<Settings, String>,
    options: &Options,
    out: W,
) -> Result<Done, ExportError> {
    // Timed attempts by (start, end, then the file's order); untimed ones in the file's order.
    let mut timed = Spill::with_limit(options.sort_dir, options.run_bytes);
    let mut untimed = Spill::with_limit(options.sort_dir, options.run_bytes);
    let (mut seq, mut any_untimed) = (0i64, false);
    let (settings, rest) = visit(
        name,
        reader,
        |header| settings_for(header).map_err(ExportError::Read),
        |_, a| {
            seq += 1;
            let line = serde_json::to_string(&a).map_err(|e| ExportError::Write(e.into()))?;
            match export::extent_us(&a) {
                Some((start, end)) => timed.push([start, end, seq], line)?,
                None => {
                    any_untimed = true;
                    untimed.push([seq, 0, 0], line)?
                }
            }
            Ok(())
        },
    )?;
    // The tracks are named first, so the slots are counted in a first pass over the order.
    let mut slots = Slots::default();
    for item in timed.sorted()? {
        let ([start, end, _], _) = item?;
        slots.place(start, end);
    }
    let mut out = FmtOut { out, error: None };
    let started = PerfettoWriter::start(&mut out, &rest.header, &settings, slots.count(), any_untimed, !rest.gpu.is_empty());
    let mut writer = match started {
        Ok(writer) => writer,
        Err(_) => return Err(ExportError::Write(out.error.take().unwrap_or_else(|| io::Error::other("formatting failed")))),
    };
    let attempt = |line: &str| -> Result<Attempt, ExportError> {
        serde_json::from_str(line).map_err(|e| ExportError::Write(io::Error::new(io::ErrorKind::InvalidData, format!("a sorted attempt did not read back: {e}"))))
    };
    let mut result = Ok(());
    for item in timed.sorted()? {
        let (_, line) = item?;
        result = writer.timed(&attempt(&line)?);
        if result.is_err() {
            break;
        }
    }
    if result.is_ok() {
        for item in untimed.sorted()? {
            let (_, line) = item?;
            result = writer.untimed(&attempt(&line)?);
            if result.is_err() {
                break;
            }
        }
    }
    if result.is_ok() {
        result = rest.gpu.iter().try_for_each(|s| writer.gpu(s));
    }
    let result = result.and_then(|()| writer.finish());
    out.check(result)?;
    out.out.flush()?;
    Ok(Done::Written)
}

fn parquet<R: BufRead, W: Write + Send>(
    name: &str,
    reader: R,
    settings_for: impl FnOnce(&Header) -> Result<Settings, String>,
    options: &Options,
    out: W,
) -> Result<Done, ExportError> {
    let mut out = Some(out);
    let (rows, _) = visit(
        name,
        reader,
        |header| {
            // The options are checked as for every format, though no verdict is written.
            settings_for(header).map_err(ExportError::Read)?;
            let out = out.take().expect("the header comes once");
            ParquetRows::with_group_rows(out, header, options.run.clone(), options.group_rows).map_err(parquet_error)
        },
        |rows, a| rows.push(a).map_err(parquet_error),
    )?;
    rows.finish().map_err(parquet_error)?;
    Ok(Done::Written)
}

fn parquet_error(message: String) -> ExportError {
    ExportError::Write(io::Error::other(message))
}
