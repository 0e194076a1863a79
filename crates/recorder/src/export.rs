//! `tracelab export TRACE --format csv|card-md|card-json|perfetto|parquet`: a trace (ours or a
//! peer tool's file) in the formats other tools read.
//!
//! A JSON Lines trace is exported as a stream (`tracelab_recorder::export_stream`): memory does
//! not grow with the file. Every other file (the classroom CSV, a peer tool's result file, a
//! guidellm benchmark or an attached summary) is read whole, as `tracelab import` reads it; both
//! write the same bytes. A file output is written beside its name and renamed when complete, so
//! a refused trace leaves no partial file.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use tracelab_core::parse::stream;
use tracelab_core::{export, Metrics};
use tracelab_recorder::export_stream::{self, Done, ExportError, Format, Options};
use tracelab_recorder::parquet_export::{self, RunColumns};

use crate::settings_args::SettingsArgs;

const AFTER_HELP: &str = "\
Formats:
  csv        every attempt with its verdict (qualified, reason, latency) — pandas:
             pd.read_csv(path, comment=\"#\"); the `#` lines record the threshold used
  card-md    the metric card as Markdown, with an imported tool's own figures recomputed
  card-json  the metric card as JSON (every figure's numerator, denominator, unit, method)
  perfetto   Chrome trace-event JSON: open in ui.perfetto.dev or chrome://tracing (one track
             per concurrent slot, slices named and coloured by verdict, GPU counters)
  parquet    one row per attempt (every field, events as a list column, the shard and its
             clock offset), zstd-compressed, the header as file metadata `tracelab.header` —
             DuckDB: SELECT * FROM 'trace.parquet' (or 'shard-*.parquet'); needs --output

TRACE may be a Trace Lab trace or any file `tracelab import` reads. A JSON Lines trace is read
as a stream, in memory that does not grow with the file (Perfetto sorts its slices in files
beside the output, or in $TMPDIR when writing to standard output).";

#[derive(Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    Csv,
    CardMd,
    CardJson,
    Perfetto,
    Parquet,
}

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct ExportArgs {
    /// The trace (or peer result file) to export.
    pub file: PathBuf,
    /// What to write.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Write here instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite --output if it exists.
    #[arg(long)]
    pub force: bool,
    /// Which benchmark of a guidellm file (1-based).
    #[arg(long, value_name = "N")]
    pub benchmark: Option<usize>,
    /// The tool's own summary of the same run (AIPerf profile_export_aiperf.json, LLMPerf *_summary.json).
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Read a JSON Lines trace whole into memory, as the lab does, instead of as a stream (the
    /// same bytes; for checking one reader against the other).
    #[arg(long)]
    pub in_memory: bool,
}

impl ExportFormat {
    fn streamed(self) -> Format {
        match self {
            ExportFormat::Csv => Format::Csv,
            ExportFormat::CardMd => Format::CardMd,
            ExportFormat::CardJson => Format::CardJson,
            ExportFormat::Perfetto => Format::Perfetto,
            ExportFormat::Parquet => Format::Parquet,
        }
    }
}

pub fn run(args: ExportArgs) -> Result<(), String> {
    if let Some(out) = &args.output {
        tracelab_recorder::writer::refuse_overwrite(out, args.force, "")?;
    }
    if matches!(args.format, ExportFormat::Parquet) && args.output.is_none() {
        return Err("--format parquet is binary: give --output FILE.parquet".into());
    }
    if args.benchmark.is_none() && args.summary.is_none() && !args.in_memory {
        let name = args.file.display().to_string();
        let cannot_read = |e: std::io::Error| format!("cannot read {name}: {e}");
        let mut file = File::open(&args.file).map_err(cannot_read)?;
        if stream::streamable(&mut file).map_err(cannot_read)?
            && streamed(&args, &name, file)? == Done::Written
        {
            return Ok(());
        }
    }
    whole(args)
}

/// The card's name for the trace: its file name.
fn source_name(name: &str) -> String {
    Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string())
}

/// The first record of a JSON Lines trace as written (the recorder's `shard` object is not part
/// of the parsed header), for the Parquet file's run columns.
fn first_record(path: &Path) -> Option<serde_json::Value> {
    let reader = BufReader::new(File::open(path).ok()?);
    let line = std::io::BufRead::lines(reader)
        .map_while(Result::ok)
        .find(|l| !l.trim().is_empty())?;
    serde_json::from_str(line.trim_start_matches('\u{feff}')).ok()
}

