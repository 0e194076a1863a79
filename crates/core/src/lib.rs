//! # tracelab-core
//!
//! The single source of truth of Trace Lab: the trace schema ([`trace`]), its parsers
//! ([`parse`]) and writers ([`write`]), and every metric definition ([`verdict`], [`index`],
//! [`metrics`]). No web or async dependencies, so the lab (wasm) and the recorder (native)
//! compute exactly the same numbers.
//!
//! Data flows one way: text → [`parse::parse_trace`] → [`Index::build`] →
//! [`Metrics::compute`] → a view.
//!
//! ```
//! use tracelab_core::{parse::parse_trace, Metrics, Settings};
//! let text = "id,outcome,ttft_s,quality\nR1,success,0.2,pass\nR2,connect_error,,not_evaluated\n";
//! let trace = parse_trace("class.csv", text).unwrap();
//! let settings = Settings::from_header(&trace.header);
//! let metrics = Metrics::of(&trace.attempts, &settings); // Index::build, then Metrics::compute
//! assert_eq!(metrics.failure_rate.value, Some(0.5)); // 1 failure / 2 attempts
//! assert_eq!(metrics.qualified, 1);
//! ```

pub mod baseline;
pub mod capacity;
pub mod card;
pub mod client;
pub mod compare;
pub mod coverage;
pub mod distribution;
pub mod engine_beside;
pub mod error;
pub mod export;
pub mod figure;
pub mod format;
pub mod gpu_beside;
pub mod handoff;
pub mod index;
pub mod lag;
pub mod metrics;
pub mod parse;
pub mod percentile;
pub mod reproduce;
pub mod reuse;
pub mod session;
pub mod settings;
pub mod simulate;
pub mod streamed;
mod strtable;
pub mod tally;
pub mod text;
pub mod timeline;
pub mod trace;
pub mod units;
pub mod verdict;
pub mod whatif;
pub mod workload;
pub mod write;

pub use error::{ParseError, SettingsError};
pub use figure::{Figure, Unit};
pub use index::{Index, IndexBuilder};
pub use metrics::Metrics;
pub use percentile::PercentileMethod;
pub use settings::{
    FailureDenominator, MissingTtft, Mistake, Population, QualityRule, Settings, WarmupPolicy,
};
pub use tally::{check_call, explain, judgeable, score, tally, Call, Check, Score, Tally};
pub use text::{Lang, Text};
pub use trace::{
    Attempt, Comparison, Completeness, FirstToken, Footer, GpuSample, Header, LatencyOrigin,
    Outcome, Phase, PromptSend, Quality, ReasoningStart, SessionTurn, StreamEvent, Trace,
};
pub use verdict::{verdict, Latency, Reason, Verdict};
pub use whatif::{RowEdit, WhatIf};
