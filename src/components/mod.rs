//! The page's parts, one file each. Every component reads the shared state with `use_lab()`.

mod attempts_table;
mod chart_frame;
mod charts;
mod controls;
mod distribution;
mod exports;
mod figure_strip;
mod load_panel;
mod metrics_panel;
mod notes;
mod peer_panel;
mod run_checks;
mod sessions_table;
mod step_panel;
mod trace_summary;

pub use attempts_table::AttemptsTable;
pub use charts::Charts;
pub use controls::Controls;
pub use exports::Exports;
pub use figure_strip::FigureStrip;
pub use load_panel::LoadPanel;
pub use metrics_panel::MetricsPanel;
pub use notes::Notes;
pub use peer_panel::PeerPanel;
pub use sessions_table::SessionsTable;
pub use step_panel::StepPanel;
pub use trace_summary::TraceSummary;
