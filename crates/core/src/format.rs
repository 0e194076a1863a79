//! How numbers and figures are written for people: the same digits in the terminal, the lab and
//! every export. The one home of the core's formatting helpers ([`trim_num`], [`duration`],
//! [`count`], [`percentile_label`], the CSV and Markdown cells); it sits low, so any layer may use it.

use crate::figure::{Change, Figure, Unit};
use crate::text::{Lang, Text};

/// 1 → "1", 0.5 → "0.5".
pub fn trim_num(v: f64) -> String {
    let s = format!("{:.6}", v);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// "P95" for 95, "P99.9" for 99.9.
pub fn percentile_label(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("P{}", p as i64)
    } else {
        format!("P{p}")
    }
}

/// A value in its unit: "20 %", "500 ms", "1.2 s", "0.5 /s", "4 CNY".
pub fn value(figure: &Figure, lang: Lang) -> String {
    match figure.value {
        None => match lang {
            Lang::En => "undefined".into(),
            Lang::Zh => "无定义".into(),
        },
        Some(v) => number_in_unit(v, &figure.unit, lang),
    }
}

/// A table cell for Markdown: `|` escaped, line breaks flattened.
pub fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A number written in a unit (also used for "what changed": "5 → 4").
pub fn number_in_unit(v: f64, unit: &Unit, lang: Lang) -> String {
    match unit {
        Unit::Count => count_value(v),
        Unit::Ratio => format!("{} %", round_to(v * 100.0, 2)),
        Unit::Seconds => duration(v),
        Unit::PerSecond => match lang {
            Lang::En => format!("{} /s", round_small(v)),
            Lang::Zh => format!("{} 次/秒", round_small(v)),
        },
        Unit::TokensPerSecond => format!("{} tokens/s", round_to(v, 2)),
        Unit::MoneyPer1000(currency) => {
            let currency = if currency.is_empty() {
                ""
            } else {
                currency.as_str()
            };
            format!("{} {currency}", round_small(v))
                .trim_end()
                .to_string()
        }
    }
}

/// A difference with its sign and unit: `+3 pp` for a share (percentage points), `−0.2 /s` for
/// a rate, `±0` for none.
pub fn signed_in_unit(v: f64, unit: &Unit, lang: Lang) -> String {
    let body = match unit {
        Unit::Ratio => {
            let pp = trim_num((v.abs() * 10000.0).round() / 100.0);
            if lang == Lang::Zh {
                format!("{pp} 个百分点")
            } else {
                format!("{pp} pp")
            }
        }
        _ => number_in_unit(v.abs(), unit, lang),
    };
    let sign = if v > 0.0 {
        "+"
    } else if v < 0.0 {
        "−"
    } else {
        "±"
    };
    format!("{sign}{body}")
}

/// Four decimals, or four significant digits where that takes more (a rate's lower bound of
/// 0.002532 /s is not 0.0025 /s).
fn round_small(v: f64) -> String {
    let decimals = if v != 0.0 && v.abs() < 0.1 {
        (3.0 - v.abs().log10().floor()).min(12.0) as i32
    } else {
        4
    };
    round_to(v, decimals)
}

/// What a unit means, in words: the "unit" part of a figure's formula.
pub fn unit_name(unit: &Unit) -> Text {
    match unit {
        Unit::Count => Text::new("a count of requests", "请求个数"),
        Unit::Ratio => Text::new(
            "a share with no unit (0–1, shown as %)",
            "无单位的比例（0–1，以 % 显示）",
        ),
        Unit::Seconds => Text::new("seconds", "秒"),
        Unit::PerSecond => Text::new("requests per second of the window", "窗口内每秒的请求数"),
        Unit::MoneyPer1000(currency) => {
            let c = if currency.is_empty() {
                "money".to_string()
            } else {
                currency.clone()
            };
            let zh = if currency.is_empty() {
                "金额".to_string()
            } else {
                currency.clone()
            };
            Text::new(
                format!("{c} per 1,000 qualified requests"),
                format!("每 1000 个合格请求的 {zh}"),
            )
        }
        Unit::TokensPerSecond => Text::new(
            "output tokens per second of the window",
            "窗口内每秒的输出 token 数",
        ),
    }
}

