//! `tracelab export TRACE --format csv|card-md|card-json|perfetto`: a trace (ours or a peer
//! tool's file) in the formats other tools read.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use tracelab_core::{export, Metrics};

use crate::settings_args::SettingsArgs;

const AFTER_HELP: &str = "\
Formats:
  csv        every attempt with its verdict (qualified, reason, latency) — pandas:
             pd.read_csv(path, comment=\"#\"); the `#` lines record the threshold used
  card-md    the metric card as Markdown, with an imported tool's own figures recomputed
  card-json  the metric card as JSON (every figure's numerator, denominator, unit, method)
  perfetto   Chrome trace-event JSON: open in ui.perfetto.dev or chrome://tracing (one track
             per concurrent slot, slices named and coloured by verdict, GPU counters)
  parquet    one row per attempt (every field, events as a list column), the header as file
             metadata `tracelab.header` — DuckDB: SELECT * FROM 'trace.parquet'; needs --output

TRACE may be a Trace Lab trace or any file `tracelab import` reads.";

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
}

pub fn run(args: ExportArgs) -> Result<(), String> {
    if let Some(out) = &args.output {
        if out.exists() && !args.force {
            return Err(format!("{} already exists; pass --force to overwrite it", out.display()));
        }
    }
    let (name, trace, _) = crate::import::load(&args.file, args.benchmark, args.summary.as_deref())?;
    let settings = args.settings.settings(&trace.header)?;
    let lang = args.settings.lang();
    if let ExportFormat::Parquet = args.format {
        let Some(out) = &args.output else {
            return Err("--format parquet is binary: give --output FILE.parquet".into());
        };
        return crate::parquet_export::write(&trace, out);
    }
    let source = std::path::Path::new(&name).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or(name);
    let text = match args.format {
        ExportFormat::Csv | ExportFormat::Parquet => export::attempts_csv(&trace, &settings),
        ExportFormat::Perfetto => export::perfetto(&trace, &settings),
        ExportFormat::CardMd | ExportFormat::CardJson => {
            let metrics = Metrics::of(&trace.attempts, &settings);
            match args.format {
                ExportFormat::CardMd => export::card_markdown(&source, &trace, &settings, &metrics, lang),
                _ => export::card_json(&source, &trace, &settings, &metrics, lang),
            }
        }
    };
    match &args.output {
        None => tracelab_recorder::out::write_all(text.as_bytes()),
        Some(out) => std::fs::write(out, &text).map_err(|e| format!("cannot write {}: {e}", out.display()))?,
    }
    Ok(())
}
