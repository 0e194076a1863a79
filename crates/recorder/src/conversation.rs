//! `tracelab record --sessions`: conversations instead of independent prompts. Sessions arrive
//! open-loop (Poisson at `--session-rate`); inside one session the turns are a closed loop: turn
//! k + 1 is sent `--think-s` after turn k's reply ended and resends turns 1..k (every user
//! message and the server's own replies) before its new user message, so the server's prefix
//! cache decides how much of its prompt is prefilled again.
//!
//! The replies are held in memory only while their session runs: the trace keeps each turn's
//! token counts, the history it carried (`history_tokens` = the previous turn's prompt and
//! completion tokens as the server counted them) and a SHA-256 of the reply (`answer_sha256`),
//! never its text. A turn that fails leaves no reply to resend, so its session ends there: its
//! later turns are not sent, and the session does not qualify.

use clap::Args;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::openai::Api;
use crate::prompts::Rubric;
use crate::workload::{words, Lengths, Space};

/// The synthetic session generator's flags.
#[derive(Args, Debug, Clone)]
pub struct SessionArgs {
    /// Send N synthetic conversations instead of the prompt set: each of --turns turns resends
    /// the whole conversation so far (user messages and the server's replies), the next turn
    /// starts --think-s after the reply, and sessions start open-loop at --session-rate. The
    /// trace keeps per turn `session_id`, `turn`, `history_tokens`, the server's cached prompt
    /// tokens and a hash of the reply (never its text); `tracelab report` judges each session
    /// by its turns. --warmup then counts single requests.
    #[arg(long, value_name = "N", conflicts_with_all = ["workload", "rate", "prompts", "duration", "concurrency", "repetitions", "max_tokens"])]
    pub sessions: Option<u32>,
    /// Turns per session (with --sessions).
    #[arg(long, value_name = "K", requires = "sessions")]
    pub turns: Option<u32>,
    /// Sessions started per second, Poisson with --seed (with --sessions).
    #[arg(long, value_name = "R", requires = "sessions")]
    pub session_rate: Option<f64>,
    /// The user's think time in seconds between a reply and the next turn (with --sessions).
    #[arg(long, value_name = "T", default_value_t = 0.0, requires = "sessions")]
    pub think_s: f64,
    /// New user tokens per turn (the server's tokens where it has a tokenize endpoint, else
    /// words) (with --sessions).
    #[arg(long, value_name = "N", default_value_t = 64, requires = "sessions")]
    pub user_tokens: u32,
    /// The reply length asked of every turn: its max_tokens, with ignore_eos where the engine
    /// takes it (with --sessions).
    #[arg(long, value_name = "N", default_value_t = 64, requires = "sessions")]
    pub answer_tokens: u32,
    /// The rubric every turn's reply is judged by: at least this many characters, trimmed (a
    /// synthetic message asks nothing more a rubric could check). 0 leaves turns not evaluated,
    /// and under the course's joint rule a turn not evaluated never qualifies (with --sessions).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "sessions")]
    pub turn_min_chars: usize,
}

/// A checked synthetic session workload.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionPlan {
    pub sessions: u32,
    pub turns: u32,
    pub rate_per_s: f64,
    pub think_s: f64,
    pub user_tokens: u32,
    pub answer_tokens: u32,
    /// Each reply's rubric (`min_chars`); 0: none, turns not evaluated.
    pub min_chars: usize,
    pub seed: u64,
}

impl SessionArgs {
    /// The plan, or what to fix; None without --sessions.
    pub fn plan(&self, seed: u64, api: Api) -> Result<Option<SessionPlan>, String> {
        let Some(sessions) = self.sessions else {
            return Ok(None);
        };
        if sessions == 0 {
            return Err("--sessions must be at least 1".into());
        }
        if api != Api::Chat {
            return Err("--sessions resends the conversation as chat messages: use --api chat (the default)".into());
        }
        let turns = self
            .turns
            .ok_or("--sessions needs --turns K (turns per session)")?;
        if turns == 0 {
            return Err("--turns must be at least 1".into());
        }
        let rate_per_s = self
            .session_rate
            .ok_or("--sessions needs --session-rate R (sessions started per second)")?;
        if !(rate_per_s.is_finite() && rate_per_s > 0.0 && rate_per_s <= 1e6) {
            return Err(format!(
                "--session-rate must be a positive number of sessions per second, got {rate_per_s}"
            ));
        }
        if !(self.think_s.is_finite() && (0.0..1e6).contains(&self.think_s)) {
            return Err(format!(
                "--think-s must be a number of seconds, 0 or more, got {}",
                self.think_s
            ));
        }
        if self.user_tokens == 0 {
            return Err("--user-tokens must be at least 1".into());
        }
        if self.answer_tokens == 0 {
            return Err("--answer-tokens must be at least 1".into());
        }
        Ok(Some(SessionPlan {
            sessions,
            turns,
            rate_per_s,
            think_s: self.think_s,
            user_tokens: self.user_tokens,
            answer_tokens: self.answer_tokens,
            min_chars: self.turn_min_chars,
            seed,
        }))
    }
}

impl SessionPlan {
    /// Every turn of every session.
    pub fn total_turns(&self) -> u64 {
        u64::from(self.sessions) * u64::from(self.turns)
    }

