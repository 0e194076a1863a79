//! The lab's state, shared by every component through Leptos context.
//!
//! Signals hold what the learner chose (trace, settings, what-if edits, selected row, language,
//! notes); memos derive the rest through the core — working attempts → index → metrics → what
//! changed. The index memo only listens to the [`Population`], so a threshold edit never
//! rebuilds it: it is one binary search in the core.

use std::sync::Arc;

use leptos::prelude::*;
use tracelab_core::handoff::WorkingText;
use tracelab_core::whatif::Marked;
use tracelab_core::{
    compare::{Intervals, Readings},
    figure::Change,
    Attempt, Index, Lang, Metrics, Settings, Trace, WhatIf,
};
pub use tracelab_web::js_text::HeldText;

/// How long a result must stand before "what changed" takes it as the new baseline.
const SETTLE_MS: u64 = 800;

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
/// untouched attempts can be shared without cloning. The text it was read from goes with it:
/// the lab sends that (never the trace written out again) to its second bundle and to the
/// lessons page.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub origin: Origin,
    pub trace: Arc<Trace>,
    pub attempts: Arc<Vec<Attempt>>,
    pub text: Arc<HeldText>,
}

impl PartialEq for Loaded {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.trace, &other.trace)
    }
}

impl Loaded {
    /// `trace` as read from `text`.
    pub fn new(origin: Origin, mut trace: Trace, text: HeldText) -> Loaded {
        let attempts = Arc::new(std::mem::take(&mut trace.attempts));
        Loaded {
            origin,
            trace: Arc::new(trace),
            attempts,
            text: Arc::new(text),
        }
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

/// An index shared by pointer (comparing two indexes element by element would defeat it), with
/// what its series say that no threshold edit changes (`Readings`: read once, kept with it).
#[derive(Clone, Debug)]
pub struct IndexRef(pub Arc<Index>, pub Arc<Readings>);

impl IndexRef {
    fn new(index: Index) -> IndexRef {
        IndexRef(Arc::new(index), Arc::new(Readings::for_edits()))
    }
}

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
    /// The other benchmarks of an uploaded peer file (guidellm), by label.
    pub choices: RwSignal<Vec<(String, Loaded)>>,
    pub choice_label: RwSignal<String>,
    pub working: Memo<Option<Working>>,
    pub metrics: Memo<Option<Metrics>>,
    /// Each figure's 95 % interval, as the terminal card and the compare page give it.
    pub intervals: Memo<Option<Intervals>>,
    pub changes: Memo<Vec<Change>>,
    /// The wrong choices and what-if edits in force, each with the figures it moves.
    pub marked: Memo<Vec<Marked>>,
    /// The index of the rows up to the selected one, for the running figures: rebuilt when the
    /// selection, the working attempts or the population change, never on a threshold edit.
    pub running_index: Memo<Option<(usize, IndexRef)>>,
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
        let selected = RwSignal::new(0usize);
        let index = Memo::new(move |_| {
            let w = working.get()?;
            Some(IndexRef::new(Index::build(&w.attempts, population.get())))
        });
        let running_index = Memo::new(move |_| {
            let w = working.get()?;
            // At the last row the rows so far are the whole trace: its index, not a copy.
            if selected.get() + 1 >= w.attempts.len() {
                return Some((w.attempts.len(), index.get()?));
            }
            let (rows, ix) =
                tracelab_core::compare::prefix_index(&w.attempts, population.get(), selected.get());
            Some((rows, IndexRef::new(ix)))
        });
        let metrics = Memo::new(move |_| {
            let ix = index.get()?;
            Some(settings.with(|s| Metrics::compute(&ix.0, s)))
        });
        let intervals = Memo::new(move |_| {
            let ix = index.get()?;
            settings.with(|s| {
                metrics.with(|m| {
                    m.as_ref()
                        .map(|m| Intervals::compute_kept(&ix.0, &ix.1, s, m))
                })
            })
        });
        let lang_now = RwSignal::new(lang);
        let marked = Memo::new(move |_| {
            let (Some(l), Some(w)) = (loaded.get(), working.get()) else {
                return Vec::new();
            };
            settings.with(|s| {
                metrics.with(|m| {
                    let Some(now) = m.as_ref() else {
                        return Vec::new();
                    };
                    whatif.with(|edits| {
                        tracelab_core::whatif::marked(&l.attempts, &w.attempts, edits, s, now)
                    })
                })
            })
        });
        // "What changed since the last edit" compares with the last *settled* figures: typing
        // 0.5 passes through 0 on the way, and the class should read "qualified 5 → 4", not
        // "0 → 4". A result settles once it has stood for SETTLE_MS.
        type Snapshot = Option<(usize, Metrics)>;
        let snapshot = Memo::new(move |_| {
            loaded
                .with(|l| l.as_ref().map(|l| Arc::as_ptr(&l.trace) as usize))
                .zip(metrics.get())
        });
        let settled: RwSignal<(Snapshot, Snapshot)> = RwSignal::new((None, None));
        Effect::new(move |_| {
            let now = snapshot.get();
            let settle = move || {
                if snapshot.with_untracked(|s| *s != now) {
                    return; // superseded before it settled
                }
                settled.update(|(prev, current)| {
                    if *current != now {
                        let same_trace =
                            matches!((&*current, &now), (Some((a, _)), Some((b, _))) if a == b);
                        *prev = if same_trace { current.take() } else { None };
                        *current = now.clone();
                    }
                });
            };
            if settled.with_untracked(|(_, c)| c.is_none()) {
                settle();
            } else {
                set_timeout(settle, std::time::Duration::from_millis(SETTLE_MS));
            }
        });
        let changes = Memo::new(move |_| {
            let now = snapshot.get();
            settled.with(|(prev, current)| {
                let base = if *current == now { prev } else { current };
                match (base, &now) {
                    (Some((ta, a)), Some((tb, b))) if ta == tb => b.changes_since(a),
                    _ => Vec::new(),
                }
            })
        });
        Lab {
            lang: lang_now,
            loaded,
            load_error: RwSignal::new(None),
            settings,
            whatif,
            selected,
            notes: RwSignal::new(String::new()),
            notice: RwSignal::new(None),
            choices: RwSignal::new(Vec::new()),
            choice_label: RwSignal::new(String::new()),
            working,
            metrics,
            intervals,
            changes,
            marked,
            running_index,
        }
    }

