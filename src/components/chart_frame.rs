//! What the run chart (`charts.rs`) and the canvas views beside it (`distribution.rs`) share:
//! the width they follow, where one stops drawing a bar per attempt, and the run's horizontal
//! scale. Both import it from here, so neither imports the other.

use leptos::prelude::*;

/// The chart's width in CSS pixels, followed on resize.
pub(super) fn use_width(holder: NodeRef<leptos::html::Div>, resized: RwSignal<u32>) -> Signal<f64> {
    let width = RwSignal::new(0.0f64);
    Effect::new(move |_| {
        resized.track();
        if let Some(el) = holder.get() {
            width.set((el.client_width() as f64).max(260.0));
        }
    });
    width.into()
}

/// Beyond this many timed attempts the run chart gives no attempt a bar of its own: the charts
/// bundle draws the run in time buckets above it (src/components/distribution.rs); a bar a few
/// pixels high per attempt stops being readable, and redrawing them made an edit slow.
pub(super) const BARS_FIT: usize = 300;

/// The run chart's horizontal scale: box width, plot left and right (px), the clock's start and
/// end, and the span the ticks cover (ms). The second bundle's bucketed lanes use it too.
pub(super) type RunAxis = Option<(f64, f64, f64, f64, f64, f64)>;
