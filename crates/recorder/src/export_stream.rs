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
use tracelab_core::parse::duplicate_id;
use tracelab_core::parse::stream::{self, Ids, StreamError};
use tracelab_core::{Attempt, Header, Lang, Metrics, Settings};

use crate::parquet_export::{ParquetRows, RunColumns};
use crate::spill::{Duplicates, Spill};

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
        Format::Csv => csv(name, reader, settings_for, options, out),
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

/// The core's `visit` with one error type (the trace's refusal, a bad option, a write error),
/// the attempt ids checked on disk ([`Duplicates`]) so memory does not grow with the trace. A
/// repeated id is reported as the whole-file reader reports it: before a later line's error or
/// a bad option, after text that is not UTF-8.
fn visit<R: BufRead, S>(
    name: &str,
    reader: R,
    options: &Options,
    start: impl FnOnce(&Header) -> Result<S, ExportError>,
    mut each: impl FnMut(&mut S, Attempt) -> Result<(), ExportError>,
) -> Result<(S, stream::Rest), ExportError> {
    let mut ids = Duplicates::with_limit(options.sort_dir, options.run_bytes);
    // `start`'s error (a bad option) is kept as the state, so the ids are still checked to the
    // end: a repeated id in the file comes before it, as in the whole-file export.
    let visited = stream::visit(
        name,
        reader,
        Ids::Caller,
        |header| Ok::<_, ExportError>(start(header)),
        |state, a, line| {
            ids.push(&a.id, 0, line).map_err(sort_error)?;
            match state {
                Ok(state) => each(state, a),
                Err(_) => Ok(()),
            }
        },
    );
    let mut repeat_before = |line: usize| -> Result<Option<ExportError>, ExportError> {
        let repeat = ids.first_repeat(false).map_err(sort_error)?;
        Ok(repeat.filter(|d| d.again.1 < line).map(|d| {
            ExportError::Read(
                duplicate_id(&d.id, d.first.1, d.again.1)
                    .in_file(name)
                    .to_string(),
            )
        }))
    };
    match visited {
        Ok(Ok((state, rest))) => match repeat_before(usize::MAX)? {
            Some(repeat) => Err(repeat),
            None => state.map(|state| (state, rest)),
        },
        // A write error stops the read at once.
        Ok(Err(e)) => Err(e),
        Err(StreamError::Parse(e)) if e.message != stream::NOT_UTF8 => {
            let at = e.line.unwrap_or(usize::MAX);
            Err(repeat_before(at)?.unwrap_or_else(|| read_error(name, StreamError::Parse(e))))
        }
        Err(e) => Err(read_error(name, e)),
    }
}

fn sort_error(e: io::Error) -> ExportError {
    ExportError::Write(io::Error::new(
        e.kind(),
        format!("cannot sort the attempt ids: {e}"),
    ))
}

fn csv<R: BufRead, W: Write>(
    name: &str,
    reader: R,
    settings_for: impl FnOnce(&Header) -> Result<Settings, String>,
    options: &Options,
    out: W,
) -> Result<Done, ExportError> {
    let mut out = Some(out);
    let ((_, mut out), _) = visit(
        name,
        reader,
        options,
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
    let streamed = match tracelab_core::streamed::read(name, reader, settings_for)
        .map_err(|e| read_error(name, e))?
    {
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
        export::json_text(&export::card_json_value_of(
            options.source,
            &facts,
            &view,
            settings,
            &metrics,
            options.lang,
        ))
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
        r.map_err(|_| self.lost())
    }

    /// The I/O error behind a `fmt::Error`.
    fn lost(&mut self) -> ExportError {
        ExportError::Write(
            self.error
                .take()
                .unwrap_or_else(|| io::Error::other("formatting failed")),
        )
    }
}

/// Every attempt of `spill`, in its order, through `write` (a Perfetto writer's `timed` or
/// `untimed`); the writer's first error stops it and is returned inside.
fn each_sorted(
    spill: &mut Spill,
    mut write: impl FnMut(&Attempt) -> fmt::Result,
) -> Result<fmt::Result, ExportError> {
    for item in spill.sorted()? {
        let (_, line) = item?;
        let a: Attempt = serde_json::from_str(&line).map_err(|e| {
            ExportError::Write(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a sorted attempt did not read back: {e}"),
            ))
        })?;
        if let Err(e) = write(&a) {
            return Ok(Err(e));
        }
    }
    Ok(Ok(()))
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
        options,
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
    let started = PerfettoWriter::start(
        &mut out,
        &rest.header,
        &settings,
        slots.count(),
        any_untimed,
        !rest.gpu.is_empty(),
    );
    let mut writer = match started {
        Ok(writer) => writer,
        Err(_) => return Err(out.lost()),
    };
    let mut result = each_sorted(&mut timed, |a| writer.timed(a))?;
    if result.is_ok() {
        result = each_sorted(&mut untimed, |a| writer.untimed(a))?;
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
        options,
        |header| {
            // The options are checked as for every format, though no verdict is written.
            settings_for(header).map_err(ExportError::Read)?;
            let out = out.take().expect("the header comes once");
            ParquetRows::with_group_rows(out, header, options.run.clone(), options.group_rows)
                .map_err(parquet_error)
        },
        |rows, a| rows.push(a).map_err(parquet_error),
    )?;
    rows.finish().map_err(parquet_error)?;
    Ok(Done::Written)
}

