//! Sessions: a user's conversation judged as the user lives it. Turn k + 1 resends turns 1..k,
//! so the prefix cache decides its TTFT, and a session qualifies only when every one of its
//! turns does — each turn judged by the one per-attempt verdict ([`crate::verdict::verdict`]),
//! never by a rule of its own. 95 % per turn over 10 turns is about 60 % of sessions.
//!
//! Every counted attempt of a session is one of its turns (a retry too: the user waited for the
//! failed try first), so a session with a failed first try does not qualify.
//!
//! The figures: sessions (n); the share of sessions qualified, Wilson with the SESSION as the
//! unit; the per-turn rate with a cluster-robust interval (sessions as clusters); the product of
//! the per-turn-index rates beside the measured share (what independent turns would give);
//! session goodput and cost per 1,000 qualified sessions over the settings' window (exact
//! Poisson on the count, as the per-request goodput and cost); per turn index the rate, TTFT
//! P50/P95 and the cached share of prompt tokens where the server reported it.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::compare::bounds_text;
use crate::compare::dependence::{of_indicator, of_series, t975, untimed, Dependence};
use crate::compare::stats::{poisson, poisson_real, wilson, wilson_z, Bounds};
use crate::figure::{Figure, Unit};
use crate::format::{integer, value as figure_value};
use crate::percentile::percentile;
use crate::settings::Settings;
use crate::strtable::StrTable;
use crate::text::{Lang, Text};
use crate::trace::Attempt;
use crate::verdict::{is_counted, verdict};

/// One counted turn as the session figures keep it (no attempt is held).
#[derive(Debug, Clone, Copy, PartialEq)]
struct TurnRecord {
    session: u32,
    turn: u32,
    qualified: bool,
    /// The TTFT sample's value in ms (a success with a first token), else NaN.
    ttft_ms: f64,
    /// Cached and prompt tokens, when the server reported the cached ones and the prompt's size.
    cached: Option<(u32, u32)>,
    /// When the turn started (ms on the run's clock), NaN when the trace has no start time: the
    /// sessions' order along the run, for the dependence between sessions.
    start_ms: f64,
}

/// Collects the session turns of a trace one attempt at a time (a trace read as a stream keeps
/// ~40 bytes per turn plus its session ids), judged under one set of settings.
pub struct SessionsBuilder {
    settings: Settings,
    ids: StrTable<u32>,
    turns: Vec<TurnRecord>,
}

impl SessionsBuilder {
    pub fn new(settings: &Settings) -> SessionsBuilder {
        SessionsBuilder {
            settings: settings.clone(),
            ids: StrTable::default(),
            turns: Vec::new(),
        }
    }

    /// Adds one attempt; one without a session, or not counted under the population, is skipped.
    pub fn push(&mut self, a: &Attempt) {
        let Some(s) = &a.session else { return };
        if !is_counted(a, &self.settings.population) {
            return;
        }
        let next = self.ids.len() as u32;
        let Ok(session) = self.ids.entry(&s.session_id, || next).map(|v| *v) else {
            return;
        };
        let v = verdict(a, &self.settings);
        let ttft_ms = match (v.complete_success, v.ttft_s) {
            (true, Some(t)) => t * 1000.0,
            _ => f64::NAN,
        };
        let cached = match (a.cached_tokens(), a.input_tokens) {
            (Some(c), Some(i)) if i > 0 => Some((c.min(i), i)),
            _ => None,
        };
        self.turns.push(TurnRecord {
            session,
            turn: s.turn,
            qualified: v.qualified,
            ttft_ms,
            cached,
            start_ms: a.start_ms.unwrap_or(f64::NAN),
        });
    }

    pub fn finish(self) -> Option<Sessions> {
        Sessions::compute(self.ids.len(), &self.turns, &self.settings)
    }
}

/// A figure with its 95 % interval and the method that gave it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionFigure {
    pub figure: Figure,
    pub interval: Option<Bounds>,
    pub interval_method: Option<Text>,
}

