//! The settings options `report`, `export` and `capacity` share (and the comparison `sweep` takes): each overrides what the trace's header
//! asks for, and the result is checked by the core before any figure is computed.

use clap::{Args, ValueEnum};
use tracelab_core::{
    Comparison, FirstToken, Header, Lang, LatencyOrigin, PercentileMethod, Settings,
};

#[derive(Args)]
pub struct SettingsArgs {
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
    /// Which token starts TTFT: `content`, the first non-empty answer token (the course's
    /// definition), or `any`, the first output token, a reasoning model's reasoning included
    /// (what most peer tools time). The same for a trace that kept no reasoning apart.
    #[arg(long, value_enum, default_value = "content")]
    pub first_token: FirstTokenArg,
    /// Where TTFT and E2E are measured from: `actual`, when the request was sent, or
    /// `intended`, when the open loop's schedule meant it to be sent, so a request the client
    /// sent late counts the wait (coordinated omission left out). Attempts without an intended
    /// start (a closed loop) are measured from their actual start, and the card says how many.
    #[arg(long, value_enum, default_value = "actual")]
    pub latency_from: LatencyFromArg,
    /// Language of the card.
    #[arg(long, value_enum, default_value = "en")]
    pub lang: LangArg,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum FirstTokenArg {
    Content,
    Any,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum LatencyFromArg {
    Actual,
    Intended,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ComparisonArg {
    Le,
    Lt,
}

impl ComparisonArg {
    pub fn core(self) -> Comparison {
        match self {
            ComparisonArg::Le => Comparison::Le,
            ComparisonArg::Lt => Comparison::Lt,
        }
    }
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

impl SettingsArgs {
    /// The header's settings with these options on top, refused when unusable.
    pub fn settings(&self, header: &Header) -> Result<Settings, String> {
        let mut settings = Settings::from_header(header);
        if let Some(t) = self.threshold {
            settings.ttft_threshold_s = t;
        }
        if let Some(c) = self.comparison {
            settings.comparison = c.core();
        }
        if let Some(w) = self.window {
            settings.window_s = Some(w);
        }
        if let Some(c) = self.cost {
            settings.window_cost = Some(c);
        }
        if let Some(c) = &self.currency {
            settings.currency = c.clone();
        }
        settings.percentile = match self.percentile {
            PercentileArg::NearestRank => PercentileMethod::NearestRank,
            PercentileArg::Linear => PercentileMethod::Linear,
            PercentileArg::Lower => PercentileMethod::Lower,
            PercentileArg::Higher => PercentileMethod::Higher,
        };
        settings.p = self.p;
        settings.population.first_token = match self.first_token {
            FirstTokenArg::Content => FirstToken::Content,
            FirstTokenArg::Any => FirstToken::AnyOutput,
        };
        settings.population.latency_from = match self.latency_from {
            LatencyFromArg::Actual => LatencyOrigin::Actual,
            LatencyFromArg::Intended => LatencyOrigin::Intended,
        };
        settings
            .validate()
            .map_err(|e| format!("{e} (see --help)"))?;
        Ok(settings)
    }

    pub fn lang(&self) -> Lang {
        match self.lang {
            LangArg::En => Lang::En,
            LangArg::Zh => Lang::Zh,
        }
    }
}