/// A duration in seconds, written so that a non-zero one never reads "0": from 1 s up in
/// seconds to the millisecond ("1.2 s", "2 s"), below 1 s in milliseconds to four significant
/// digits ("500 ms", "412.3 ms", "0.566 ms"). Only an exact zero is "0 s".
pub fn duration(seconds: f64) -> String {
    if seconds == 0.0 || !seconds.is_finite() {
        return format!("{} s", trim_num(seconds));
    }
    let ms = seconds.abs() * 1000.0;
    if ms < 1000.0 {
        let decimals = (3 - ms.log10().floor() as i32).clamp(0, 9) as usize;
        let text = format!("{:.*}", decimals, ms);
        let text = if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.')
        } else {
            text.as_str()
        };
        if text.parse::<f64>().is_ok_and(|r| r < 1000.0) {
            let sign = if seconds < 0.0 { "-" } else { "" };
            return format!("{sign}{text} ms");
        }
    }
    format!("{} s", round_to(seconds, 3))
}

/// A number on a chart's axis: at most three decimals, fewer as it grows, no trailing zeros,
/// thousands grouped ("3.827", "12.5", "100", "30,000").
pub fn axis_label(v: f64) -> String {
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        3
    };
    let scale = 10f64.powi(digits);
    // Grouped like every number the lab writes: "30,000" ms, not "30000".
    count_value((v * scale).round() / scale)
}

/// "1 failure", "2 failures", "9,981 failures": the number through [`integer`].
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", integer(n as u64), if n == 1 { one } else { many })
}

