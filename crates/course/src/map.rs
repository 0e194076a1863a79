//! The learner's own system map (lesson 1, a `draw_map` exercise): the serving path as ordered
//! steps, each with a role (data, device, output, …), the step where it can fail and how, the
//! step where they sample and on which clock, and the training variant of the path. Exported and
//! imported as a JSON file like the card (`kind` [`MAP_KIND`]), and checked for the parts the
//! seed asks for, with feedback per missing part.

use serde::{Deserialize, Serialize};

use tracelab_core::text::Text;

use crate::t;

/// The `kind` of a learner's [`SystemMap`] file.
pub const MAP_KIND: &str = "tracelab.system_map";

/// The roles a step may have: code, English, Chinese.
pub const MAP_ROLES: [(&str, &str, &str); 9] = [
    ("data", "Data", "数据"),
    ("client", "Client", "客户端"),
    ("network", "Network", "网络"),
    ("gateway", "Gateway", "网关"),
    ("queue", "Queue", "队列"),
    ("device", "Device", "设备"),
    ("output", "Output", "输出"),
    ("checkpoint", "Checkpoint", "检查点"),
    ("other", "Other", "其他"),
];

/// The clocks a sample may be read on: code, English, Chinese.
pub const MAP_CLOCKS: [(&str, &str, &str); 3] = [
    ("client", "The client's clock", "客户端时钟"),
    ("server", "The server's clock", "服务端时钟"),
    ("device", "The device's counters", "设备计数器"),
];

/// One step of a path, as the learner names it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MapStep {
    pub name: String,
    /// One of [`MAP_ROLES`]' codes (empty: not chosen).
    pub role: String,
}

/// The learner's map. Indices point into `steps`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SystemMap {
    /// The serving path, in order: from the data a request carries to the output a user reads.
    pub steps: Vec<MapStep>,
    /// The step where it can fail.
    pub failure: Option<usize>,
    /// How it fails there (a timeout before the first token, a refused connection, …).
    pub failure_note: String,
    /// The step where the learner samples.
    pub sample: Option<usize>,
    /// One of [`MAP_CLOCKS`]' codes: the clock the sample is read on.
    pub clock: String,
    /// The training variant of the path, in order (data → device → checkpoint, …).
    pub training: Vec<MapStep>,
}

/// A part the seed asks of a map, missing or wrong, with why.
#[derive(Debug, Clone, PartialEq)]
pub struct MapProblem {
    /// `steps`, `data`, `device`, `output`, `order`, `failure`, `sample`, `clock`, `training`.
    pub part: &'static str,
    pub why: Text,
}

#[derive(Serialize)]
struct MapFile<'a> {
    kind: &'static str,
    version: u32,
    #[serde(flatten)]
    map: &'a SystemMap,
}

fn named(steps: &[MapStep]) -> impl Iterator<Item = (usize, &MapStep)> {
    steps
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.name.trim().is_empty())
}

fn first_role(steps: &[MapStep], role: &str) -> Option<usize> {
    named(steps).find(|(_, s)| s.role == role).map(|(i, _)| i)
}

fn last_role(steps: &[MapStep], role: &str) -> Option<usize> {
    named(steps)
        .filter(|(_, s)| s.role == role)
        .map(|(i, _)| i)
        .last()
}

/// A role's words.
pub fn role_label(code: &str) -> Text {
    MAP_ROLES
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, en, zh)| t(en, zh))
        .unwrap_or_else(|| Text::new(code, code))
}