    /// Replaces the current trace. Settings come from the new trace's header, then `overrides`
    /// (a permalink's or the learner's saved choices) on top.
    /// Returns the override keys whose values could not be used (and were ignored).
    pub fn load(&self, loaded: Loaded, overrides: &[(String, String)]) -> Vec<String> {
        let mut s = Settings::from_header(&loaded.trace.header);
        let refused = s.apply_pairs(overrides.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let rows = loaded.attempts.len();
        self.whatif.set(WhatIf::default());
        self.settings.set(s);
        self.selected
            .update(|r| *r = (*r).min(rows.saturating_sub(1)));
        self.load_error.set(None);
        if matches!(loaded.origin, Origin::Sample(_)) {
            self.choices.set(Vec::new());
        }
        self.loaded.set(Some(loaded));
        refused
    }

    /// Sets a peer tool's own figures (its aggregate file, `text`) beside the trace of the same
    /// run, keeping the learner's settings and edits. The importers' bundle checks the summary's
    /// counts against the loaded attempts and answers with the trace's new header.
    pub async fn attach_summary(&self, file: &str, text: &str) {
        let Some(current) = self.loaded.get_untracked() else {
            self.load_error.set(Some(format!(
                "{file}: this is a summary; upload the per-request file of the same run first"
            )));
            return;
        };
        let sent = WorkingText {
            trace: current.text.whole(),
            whatif: WhatIf::default(),
        };
        let attached = match serde_json::to_string(&sent) {
            Ok(json) => {
                crate::convert::call(crate::convert::Call::AttachSummary, &[file, text, &json])
                    .await
            }
            Err(e) => Err(e.to_string()),
        }
        .and_then(|line| {
            tracelab_core::handoff::received_header(file, &line)
                .map(|h| (h, line))
                .map_err(|e| e.to_string())
        });
        // Another trace opened meanwhile: this answer is about one that is gone.
        if !self.loaded.with_untracked(|l| {
            l.as_ref()
                .is_some_and(|l| Arc::ptr_eq(&l.trace, &current.trace))
        }) {
            return;
        }
        match attached {
            Ok((header, line)) => {
                let trace = Trace {
                    header,
                    attempts: Vec::new(),
                    ..(*current.trace).clone()
                };
                let text = current.text.with_header(line);
                self.load_error.set(None);
                self.loaded.set(Some(Loaded {
                    origin: current.origin,
                    trace: Arc::new(trace),
                    attempts: current.attempts,
                    text: Arc::new(text),
                }));
            }
            Err(e) => self.load_error.set(Some(e)),
        }
    }

    /// The open trace as the lab's second bundle is handed it (`crate::convert::call_on_trace`):
    /// its key (a new trace or a new set of what-if edits is a new key) and its text with the
    /// edits, made only when it is sent.
    pub fn sent(
        &self,
        loaded: Loaded,
        working: &Working,
    ) -> (String, impl FnOnce() -> (Arc<HeldText>, WhatIf) + 'static) {
        let key = crate::convert::key(&loaded.trace, &working.attempts);
        let whatif = self.whatif;
        (key, move || (loaded.text.clone(), whatif.get_untracked()))
    }

    /// The current trace as its text with the learner's what-if edits, for the lessons page (a
    /// copy: used on demand only).
    pub fn working_text(&self) -> Option<WorkingText> {
        let loaded = self.loaded.get_untracked()?;
        Some(WorkingText {
            trace: loaded.text.whole(),
            whatif: self.whatif.get_untracked(),
        })
    }

    /// How many rows the working trace has.
    pub fn row_count(&self) -> usize {
        self.working
            .with(|w| w.as_ref().map_or(0, |w| w.attempts.len()))
    }

    pub fn step(&self, delta: isize) {
        let n = self.row_count();
        if n == 0 {
            return;
        }
        self.selected
            .update(|r| *r = (*r as isize + delta).clamp(0, n as isize - 1) as usize);
    }
}

/// The lab from context (provided once by `App`).
pub fn use_lab() -> Lab {
    expect_context::<Lab>()
}
