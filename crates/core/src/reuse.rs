//! TTFT of first sends against repeats: a run that sends a prompt more than once may have the
//! repeats served from the server's prefix cache, so one figure over both mixes a cold cache with
//! a warm one. Split by whether the prompt had been sent before in the run (`PromptSend`), each
//! side with its P50, tail, their 95 % intervals and the cached prompt tokens the server reported.

use serde::Serialize;

use crate::compare::{quantile, FigureInterval};
use crate::format::{integer, percentile_label, trim_num};
use crate::percentile::percentile;
use crate::settings::Settings;
use crate::text::{Lang, Text};
use crate::trace::Attempt;
use crate::verdict::{effective_ttft_ms, is_counted};

/// One side of the split.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReuseGroup {
    /// Counted complete successes with a TTFT on this side.
    pub n: usize,
    pub p50_s: Option<f64>,
    pub p50_interval: Option<FigureInterval>,
    pub tail_s: Option<f64>,
    pub tail_interval: Option<FigureInterval>,
    /// How many of them carried the server's count of cached prompt tokens.
    pub cached_reported: usize,
    /// Cached prompt tokens over prompt tokens, summed over those that reported both.
    pub cached_share: Option<f64>,
}

/// TTFT by first send and repeat, under the settings' population and first-token choice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReuseSplit {
    pub first: ReuseGroup,
    pub repeat: ReuseGroup,
    /// The tail percentile's label (`P95`).
    pub tail_label: String,
    /// Repeats are faster than first sends beyond noise (their P50 intervals do not overlap):
    /// the run mixes a cold cache with a warm one.
    pub mixes_cold_and_warm: bool,
}

/// The split, or `None` when no counted attempt says which prompt it sent.
pub fn reuse_split(attempts: &[Attempt], settings: &Settings) -> Option<ReuseSplit> {
    let mut builder = ReuseBuilder::default();
    for a in attempts {
        builder.push(a, settings);
    }
    builder.finish(settings)
}

/// Builds the split one attempt at a time (a trace read as a stream keeps one TTFT per success
/// that says which prompt it sent, as the index does).
#[derive(Debug, Default)]
pub struct ReuseBuilder {
    /// First sends, repeats: TTFTs (ms), how many reported cached tokens, cached and prompt tokens.
    sides: [(Vec<f64>, usize, u64, u64); 2],
    any: bool,
}

impl ReuseBuilder {
    pub fn push(&mut self, a: &Attempt, settings: &Settings) {
        let population = settings.population;
        let Some(p) = a.prompt else { return };
        if !is_counted(a, &population) {
            return;
        }
        self.any = true;
        if !a.outcome.is_success() {
            return;
        }
        let side = &mut self.sides[usize::from(p.repeat)];
        if let Some(t) = effective_ttft_ms(a, &population) {
            side.0.push(t);
        }
        if let Some(c) = p.cached_tokens {
            side.1 += 1;
            if let Some(input) = a.input_tokens.filter(|&i| i > 0) {
                side.2 += u64::from(c.min(input));
                side.3 += u64::from(input);
            }
        }
    }

    pub fn finish(self, settings: &Settings) -> Option<ReuseSplit> {
        if !self.any {
            return None;
        }
        split(self.sides, settings)
    }
}

fn split(sides: [(Vec<f64>, usize, u64, u64); 2], settings: &Settings) -> Option<ReuseSplit> {
    let group = |(mut sample, reported, cached, input): (Vec<f64>, usize, u64, u64)| {
        sample.sort_unstable_by(f64::total_cmp);
        ReuseGroup {
            n: sample.len(),
            p50_s: percentile(&sample, 50.0, settings.percentile).map(|v| v / 1000.0),
            p50_interval: quantile("ttft_p50", &sample, 50.0),
            tail_s: percentile(&sample, settings.p, settings.percentile).map(|v| v / 1000.0),
            tail_interval: quantile("ttft_tail", &sample, settings.p),
            cached_reported: reported,
            cached_share: (input > 0).then(|| cached as f64 / input as f64),
        }
    };
    let [first, repeat] = sides;
    let (first, repeat) = (group(first), group(repeat));
    let below = |fast: &ReuseGroup, slow: &ReuseGroup| match (
        fast.p50_interval.as_ref().and_then(|i| i.bounds.hi),
        slow.p50_interval.as_ref().and_then(|i| i.bounds.lo),
    ) {
        (Some(hi), Some(lo)) => hi < lo,
        _ => false,
    };
    let mixes_cold_and_warm = below(&repeat, &first);
    Some(ReuseSplit {
        first,
        repeat,
        tail_label: percentile_label(settings.p),
        mixes_cold_and_warm,
    })
}

