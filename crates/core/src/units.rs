//! Every unit conversion a page shows, in one place: seconds and milliseconds (to the
//! microsecond a trace keeps), a number a learner typed as a time, percentages and shares, bytes
//! and megabytes. The lab and its pages convert no unit themselves (the workspace tidy's
//! `xtask/src/tidy/view.rs` checks that), so a value typed in one box and one read from a file compare the
//! same way everywhere.

use crate::text::Text;
use crate::trace::{MAX_TIME_MS, MAX_WINDOW_S};

/// Seconds to milliseconds, rounded to the microsecond traces are written with — exactly as the
/// threshold is compared and a CSV cell is read, so `2.007` s typed anywhere is 2007 ms, never
/// 2007.0000000000002 (`2.007 × 1000` in floating point).
pub fn ms_from_s(seconds: f64) -> f64 {
    (seconds * 1e6).round() / 1e3
}

/// Milliseconds to seconds, rounded to the microsecond (`2007 ms` is `2.007` s): for a value
/// shown in seconds and an axis drawn in seconds.
pub fn s_from_ms(ms: f64) -> f64 {
    (ms * 1e3).round() / 1e6
}

/// A duration in ms rounded to a microsecond, the resolution traces are written with, exactly as
/// the threshold is rounded: `4893.211 − 2232.211` is 2661.0000000000005 in floating point, and
/// without this a TTFT written as exactly the threshold would count as over it under ≤.
pub(crate) fn round_to_microsecond(ms: f64) -> f64 {
    (ms * 1e3).round() / 1e3
}

/// A duration a learner typed, in seconds ("2.007", " 0.5 "), rounded to the microsecond a trace
/// keeps. `Ok(None)` for an empty entry (the caller decides what "nothing" means); otherwise the
/// reason, in both languages, why it is not a duration: not a number, negative, or past the
/// longest time a trace may hold (10^12 s).
pub fn parse_seconds(raw: &str) -> Result<Option<f64>, Text> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    let v = parse_number(raw)?;
    if v < 0.0 {
        return Err(Text::new(
            format!("a time cannot be negative, got {raw} s"),
            format!("时间不能为负数，输入的是 {raw} 秒"),
        ));
    }
    if v > MAX_WINDOW_S || ms_from_s(v) > MAX_TIME_MS {
        return Err(Text::new(
            format!("{raw} s is past the longest time a trace may hold (10^12 s)"),
            format!("{raw} 秒超过了追踪记录能容纳的最长时间（10^12 秒）"),
        ));
    }
    Ok(Some((v * 1e6).round() / 1e6))
}

/// A duration a learner typed in seconds, in ms rounded to the microsecond: what a what-if edit
/// of a row's TTFT stores, so a TTFT typed as 2.007 s equals a threshold of 2.007 s.
pub fn parse_seconds_as_ms(raw: &str) -> Result<Option<f64>, Text> {
    Ok(parse_seconds(raw)?.map(ms_from_s))
}

/// A number a learner typed: finite, or the reason in both languages.
pub fn parse_number(raw: &str) -> Result<f64, Text> {
    let raw = raw.trim();
    match raw.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(Text::new(
            format!("`{raw}` is not a number"),
            format!("“{raw}”不是一个数字"),
        )),
    }
}

/// A percentage (95, for P95 or 95 % utilisation) as a share of one (0.95).
pub fn share_from_percent(percent: f64) -> f64 {
    percent / 100.0
}

/// A share of one (0.95) as a percentage (95).
pub fn percent_from_share(share: f64) -> f64 {
    share * 100.0
}

/// Bytes as (decimal) megabytes, for a file's size beside a parse speed.
pub fn megabytes(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_time_equals_the_same_threshold() {
        // The reason this module exists: 2.007 × 1000 is 2007.0000000000002 in floating point.
        assert_ne!(2.007_f64 * 1000.0, 2007.0);
        assert_eq!(ms_from_s(2.007), 2007.0);
        assert_eq!(parse_seconds_as_ms("2.007"), Ok(Some(2007.0)));
        assert_eq!(parse_seconds(" 2.007 "), Ok(Some(2.007)));
        assert_eq!(parse_seconds_as_ms("1.001"), Ok(Some(1001.0)));
        // Kept to the microsecond, as a trace keeps it.
        assert_eq!(parse_seconds_as_ms("0.0000004"), Ok(Some(0.0)));
        assert_eq!(parse_seconds_as_ms("0.0000006"), Ok(Some(0.001)));
    }

    #[test]
    fn milliseconds_read_back_as_the_seconds_typed() {
        for typed in [
            "2.007",
            "0.3",
            "1.001",
            "4893.211",
            "0.000001",
            "123456.789012",
        ] {
            let s: f64 = typed.parse().unwrap();
            assert_eq!(s_from_ms(ms_from_s(s)), s, "{typed}");
        }
        assert_eq!(s_from_ms(2661.0000000000005), 2.661);
        assert_eq!(round_to_microsecond(4893.211 - 2232.211), 2661.0);
    }

    #[test]
    fn what_is_not_a_duration_is_named_in_both_languages() {
        assert_eq!(parse_seconds("  "), Ok(None));
        let not_a_number = parse_seconds("2,5").unwrap_err();
        assert!(
            not_a_number.en.contains("`2,5` is not a number"),
            "{not_a_number:?}"
        );
        assert!(not_a_number.zh.contains("不是一个数字"), "{not_a_number:?}");
        for bad in ["NaN", "inf", "-inf", "abc"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
        let negative = parse_seconds("-0.5").unwrap_err();
        assert!(
            negative.en.contains("negative") && negative.zh.contains("负数"),
            "{negative:?}"
        );
        let huge = parse_seconds("1e13").unwrap_err();
        assert!(
            huge.en.contains("10^12 s") && huge.zh.contains("10^12 秒"),
            "{huge:?}"
        );
        assert_eq!(parse_seconds("1e12"), Ok(Some(1e12)));
    }

    #[test]
    fn shares_percentages_and_sizes() {
        assert_eq!(share_from_percent(95.0), 0.95);
        assert_eq!(percent_from_share(0.25), 25.0);
        assert_eq!(megabytes(2_500_000), 2.5);
    }
}
