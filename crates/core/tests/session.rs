//! Sessions judged as users live them: constructed traces where the session's qualification
//! and the turns' differ, with every figure pinned (worked by hand in the comments), in both
//! languages.

use tracelab_core::session::Sessions;
use tracelab_core::trace::{Attempt, Outcome, Quality, SessionTurn};
use tracelab_core::{Comparison, Lang, Settings};

fn turn(session: &str, k: u32, outcome: Outcome, ttft_ms: Option<f64>, q: Quality) -> Attempt {
    let mut a = Attempt::new(format!("{session}-{k}"), outcome, ttft_ms, q);
    a.start_ms = Some(f64::from(k) * 1000.0);
    a.e2e_ms = ttft_ms.map(|t| t + 100.0).or(Some(5000.0));
    a.input_tokens = Some(100 * k);
    a.session = Some(SessionTurn {
        session_id: session.into(),
        turn: k,
        history_tokens: Some(100 * (k - 1)),
        cached_tokens: Some(100 * (k - 1)),
    });
    a
}

/// Four sessions of three turns, threshold 0.5 s (≤): s1 qualifies every turn; s2's third turn
/// is late (0.8 s), s3's second times out, s4's first fails quality. 9 of 12 turns qualify
/// (75 %), each turn index 3 of 4, yet only 1 session of 4 (25 %) — the failures fall in
/// different sessions, so the product 0.75³ = 42.19 % over-predicts.
fn four_sessions() -> Vec<Attempt> {
    let ok = |s: &str, k: u32| turn(s, k, Outcome::Success, Some(200.0), Quality::Pass);
    vec![
        ok("s1", 1),
        ok("s1", 2),
        ok("s1", 3),
        ok("s2", 1),
        ok("s2", 2),
        turn("s2", 3, Outcome::Success, Some(800.0), Quality::Pass),
        ok("s3", 1),
        turn(
            "s3",
            2,
            Outcome::TimeoutBeforeFirstToken,
            None,
            Quality::NotEvaluated,
        ),
        ok("s3", 3),
        turn("s4", 1, Outcome::Success, Some(300.0), Quality::Fail),
        ok("s4", 2),
        ok("s4", 3),
    ]
}

fn settings() -> Settings {
    Settings {
        ttft_threshold_s: 0.5,
        window_s: Some(10.0),
        window_cost: Some(2.0),
        currency: "USD".into(),
        ..Settings::default()
    }
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 5e-5, "{a} vs {b}");
}