impl SystemMap {
    /// What the map lacks of the seed's parts (empty: every part is there): at least
    /// `min_steps` named steps; a data, a device and an output step, in that order; a failure
    /// point with how it fails; a sample point read on the client's clock; and a training
    /// variant with its data, device and checkpoint.
    pub fn problems(&self, min_steps: usize) -> Vec<MapProblem> {
        let mut out = Vec::new();
        let mut say = |part: &'static str, en: String, zh: String| {
            out.push(MapProblem {
                part,
                why: Text::new(en, zh),
            })
        };
        let n = named(&self.steps).count();
        if n < min_steps {
            say(
                "steps",
                format!("The path has {n} named steps; draw at least {min_steps}, from the data a request carries to what the user reads."),
                format!("这条路径只有 {n} 个有名字的步骤；至少画 {min_steps} 个，从请求携带的数据一直到用户读到的内容。"),
            );
        }
        for (role, en, zh) in [
            ("data", "Where does the request's data enter? Mark a step as data (the prompt, its tokens).", "请求的数据从哪里进来？把一个步骤标为“数据”（提示词及其 token）。"),
            ("device", "Where is the work done? Mark the step that runs on the device (prefill, decode).", "计算在哪里完成？把在设备上运行的步骤（prefill、decode）标出来。"),
            ("output", "Where does the user get the answer? Mark a step as output (tokens streamed back).", "用户在哪里拿到答案？把一个步骤标为“输出”（流式返回的 token）。"),
        ] {
            if first_role(&self.steps, role).is_none() {
                say(role, en.to_string(), zh.to_string());
            }
        }
        if let (Some(d), Some(g), Some(o)) = (
            first_role(&self.steps, "data"),
            last_role(&self.steps, "device"),
            last_role(&self.steps, "output"),
        ) {
            if !(d < g && g < o) {
                say(
                    "order",
                    "The order does not hold: the data comes before the device, and the device before the output.".into(),
                    "顺序不对：数据在设备之前，设备在输出之前。".into(),
                );
            }
        }
        let valid = |i: Option<usize>| {
            i.filter(|i| {
                self.steps
                    .get(*i)
                    .is_some_and(|s| !s.name.trim().is_empty())
            })
        };
        if valid(self.failure).is_none() || self.failure_note.trim().is_empty() {
            say(
                "failure",
                "Mark a failure point on the path and say how it fails there (a timeout before the first token, a refused connection, a broken stream).".into(),
                "在路径上标出一个失败点，并写明它在那里怎样失败（首字前超时、连接被拒、流中途断开）。".into(),
            );
        }
        if valid(self.sample).is_none() {
            say(
                "sample",
                "Mark where you sample: the step where the times are read.".into(),
                "标出你在哪里采样：读取时间的那个步骤。".into(),
            );
        }
        match self.clock.as_str() {
            "client" => {}
            "" => say(
                "clock",
                "Say on which clock the sample is read.".into(),
                "写明采样读的是哪个时钟。".into(),
            ),
            _ => say(
                "clock",
                "On that clock the network, the gateway and the queue before it are missing: TTFT and E2E as the user feels them are read on the client's clock.".into(),
                "在那个时钟上，网络、网关和它之前的排队都看不到：用户感受到的 TTFT 和 E2E 要在客户端时钟上读取。".into(),
            ),
        }
        let tn = named(&self.training).count();
        let lacks: Vec<Text> = ["data", "device", "checkpoint"]
            .into_iter()
            .filter(|r| first_role(&self.training, r).is_none())
            .map(role_label)
            .collect();
        if tn < 3 || !lacks.is_empty() {
            let list = |zh: bool| {
                lacks
                    .iter()
                    .map(|l| {
                        if zh {
                            l.zh.clone()
                        } else {
                            l.en.to_lowercase()
                        }
                    })
                    .collect::<Vec<_>>()
            };
            say(
                "training",
                format!(
                    "Draw the training variant: at least 3 steps, with its data, its device and the checkpoint it writes{}.",
                    if lacks.is_empty() { String::new() } else { format!(" (missing: {})", list(false).join(", ")) }
                ),
                format!(
                    "画出训练的那条路径：至少 3 个步骤，包括它的数据、设备和写出的检查点{}。",
                    if lacks.is_empty() { String::new() } else { format!("（缺少：{}）", list(true).join("、")) }
                ),
            );
        }
        out
    }

    /// The map as a JSON file (`kind` [`MAP_KIND`], version 1), pretty-printed.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(&MapFile {
            kind: MAP_KIND,
            version: 1,
            map: self,
        })
        .expect("a map serialises");
        s.push('\n');
        s
    }
}
