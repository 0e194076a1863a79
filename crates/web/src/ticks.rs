//! Where a chart's axis puts its ticks: round values (1, 2 or 5 × 10ⁿ apart) over values the
//! core gave, in the unit it gave them. Layout, not a figure: every page's charts share it.

/// Round tick positions from 0 to at least `max`: steps of 1, 2 or 5 × 10ⁿ, about `count` of them.
pub fn ticks(max: f64, count: usize) -> Vec<f64> {
    if max.is_nan() || max <= 0.0 || !max.is_finite() {
        return vec![0.0, 1.0];
    }
    let raw = max / count.max(1) as f64;
    // An integer power (`powi`): the same value as `powf` here, without linking the general
    // power function into the lab's first download.
    let mag = 10f64.powi(raw.log10().floor() as i32);
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let n = (max / step).ceil() as usize;
    (0..=n).map(|k| tick_value(k as f64 * step, step)).collect()
}

/// A tick value without float noise (0.30000000000000004 → 0.3), at the step's precision.
fn tick_value(v: f64, step: f64) -> f64 {
    let digits = (-step.log10().floor()).max(0.0) as i32;
    let scale = 10f64.powi(digits);
    (v * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::ticks;

    #[test]
    fn ticks_are_round_and_reach_the_largest_value() {
        // The compare page's old ticks were max/4 apart: 0.39 s, 0.78 s, … for a 1.56 s maximum.
        assert_eq!(ticks(1.56, 4), [0.0, 0.5, 1.0, 1.5, 2.0]);
        assert_eq!(ticks(0.9, 4), [0.0, 0.5, 1.0]);
        assert_eq!(ticks(0.07, 5), [0.0, 0.02, 0.04, 0.06, 0.08]);
        assert_eq!(ticks(12.0, 5), [0.0, 5.0, 10.0, 15.0]);
        assert_eq!(ticks(3.0, 6), [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]);
        assert_eq!(ticks(0.0, 4), [0.0, 1.0]);
        assert_eq!(ticks(f64::NAN, 4), [0.0, 1.0]);
    }
}