#[test]
fn a_session_qualifies_only_when_every_turn_does() {
    let s = Sessions::of(&four_sessions(), &settings()).unwrap();
    assert_eq!(s.sessions.figure.value, Some(4.0));
    // 1 of 4 sessions; Wilson (z = 1.96) on 4 sessions: 4.56 % … 69.94 %.
    assert_eq!(s.session_share.figure.value, Some(0.25));
    let b = s.session_share.interval.unwrap();
    close(b.lo.unwrap(), 0.045587);
    close(b.hi.unwrap(), 0.699358);
    // 9 of 12 turns. Sessions as clusters: yᵢ − 0.75·3 = 0.75, −0.25, −0.25, −0.25, so the
    // cluster variance is 4/3 · 0.75 / 144 = 1/144, the binomial one 0.1875 / 12: 27 effective
    // turns, Wilson on 20.25 of 27 with t(3) = 3.1824: 44.56 % … 91.8 %.
    assert_eq!(s.turn_rate.figure.value, Some(0.75));
    let c = s.turn_rate.interval.unwrap();
    close(c.lo.unwrap(), 0.445588);
    close(c.hi.unwrap(), 0.918020);
    close(s.predicted_share.figure.value.unwrap(), 0.421875);
    // One qualified session over 10 s; exact Poisson of 1 is 0.0253 … 5.5716.
    close(s.session_goodput.figure.value.unwrap(), 0.1);
    let g = s.session_goodput.interval.unwrap();
    close(g.lo.unwrap(), 0.0025318);
    close(g.hi.unwrap(), 0.557164);
    close(s.cost_per_1000_sessions.figure.value.unwrap(), 2000.0);
    let k = s.cost_per_1000_sessions.interval.unwrap();
    close(k.lo.unwrap(), 2000.0 / 5.571643);
    // No qualified session below −ln 0.975 = 0.0253 by chance: the costliest bound.
    assert!(
        (k.hi.unwrap() - 2000.0 / -(0.975f64).ln()).abs() < 0.01,
        "{k:?}"
    );

    assert_eq!(s.by_turn.len(), 3);
    for (i, r) in s.by_turn.iter().enumerate() {
        assert_eq!((r.turn, r.n, r.qualified), (i as u32 + 1, 4, 3));
    }
    // Turn 3's TTFT sample: 0.2, 0.2, 0.2, 0.8 s: P50 0.2 s, P95 (nearest rank 4 of 4) 0.8 s.
    assert_eq!(s.by_turn[2].ttft_p50_s, Some(0.2));
    assert_eq!(s.by_turn[2].ttft_p95_s, Some(0.8));
    // Turn 2's sample lacks the timeout: three successes at 0.2 s.
    assert_eq!(s.by_turn[1].ttft_p95_s, Some(0.2));
    // Turn k carries 100·(k − 1) cached tokens of 100·k.
    assert_eq!(s.by_turn[0].cached_share, Some(0.0));
    assert_eq!(s.by_turn[1].cached_share, Some(0.5));
    close(s.by_turn[2].cached_share.unwrap(), 2.0 / 3.0);
}

#[test]
fn the_report_section_in_english_and_chinese() {
    let s = Sessions::of(&four_sessions(), &settings()).unwrap();
    let en = s.lines(Lang::En).join("\n");
    let zh = s.lines(Lang::Zh).join("\n");
    for want in [
        "Sessions (a session qualifies only when every one of its turns does)",
        "Sessions qualified (every turn qualified): 25 % (1 / 4), 95 % interval 4.56 % … 69.94 % (Wilson, the session as the unit)",
        "Turns qualified (per turn): 75 % (9 / 12), 95 % interval 44.56 % … 91.8 %",
        "(product of per-turn rates): 42.19 %",
        "    3 | 4 | 75 % (30.06 % … 95.44 %) | 200 ms | 800 ms | 66.67 %",
    ] {
        assert!(en.contains(want), "missing {want:?} in\n{en}");
    }
    for want in [
        "会话（一个会话只有在每一轮都合格时才合格）",
        "合格会话占比（每一轮都合格）：25 % (1 / 4)，95 % 区间 4.56 % … 69.94 %（Wilson 得分区间，以会话为单位）",
        "合格轮次占比（按轮）：75 % (9 / 12)",
        "若各轮相互独立的合格会话占比（各轮合格率之积）：42.19 %",
        "按轮次：轮 | 请求数",
        "合格会话 goodput：0.1 次/秒",
        "每千个合格会话成本：2000 USD",
    ] {
        assert!(zh.contains(want), "missing {want:?} in\n{zh}");
    }
    let json = s.json();
    assert_eq!(json["session_qualified_share"], 0.25);
    assert!(json["session_qualified_share_interval"]["lo"].is_number());
    assert_eq!(json["turn_qualified_rate"], 0.75);
    assert!(json["turn_qualified_rate_interval"]["hi"].is_number());
    assert_eq!(json["by_turn"][2]["qualified"], 3);
}