impl SessionFigure {
    fn plain(figure: Figure) -> SessionFigure {
        SessionFigure {
            figure,
            interval: None,
            interval_method: None,
        }
    }

    /// "Sessions qualified: 60 % (95 % interval 50 % … 70 %, Wilson on sessions)".
    pub fn line(&self, lang: Lang) -> String {
        let f = &self.figure;
        let colon = if lang == Lang::Zh { "：" } else { ": " };
        let mut out = format!("{}{colon}{}", f.name.get(lang), figure_value(f, lang));
        if let (Some(n), Some(d)) = (f.numerator, f.denominator) {
            if matches!(f.unit, Unit::Ratio) {
                out.push_str(&format!(" ({} / {})", integer(n as u64), integer(d as u64)));
            }
        }
        if let (Some(b), Some(m)) = (&self.interval, &self.interval_method) {
            let b = bounds_text(b, &f.unit, lang);
            out.push_str(&match lang {
                Lang::En => format!(", 95 % interval {b} ({})", m.get(lang)),
                Lang::Zh => format!("，95 % 区间 {b}（{}）", m.get(lang)),
            });
        }
        if let Some(why) = &f.undefined {
            out.push_str(&match lang {
                Lang::En => format!(" — {}", why.get(lang)),
                Lang::Zh => format!("——{}", why.get(lang)),
            });
        }
        out
    }
}

/// One turn index across the sessions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnRow {
    pub turn: u32,
    /// Counted attempts at this turn index.
    pub n: usize,
    pub qualified: usize,
    pub rate: Option<f64>,
    /// Wilson on this turn index's attempts.
    pub rate_interval: Option<Bounds>,
    pub ttft_p50_s: Option<f64>,
    pub ttft_p95_s: Option<f64>,
    /// Cached prompt tokens ÷ prompt tokens over the attempts that reported both.
    pub cached_share: Option<f64>,
    /// How many attempts reported it.
    pub cached_reported: usize,
}

/// The session figures of one trace under one set of settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sessions {
    pub sessions: SessionFigure,
    pub session_share: SessionFigure,
    pub turn_rate: SessionFigure,
    pub predicted_share: SessionFigure,
    pub session_goodput: SessionFigure,
    pub cost_per_1000_sessions: SessionFigure,
    pub by_turn: Vec<TurnRow>,
    /// Whether the sessions, in start order along the run, are independent draws (batch means
    /// on each session's qualified 0/1; sessions that overlap a busy stretch of a loaded server
    /// fail together): the share's, goodput's and cost's intervals are widened by its inflation
    /// when they are not, and the per-turn rate's by that of each session's turn share.
    pub dependence: Dependence,
}

fn t(en: &str, zh: &str) -> Text {
    Text::new(en, zh)
}

impl Sessions {
    /// The session figures of `attempts`; `None` when no counted attempt belongs to a session.
    pub fn of(attempts: &[Attempt], settings: &Settings) -> Option<Sessions> {
        let mut b = SessionsBuilder::new(settings);
        for a in attempts {
            b.push(a);
        }
        b.finish()
    }

