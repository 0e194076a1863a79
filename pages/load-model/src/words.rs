//! The load-model page's own words, in English and Chinese.

use tracelab_core::Lang;

const STRINGS: &[(&str, &str, &str)] = &[
    ("title", "Load model: closed vs open loop", "负载模型：闭环与开放到达"),
    ("intro", "One simulated server, two ways to load it. The closed loop's N clients each wait for their reply (and think) before sending again; the open loop sends on a schedule at the rate the closed loop reached without the stall, whatever the server does. Latency is measured from each request's intended start. Simulated, not measured: the same parameters and seed always give the same runs.", "同一台模拟服务，两种施压方式。闭环的 N 个客户端各自等到回复（再思考一会儿）才发下一个请求；开放到达按计划发送，速率取闭环在没有停顿时达到的吞吐，不管服务在做什么。延迟从每个请求的计划开始时间算起。这是模拟结果，不是测量：同样的参数和种子总是给出同样的运行。"),
    ("server", "Server", "服务"),
    ("slots", "Slots", "槽位"),
    ("service", "Mean service time (s, exponential)", "平均服务时间（秒，指数分布）"),
    ("closed", "Closed loop", "闭环"),
    ("clients", "Clients N", "客户端数 N"),
    ("think", "Think time (s)", "思考时间（秒）"),
    ("open", "Open loop", "开放到达"),
    ("arrival", "Arrivals", "到达方式"),
    ("poisson", "Poisson", "泊松"),
    ("constant", "constant", "等间隔"),
    ("burstiness", "Burstiness", "突发度"),
    ("run", "Run", "运行"),
    ("requests", "Requests", "请求数"),
    ("seed", "Seed", "随机种子"),
    ("stall", "Stall", "停顿"),
    ("stall_on", "The server stops", "服务停顿"),
    ("stall_at", "at (s)", "开始于（秒）"),
    ("stall_for", "for (s)", "持续（秒）"),
    ("matched", "Open loop at the closed loop's throughput without the stall:", "开放到达的速率取闭环在没有停顿时的吞吐："),
    ("load", "Load", "负载"),
    ("p50", "P50", "P50"),
    ("p95", "P95", "P95"),
    ("max", "max", "最大"),
    ("throughput", "throughput", "吞吐"),
    ("method", "Time in system from the intended start, every request; percentile method:", "从计划开始时间算起的系统内时间，全部请求；分位数方法："),
    ("distribution", "Latency distribution (same scale)", "延迟分布（同一刻度）"),
    ("in_flight", "Requests in flight over time", "在途请求数随时间变化"),
    ("stall_band", "stall", "停顿"),
    ("seconds", "seconds", "秒"),
    ("requests_axis", "requests", "请求"),
    ("not_calm", "Here the closed loop's P95 is no calmer than the open loop's: with this many clients the stall reaches many requests already in flight, so both loops show it. Fewer clients (or a longer think time) let the closed loop hide it.", "这里闭环的 P95 并不比开放到达的平静：客户端这么多，停顿时已有大量请求在途，两种负载都能看到停顿。客户端更少（或思考时间更长）时，闭环才会把它藏起来。"),
    ("calm", "The closed loop's P95 stays calm: while the server is stopped its clients send nothing, so only the N requests already in flight see the stall. The open loop keeps sending; its queue and its P95 show what users would live through.", "闭环的 P95 看起来很平静：服务停顿时它的客户端什么也不发，只有已经在途的 N 个请求经历了停顿。开放到达照常发送；它的队列和 P95 显示的才是用户会经历的情况。"),
    ("error", "Cannot simulate:", "无法模拟："),
    ("language", "中文", "English"),
    ("lab", "Back to the lab", "回到实验台"),
    ("capacity_link", "Capacity of a load sweep…", "负载扫描的容量……"),
    ("cli", "The same from a terminal:", "在终端里也一样："),
];

/// The page's word for `key` in `lang`.
pub fn w(lang: Lang, key: &str) -> &'static str {
    tracelab_web::lookup(STRINGS, lang, key)
}