#[test]
fn the_settings_decide_each_turn_and_so_each_session() {
    // s2's third turn at exactly the threshold: ≤ keeps it, < drops it.
    let mut attempts = four_sessions();
    attempts[5].ttft_ms = Some(500.0);
    let mut le = settings();
    let s = Sessions::of(&attempts, &le).unwrap();
    assert_eq!(s.session_share.figure.value, Some(0.5));
    le.comparison = Comparison::Lt;
    let s = Sessions::of(&attempts, &le).unwrap();
    assert_eq!(s.session_share.figure.value, Some(0.25));
    // Quality out of the joint condition: s4 qualifies too.
    let mut ignored = settings();
    ignored.population.quality = tracelab_core::settings::QualityRule::Ignored;
    let s = Sessions::of(&four_sessions(), &ignored).unwrap();
    assert_eq!(s.session_share.figure.value, Some(0.5));
    // No window, no cost: undefined with the reason, never 0.
    let bare = Settings {
        ttft_threshold_s: 0.5,
        ..Settings::default()
    };
    let s = Sessions::of(&four_sessions(), &bare).unwrap();
    assert_eq!(s.session_goodput.figure.value, None);
    assert!(s
        .session_goodput
        .line(Lang::En)
        .contains("no window is set"));
    assert!(s
        .cost_per_1000_sessions
        .line(Lang::Zh)
        .contains("未设置窗口成本"));
    // A trace without sessions has no session section.
    let plain = vec![Attempt::new(
        "x",
        Outcome::Success,
        Some(1.0),
        Quality::Pass,
    )];
    assert!(Sessions::of(&plain, &bare).is_none());
}

/// The lab's session rows (`session_rows`): one per session in the order it first appears, its
/// turns by turn number whatever order the file lists them in, qualified exactly when the share
/// counts it, and the first failing turn named; a threshold edit moves them as it moves the share.
#[test]
fn the_session_rows_follow_the_turns_and_the_threshold() {
    use tracelab_core::session::session_rows;
    let mut attempts = four_sessions();
    // s1's turns listed out of order: the row still goes 1, 2, 3.
    attempts.swap(0, 2);
    let rows = session_rows(&attempts, &settings());
    let ids: Vec<&str> = rows.iter().map(|r| r.session_id.as_str()).collect();
    assert_eq!(ids, ["s1", "s2", "s3", "s4"]);
    assert_eq!(rows[0].rows, [2, 1, 0]);
    assert_eq!(rows[1].rows, [3, 4, 5]);
    let qualified: Vec<bool> = rows.iter().map(|r| r.qualified).collect();
    assert_eq!(qualified, [true, false, false, false]);
    // s2 fails at its third turn (0.8 s), s3 at its second (timeout), s4 at its first (quality).
    let first: Vec<Option<(u32, usize)>> = rows.iter().map(|r| r.first_failing).collect();
    assert_eq!(first, [None, Some((3, 5)), Some((2, 7)), Some((1, 9))]);
    let share = Sessions::of(&attempts, &settings()).unwrap().session_share;
    assert_eq!(share.figure.numerator, Some(1.0));

    // At 1 s the 0.8 s turn passes: s2 qualifies too, as the share says.
    let wide = Settings {
        ttft_threshold_s: 1.0,
        ..settings()
    };
    let rows = session_rows(&attempts, &wide);
    let qualified: Vec<bool> = rows.iter().map(|r| r.qualified).collect();
    assert_eq!(qualified, [true, true, false, false]);
    assert_eq!(rows[1].first_failing, None);
    let share = Sessions::of(&attempts, &wide).unwrap().session_share;
    assert_eq!(share.figure.numerator, Some(2.0));
    // Under `<` a turn exactly at the threshold fails, and so does its session.
    let strict = Settings {
        ttft_threshold_s: 0.2,
        comparison: Comparison::Lt,
        ..settings()
    };
    assert!(session_rows(&attempts, &strict)
        .iter()
        .all(|r| !r.qualified));

    // A trace without sessions has no rows.
    let plain = vec![Attempt::new(
        "x",
        Outcome::Success,
        Some(1.0),
        Quality::Pass,
    )];
    assert!(session_rows(&plain, &settings()).is_empty());
}
