//! The lab's calls into its second bundle (`pages/convert`, loaded on first use by the lab's
//! `src/convert.rs`), as typed names instead of strings matched at run time: both ends name a
//! function through [`Call`], and the workspace tidy checks that the bundle defines each one.

/// One function of the second bundle. Arguments and answers are strings (JSON where structured).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// An upload that is not one of our formats, imported: `(name, text)` → trace v1 text.
    ImportUpload,
    /// A peer tool's summary set beside the open trace: `(name, text, trace JSON)` → new header line.
    AttachSummary,
    /// The peer panel's table: `(key, text or "", rest or "", settings, lang)` → the table as HTML.
    PeerTable,
    /// The lines about the run itself beside the figures, and the figures by session when the
    /// attempts name sessions: `(key, text or "", rest or "", settings, lang)` → [`RunChecksAnswer`]
    /// as JSON.
    RunChecks,
    /// A download's text: `(key, text or "", rest or "", settings, lang, kind, source)` → the file's text.
    ExportFile,
    /// The session table: the sessions as rows that open into their turns, with the per-turn and
    /// per-session figures side by side: `(key, text or "", rest or "", settings, lang, open
    /// session ids as JSON)` → its HTML ("" when no attempt names a session).
    Sessions,
    /// The run in time buckets painted on canvas: `(key, text or "", rest or "", container id, RunRequest)` → "ok".
    ShowRun,
    /// The heat map and the histogram painted on canvas: `(key, text or "", rest or "", container id,
    /// DistributionRequest)` → "ok".
    ShowDistribution,
}

impl Call {
    /// Every call, for the tidy's check against the bundle.
    pub const ALL: [Call; 8] = [
        Call::ImportUpload,
        Call::AttachSummary,
        Call::PeerTable,
        Call::RunChecks,
        Call::ExportFile,
        Call::ShowRun,
        Call::ShowDistribution,
        Call::Sessions,
    ];

    /// The bundle's exported function (its Rust name in `pages/convert/src/main.rs`).
    pub const fn name(self) -> &'static str {
        match self {
            Call::ImportUpload => "import_upload",
            Call::AttachSummary => "attach_summary",
            Call::PeerTable => "peer_table",
            Call::RunChecks => "run_checks",
            Call::ExportFile => "export_file",
            Call::ShowRun => "show_run",
            Call::ShowDistribution => "show_distribution",
            Call::Sessions => "sessions",
        }
    }

    /// Whether the call works on the open trace the bundle holds by the lab's key (`(key, text,
    /// rest, …)`: the trace's text as it is and the rest of its `WorkingText` as JSON, from
    /// `WorkingText::rest_json`): the lab sends the trace only when the bundle does not hold it yet.
    pub const fn on_held_trace(self) -> bool {
        matches!(
            self,
            Call::PeerTable
                | Call::RunChecks
                | Call::ExportFile
                | Call::ShowRun
                | Call::ShowDistribution
                | Call::Sessions
        )
    }
}

/// The error a held-trace call answers when the bundle does not hold the trace of that key
/// (a call sent without it overtook the one that carried it, or the bundle was reloaded): the
/// lab then sends the trace again.
pub const NEED_TRACE: &str = "tracelab:need-trace";

/// What [`Call::RunChecks`] answers, as JSON: both ends compile against this one type.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunChecksAnswer {
    /// The card's lines about the run itself (`tracelab_core::card::run_checks`).
    pub checks: Vec<String>,
    /// The figures by session and by turn (`tracelab_core::session::Sessions::lines`), under the
    /// same settings; empty when no attempt names a session.
    pub sessions: Vec<String>,
}