/// A whole number with thousands separators, the same in every language the lab speaks:
/// 100000 → "100,000", 999 → "999".
pub fn integer(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A number that may be fractional (a figure's numerator, a window's seconds, money): written
/// by [`trim_num`], its whole part grouped as [`integer`] groups it, so "3,600" and "3,600.5"
/// stand side by side.
pub fn count_value(v: f64) -> String {
    let text = trim_num(v);
    let (sign, digits) = text
        .strip_prefix('-')
        .map_or(("", text.as_str()), |rest| ("-", rest));
    let (whole, fraction) = digits.split_once('.').map_or((digits, ""), |(w, f)| (w, f));
    match whole.parse::<u64>() {
        Ok(w) if fraction.is_empty() => format!("{sign}{}", integer(w)),
        Ok(w) => format!("{sign}{}.{fraction}", integer(w)),
        // Beyond u64 (never a count): as written.
        Err(_) => text,
    }
}

/// A duration given in milliseconds (the trace's unit), written by [`duration`]: 1148 → "1.148 s".
pub fn duration_ms(ms: f64) -> String {
    duration(ms / 1000.0)
}

/// `v` to `digits` decimals, written without trailing zeros (`round_to(2.0074, 3)` is "2.007").
pub fn round_to(v: f64, digits: i32) -> String {
    let scale = 10f64.powi(digits);
    trim_num((v * scale).round() / scale)
}

/// The formula with its parts: "failures / all attempts = 2 / 10", "… = 3,060 / 100,000" (the
/// parts through [`count_value`], as every count is written).
pub fn formula(figure: &Figure, lang: Lang) -> Option<String> {
    let (num, den) = (figure.numerator?, figure.denominator?);
    let num_label = figure
        .numerator_label
        .as_ref()
        .map(|t| t.get(lang).to_string())
        .unwrap_or_default();
    let den_label = figure
        .denominator_label
        .as_ref()
        .map(|t| t.get(lang).to_string())
        .unwrap_or_default();
    // The window cost's numerator is money: it carries its currency ("20 CNY / 5", not "20 / 5").
    let num = match &figure.unit {
        Unit::MoneyPer1000(currency) if !currency.is_empty() => {
            format!("{} {currency}", count_value(num))
        }
        _ => count_value(num),
    };
    Some(format!(
        "{num_label} / {den_label} = {num} / {}",
        count_value(den)
    ))
}

/// How the figure was picked, in the reader's language, with its sample's size:
/// "nearest-rank: ⌈95·96,940/100⌉ = 92,093 of 96,940, n = 96,940". `None` for a figure with no
/// method (a rate is its formula).
pub fn method_line(figure: &Figure, lang: Lang) -> Option<String> {
    // The method in the reader's language (`method_text`); `method` alone is English.
    let method = figure
        .method_text
        .as_ref()
        .map(|m| m.get(lang))
        .or(figure.method.as_deref())?;
    Some(format!(
        "{method}, n = {}",
        integer(figure.n.unwrap_or(0) as u64)
    ))
}

/// The reason a figure is undefined, or its caution note.
pub fn remark(figure: &Figure, lang: Lang) -> Option<String> {
    figure
        .undefined
        .as_ref()
        .or(figure.note.as_ref())
        .map(|t| t.get(lang).to_string())
}

/// "qualified 5 → 4", "Goodput 0.5 /s → 0.4 /s", "Cost per 1,000 qualified 4 CNY → undefined".
pub fn change(c: &Change, lang: Lang) -> String {
    let side = |v: Option<f64>| match v {
        Some(v) => number_in_unit(v, &c.unit, lang),
        None => match lang {
            Lang::En => "undefined".to_string(),
            Lang::Zh => "无定义".to_string(),
        },
    };
    format!("{} {} → {}", c.name.get(lang), side(c.from), side(c.to))
}

/// A run's arrival process (the header's `conditions.arrival`) for a page: in Chinese the words,
/// with the header's own code in brackets.
pub fn arrival(code: &str, lang: Lang) -> String {
    let zh = match code {
        "constant" => "等间隔",
        "poisson" => "泊松",
        "closed" => "闭环",
        "workload" => "按负载文件的时间",
        _ => return code.to_string(),
    };
    match lang {
        Lang::En => code.to_string(),
        Lang::Zh => format!("{zh}（{code}）"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels_keep_fewer_decimals_as_numbers_grow() {
        assert_eq!(axis_label(3.82749), "3.827");
        assert_eq!(axis_label(0.30000000000000004), "0.3");
        assert_eq!(axis_label(12.46), "12.5");
        assert_eq!(axis_label(100.4), "100");
        assert_eq!(axis_label(-0.0001), "0");
        assert_eq!(axis_label(30000.0), "30,000");
        assert_eq!(round_to(2.0074, 3), "2.007");
    }

    #[test]
    fn durations_are_never_zero_when_they_are_not() {
        for (seconds, shown) in [
            (0.000566, "0.566 ms"),
            (0.000001, "0.001 ms"),
            (0.0000004, "0.0004 ms"),
            (0.0123456, "12.35 ms"),
            (0.4, "400 ms"),
            (0.41234, "412.3 ms"),
            (0.99996, "1 s"),
            (1.0, "1 s"),
            (1.2345, "1.235 s"),
            (2.0, "2 s"),
            (0.0, "0 s"),
        ] {
            assert_eq!(duration(seconds), shown, "{seconds}");
            assert_eq!(
                number_in_unit(seconds, &Unit::Seconds, Lang::Zh),
                shown,
                "{seconds} (zh)"
            );
        }
    }

    #[test]
    fn counts_agree_in_number() {
        assert_eq!(count(1, "failure", "failures"), "1 failure");
        assert_eq!(count(0, "failure", "failures"), "0 failures");
        assert_eq!(count(2, "success", "successes"), "2 successes");
        assert_eq!(count(9981, "failure", "failures"), "9,981 failures");
    }

    #[test]
    fn integers_have_thousands_separators() {
        for (n, shown) in [
            (0, "0"),
            (7, "7"),
            (999, "999"),
            (1000, "1,000"),
            (64646, "64,646"),
            (100000, "100,000"),
            (1234567, "1,234,567"),
        ] {
            assert_eq!(integer(n), shown);
        }
        assert_eq!(count_value(64646.0), "64,646");
        assert_eq!(count_value(-1000.0), "-1,000");
        assert_eq!(count_value(2.5), "2.5");
        assert_eq!(count_value(3600.5), "3,600.5");
        assert_eq!(count_value(-1234.25), "-1,234.25");
        assert_eq!(count_value(0.125), "0.125");
        assert_eq!(count_value(-0.0), "0");
        assert_eq!(number_in_unit(100000.0, &Unit::Count, Lang::Zh), "100,000");
    }

    #[test]
    fn durations_in_ms_follow_the_same_rule() {
        assert_eq!(duration_ms(1148.0), "1.148 s");
        assert_eq!(duration_ms(412.3), "412.3 ms");
        assert_eq!(duration_ms(0.0), "0 s");
    }
}
