//! # tracelab-peers
//!
//! The peer tools Trace Lab reads, over the core (which knows nothing of them): their files
//! opened as traces ([`import`]), an import handed to the lab across its bundle boundary
//! ([`handoff`]), and the lab's side-by-side panel of a tool's own figures ([`table`]).
//!
//! The core keeps what a trace is and every figure computed from it, the tool's own figures
//! included (`tracelab_core::trace::peer` holds them in the schema, `tracelab_core::reproduce`
//! recomputes them); this crate only reads the tools' files. The lab's first bundle depends on
//! the core alone, so it cannot link an importer; its second bundle (`pages/convert`), the
//! recorder's `tracelab import` and the compare page use this crate.

pub mod handoff;
pub mod import;
pub mod table;