    /// The header's `sessions` record: the generator and its parameters.
    pub fn record(&self, lengths: &Lengths, ignore_eos: bool) -> Value {
        json!({
            "generator": "synthetic",
            "sessions": self.sessions,
            "turns": self.turns,
            "session_rate_per_s": self.rate_per_s,
            "think_s": self.think_s,
            "user_tokens": self.user_tokens,
            "answer_tokens": self.answer_tokens,
            "seed": self.seed,
            "rubric": if self.min_chars > 0 { json!({ "min_chars": self.min_chars }) } else { Value::Null },
            "input_lengths": lengths.record(),
            "ignore_eos": ignore_eos,
            "history": "turn k + 1 resends turns 1..k: every user message and the server's own reply (held in memory only; the trace keeps its token counts and answer_sha256)",
        })
    }

    /// The contract's fingerprint of the workload: its parameters (no file stands behind them).
    pub fn sha256(&self) -> String {
        answer_sha256(&format!(
            "synthetic-sessions|{}|{}|{}|{}|{}|{}|{}|{}",
            self.sessions,
            self.turns,
            self.rate_per_s,
            self.think_s,
            self.user_tokens,
            self.answer_tokens,
            self.min_chars,
            self.seed
        ))
    }

    /// The rubric every turn's reply is judged by, when there is one.
    pub fn rubric(&self) -> Option<Rubric> {
        (self.min_chars > 0).then(|| Rubric {
            min_chars: Some(self.min_chars),
            ..Rubric::default()
        })
    }

    /// The id of session `s` (0-based), the same in every run with this seed.
    pub fn session_id(&self, s: u32) -> String {
        format!("s{}", s + 1)
    }

    /// The new user message of `turn` (1-based) of session `s`: words of its own, so no two
    /// sessions share a prefix beyond the chat template.
    pub fn user_message(&self, s: u32, turn: u32, lengths: &Lengths) -> String {
        let id = self
            .seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(u64::from(s) << 20)
            .wrapping_add(u64::from(turn));
        words(Space::Replay, id, self.user_tokens, lengths)
    }

    /// A warm-up request: one message in text of its own (never a session's), so it warms the
    /// connections and the engine but not the sessions' prefixes.
    pub fn warmup_message(&self, k: u64, lengths: &Lengths) -> String {
        words(Space::Warmup, k, self.user_tokens, lengths)
    }
}

/// One conversation's messages so far, for the next turn's request body.
#[derive(Debug, Default, Clone)]
pub struct Conversation {
    messages: Vec<Value>,
}

impl Conversation {
    pub fn user(&mut self, text: String) {
        self.messages
            .push(json!({ "role": "user", "content": text }));
    }

    /// The server's reply, resent as it came (never written anywhere).
    pub fn assistant(&mut self, text: String) {
        self.messages
            .push(json!({ "role": "assistant", "content": text }));
    }

    /// The chat request body carrying the whole conversation.
    pub fn body(&self, model: &str, max_tokens: u32, ignore_eos: bool) -> Vec<u8> {
        let mut body = json!({
            "model": model,
            "max_tokens": max_tokens,
            "stream": true,
            "stream_options": { "include_usage": true },
            "messages": self.messages,
        });
        if ignore_eos {
            body["ignore_eos"] = Value::Bool(true);
        }
        serde_json::to_vec(&body).expect("a body always serialises")
    }
}

/// The reply's fingerprint kept in the trace instead of its text.
pub fn answer_sha256(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> SessionArgs {
        SessionArgs {
            sessions: Some(3),
            turns: Some(2),
            session_rate: Some(1.0),
            think_s: 0.5,
            user_tokens: 10,
            answer_tokens: 8,
            turn_min_chars: 1,
        }
    }

    #[test]
    fn bad_flags_say_what_to_fix() {
        let err = |a: SessionArgs, api| a.plan(0, api).unwrap_err();
        assert!(err(
            SessionArgs {
                turns: None,
                ..args()
            },
            Api::Chat
        )
        .contains("--turns"));
        assert!(err(
            SessionArgs {
                session_rate: None,
                ..args()
            },
            Api::Chat
        )
        .contains("--session-rate"));
        assert!(err(
            SessionArgs {
                session_rate: Some(0.0),
                ..args()
            },
            Api::Chat
        )
        .contains("positive"));
        assert!(err(
            SessionArgs {
                think_s: -1.0,
                ..args()
            },
            Api::Chat
        )
        .contains("--think-s"));
        assert!(err(args(), Api::Completions).contains("--api chat"));
        assert_eq!(
            SessionArgs {
                sessions: None,
                ..args()
            }
            .plan(0, Api::Chat),
            Ok(None)
        );
        assert_eq!(args().plan(7, Api::Chat).unwrap().unwrap().total_turns(), 6);
    }

    #[test]
    fn a_turn_resends_the_conversation_and_sessions_do_not_share_text() {
        let plan = args().plan(1, Api::Chat).unwrap().unwrap();
        let one = Lengths::approximate(vec![]);
        let a1 = plan.user_message(0, 1, &one);
        assert_eq!(a1.split(' ').count(), 10);
        assert_ne!(a1, plan.user_message(1, 1, &one), "sessions differ");
        assert_ne!(a1, plan.user_message(0, 2, &one), "turns differ");
        assert_ne!(a1, plan.warmup_message(0, &one));
        let mut c = Conversation::default();
        c.user(a1.clone());
        c.assistant("reply one".into());
        c.user(plan.user_message(0, 2, &one));
        let body: Value = serde_json::from_slice(&c.body("m", 8, true)).unwrap();
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(body["messages"][0]["content"], a1.as_str());
        assert_eq!(body["ignore_eos"], true);
        assert_eq!(body["max_tokens"], 8);
        assert_eq!(
            answer_sha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
