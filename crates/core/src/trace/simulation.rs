//! The header's `simulation` object: what [`crate::simulate`] ran, written into the trace so the
//! run can be repeated and no reader mistakes it for a measurement. Part of the schema; the
//! simulation itself lives above the metrics.

use serde::{Deserialize, Serialize};

use crate::error::ParseError;
use crate::text::Lang;

/// The header's `simulation` object: every parameter and the seed, so the run can be repeated
/// and no reader mistakes it for a measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Simulation {
    pub slots: u32,
    pub service: ServiceRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_share: Option<f64>,
    pub load: Load,
    pub requests: u32,
    pub seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<Stall>,
    /// A listed load's per-token service (`--service-per-output-token`, `--service-per-input-token`):
    /// added to each request's service from the lengths its workload file gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenCost>,
    /// Present when the simulation sent conversations (`tracelab simulate --sessions`): `load`
    /// is then the sessions' open-loop arrival, and `requests` counts their turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionsRecord>,
}

/// What a session simulation sent: N conversations of K turns, each turn's prompt the history
/// plus new tokens, a prefix cache of a capacity in tokens (least recently used evicted first).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SessionsRecord {
    pub sessions: u32,
    pub turns: u32,
    /// Fixed pause between a turn's answer and the next turn (a closed loop within a session).
    pub think_s: f64,
    pub new_tokens: u32,
    pub output_tokens: u32,
    /// Prefill before the first token: `base_s` + `per_uncached_token_s` × uncached prompt
    /// tokens, times an exponential draw of mean 1 when `jitter` is `exponential`.
    pub base_s: f64,
    pub per_uncached_token_s: f64,
    /// Decode seconds per answer token after the first.
    pub per_output_token_s: f64,
    pub jitter: SessionJitter,
    /// The prefix cache's capacity in tokens (0: no cache).
    pub cache_tokens: u64,
    /// The simulator writes no answers: every simulated answer counts as passing quality.
    pub quality_assumed_pass: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionJitter {
    None,
    Exponential,
}

impl SessionsRecord {
    pub fn describe(&self, lang: Lang) -> String {
        let jitter = match (self.jitter, lang) {
            (SessionJitter::None, _) => "",
            (SessionJitter::Exponential, Lang::En) => " × Exp(1)",
            (SessionJitter::Exponential, Lang::Zh) => " × 均值 1 的指数分布",
        };
        match lang {
            Lang::En => format!(
                "; {} sessions of {} turns, think {} s, {} new + {} output tokens a turn, prefill ({} s + {} s per uncached prompt token){jitter}, then {} s per answer token, prefix cache {} tokens (LRU); every simulated answer counts as passing quality",
                self.sessions, self.turns, self.think_s, self.new_tokens, self.output_tokens, self.base_s, self.per_uncached_token_s, self.per_output_token_s, self.cache_tokens
            ),
            Lang::Zh => format!(
                "；{} 个会话，每个 {} 轮，思考 {} 秒，每轮新增 {} 个 + 输出 {} 个 token，预填充（{} 秒 + 每个未缓存提示 token {} 秒）{jitter}，之后每个回答 token {} 秒，前缀缓存 {} 个 token（LRU）；模拟的回答一律算作质量合格",
                self.sessions, self.turns, self.think_s, self.new_tokens, self.output_tokens, self.base_s, self.per_uncached_token_s, self.per_output_token_s, self.cache_tokens
            ),
        }
    }
}

/// Service time per token of a listed request's own lengths, on top of the service's draw: each
/// input token adds `per_input_token_s` before the first token (prefill), each output token
/// `per_output_token_s` after it (decode). A linear model, nothing more: no batching effects.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TokenCost {
    pub per_input_token_s: f64,
    pub per_output_token_s: f64,
}

impl TokenCost {
    /// " + 0.02 s per output token (+ 0.0001 s per input token, before the first token)".
    pub fn describe(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let mut out = String::new();
        if self.per_output_token_s > 0.0 {
            out.push_str(&if zh {
                format!(" + 每个输出 token {} 秒（按工作负载文件的输出长度，首 token 之后）", self.per_output_token_s)
            } else {
                format!(" + {} s per output token (the workload file's output length, after the first token)", self.per_output_token_s)
            });
        }
        if self.per_input_token_s > 0.0 {
            out.push_str(&if zh {
                format!(
                    " + 每个输入 token {} 秒（按文件的输入长度，首 token 之前）",
                    self.per_input_token_s
                )
            } else {
                format!(
                    " + {} s per input token (the file's input length, before the first token)",
                    self.per_input_token_s
                )
            });
        }
        out
    }
}

/// [`crate::simulate::Service`] as written in the header (an empirical service names its file, not its samples).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServiceRecord {
    Fixed { s: f64 },
    Exponential { mean_s: f64 },
    Trace { file: String, successes: usize },
}