    fn compute(n_sessions: usize, turns: &[TurnRecord], s: &Settings) -> Option<Sessions> {
        if turns.is_empty() {
            return None;
        }
        // Per session: turns (m) and qualified turns (y).
        let mut m = vec![0u64; n_sessions];
        let mut y = vec![0u64; n_sessions];
        for r in turns {
            m[r.session as usize] += 1;
            y[r.session as usize] += u64::from(r.qualified);
        }
        let n = n_sessions as u64;
        let qualified_sessions = m.iter().zip(&y).filter(|(m, y)| m == y).count() as u64;
        // The sessions in start order (a session starts with its earliest turn): whether they
        // are independent draws, for every interval that counts sessions.
        let mut start = vec![f64::INFINITY; n_sessions];
        for r in turns {
            let st = &mut start[r.session as usize];
            *st = st.min(r.start_ms);
        }
        let (dependence, turn_dependence) = if start.iter().any(|s| !s.is_finite()) {
            (untimed(n_sessions), untimed(n_sessions))
        } else {
            let mut order: Vec<usize> = (0..n_sessions).collect();
            order.sort_by(|&a, &b| start[a].total_cmp(&start[b]).then(a.cmp(&b)));
            let qualified: Vec<bool> = order.iter().map(|&i| m[i] == y[i]).collect();
            let share: Vec<f64> = order
                .iter()
                .map(|&i| y[i] as f64 / m[i].max(1) as f64)
                .collect();
            (of_indicator(&qualified), of_series(&share))
        };
        let tau = dependence.inflation;
        let (turns_total, turns_qualified) = (m.iter().sum::<u64>(), y.iter().sum::<u64>());

        let sessions = {
            let mut f = Figure::new("sessions", t("Sessions", "会话数"), Unit::Count);
            f.value = Some(n as f64);
            f.n = Some(n as usize);
            SessionFigure::plain(f)
        };
        let session_label = t("qualified sessions", "合格会话");
        let session_share = SessionFigure {
            figure: Figure::new(
                "session_qualified_share",
                t(
                    "Sessions qualified (every turn qualified)",
                    "合格会话占比（每一轮都合格）",
                ),
                Unit::Ratio,
            )
            .ratio(
                qualified_sessions as f64,
                session_label.clone(),
                n as f64,
                t("sessions", "会话"),
                t("no sessions", "没有会话"),
            ),
            interval: if dependence.widens() {
                wilson_z(
                    qualified_sessions as f64 / tau,
                    n as f64 / tau,
                    dependence.critical(),
                )
            } else {
                wilson(qualified_sessions, n)
            },
            interval_method: Some(if dependence.widens() {
                t(
                    "Wilson, the session as the unit, on the effective sessions (sessions in start order correlated: batch means)",
                    "Wilson 得分区间，以会话为单位，按有效会话数计算（按开始顺序的会话彼此相关：批均值法）",
                )
            } else {
                t(
                    "Wilson, the session as the unit",
                    "Wilson 得分区间，以会话为单位",
                )
            }),
        };

        let turn_rate = {
            let figure = Figure::new(
                "turn_qualified_rate",
                t("Turns qualified (per turn)", "合格轮次占比（按轮）"),
                Unit::Ratio,
            )
            .ratio(
                turns_qualified as f64,
                t("qualified turns", "合格轮次"),
                turns_total as f64,
                t("turns", "轮次"),
                t("no turns", "没有轮次"),
            );
            SessionFigure {
                figure,
                interval: cluster_interval(&m, &y, &turn_dependence),
                interval_method: Some(if turn_dependence.widens() {
                    t(
                        "cluster-robust, sessions as clusters: Wilson on the effective turns (turns ÷ design effect of the ratio estimator ÷ the inflation of sessions correlated in start order, batch means), Student's t",
                        "聚类稳健，以会话为簇：有效轮次 = 轮次 ÷ 比率估计量的设计效应 ÷ 按开始顺序相关的会话带来的膨胀（批均值法），取 Wilson 区间与 t 分布",
                    )
                } else {
                    t(
                        "cluster-robust, sessions as clusters: Wilson on the effective turns (turns ÷ design effect of the ratio estimator), Student's t with sessions − 1 df",
                        "聚类稳健，以会话为簇：比率估计量的设计效应折算出有效轮次后取 Wilson 区间，t 分布自由度为会话数 − 1",
                    )
                }),
            }
        };

        // Per turn index.
        let max_turn = turns.iter().map(|r| r.turn).max().unwrap_or(0) as usize;
        let mut rows: Vec<(u64, u64, Vec<f64>, u64, u64, usize)> =
            vec![(0, 0, Vec::new(), 0, 0, 0); max_turn + 1];
        for r in turns {
            let row = &mut rows[r.turn as usize];
            row.0 += 1;
            row.1 += u64::from(r.qualified);
            if !r.ttft_ms.is_nan() {
                row.2.push(r.ttft_ms);
            }
            if let Some((c, i)) = r.cached {
                row.3 += u64::from(c);
                row.4 += u64::from(i);
                row.5 += 1;
            }
        }
        let mut by_turn = Vec::new();
        let mut rate_of = vec![None; max_turn + 1];
        for (k, (n_k, q_k, mut ttft, cached, prompt, reported)) in rows.into_iter().enumerate() {
            if n_k == 0 {
                continue;
            }
            ttft.sort_unstable_by(f64::total_cmp);
            let rate = q_k as f64 / n_k as f64;
            rate_of[k] = Some(rate);
            by_turn.push(TurnRow {
                turn: k as u32,
                n: n_k as usize,
                qualified: q_k as usize,
                rate: Some(rate),
                rate_interval: wilson(q_k, n_k),
                ttft_p50_s: percentile(&ttft, 50.0, s.percentile).map(|v| v / 1000.0),
                ttft_p95_s: percentile(&ttft, 95.0, s.percentile).map(|v| v / 1000.0),
                cached_share: (prompt > 0).then(|| cached as f64 / prompt as f64),
                cached_reported: reported,
            });
        }

        // What independent turns would give: each session's product of its turns' rates (by
        // turn index), averaged over the sessions.
        let predicted_share = {
            let mut product = vec![1.0f64; n_sessions];
            for r in turns {
                product[r.session as usize] *= rate_of[r.turn as usize].unwrap_or(0.0);
            }
            let mut f = Figure::new(
                "session_share_if_turns_independent",
                t(
                    "Sessions qualified if turns were independent (product of per-turn rates)",
                    "若各轮相互独立的合格会话占比（各轮合格率之积）",
                ),
                Unit::Ratio,
            );
            f.value = Some(product.iter().sum::<f64>() / n as f64);
            f.n = Some(n as usize);
            f.method_text = Some(t(
                "mean over sessions of ∏ rate(turn k) over the session's turns",
                "对各会话取其各轮合格率（按轮次序号）之积，再求平均",
            ));
            f.note = Some(t(
                "a prediction, not a measurement: the measured share differs from it when turns depend on each other (a cache, a slow server)",
                "这是预测而不是测量：各轮相互依赖时（缓存、变慢的服务器），实测占比会与它不同",
            ));
            SessionFigure::plain(f)
        };

        // Correlated sessions: the count swings τ times as much as a Poisson count would.
        let count_interval = if dependence.widens() {
            poisson_real(qualified_sessions as f64 / tau).scale(tau)
        } else {
            poisson(qualified_sessions)
        };
        let poisson_method = if dependence.widens() {
            t(
                "exact Poisson on the count of qualified sessions over the window, on the effective count (sessions in start order correlated: batch means)",
                "合格会话数的精确 Poisson 区间（按有效计数：按开始顺序的会话彼此相关，批均值法），除以窗口",
            )
        } else {
            t(
                "exact Poisson on the count of qualified sessions, over the window",
                "合格会话数的精确 Poisson 区间，除以窗口",
            )
        };
        let session_goodput = {
            let f = Figure::new(
                "session_goodput",
                t("Session goodput", "合格会话 goodput"),
                Unit::PerSecond,
            );
            match s.window_s {
                Some(w) => SessionFigure {
                    figure: f.ratio(
                        qualified_sessions as f64,
                        session_label.clone(),
                        w,
                        t("window seconds", "窗口秒数"),
                        t("the window must be longer than 0 s", "窗口必须长于 0 秒"),
                    ),
                    interval: (w > 0.0).then(|| count_interval.scale(1.0 / w)),
                    interval_method: Some(poisson_method.clone()),
                },
                None => SessionFigure::plain(f.undefined(t(
                    "no window is set: session goodput is qualified sessions per second of a fixed window",
                    "未设置窗口：会话 goodput 是固定窗口内每秒的合格会话数",
                ))),
            }
        };
        let cost_per_1000_sessions = {
            let mut f = Figure::new(
                "cost_per_1000_qualified_sessions",
                t("Cost per 1,000 qualified sessions", "每千个合格会话成本"),
                Unit::MoneyPer1000(s.currency.clone()),
            );
            match s.window_cost {
                None => {
                    SessionFigure::plain(f.undefined(t("no window cost is set", "未设置窗口成本")))
                }
                Some(cost) => {
                    let per = cost * 1000.0;
                    f.numerator = Some(per);
                    f.numerator_label = Some(t("window cost × 1,000", "窗口成本 × 1000"));
                    f.denominator = Some(qualified_sessions as f64);
                    f.denominator_label = Some(session_label);
                    let f = if qualified_sessions > 0 {
                        f.value = Some(per / qualified_sessions as f64);
                        f
                    } else {
                        f.undefined(t(
                            "undefined: no session qualified, so none can carry the cost (not infinity, not 0)",
                            "无定义：没有会话合格，成本无处分摊（不是无穷大，也不是 0）",
                        ))
                    };
                    // The count's upper limit gives the lower cost; with none qualified there
                    // is no upper bound.
                    SessionFigure {
                        figure: f,
                        interval: Some(Bounds {
                            lo: count_interval.hi.map(|hi| per / hi),
                            hi: count_interval.lo.filter(|lo| *lo > 0.0).map(|lo| per / lo),
                        }),
                        interval_method: Some(poisson_method),
                    }
                }
            }
        };

        Some(Sessions {
            sessions,
            session_share,
            turn_rate,
            predicted_share,
            session_goodput,
            cost_per_1000_sessions,
            by_turn,
            dependence,
        })
    }