fn seconds(v: Option<f64>) -> String {
    v.map_or_else(
        || "—".to_string(),
        |v| crate::format::number_in_unit(v, &crate::figure::Unit::Seconds, Lang::En),
    )
}

fn interval(iv: &Option<FigureInterval>, lang: Lang) -> String {
    match iv {
        Some(i) => crate::compare::bounds_text(&i.bounds, &crate::figure::Unit::Seconds, lang),
        None => if lang == Lang::Zh {
            "无区间"
        } else {
            "no interval"
        }
        .to_string(),
    }
}

impl ReuseSplit {
    /// The card's lines: each side's n, P50 and tail with their intervals, the cached tokens,
    /// and the warning when the run mixes a cold cache with a warm one.
    pub fn card_lines(&self, lang: Lang) -> Vec<String> {
        let zh = lang == Lang::Zh;
        let t = &self.tail_label;
        let side = |g: &ReuseGroup, en: &str, zh_name: &str| {
            if g.n == 0 {
                return if zh {
                    format!("  {zh_name}：n = 0，没有样本")
                } else {
                    format!("  {en}: n = 0, no sample")
                };
            }
            let cached = match (
                g.cached_reported,
                g.cached_share
                    .map(|s| (integer(g.cached_reported as u64), s)),
            ) {
                (0, _) if zh => "服务端未报告缓存的提示 token".to_string(),
                (0, _) => "the server reported no cached prompt tokens".to_string(),
                (_, Some((k, share))) if zh => format!(
                    "{k} 个报告了缓存的提示 token，占提示的 {} %",
                    trim_num((share * 1000.0).round() / 10.0)
                ),
                (_, Some((k, share))) => format!(
                    "{k} reported cached prompt tokens, {} % of their prompt",
                    trim_num((share * 1000.0).round() / 10.0)
                ),
                (k, None) if zh => format!("{} 个报告了缓存的提示 token", integer(k as u64)),
                (k, None) => format!("{} reported cached prompt tokens", integer(k as u64)),
            };
            if zh {
                format!(
                    "  {zh_name}：n = {}，P50 {}（95 % 区间 {}），{t} {}（{}）；{cached}",
                    integer(g.n as u64),
                    seconds(g.p50_s),
                    interval(&g.p50_interval, lang),
                    seconds(g.tail_s),
                    interval(&g.tail_interval, lang)
                )
            } else {
                format!(
                    "  {en}: n = {}, P50 {} (95 % interval {}), {t} {} ({}); {cached}",
                    integer(g.n as u64),
                    seconds(g.p50_s),
                    interval(&g.p50_interval, lang),
                    seconds(g.tail_s),
                    interval(&g.tail_interval, lang)
                )
            }
        };
        let mut out = vec![
            if zh {
                "按提示是否重复拆分的 TTFT（成功请求）：".to_string()
            } else {
                "TTFT by prompt reuse (successes):".to_string()
            },
            side(&self.first, "first send of a prompt", "提示首次发送"),
            side(
                &self.repeat,
                "repeat (sent before in this run)",
                "重复发送（本次运行中发过）",
            ),
        ];
        if self.mixes_cold_and_warm {
            out.push(self.mix_warning().get(lang).to_string());
        }
        out
    }

    /// Said when repeats are faster beyond noise.
    pub fn mix_warning(&self) -> Text {
        Text::new(
            "  ⚠ Repeats are faster than first sends beyond noise: this baseline mixes a cold cache with a warm one. Compare it only with runs that reuse prefixes the same way (the contract's prefix_reuse), or report the two sides apart.",
            "  ⚠ 重复发送比首次发送快，且超出噪声：这个基线混合了冷缓存与热缓存。只能与以同样方式复用前缀的运行比较（契约的 prefix_reuse），或把两边分开报告。",
        )
    }
}
