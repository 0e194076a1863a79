//! `tracelab report FILE`: the lesson's metric card in a terminal, or one JSON object.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use tracelab_core::{
    card, Comparison, Index, Lang, Metrics, PercentileMethod, Settings,
};

#[derive(Args)]
pub struct ReportArgs {
    /// The trace to report on (or a peer tool's result file that `tracelab import` reads).
    pub file: PathBuf,
    /// TTFT threshold in seconds (default: the trace's header, else 1).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub threshold: Option<f64>,
    /// How TTFT is compared with the threshold.
    #[arg(long, value_enum)]
    pub comparison: Option<ComparisonArg>,
    /// The fixed window in seconds that goodput and cost refer to (default: the trace's header).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub window: Option<f64>,
    /// The cost of the window (default: the trace's header).
    #[arg(long, value_name = "AMOUNT", allow_negative_numbers = true)]
    pub cost: Option<f64>,
    /// Currency of --cost.
    #[arg(long)]
    pub currency: Option<String>,
    /// Percentile method.
    #[arg(long, value_enum, default_value = "nearest-rank")]
    pub percentile: PercentileArg,
    /// The tail percentile reported beside P50.
    #[arg(long, default_value_t = 95.0)]
    pub p: f64,
    /// Print one JSON object instead of the card.
    #[arg(long)]
    pub json: bool,
    /// Language of the card.
    #[arg(long, value_enum, default_value = "en")]
    pub lang: LangArg,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ComparisonArg {
    Le,
    Lt,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum PercentileArg {
    NearestRank,
    Linear,
    Lower,
    Higher,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum LangArg {
    En,
    Zh,
}

pub fn run(args: ReportArgs) -> Result<(), String> {
    // Our own formats and every peer tool's file `tracelab import` reads.
    let (name, trace, _) = crate::import::load(&args.file, None, None)?;
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
    let index = Index::build(&trace.attempts, settings.population);
    let metrics = Metrics::compute(&index, &settings);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&metrics.summary_json(&settings)).expect("json"));
    } else {
        let lang = match args.lang {
            LangArg::En => Lang::En,
            LangArg::Zh => Lang::Zh,
        };
        print!("{}", card::render_text(&name, &trace, &settings, &metrics, lang));
    }
    Ok(())
}