    /// The figures in the order they are shown.
    pub fn figures(&self) -> [&SessionFigure; 6] {
        [
            &self.sessions,
            &self.session_share,
            &self.turn_rate,
            &self.predicted_share,
            &self.session_goodput,
            &self.cost_per_1000_sessions,
        ]
    }

    /// The section `tracelab report` prints, in one language.
    pub fn lines(&self, lang: Lang) -> Vec<String> {
        let zh = lang == Lang::Zh;
        let mut out = vec![if zh {
            "会话（一个会话只有在每一轮都合格时才合格）".to_string()
        } else {
            "Sessions (a session qualifies only when every one of its turns does)".to_string()
        }];
        for f in self.figures() {
            out.push(format!("  {}", f.line(lang)));
        }
        if self.dependence.widens() {
            out.push(format!(
                "    {}",
                self.dependence.summary(&t("sessions", "个会话"), lang)
            ));
        }
        out.push(if zh {
            "  按轮次：轮 | 请求数 | 合格率（95 % 区间） | TTFT P50 | TTFT P95 | 缓存 token 占比".into()
        } else {
            "  By turn: turn | attempts | qualified (95 % interval) | TTFT P50 | TTFT P95 | cached prompt tokens".into()
        });
        let ratio = Unit::Ratio;
        let secs = Unit::Seconds;
        let none = if zh { "无" } else { "none" };
        let not_reported = if zh { "未报告" } else { "not reported" };
        for r in &self.by_turn {
            let rate = r.rate.map_or(none.to_string(), |v| {
                crate::format::number_in_unit(v, &ratio, lang)
            });
            let interval = r.rate_interval.as_ref().map_or(String::new(), |b| {
                format!(" ({})", bounds_text(b, &ratio, lang))
            });
            let sec = |v: Option<f64>| {
                v.map_or(none.to_string(), |v| {
                    crate::format::number_in_unit(v, &secs, lang)
                })
            };
            let cached = r.cached_share.map_or(not_reported.to_string(), |v| {
                crate::format::number_in_unit(v, &ratio, lang)
            });
            out.push(format!(
                "    {} | {} | {rate}{interval} | {} | {} | {cached}",
                r.turn,
                integer(r.n as u64),
                sec(r.ttft_p50_s),
                sec(r.ttft_p95_s),
            ));
        }
        out
    }