fn parquet_error(message: String) -> ExportError {
    ExportError::Write(io::Error::other(message))
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Read};

    use super::*;

    const HEADER: &str = r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"t","version":"1"}}"#;

    /// A trace without end: the header, then attempts for ever. It panics past `limit` attempts,
    /// so an export that held the trace before writing fails here instead of running on.
    struct Endless {
        line: Vec<u8>,
        at: usize,
        attempts: u64,
        limit: u64,
    }

    impl Endless {
        fn new(limit: u64) -> Endless {
            Endless {
                line: format!("{HEADER}\n").into_bytes(),
                at: 0,
                attempts: 0,
                limit,
            }
        }
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.at == self.line.len() {
                self.attempts += 1;
                assert!(
                    self.attempts <= self.limit,
                    "{} attempts read and nothing written: the export holds the trace",
                    self.limit
                );
                let (k, start) = (self.attempts, self.attempts * 10);
                self.line = format!(
                    "{{\"kind\":\"attempt\",\"id\":\"a{k}\",\"business_id\":\"b{k}\",\"attempt\":1,\"phase\":\"measure\",\"start_ms\":{start},\"first_token_ms\":{},\"events\":[[{},1],[{},2]],\"end_ms\":{},\"outcome\":\"success\",\"quality\":\"pass\"}}\n",
                    start + 5, start + 5, start + 7, start + 9
                )
                .into_bytes();
                self.at = 0;
            }
            let n = buf.len().min(self.line.len() - self.at);
            buf[..n].copy_from_slice(&self.line[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    /// An output that takes `room` bytes, then refuses: the export must stop with its error.
    struct Refusing {
        room: usize,
        taken: usize,
    }

    impl Write for Refusing {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.taken + buf.len() > self.room {
                return Err(io::Error::other("full"));
            }
            self.taken += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn options(dir: &Path, group_rows: usize) -> Options<'_> {
        Options {
            source: "t.jsonl",
            lang: Lang::En,
            sort_dir: dir,
            run_bytes: 1 << 20,
            group_rows,
            run: RunColumns::default(),
        }
    }

    /// CSV rows leave as their attempts arrive: an endless trace is written until the output
    /// refuses, a few kilobytes of input later (the reader's buffer), never held.
    #[test]
    fn csv_is_written_attempt_by_attempt() {
        let dir = std::env::temp_dir();
        let reader = BufReader::with_capacity(8 << 10, Endless::new(1_000));
        let out = Refusing {
            room: 64 << 10,
            taken: 0,
        };
        let result = export(
            "endless.jsonl",
            reader,
            Format::Csv,
            |h| Ok(Settings::from_header(h)),
            &options(&dir, 100),
            out,
        );
        assert!(matches!(result, Err(ExportError::Write(_))), "{result:?}");
    }

    /// Parquet leaves a row group at a time: the first group is written after its rows, before
    /// any later attempt is needed.
    #[test]
    fn parquet_is_written_group_by_group() {
        let dir = std::env::temp_dir();
        let reader = BufReader::with_capacity(8 << 10, Endless::new(1_000));
        // Parquet's magic (4 bytes) goes first; the first column chunk is refused.
        let out = Refusing { room: 4, taken: 0 };
        let result = export(
            "endless.jsonl",
            reader,
            Format::Parquet,
            |h| Ok(Settings::from_header(h)),
            &options(&dir, 300),
            out,
        );
        assert!(matches!(result, Err(ExportError::Write(_))), "{result:?}");
    }

    /// Perfetto sorts its slices on disk when they outgrow a run: with runs of a few attempts,
    /// attempts written in reverse start order come out as the whole-trace export writes them.
    #[test]
    fn perfetto_sorted_on_disk_equals_the_whole_trace_export() {
        let dir =
            std::env::temp_dir().join(format!("tracelab-perfetto-runs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = format!("{HEADER}\n");
        for k in (1..=300u32).rev() {
            let start = (k % 37) * 20 + k / 37;
            let end = start + 5 + k % 13;
            text.push_str(&format!(
                "{{\"kind\":\"attempt\",\"id\":\"a{k}\",\"business_id\":\"b{k}\",\"attempt\":1,\"phase\":\"measure\",\"start_ms\":{start},\"first_token_ms\":{},\"events\":[[{},1]],\"end_ms\":{end},\"outcome\":\"success\",\"quality\":\"pass\"}}\n",
                start + 3,
                start + 3
            ));
            if k % 50 == 0 {
                text.push_str(&format!("{{\"kind\":\"attempt\",\"id\":\"u{k}\",\"business_id\":\"u{k}\",\"attempt\":1,\"phase\":\"measure\",\"start_ms\":null,\"end_ms\":null,\"outcome\":\"connect_error\",\"quality\":\"not_evaluated\"}}\n"));
            }
        }
        let trace = tracelab_core::parse::parse_trace("t.jsonl", &text).unwrap();
        let settings = Settings::from_header(&trace.header);
        let whole = export::perfetto(&trace, &settings);
        let mut small = options(&dir, 100);
        small.run_bytes = 2_000;
        let mut out = Vec::new();
        let done = export(
            "t.jsonl",
            text.as_bytes(),
            Format::Perfetto,
            |h| Ok(Settings::from_header(h)),
            &small,
            &mut out,
        )
        .unwrap();
        assert_eq!(done, Done::Written);
        assert!(
            String::from_utf8(out).unwrap() == whole,
            "the sorted runs give the whole-trace export's bytes"
        );
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "the sort's runs are removed"
        );
    }
}
