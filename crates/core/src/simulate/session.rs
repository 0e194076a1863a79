//! Conversations on the simulator: sessions arrive open-loop (Poisson at a session rate); within
//! a session the turns are a closed loop (turn k + 1 is sent `think_s` after turn k's answer
//! ended). Turn k's prompt is the history (turns 1..k − 1's prompts and answers) plus its new
//! tokens; the server's prefix cache (a capacity in tokens, least recently used evicted first)
//! holds each conversation's history once its turn has ended, so a later turn prefills only what
//! is not cached, and an eviction makes it slow again. A fixed number of slots serve first come,
//! first served. The simulator writes no answers: every simulated answer counts as passing
//! quality, and the header says so. Deterministic for a seed.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};

use super::{Rng, SimulateError};
use crate::trace::simulation::{
    ArrivalName, Load, ServiceRecord, SessionJitter, SessionsRecord, Simulation, SimulationRecord,
};
use crate::trace::{
    Attempt, Capabilities, Conditions, Footer, Header, Outcome, Quality, SessionTurn, StreamEvent,
    Tool, Trace, Window, GPU_UNSUPPORTED,
};

/// More turns than this are refused (the same bound as the request simulator).
pub const MAX_TURNS_TOTAL: u64 = super::MAX_REQUESTS as u64;

/// A session simulation's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionParams {
    pub sessions: u32,
    pub turns: u32,
    /// Sessions started per second (Poisson).
    pub session_rate_per_s: f64,
    pub think_s: f64,
    pub slots: u32,
    pub new_tokens: u32,
    pub output_tokens: u32,
    pub base_s: f64,
    pub per_uncached_token_s: f64,
    pub per_output_token_s: f64,
    pub jitter: SessionJitter,
    /// The prefix cache's capacity in tokens; 0 for none.
    pub cache_tokens: u64,
    pub seed: u64,
}

impl SessionParams {
    fn check(&self) -> Result<(), SimulateError> {
        let positive = |v: f64, field: &str| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(SimulateError::new(field, format!("`{v}` must be above 0")))
            }
        };
        let non_negative = |v: f64, field: &str| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(SimulateError::new(
                    field,
                    format!("`{v}` must be 0 or more"),
                ))
            }
        };
        if self.sessions == 0 {
            return Err(SimulateError::new("sessions", "at least one session"));
        }
        if self.turns == 0 {
            return Err(SimulateError::new("turns", "at least one turn"));
        }
        if u64::from(self.sessions) * u64::from(self.turns) > MAX_TURNS_TOTAL {
            return Err(SimulateError::new(
                "sessions",
                format!("sessions × turns may be at most {MAX_TURNS_TOTAL}"),
            ));
        }
        if self.slots == 0 {
            return Err(SimulateError::new("slots", "at least one slot"));
        }
        positive(self.session_rate_per_s, "session-rate")?;
        non_negative(self.think_s, "think-s")?;
        non_negative(self.base_s, "base-s")?;
        non_negative(self.per_uncached_token_s, "per-uncached-token-s")?;
        non_negative(self.per_output_token_s, "service-per-output-token")?;
        if self.base_s == 0.0 && self.per_uncached_token_s == 0.0 {
            return Err(SimulateError::new(
                "base-s",
                "base-s and per-uncached-token-s cannot both be 0: a prefill takes time",
            ));
        }
        Ok(())
    }

    pub fn record(&self) -> Simulation {
        Simulation {
            slots: self.slots,
            service: ServiceRecord::Fixed { s: self.base_s },
            first_token_share: None,
            load: Load::Open {
                rate_per_s: self.session_rate_per_s,
                arrival: ArrivalName::Poisson,
                burstiness: 1.0,
            },
            requests: self.sessions.saturating_mul(self.turns),
            seed: self.seed,
            stall: None,
            tokens: Some(super::TokenCost {
                per_input_token_s: self.per_uncached_token_s,
                per_output_token_s: self.per_output_token_s,
            }),
            sessions: Some(SessionsRecord {
                sessions: self.sessions,
                turns: self.turns,
                think_s: self.think_s,
                new_tokens: self.new_tokens,
                output_tokens: self.output_tokens,
                base_s: self.base_s,
                per_uncached_token_s: self.per_uncached_token_s,
                per_output_token_s: self.per_output_token_s,
                jitter: self.jitter,
                cache_tokens: self.cache_tokens,
                quality_assumed_pass: true,
            }),
        }
    }

    /// Turn k's prompt: the history of turns 1..k − 1 plus its new tokens.
    pub fn history_tokens(&self, turn: u32) -> u64 {
        u64::from(turn - 1) * (u64::from(self.new_tokens) + u64::from(self.output_tokens))
    }
}