    /// `report --json`'s `sessions` object: one key per figure, its interval beside it.
    pub fn json(&self) -> Value {
        let mut m = serde_json::Map::new();
        for f in self.figures() {
            m.insert(f.figure.key.clone(), json!(f.figure.value));
            if let Some(b) = &f.interval {
                m.insert(
                    format!("{}_interval", f.figure.key),
                    json!({ "lo": b.lo, "hi": b.hi }),
                );
            }
        }
        m.insert(
            "sessions_effective".into(),
            json!(self.dependence.effective_n),
        );
        m.insert(
            "by_turn".into(),
            Value::Array(
                self.by_turn
                    .iter()
                    .map(|r| {
                        json!({
                            "turn": r.turn,
                            "attempts": r.n,
                            "qualified": r.qualified,
                            "rate": r.rate,
                            "rate_interval": r.rate_interval.map(|b| json!({ "lo": b.lo, "hi": b.hi })),
                            "ttft_p50_s": r.ttft_p50_s,
                            "ttft_p95_s": r.ttft_p95_s,
                            "cached_share": r.cached_share,
                            "cached_reported": r.cached_reported,
                        })
                    })
                    .collect(),
            ),
        );
        Value::Object(m)
    }
}

/// One session figure of two runs compared: new − base and its 95 % interval, with the session
/// as the unit (turns of one session are not independent draws).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionDiff {
    pub key: String,
    pub name: Text,
    pub unit: Unit,
    pub base: Option<f64>,
    pub new: Option<f64>,
    /// Sessions behind each side.
    pub sessions_base: usize,
    pub sessions_new: usize,
    /// new − base.
    pub difference: Option<f64>,
    pub interval: Option<Bounds>,
    pub method: Text,
    /// The interval lies wholly above (+1) or below (−1) 0; 0: no evidence of a change; None:
    /// no interval (a side without a value).
    pub direction: Option<i8>,
    pub verdict: Text,
}