/// Who sends the requests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Load {
    /// `clients` clients, each sending its next request `think_s` after its previous reply ended.
    Closed { clients: u32, think_s: f64 },
    /// Requests leave on a schedule fixed in advance, whatever the server does.
    Open {
        rate_per_s: f64,
        arrival: ArrivalName,
        burstiness: f64,
    },
    /// Open loop at a workload file's own arrival times (`tracelab simulate --workload`, after
    /// its window, speed-up and idle cap): `requests` arrivals, the last `span_s` after the first.
    /// The header's `workload` record names the file.
    Workload { requests: u32, span_s: f64 },
}

/// [`crate::simulate::Arrival`] as written in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalName {
    Constant,
    Poisson,
}

impl ArrivalName {
    /// The name written in a trace's `conditions.arrival` (as [`crate::simulate::Arrival::name`]).
    pub fn name(self) -> &'static str {
        match self {
            ArrivalName::Constant => "constant",
            ArrivalName::Poisson => "poisson",
        }
    }
}

/// The server stops at `at_s` for `for_s` seconds: nothing in service advances, nothing starts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stall {
    pub at_s: f64,
    pub for_s: f64,
}

impl Simulation {
    /// One line for the metric card: "simulated, not measured: …".
    pub fn describe(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let service = match &self.service {
            ServiceRecord::Fixed { s } => {
                if zh {
                    format!("固定 {s} 秒")
                } else {
                    format!("fixed {s} s")
                }
            }
            ServiceRecord::Exponential { mean_s } => {
                if zh {
                    format!("指数分布，均值 {mean_s} 秒")
                } else {
                    format!("exponential, mean {mean_s} s")
                }
            }
            ServiceRecord::Trace { file, successes } => {
                if zh {
                    format!("取自 {file} 的 {successes} 个成功请求")
                } else {
                    format!("drawn from {successes} successes of {file}")
                }
            }
        };
        let service = match (&self.sessions, &self.tokens) {
            // A session's turns have their own prefill and decode, said with the sessions.
            (Some(_), _) if zh => "按轮计算（见下）".to_string(),
            (Some(_), _) => "per turn (below)".to_string(),
            (None, Some(t)) => service + &t.describe(lang),
            (None, None) => service,
        };
        let load = match self.load {
            Load::Closed { clients, think_s } => {
                if zh {
                    format!("闭环 {clients} 个客户端，思考 {think_s} 秒")
                } else {
                    format!("closed loop, {clients} clients, think {think_s} s")
                }
            }
            Load::Open {
                rate_per_s,
                arrival,
                burstiness,
            } => {
                let poisson = arrival == ArrivalName::Poisson;
                if zh {
                    let name = if poisson {
                        "泊松到达"
                    } else {
                        "等间隔到达"
                    };
                    let b = if poisson {
                        format!("，突发度 {burstiness}")
                    } else {
                        String::new()
                    };
                    format!("开放到达 {name} {rate_per_s}/秒{b}")
                } else {
                    let b = if poisson {
                        format!(", burstiness {burstiness}")
                    } else {
                        String::new()
                    };
                    format!("open loop, {} {rate_per_s}/s{b}", arrival.name())
                }
            }
            Load::Workload { requests, span_s } => {
                if zh {
                    format!("开放到达，按工作负载文件的 {requests} 个到达时刻（跨 {span_s} 秒）")
                } else {
                    format!(
                        "open loop at a workload file's {requests} arrival times (over {span_s} s)"
                    )
                }
            }
        };
        let stall = match self.stall {
            Some(s) if zh => format!("；在 {} 秒处停顿 {} 秒", s.at_s, s.for_s),
            Some(s) => format!("; stall at {} s for {} s", s.at_s, s.for_s),
            None => String::new(),
        };
        let stall = match &self.sessions {
            Some(r) => stall + &r.describe(lang),
            None => stall,
        };
        if zh {
            format!(
                "模拟结果，不是测量：{} 个槽位 · 服务时间 {service} · {load} · {} 个请求 · 种子 {}{stall}",
                self.slots,
                crate::format::integer(self.requests as u64),
                self.seed
            )
        } else {
            format!(
                "Simulated, not measured: {} slots · service {service} · {load} · {} requests · seed {}{stall}",
                self.slots,
                crate::format::integer(self.requests as u64),
                self.seed
            )
        }
    }
}

/// The header's `simulation` object as written. It stays JSON until [`SimulationRecord::read`]:
/// the lab never reads it, so its download carries no reader for it (the card, the compare and
/// load-model pages and `tracelab` do read it, and native parsing checks it, see `parse`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SimulationRecord(serde_json::Value);

impl SimulationRecord {
    pub fn of(simulation: &Simulation) -> SimulationRecord {
        SimulationRecord(
            serde_json::to_value(simulation).expect("a simulation record always serialises"),
        )
    }

    /// Its fields, or what is wrong with them, naming the field.
    pub fn read(&self) -> Result<Simulation, ParseError> {
        Simulation::deserialize(&self.0).map_err(|e| {
            let message = e.to_string();
            let field = message
                .strip_prefix("missing field `")
                .and_then(|rest| rest.split('`').next())
                .map_or_else(|| "simulation".to_string(), |f| format!("simulation.{f}"));
            ParseError::new(format!("header: simulation: {message}")).field(field)
        })
    }
}
