//! The recorder's own share of a run's figures, as the card says it: how many measured attempts
//! paid for a new connection, were resent or were never sent, and how late the recorder's own
//! timestamps were (`trace::ClientShare`, written by `tracelab record` when the run ends).
//! A reader can then tell what the client did to the numbers from what the server did.

use crate::format::{self, trim_num};
use crate::settings::Settings;
use crate::text::Lang;
use crate::trace::{ClientShare, Header};

/// The client's timing error is "not small" against the TTFT threshold above this share of it …
pub const TIMING_WARN_SHARE_OF_THRESHOLD: f64 = 0.05;
/// … or against the run's ITL P50 above this share of it.
pub const TIMING_WARN_SHARE_OF_ITL: f64 = 0.1;

fn ms(v_ms: f64) -> String {
    format::duration(v_ms / 1000.0)
}

/// The card's lines about the recorder's share; none for a trace that does not say it (another
/// tool's, an import, a simulation, a run that was killed). `itl_p50_s` is the run's ITL P50
/// under the current settings, when known.
pub fn card_lines(
    header: &Header,
    settings: &Settings,
    itl_p50_s: Option<f64>,
    lang: Lang,
) -> Vec<String> {
    let Some(c) = &header.client else {
        return Vec::new();
    };
    let zh = lang == Lang::Zh;
    let mut lines = vec![connections_line(c, zh)];
    lines.extend(timing_lines(c, settings, itl_p50_s, zh));
    if c.not_sent > 0 {
        lines.push(not_sent_line(c, zh));
    }
    lines
}

fn connections_line(c: &ClientShare, zh: bool) -> String {
    let warm = match (zh, c.warm_connections) {
        (_, 0) => String::new(),
        (true, w) => format!("，预热先打开了 {} 个连接", format::integer(w)),
        (false, w) => format!(
            "; the warm-up opened {} before measuring",
            format::integer(w)
        ),
    };
    let resent = match (zh, c.resent) {
        (_, 0) => String::new(),
        (true, r) => format!("；{} 次因连接在请求发出前已关闭而重发（服务器从未收到第一次）", format::integer(r)),
        (false, r) => format!(
            "; {} sent again because their reused connection closed before the request went out (the server never got the first)",
            format::count(r as usize, "was", "were")
        ),
    };
    let closing = match (zh, c.server_closed_after_reply) {
        (_, false) => "",
        (true, true) => "；服务器在每次回复后立即关闭连接（尽管声明 keep-alive），所以连接不再复用",
        (false, true) => "; the server closed its connections right after its replies (though it said keep-alive), so none was reused",
    };
    if zh {
        format!(
            "客户端的份额：{} 次计入的尝试中有 {} 次新建了连接（它们的时间包含建连）{warm}{resent}{closing}",
            format::integer(c.measured),
            format::integer(c.new_connections)
        )
    } else {
        format!(
            "Client's share: {} of {} measured attempts opened a new connection (their times include the connect){warm}{resent}{closing}",
            format::integer(c.new_connections),
            format::integer(c.measured)
        )
    }
}