/// The session figures of two runs compared, higher being better for each: the share of
/// sessions qualified (Newcombe on the sessions, i.e. MOVER from each run's own interval, which
/// counts effective sessions where the sessions are correlated along the run), the per-turn rate (MOVER from each run's
/// cluster-robust interval, sessions as clusters) and session goodput (MOVER from each run's
/// exact Poisson limits on its qualified sessions over its window).
pub fn compare_sessions(base: &Sessions, new: &Sessions) -> Vec<SessionDiff> {
    let count = |v: Option<f64>| v.unwrap_or(0.0).round() as u64;
    let nb = count(base.session_share.figure.denominator);
    let nn = count(new.session_share.figure.denominator);
    let from_intervals = |b: &SessionFigure, n: &SessionFigure| match (
        b.figure.value,
        b.interval,
        n.figure.value,
        n.interval,
    ) {
        (Some(vb), Some(ib), Some(vn), Some(i_n)) => crate::compare::stats::mover(vb, ib, vn, i_n),
        _ => None,
    };
    let rows = [
        (
            &base.session_share,
            &new.session_share,
            from_intervals(&base.session_share, &new.session_share),
            t(
                "Newcombe on the sessions: MOVER from each run's Wilson interval, on its effective sessions where sessions in start order are correlated",
                "以会话为单位的 Newcombe 区间：由两次运行各自的 Wilson 区间经 MOVER 合成（按开始顺序的会话彼此相关时按有效会话数）",
            ),
        ),
        (
            &base.turn_rate,
            &new.turn_rate,
            from_intervals(&base.turn_rate, &new.turn_rate),
            t(
                "MOVER from each run's cluster-robust interval (sessions as clusters)",
                "由两次运行各自的聚类稳健区间（以会话为簇）经 MOVER 合成",
            ),
        ),
        (
            &base.session_goodput,
            &new.session_goodput,
            from_intervals(&base.session_goodput, &new.session_goodput),
            t(
                "MOVER from each run's exact Poisson limits on its qualified sessions",
                "由两次运行各自合格会话数的精确 Poisson 界经 MOVER 合成",
            ),
        ),
    ];
    rows.into_iter()
        .map(|(b, n, interval, method)| {
            let difference = b.figure.value.zip(n.figure.value).map(|(b, n)| n - b);
            let direction = interval.map(|iv| match (iv.lo, iv.hi) {
                (Some(lo), _) if lo > 0.0 => 1,
                (_, Some(hi)) if hi < 0.0 => -1,
                _ => 0,
            });
            let verdict = match direction {
                Some(1) => t(
                    "new higher, beyond noise (better)",
                    "新运行更高，超出噪声（更好）",
                ),
                Some(-1) => t(
                    "new lower, beyond noise (worse)",
                    "新运行更低，超出噪声（更差）",
                ),
                Some(_) => t(
                    "no evidence of a change (the interval includes 0)",
                    "没有变化的证据（区间包含 0）",
                ),
                None => t(
                    "cannot compare: a side has no value or no interval (session goodput needs each run's window)",
                    "无法比较：有一方没有数值或区间（合格会话 goodput 需要每次运行的窗口）",
                ),
            };
            SessionDiff {
                key: b.figure.key.clone(),
                name: b.figure.name.clone(),
                unit: b.figure.unit.clone(),
                base: b.figure.value,
                new: n.figure.value,
                sessions_base: nb as usize,
                sessions_new: nn as usize,
                difference,
                interval,
                method,
                direction,
                verdict,
            }
        })
        .collect()
}

