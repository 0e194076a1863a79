//! The page's parts, one file each.

mod attempts_table;
mod controls;
mod metrics_panel;
mod trace_summary;

pub use attempts_table::AttemptsTable;
pub use controls::Controls;
pub use metrics_panel::MetricsPanel;
pub use trace_summary::TraceSummary;
