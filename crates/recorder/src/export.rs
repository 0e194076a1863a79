//! `tracelab export TRACE --format csv|card-md|card-json|perfetto`: a trace (ours or a peer
//! tool's file) in the formats other tools read.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use tracelab_core::{export, Comparison, Index, Lang, Metrics, PercentileMethod, Settings};

use crate::report::{ComparisonArg, LangArg, PercentileArg};

const AFTER_HELP: &str = "\
Formats:
  csv        every attempt with its verdict (qualified, reason, latency) — pandas:
             pd.read_csv(path, comment=\"#\"); the `#` lines record the threshold used
  card-md    the metric card as Markdown, with an imported tool's own figures recomputed
  card-json  the metric card as JSON (every figure's numerator, denominator, unit, method)
  perfetto   Chrome trace-event JSON: open in ui.perfetto.dev or chrome://tracing (one track
             per concurrent slot, slices named and coloured by verdict, GPU counters)

TRACE may be a Trace Lab trace or any file `tracelab import` reads.";

#[derive(Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    Csv,
    CardMd,
    CardJson,
    Perfetto,
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
    /// TTFT threshold in seconds (default: the trace's header, else 1).
    #[arg(long, value_name = "SECONDS")]
    pub threshold: Option<f64>,
    /// How TTFT is compared with the threshold.
    #[arg(long, value_enum)]
    pub comparison: Option<ComparisonArg>,
    /// The fixed window in seconds that goodput and cost refer to (default: the trace's header).
    #[arg(long, value_name = "SECONDS")]
    pub window: Option<f64>,
    /// The cost of the window (default: the trace's header).
    #[arg(long, value_name = "AMOUNT")]
    pub cost: Option<f64>,
    /// Currency of --cost.
    #[arg(long)]
    pub currency: Option<String>,
    /// Percentile method of the card.
    #[arg(long, value_enum, default_value = "nearest-rank")]
    pub percentile: PercentileArg,
    /// The tail percentile reported beside P50.
    #[arg(long, default_value_t = 95.0)]
    pub p: f64,
    /// Language of the card.
    #[arg(long, value_enum, default_value = "en")]
    pub lang: LangArg,
}

pub fn run(args: ExportArgs) -> Result<(), String> {
    if let Some(out) = &args.output {
        if out.exists() && !args.force {
            return Err(format!("{} already exists; pass --force to overwrite it", out.display()));
        }
    }
    let (name, trace, _) = crate::import::load(&args.file, args.benchmark, args.summary.as_deref())?;
    let mut settings = Settings::from_header(&trace.header);
    if let Some(t) = args.threshold {
        settings.ttft_threshold_s = t;
    }
    if let Some(c) = args.comparison {
        settings.comparison = match c {
            ComparisonArg::Le => Comparison::Le,
            ComparisonArg::Lt => Comparison::Lt,
        };
    }
    if let Some(w) = args.window {
        settings.window_s = Some(w);
    }
    if let Some(c) = args.cost {
        settings.window_cost = Some(c);
    }
    if let Some(c) = args.currency {
        settings.currency = c;
    }
    settings.percentile = match args.percentile {
        PercentileArg::NearestRank => PercentileMethod::NearestRank,
        PercentileArg::Linear => PercentileMethod::Linear,
        PercentileArg::Lower => PercentileMethod::Lower,
        PercentileArg::Higher => PercentileMethod::Higher,
    };
    settings.p = args.p;
    settings.validate().map_err(|e| format!("{e} (see --help)"))?;
    let lang = match args.lang {
        LangArg::En => Lang::En,
        LangArg::Zh => Lang::Zh,
    };
    let source = std::path::Path::new(&name).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or(name);
    let text = match args.format {
        ExportFormat::Csv => export::attempts_csv(&trace, &settings),
        ExportFormat::Perfetto => export::perfetto(&trace, &settings),
        ExportFormat::CardMd | ExportFormat::CardJson => {
            let index = Index::build(&trace.attempts, settings.population);
            let metrics = Metrics::compute(&index, &settings);
            match args.format {
                ExportFormat::CardMd => export::card_markdown(&source, &trace, &settings, &metrics, lang),
                _ => export::card_json(&source, &trace, &settings, &metrics, lang),
            }
        }
    };
    match &args.output {
        None => {
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes()).map_err(|e| format!("cannot write to standard output: {e}"))?;
        }
        Some(out) => std::fs::write(out, &text).map_err(|e| format!("cannot write {}: {e}", out.display()))?,
    }
    Ok(())
}