/// The comparison as `tracelab compare` prints it, in one language: one line per figure.
pub fn compare_lines(rows: &[SessionDiff], lang: Lang) -> Vec<String> {
    let zh = lang == Lang::Zh;
    let mut out = vec![if zh {
        "会话对比（一个会话只有在每一轮都合格时才合格；每个区间都以会话为单位）".to_string()
    } else {
        "Sessions compared (a session qualifies only when every one of its turns does; every interval takes the session as its unit)".to_string()
    }];
    for r in rows {
        let value = |v: Option<f64>| {
            v.map_or(if zh { "无" } else { "none" }.to_string(), |v| {
                crate::format::number_in_unit(v, &r.unit, lang)
            })
        };
        let diff = r.difference.map_or("—".to_string(), |d| {
            crate::format::signed_in_unit(d, &r.unit, lang)
        });
        let iv = r.interval.map_or("—".to_string(), |b| {
            let side = |v: Option<f64>| {
                v.map_or("?".to_string(), |v| {
                    crate::format::signed_in_unit(v, &r.unit, lang)
                })
            };
            format!("{} … {}", side(b.lo), side(b.hi))
        });
        out.push(if zh {
            format!(
                "  {}：基线 {}（{} 个会话），新 {}（{} 个会话），差值 {diff}，95 % 区间 {iv}（{}）：{}",
                r.name.get(lang),
                value(r.base),
                integer(r.sessions_base as u64),
                value(r.new),
                integer(r.sessions_new as u64),
                r.method.get(lang),
                r.verdict.get(lang)
            )
        } else {
            format!(
                "  {}: base {} ({} sessions), new {} ({} sessions), difference {diff}, 95 % interval {iv} ({}): {}",
                r.name.get(lang),
                value(r.base),
                integer(r.sessions_base as u64),
                value(r.new),
                integer(r.sessions_new as u64),
                r.method.get(lang),
                r.verdict.get(lang)
            )
        });
    }
    out
}

/// One session as a row of the lab's table: its counted turns (their positions in the attempts
/// it was built from, in turn order) and whether it qualified, under one set of settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRow {
    pub session_id: String,
    /// Positions of its counted turns in the attempts, by turn number, then position.
    pub rows: Vec<usize>,
    /// Every turn qualified (the same rule as [`Sessions`]' share).
    pub qualified: bool,
    /// The first turn that did not qualify: its turn number and its position in the attempts.
    pub first_failing: Option<(u32, usize)>,
}