fn timing_lines(
    c: &ClientShare,
    settings: &Settings,
    itl_p50_s: Option<f64>,
    zh: bool,
) -> Vec<String> {
    let cpu = match (zh, c.cpu_cores_busy) {
        (_, None) => String::new(),
        (true, Some(cores)) => format!(
            "；记录器占用 CPU {} 核",
            trim_num((cores * 100.0).round() / 100.0)
        ),
        (false, Some(cores)) => format!(
            "; the recorder kept {} CPU cores busy",
            trim_num((cores * 100.0).round() / 100.0)
        ),
    };
    let Some(t) = c
        .timing
        .as_ref()
        .filter(|t| t.first_token.n > 0 || t.events.n > 0)
    else {
        return vec![if zh {
            format!("客户端计时误差：未测量（本机不提供内核接收时间戳）{cpu}")
        } else {
            format!("Client timing error: not measured (this system gives no kernel receive timestamps){cpu}")
        }];
    };
    let f = &t.first_token;
    let e = &t.events;
    // What "≤" rests on: a 95 % upper bound on the P99, or with too few samples for one, only
    // the maximum this run saw.
    let basis = match (zh, f.p99_bound_ms.is_some()) {
        (true, true) => format!("P99 的 95 % 置信上界，{} 个首 token", f.n),
        (true, false) => format!(
            "{} 个首 token 中的最大值：样本太少（不足 299），无法给出 P99 的 95 % 置信上界",
            f.n
        ),
        (false, true) => format!(
            "95 % upper bound on the P99 over {}",
            format::count(f.n as usize, "first token", "first tokens")
        ),
        (false, false) => format!(
            "the maximum of {}: too few (under 299) for a 95 % upper bound on the P99",
            format::count(f.n as usize, "first token", "first tokens")
        ),
    };
    let mut lines = vec![if zh {
        format!(
            "本次运行的客户端计时误差：≤ {}（{basis}；样本 P50 {}，P99 {}，最大 {}；全部 {} 次计时读取的上界 {}），即内核收到字节 → 记录器打时间戳{cpu}",
            ms(f.stated_ms()),
            ms(f.p50_ms),
            ms(f.p99_ms),
            ms(f.max_ms),
            e.n,
            ms(e.stated_ms())
        )
    } else {
        format!(
            "Client timing error this run: ≤ {} ({basis}; sample P50 {}, P99 {}, max {}; {} bounded by {}), from the kernel's receive time to the recorder's timestamp{cpu}",
            ms(f.stated_ms()),
            ms(f.p50_ms),
            ms(f.p99_ms),
            ms(f.max_ms),
            format::count(e.n as usize, "timed read", "timed reads"),
            ms(e.stated_ms())
        )
    }];
    let threshold_ms = settings.ttft_threshold_s * 1000.0;
    if f.n > 0 && f.stated_ms() > TIMING_WARN_SHARE_OF_THRESHOLD * threshold_ms {
        lines.push(if zh {
            format!(
                "⚠ 客户端自身的计时误差（上界 {}）相对 TTFT 阈值 {} 不算小（超过 5 %）：离阈值不到 {} 的尝试，判定不可靠",
                ms(f.stated_ms()),
                ms(threshold_ms),
                ms(f.stated_ms())
            )
        } else {
            format!(
                "⚠ The client's own timing error (bound {}) is not small against the TTFT threshold {} (over 5 %): attempts within {} of the threshold may be judged wrongly",
                ms(f.stated_ms()),
                ms(threshold_ms),
                ms(f.stated_ms())
            )
        });
    }
    if let Some(itl_ms) = itl_p50_s.map(|s| s * 1000.0).filter(|v| *v > 0.0) {
        if e.n > 0 && e.stated_ms() > TIMING_WARN_SHARE_OF_ITL * itl_ms {
            lines.push(if zh {
                format!(
                    "⚠ 客户端自身的计时误差（计时读取的上界 {}）相对 ITL P50 {} 不算小（超过 10 %）：ITL 里有记录器自己的时延",
                    ms(e.stated_ms()),
                    ms(itl_ms)
                )
            } else {
                format!(
                    "⚠ The client's own timing error (timed reads bounded by {}) is not small against the ITL P50 {} (over 10 %): the ITL figures carry the recorder's own delay",
                    ms(e.stated_ms()),
                    ms(itl_ms)
                )
            });
        }
    }
    lines
}

fn not_sent_line(c: &ClientShare, zh: bool) -> String {
    let sent = format::integer(c.measured.saturating_sub(c.not_sent));
    let server_failures = format::integer(c.measured_failures.saturating_sub(c.not_sent));
    if zh {
        format!(
            "⚠ {} 次计入的尝试中有 {} 次根本没有发出：记录器用完了可打开的文件数（ulimit -n）。它们记为 connect_error，仍留在失败率的分母里，所以这个失败率测的是记录器，不是服务器；真正发出的 {sent} 个请求中失败 {server_failures} 个。",
            format::integer(c.measured),
            format::integer(c.not_sent)
        )
    } else {
        format!(
            "⚠ {} of {} measured attempts were never sent: the recorder ran out of open files (ulimit -n). They are recorded as connect_error and stay in the failure rate's denominator, so that rate measures the recorder, not the server: of the {sent} requests that were sent, {server_failures} failed.",
            format::integer(c.not_sent),
            format::integer(c.measured)
        )
    }
}