/// The prefix cache: each session's cached history (in tokens), least recently used first out.
struct PrefixCache {
    capacity: u64,
    used: u64,
    entries: HashMap<u32, (u64, u64)>,
    order: BTreeMap<u64, u32>,
    clock: u64,
}

impl PrefixCache {
    fn new(capacity: u64) -> PrefixCache {
        PrefixCache {
            capacity,
            used: 0,
            entries: HashMap::new(),
            order: BTreeMap::new(),
            clock: 0,
        }
    }

    /// The tokens of `session`'s prefix it holds (marking it used), 0 when none.
    fn lookup(&mut self, session: u32) -> u64 {
        let Some(&(tokens, stamp)) = self.entries.get(&session) else {
            return 0;
        };
        self.order.remove(&stamp);
        self.clock += 1;
        self.order.insert(self.clock, session);
        self.entries.insert(session, (tokens, self.clock));
        tokens
    }

    /// Keeps `tokens` of `session`'s prefix, evicting the least recently used until it fits.
    fn store(&mut self, session: u32, tokens: u64) {
        if let Some((old, stamp)) = self.entries.remove(&session) {
            self.order.remove(&stamp);
            self.used -= old;
        }
        if tokens == 0 || tokens > self.capacity {
            return;
        }
        while self.used + tokens > self.capacity {
            let (&stamp, &victim) = self.order.iter().next().expect("used > 0 has an entry");
            self.order.remove(&stamp);
            let (t, _) = self.entries.remove(&victim).expect("ordered entries exist");
            self.used -= t;
        }
        self.clock += 1;
        self.order.insert(self.clock, session);
        self.entries.insert(session, (tokens, self.clock));
        self.used += tokens;
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A slot frees (the turn's stream ended).
    Done { slot: u32, session: u32, turn: u32 },
    /// A session sends a turn.
    Send { session: u32, turn: u32 },
}

/// Runs the simulation: one attempt per turn, in order of sending.
pub fn simulate_sessions(p: &SessionParams) -> Result<Trace, SimulateError> {
    p.check()?;
    let mut rng = Rng::new(p.seed);
    // Events by time (non-negative f64 bits order like the values), then insertion order.
    let mut events: BinaryHeap<Reverse<(u64, u64, Event)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |events: &mut BinaryHeap<_>, at: f64, e: Event| {
        seq += 1;
        events.push(Reverse((at.to_bits(), seq, e)));
    };
    let mut t = 0.0;
    // The first session at 0, then exponential gaps (the open loop's Poisson schedule).
    for session in 0..p.sessions {
        push(&mut events, t, Event::Send { session, turn: 1 });
        t += rng.exponential(1.0 / p.session_rate_per_s);
    }
    let mut cache = PrefixCache::new(p.cache_tokens);
    let mut free: Vec<u32> = (0..p.slots).rev().collect();
    let mut waiting: VecDeque<(u32, u32, f64)> = VecDeque::new();
    let width = p.sessions.to_string().len();
    let mut attempts: Vec<Attempt> = Vec::new();
    // (session, turn) → its attempt's position.
    let mut at_index: HashMap<(u32, u32), usize> = HashMap::new();
    let mut last_end = 0.0f64;

    // Starts a turn on a slot at `now`; returns when it ends.
    let start = |rng: &mut Rng,
                 cache: &mut PrefixCache,
                 attempts: &mut Vec<Attempt>,
                 session: u32,
                 turn: u32,
                 sent: f64,
                 now: f64|
     -> f64 {
        let history = p.history_tokens(turn);
        let prompt = history + u64::from(p.new_tokens);
        let cached = cache.lookup(session).min(history);
        let uncached = prompt - cached;
        let jitter = match p.jitter {
            SessionJitter::None => 1.0,
            SessionJitter::Exponential => rng.exponential(1.0),
        };
        let prefill = (p.base_s + p.per_uncached_token_s * uncached as f64) * jitter;
        let decode = p.per_output_token_s * f64::from(p.output_tokens.saturating_sub(1));
        let first = now + prefill;
        let end = first + decode;
        let rel = |v: f64| (v - sent) * 1000.0;
        let id = format!("s{:0width$}-t{turn}", session + 1);
        let mut a = Attempt::new(id, Outcome::Success, Some(rel(first)), Quality::Pass);
        a.intended_start_ms = Some(sent * 1000.0);
        a.start_ms = Some(sent * 1000.0);
        a.e2e_ms = Some(rel(end));
        a.events = vec![StreamEvent {
            at_ms: rel(first),
            tokens: 1,
        }];
        if p.output_tokens > 1 {
            a.events.push(StreamEvent {
                at_ms: rel(end),
                tokens: p.output_tokens - 1,
            });
        }
        a.input_tokens = Some(u32::try_from(prompt).unwrap_or(u32::MAX));
        a.output_tokens = Some(p.output_tokens);
        a.tokens_from_usage = true;
        a.session = Some(SessionTurn {
            session_id: format!("s{:0width$}", session + 1),
            turn,
            history_tokens: Some(u32::try_from(history).unwrap_or(u32::MAX)),
            cached_tokens: Some(u32::try_from(cached).unwrap_or(u32::MAX)),
        });
        attempts.push(a);
        end
    };

    while let Some(Reverse((bits, _, event))) = events.pop() {
        let now = f64::from_bits(bits);
        match event {
            Event::Send { session, turn } => match free.pop() {
                Some(slot) => {
                    at_index.insert((session, turn), attempts.len());
                    let end = start(&mut rng, &mut cache, &mut attempts, session, turn, now, now);
                    push(
                        &mut events,
                        end,
                        Event::Done {
                            slot,
                            session,
                            turn,
                        },
                    );
                }
                None => waiting.push_back((session, turn, now)),
            },
            Event::Done {
                slot,
                session,
                turn,
            } => {
                last_end = last_end.max(now);
                // The conversation so far (this turn's prompt and answer) is the next prefix.
                cache.store(session, p.history_tokens(turn + 1));
                if turn < p.turns {
                    push(
                        &mut events,
                        now + p.think_s,
                        Event::Send {
                            session,
                            turn: turn + 1,
                        },
                    );
                }
                match waiting.pop_front() {
                    Some((s, k, sent)) => {
                        at_index.insert((s, k), attempts.len());
                        let end = start(&mut rng, &mut cache, &mut attempts, s, k, sent, now);
                        push(
                            &mut events,
                            end,
                            Event::Done {
                                slot,
                                session: s,
                                turn: k,
                            },
                        );
                    }
                    None => free.push(slot),
                }
            }
        }
    }
    // In order of sending: a queued turn was started later than it was sent.
    attempts.sort_by(|a, b| {
        a.start_ms
            .unwrap_or(0.0)
            .total_cmp(&b.start_ms.unwrap_or(0.0))
    });
    let header = Header {
        tool: Tool {
            name: "tracelab simulate".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        conditions: Conditions {
            arrival: Some("poisson".into()),
            rate_per_s: Some(p.session_rate_per_s),
            burstiness: Some(1.0),
            seed: Some(p.seed),
            ..Conditions::default()
        },
        capabilities: Capabilities {
            workload_executed: true,
            inference_benchmark: false,
            gpu_telemetry: GPU_UNSUPPORTED.into(),
        },
        window: (last_end > 0.0).then(|| Window {
            start_ms: 0.0,
            length_s: (last_end * 1000.0).ceil() / 1000.0,
        }),
        simulation: Some(SimulationRecord::of(&p.record())),
        ..Header::default()
    };
    let footer = Footer {
        finished_cleanly: true,
        attempts: attempts.len() as u64,
        gpu_samples: 0,
    };
    Ok(Trace {
        header,
        attempts,
        gpu: Vec::new(),
        engine: Vec::new(),
        footer: Some(footer),
        warnings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> SessionParams {
        SessionParams {
            sessions: 20,
            turns: 4,
            session_rate_per_s: 1.0,
            think_s: 2.0,
            slots: 4,
            new_tokens: 100,
            output_tokens: 50,
            base_s: 0.05,
            per_uncached_token_s: 0.001,
            per_output_token_s: 0.01,
            jitter: SessionJitter::None,
            cache_tokens: 1_000_000,
            seed: 7,
        }
    }

    #[test]
    fn every_turn_is_sent_once_after_the_previous_answer_and_think_time() {
        let p = params();
        let trace = simulate_sessions(&p).unwrap();
        assert_eq!(trace.attempts.len(), 80);
        let mut by: HashMap<(String, u32), &Attempt> = HashMap::new();
        for a in &trace.attempts {
            let s = a.session.as_ref().unwrap();
            assert!(by.insert((s.session_id.clone(), s.turn), a).is_none());
            assert_eq!(a.input_tokens, Some(100 + 150 * (s.turn - 1)));
        }
        for ((id, turn), a) in &by {
            if *turn > 1 {
                let prev = by[&(id.clone(), turn - 1)];
                let prev_end = prev.start_ms.unwrap() + prev.e2e_ms.unwrap();
                assert!((a.start_ms.unwrap() - (prev_end + 2000.0)).abs() < 1e-6);
            }
        }
        assert_eq!(simulate_sessions(&p).unwrap(), trace, "deterministic");
    }

    #[test]
    fn a_large_cache_serves_the_history_and_a_small_one_evicts_it() {
        let mut p = params();
        p.slots = 100; // no queueing: TTFT is the prefill alone
        let warm = simulate_sessions(&p).unwrap();
        for a in &warm.attempts {
            let s = a.session.as_ref().unwrap();
            assert_eq!(s.cached_tokens, s.history_tokens);
            // 0.05 s + 100 new tokens at 1 ms.
            assert!((a.ttft_ms.unwrap() - 150.0).abs() < 1e-6);
        }
        p.cache_tokens = 0;
        let cold = simulate_sessions(&p).unwrap();
        for a in &cold.attempts {
            let s = a.session.as_ref().unwrap();
            assert_eq!(s.cached_tokens, Some(0));
            let want = 50.0 + f64::from(a.input_tokens.unwrap());
            assert!((a.ttft_ms.unwrap() - want).abs() < 1e-6);
        }
        // Room for two conversations' histories at most: with twenty in flight some are evicted.
        p.cache_tokens = 900;
        let small = simulate_sessions(&p).unwrap();
        let evicted = small.attempts.iter().filter(|a| {
            let s = a.session.as_ref().unwrap();
            s.turn > 1 && s.cached_tokens == Some(0)
        });
        assert!(evicted.count() > 0);
        assert!(SessionParams {
            slots: 0,
            ..params()
        }
        .check()
        .is_err());
    }
}