/// The sessions of `attempts` as rows, in the order each first appears, each judged under
/// `settings` by the one per-attempt verdict (an attempt not counted under the population is no
/// turn, as in [`Sessions`]). Empty when no counted attempt names a session.
pub fn session_rows(attempts: &[Attempt], settings: &Settings) -> Vec<SessionRow> {
    let mut ids: StrTable<u32> = StrTable::default();
    let mut rows: Vec<SessionRow> = Vec::new();
    for (i, a) in attempts.iter().enumerate() {
        let Some(s) = &a.session else { continue };
        if !is_counted(a, &settings.population) {
            continue;
        }
        let next = rows.len() as u32;
        let Ok(k) = ids.entry(&s.session_id, || next).map(|v| *v as usize) else {
            continue;
        };
        if k == rows.len() {
            rows.push(SessionRow {
                session_id: s.session_id.clone(),
                rows: Vec::new(),
                qualified: true,
                first_failing: None,
            });
        }
        rows[k].rows.push(i);
    }
    let turn_of = |i: usize| attempts[i].session.as_ref().map_or(0, |s| s.turn);
    for row in &mut rows {
        row.rows.sort_by_key(|&i| (turn_of(i), i));
        row.first_failing = row
            .rows
            .iter()
            .find(|&&i| !verdict(&attempts[i], settings).qualified)
            .map(|&i| (turn_of(i), i));
        row.qualified = row.first_failing.is_none();
    }
    rows
}

/// The per-turn rate's 95 % interval with sessions as clusters. The ratio estimator p̂ = Σy ÷ Σm
/// has the cluster variance n ÷ (n − 1) · Σ(yᵢ − p̂·mᵢ)² ÷ (Σm)²; against the binomial variance
/// p̂(1 − p̂) ÷ Σm it gives the design effect, and Wilson's interval is taken on Σm ÷ deff
/// effective turns with Student's t at n − 1 df. Where every turn agrees (p̂ of 0 or 1) the
/// variance says nothing, and each session counts as one effective draw. None below 2 sessions.
/// Where the sessions themselves are correlated along the run (`between`: batch means on each
/// session's turn share in start order), the effective turns shrink by its inflation and the
/// critical value is the larger of the two t's.
fn cluster_interval(m: &[u64], y: &[u64], between: &Dependence) -> Option<Bounds> {
    let n = m.len();
    let total: u64 = m.iter().sum();
    if n < 2 || total == 0 {
        return None;
    }
    let (nf, mt) = (n as f64, total as f64);
    let p = y.iter().sum::<u64>() as f64 / mt;
    let binomial = p * (1.0 - p) / mt;
    let effective = if binomial > 0.0 {
        let cluster = nf / (nf - 1.0)
            * m.iter()
                .zip(y)
                .map(|(&m, &y)| (y as f64 - p * m as f64).powi(2))
                .sum::<f64>()
            / (mt * mt);
        if cluster > 0.0 {
            mt * binomial / cluster
        } else {
            mt
        }
    } else {
        nf
    };
    let (effective, critical) = if between.widens() {
        (
            effective / between.inflation,
            t975(nf - 1.0).max(between.critical()),
        )
    } else {
        (effective, t975(nf - 1.0))
    };
    wilson_z(p * effective, effective, critical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_interval_widens_when_a_session_fails_as_a_block() {
        // Six sessions of four turns, 20 of 24 turns qualified either way: spread over four
        // sessions (one failure each) or packed into one session that fails every turn.
        let m = [4u64; 6];
        let free = untimed(6);
        let spread = cluster_interval(&m, &[3, 3, 3, 3, 4, 4], &free).unwrap();
        let packed = cluster_interval(&m, &[0, 4, 4, 4, 4, 4], &free).unwrap();
        let width = |b: Bounds| b.hi.unwrap() - b.lo.unwrap();
        assert!(width(packed) > width(spread), "{packed:?} vs {spread:?}");
        assert!(spread.contains(20.0 / 24.0) && packed.contains(20.0 / 24.0));
        assert_eq!(cluster_interval(&[4], &[4], &untimed(1)), None);
    }
}
