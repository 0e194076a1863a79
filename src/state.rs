//! The lab's state, shared by every component through Leptos context.
//!
//! Signals hold what the learner chose (trace, settings, what-if edits, selected row, language,
//! notes); memos derive the rest through the core — working attempts → index → metrics → what
//! changed. The index memo only listens to the [`Population`], so a threshold edit never
//! rebuilds it: it is one binary search in the core.

use std::sync::Arc;

use leptos::prelude::*;
use tracelab_core::{metrics::Change, Attempt, Index, Lang, Metrics, Population, Settings, Trace, WhatIf};

/// Where the current trace came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A built-in sample, by file name under `samples/`.
    Sample(String),
    /// A file the learner uploaded (its name; the data stays in this browser tab).
    Uploaded(String),
}

impl Origin {
    pub fn name(&self) -> &str {
        match self {
            Origin::Sample(n) | Origin::Uploaded(n) => n,
        }
    }
}

/// A parsed trace. Its attempts are kept apart so edits never copy the header and so the
/// untouched attempts can be shared without cloning.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub origin: Origin,
    pub trace: Arc<Trace>,
    pub attempts: Arc<Vec<Attempt>>,
}

impl PartialEq for Loaded {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.trace, &other.trace)
    }
}

impl Loaded {
    pub fn new(origin: Origin, mut trace: Trace) -> Loaded {
        let attempts = Arc::new(std::mem::take(&mut trace.attempts));
        Loaded { origin, trace: Arc::new(trace), attempts }
    }
}

/// The attempts after what-if edits, with each row's position in the original trace.
#[derive(Clone, Debug)]
pub struct Working {
    pub attempts: Arc<Vec<Attempt>>,
    pub original_rows: Arc<Vec<usize>>,
}

impl PartialEq for Working {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.attempts, &other.attempts)
    }
}

/// An index shared by pointer (comparing two indexes element by element would defeat it).
#[derive(Clone, Debug)]
pub struct IndexRef(pub Arc<Index>);

impl PartialEq for IndexRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[derive(Clone, Copy)]
pub struct Lab {
    pub lang: RwSignal<Lang>,
    pub loaded: RwSignal<Option<Loaded>>,
    /// The last load or upload that failed; the current trace stays as it was.
    pub load_error: RwSignal<Option<String>>,
    pub settings: RwSignal<Settings>,
    pub whatif: RwSignal<WhatIf>,
    /// Selected row, as a position in the working attempts.
    pub selected: RwSignal<usize>,
    pub notes: RwSignal<String>,
    /// A one-off message (e.g. a stored value that could not be read).
    pub notice: RwSignal<Option<String>>,
    pub working: Memo<Option<Working>>,
    pub index: Memo<Option<IndexRef>>,
    pub metrics: Memo<Option<Metrics>>,
    pub changes: Memo<Vec<Change>>,
}

impl Lab {
    pub fn new(lang: Lang) -> Lab {
        let loaded: RwSignal<Option<Loaded>> = RwSignal::new(None);
        let settings = RwSignal::new(Settings::default());
        let whatif = RwSignal::new(WhatIf::default());
        let working = Memo::new(move |_| {
            let l = loaded.get()?;
            Some(whatif.with(|w| {
                if w.is_empty() {
                    Working {
                        original_rows: Arc::new((0..l.attempts.len()).collect()),
                        attempts: l.attempts.clone(),
                    }
                } else {
                    Working {
                        attempts: Arc::new(w.apply(&l.attempts)),
                        original_rows: Arc::new(w.kept_rows(l.attempts.len())),
                    }
                }
            }))
        });
        let population = Memo::new(move |_| settings.with(|s| s.population));
        let index = Memo::new(move |_| {
            let w = working.get()?;
            Some(IndexRef(Arc::new(Index::build(&w.attempts, population.get()))))
        });
        let metrics = Memo::new(move |_| {
            let ix = index.get()?;
            Some(settings.with(|s| Metrics::compute(&ix.0, s)))
        });
        // (trace, metrics) now and at the previous recompute; a new trace starts afresh.
        type Snapshot = Option<(usize, Metrics)>;
        let history: Memo<(Snapshot, Snapshot)> = Memo::new(move |prev: Option<&(Snapshot, Snapshot)>| {
            let now = loaded.with(|l| l.as_ref().map(|l| Arc::as_ptr(&l.trace) as usize)).zip(metrics.get());
            let before = prev.and_then(|(_, current)| current.clone());
            (before, now)
        });
        let changes = Memo::new(move |_| {
            history.with(|(before, now)| match (before, now) {
                (Some((trace_a, a)), Some((trace_b, b))) if trace_a == trace_b => b.changes_since(a),
                _ => Vec::new(),
            })
        });
        Lab {
            lang: RwSignal::new(lang),
            loaded,
            load_error: RwSignal::new(None),
            settings,
            whatif,
            selected: RwSignal::new(0),
            notes: RwSignal::new(String::new()),
            notice: RwSignal::new(None),
            working,
            index,
            metrics,
            changes,
        }
    }

    /// Replaces the current trace. Settings come from the new trace's header, then `overrides`
    /// (a permalink's or the learner's saved choices) on top.
    pub fn load(&self, loaded: Loaded, overrides: &[(String, String)]) {
        let mut s = Settings::from_header(&loaded.trace.header);
        s.apply_pairs(overrides.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let rows = loaded.attempts.len();
        self.whatif.set(WhatIf::default());
        self.settings.set(s);
        self.selected.update(|r| *r = (*r).min(rows.saturating_sub(1)));
        self.load_error.set(None);
        self.loaded.set(Some(loaded));
    }

    /// How many rows the working trace has.
    pub fn row_count(&self) -> usize {
        self.working.with(|w| w.as_ref().map_or(0, |w| w.attempts.len()))
    }

    pub fn step(&self, delta: isize) {
        let n = self.row_count();
        if n == 0 {
            return;
        }
        self.selected.update(|r| *r = (*r as isize + delta).clamp(0, n as isize - 1) as usize);
    }
}

/// The lab from context (provided once by `App`).
pub fn use_lab() -> Lab {
    expect_context::<Lab>()
}
