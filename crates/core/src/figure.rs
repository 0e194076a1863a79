//! What every figure is: a value with its formula parts (numerator, denominator, unit, method,
//! sample count) and, when it has none, the reason. [`crate::metrics`] computes them;
//! [`crate::format`] writes them for people. Plain data, so the layers below the metrics can name it.

use serde::Serialize;

use crate::text::Text;

/// What a figure is measured in.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "currency")]
pub enum Unit {
    Count,
    /// A share, 0–1 (shown as %).
    Ratio,
    Seconds,
    /// Per second of the window.
    PerSecond,
    /// Money per 1,000 qualified requests, in the given currency.
    MoneyPer1000(String),
    TokensPerSecond,
}

/// One figure with everything needed to explain it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    /// Stable code name (`failure_rate`, `ttft_p95`, …).
    pub key: String,
    pub name: Text,
    pub value: Option<f64>,
    pub numerator: Option<f64>,
    pub numerator_label: Option<Text>,
    pub denominator: Option<f64>,
    pub denominator_label: Option<Text>,
    pub unit: Unit,
    /// How a percentile was picked (e.g. "nearest-rank: ⌈95·8/100⌉ = 8 of 8").
    pub method: Option<String>,
    /// `method` in both languages, for a page that shows Chinese (not serialised: the files
    /// keep the one `method` line).
    #[serde(skip)]
    pub method_text: Option<Text>,
    /// The sample size behind a distribution figure.
    pub n: Option<usize>,
    /// Why there is no value, when there is none.
    pub undefined: Option<Text>,
    /// A caution worth showing beside the value (e.g. a tail from too few samples).
    pub note: Option<Text>,
    /// The name where room is short (the lab's figure strip), saying what the sample is as the
    /// full name does; `None` where the page has a word of its own. Not serialised: the files
    /// keep `name`.
    #[serde(skip)]
    pub short_name: Option<Text>,
}

/// One figure that moved since the last edit ("qualified 5 → 4").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub key: String,
    pub name: Text,
    pub from: Option<f64>,
    pub to: Option<f64>,
    pub unit: Unit,
}