fn streamed(args: &ExportArgs, name: &str, file: File) -> Result<Done, String> {
    let reader = BufReader::with_capacity(1 << 20, file);
    let settings_for = |header: &tracelab_core::Header| args.settings.settings(header);
    let source = source_name(name);
    let sort_dir = match args.output.as_deref().and_then(Path::parent) {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        Some(_) => PathBuf::from("."),
        None => std::env::temp_dir(),
    };
    let run = match args.format {
        ExportFormat::Parquet => match first_record(&args.file) {
            Some(first) => RunColumns::of(
                first.get("wall_clock_anchor_utc").and_then(|v| v.as_str()),
                Some(&first),
            ),
            None => RunColumns::default(),
        },
        _ => RunColumns::default(),
    };
    let options = Options {
        source: &source,
        lang: args.settings.lang(),
        sort_dir: &sort_dir,
        run_bytes: tracelab_recorder::spill::run_bytes(),
        group_rows: parquet_export::ROW_GROUP,
        run,
    };
    let format = args.format.streamed();
    let Some(out) = &args.output else {
        let stdout = BufWriter::with_capacity(1 << 16, std::io::stdout());
        return match export_stream::export(name, reader, format, settings_for, &options, stdout) {
            Ok(done) => Ok(done),
            Err(ExportError::Read(message)) => Err(message),
            Err(ExportError::Write(e)) => tracelab_recorder::out::end_on(e),
        };
    };
    let partial = partial_path(out);
    let file =
        File::create(&partial).map_err(|e| format!("cannot write {}: {e}", partial.display()))?;
    let result = export_stream::export(
        name,
        reader,
        format,
        settings_for,
        &options,
        BufWriter::with_capacity(1 << 16, file),
    );
    let finished = match result {
        Ok(Done::Written) => std::fs::rename(&partial, out)
            .map(|()| Done::Written)
            .map_err(|e| format!("cannot write {}: {e}", out.display())),
        Ok(Done::NeedsWhole) => Ok(Done::NeedsWhole),
        Err(ExportError::Read(message)) => Err(message),
        Err(ExportError::Write(e)) => Err(format!("cannot write {}: {e}", out.display())),
    };
    if !matches!(finished, Ok(Done::Written)) {
        let _ = std::fs::remove_file(&partial);
    }
    finished
}

/// Where a file output is written until it is complete: beside it, hidden.
fn partial_path(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    out.with_file_name(format!(".{name}.partial"))
}

/// The export of a file read whole (every format but Parquet as text first).
fn whole(args: ExportArgs) -> Result<(), String> {
    let (name, trace, _) =
        crate::import::load(&args.file, args.benchmark, args.summary.as_deref())?;
    let settings = args.settings.settings(&trace.header)?;
    let lang = args.settings.lang();
    if let (ExportFormat::Parquet, Some(out)) = (args.format, &args.output) {
        let file = File::create(out).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
        let mut sink = BufWriter::new(file);
        let run = RunColumns::of(
            trace.header.wall_clock_anchor_utc.as_deref(),
            first_record(&args.file).as_ref(),
        );
        parquet_export::write(&trace, run, &mut sink)?;
        return sink
            .flush()
            .map_err(|e| format!("cannot write {}: {e}", out.display()));
    }
    let source = source_name(&name);
    let text = match args.format {
        ExportFormat::Csv | ExportFormat::Parquet => export::attempts_csv(&trace, &settings),
        ExportFormat::Perfetto => export::perfetto(&trace, &settings),
        ExportFormat::CardMd | ExportFormat::CardJson => {
            let metrics = Metrics::of(&trace.attempts, &settings);
            match args.format {
                ExportFormat::CardMd => {
                    export::card_markdown(&source, &trace, &settings, &metrics, lang)
                }
                _ => export::card_json(&source, &trace, &settings, &metrics, lang),
            }
        }
    };
    match &args.output {
        None => tracelab_recorder::out::write_all(text.as_bytes()),
        Some(out) => std::fs::write(out, &text)
            .map_err(|e| format!("cannot write {}: {e}", out.display()))?,
    }
    Ok(())
}
