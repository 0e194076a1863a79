//! Where a sweep comes from: the shipped sample folder, the files of a sweep folder the learner
//! picks, or the core's simulated sweep. Each gives the same `Sweep`: the core's `SweepFile`
//! and every step's trace, in order.

use tracelab_core::capacity::{SimulatedSweep, SweepFile, SweepStep};
use tracelab_core::{parse::parse_trace, Lang, Trace};
use tracelab_web::fetch_text;

/// The shipped sample sweeps (folders under `samples/`), with their label key.
pub const SAMPLE_SWEEPS: [(&str, &str); 1] = [("sweep-demo", "sample_demo")];

/// A loaded sweep: where it came from, the sweep file, every step's trace in order.
#[derive(Clone, PartialEq)]
pub struct Sweep {
    pub source: String,
    pub file: SweepFile,
    pub traces: Vec<Trace>,
}

/// The sample folder `name`: its sweep.json, then each step's file.
pub async fn sample(name: &str) -> Result<Sweep, String> {
    if !SAMPLE_SWEEPS.iter().any(|s| s.0 == name) {
        return Err(format!("{name}: not one of the sample sweeps"));
    }
    let dir = format!("../samples/{name}");
    let file = SweepFile::parse(
        "sweep.json",
        &fetch_text(&format!("{dir}/sweep.json")).await?,
    )
    .map_err(|e| e.en)?;
    let mut traces = Vec::with_capacity(file.steps.len());
    for s in &file.steps {
        let text = fetch_text(&format!("{dir}/{}", s.file)).await?;
        traces.push(parse_trace(&s.file, &text).map_err(|e| e.to_string())?);
    }
    Ok(Sweep {
        source: name.to_string(),
        file,
        traces,
    })
}

async fn text_of(file: &web_sys::File) -> Result<String, String> {
    let name = file.name();
    let text = wasm_bindgen_futures::JsFuture::from(file.text())
        .await
        .map_err(|e| format!("{name}: the browser could not read the file ({e:?})"))?;
    text.as_string().ok_or_else(|| format!("{name}: not text"))
}

/// The files of a sweep folder: `sweep.json` among them, and each step's file it names.
pub async fn files(list: web_sys::FileList, lang: Lang) -> Result<Sweep, String> {
    let all: Vec<web_sys::File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
    let Some(sweep) = all.iter().find(|f| f.name() == "sweep.json") else {
        return Err(match lang {
            Lang::Zh => "所选文件中没有 sweep.json：请选中扫描文件夹里的全部文件".to_string(),
            Lang::En => {
                "no sweep.json among the files: pick every file of the sweep folder".to_string()
            }
        });
    };
    let file = SweepFile::parse("sweep.json", &text_of(sweep).await?)
        .map_err(|e| e.get(lang).to_string())?;
    let mut traces = Vec::with_capacity(file.steps.len());
    for SweepStep { file: name, .. } in &file.steps {
        let Some(f) = all.iter().find(|f| &f.name() == name) else {
            return Err(match lang {
                Lang::Zh => format!("sweep.json 列出的 {name} 不在所选文件中"),
                Lang::En => format!("{name}, listed in sweep.json, is not among the files picked"),
            });
        };
        traces.push(parse_trace(name, &text_of(f).await?).map_err(|e| e.to_string())?);
    }
    Ok(Sweep {
        source: "sweep.json".to_string(),
        file,
        traces,
    })
}

/// The core's simulated sweep, as a sweep file and its traces.
pub fn simulated(sim: &SimulatedSweep, lang: Lang) -> Result<Sweep, String> {
    let steps = sim.run().map_err(|e| e.get(lang).to_string())?;
    let file = SweepFile {
        kind: tracelab_core::capacity::LoadKind::Rate,
        loads: sim.rates.clone(),
        steps: steps
            .iter()
            .map(|(l, f, _)| SweepStep {
                load: *l,
                file: f.clone(),
                interrupted: false,
            })
            .collect(),
        contract_sha256: None,
        target: None,
        threshold_s: None,
        comparison: None,
        stopped: None,
        interrupted: false,
        simulated: Some(sim.plan().record()),
    };
    Ok(Sweep {
        source: "simulator".to_string(),
        file,
        traces: steps.into_iter().map(|s| s.2).collect(),
    })
}
