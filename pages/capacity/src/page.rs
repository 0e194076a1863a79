//! The page's state, shared by its parts: the language, the loaded sweep, the judging settings
//! as typed, the simulator's settings and the last error.

use leptos::prelude::*;
use tracelab_core::{Comparison, Lang};

use crate::load::Sweep;

/// The page's state, shared by its parts.
#[derive(Clone, Copy)]
pub struct Page {
    pub lang: RwSignal<Lang>,
    pub sweep: RwSignal<Option<Sweep>>,
    pub threshold: RwSignal<String>,
    pub comparison: RwSignal<Comparison>,
    /// `joint_rate`, `ttft_p95` or `goodput`, and the target's value as typed.
    pub measure: RwSignal<String>,
    pub value: RwSignal<String>,
    pub error: RwSignal<Option<String>>,
    pub sim: [RwSignal<String>; 5],
}
