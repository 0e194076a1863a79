//! One maker of the cached PyPI virtual environments the tests use, each under
//! `~/.cache/tracelab/<name>-<version>/`, made once and reused while what it must import works:
//! llama.cpp's server (llama-cpp-python, compiled from source) for the recorder's real-server
//! test, DuckDB to read the Parquet export back, kubernetes-validate for `deploy/kubernetes/`,
//! guidellm for the wire benchmark.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::process::{apt_install, cache_dir, output, run};
use crate::versions::{
    DUCKDB_VERSION, GGUF_VERSION, GUIDELLM_VERSION, KUBERNETES_VALIDATE_VERSION,
    LLAMA_CPP_PYTHON_VERSION,
};
use crate::Result;

/// A cached virtual environment: what it installs and what must import in it.
pub(crate) struct Venv {
    /// The folder's name before `-<version>`.
    pub name: &'static str,
    pub version: &'static str,
    /// `package==version` requirements, installed together.
    pub packages: Vec<String>,
    /// The modules that must import (`import {imports}`), checked before and after installing.
    pub imports: &'static str,
    /// Said before a long install (llama.cpp compiles from source).
    pub note: Option<String>,
    /// Needs a compiler, CMake and Python's headers (installed from Debian's packages when missing).
    pub builds_from_source: bool,
    /// pip's own progress is left out.
    pub quiet: bool,
}

impl Venv {
    /// llama.cpp's OpenAI-compatible server and the `gguf` package that writes the test's tiny model.
    pub fn llama_server() -> Venv {
        Venv {
            name: "llama-cpp-python",
            version: LLAMA_CPP_PYTHON_VERSION,
            packages: vec![format!("llama-cpp-python[server]=={LLAMA_CPP_PYTHON_VERSION}"), format!("gguf=={GGUF_VERSION}")],
            imports: "llama_cpp.server, gguf",
            note: Some(format!(
                "installing llama.cpp's server (llama-cpp-python {LLAMA_CPP_PYTHON_VERSION}) into {}: it compiles llama.cpp, \
                 about 12 minutes on 2 cores, once",
                cache_dir().join(format!("llama-cpp-python-{LLAMA_CPP_PYTHON_VERSION}")).display()
            )),
            builds_from_source: true,
            quiet: false,
        }
    }

    /// DuckDB reads the recorder's Parquet export back.
    pub fn duckdb() -> Venv {
        Venv::small("duckdb", DUCKDB_VERSION, "duckdb")
    }

    /// kubernetes-validate checks deploy/kubernetes/ against the Kubernetes schemas it ships.
    pub fn kubernetes_validate() -> Venv {
        Venv::small(
            "kubernetes-validate",
            KUBERNETES_VALIDATE_VERSION,
            "kubernetes_validate",
        )
    }

    /// guidellm, the peer `cargo xtask bench-wire` judges beside the recorder.
    pub fn guidellm() -> Venv {
        Venv::small("guidellm", GUIDELLM_VERSION, "guidellm")
    }

    fn small(package: &'static str, version: &'static str, module: &'static str) -> Venv {
        Venv {
            name: package,
            version,
            packages: vec![format!("{package}=={version}")],
            imports: module,
            note: None,
            builds_from_source: false,
            quiet: true,
        }
    }
}

/// Whether `python` runs and imports `modules`.
fn imports_work(python: &Path, modules: &str) -> bool {
    Command::new(python)
        .args(["-c", &format!("import {modules}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The venv's folder, made (or remade) when what it must import does not.
pub(crate) fn ensure(v: &Venv) -> Result<PathBuf> {
    let venv = cache_dir().join(format!("{}-{}", v.name, v.version));
    let python = venv.join("bin").join("python");
    if imports_work(&python, v.imports) {
        return Ok(venv);
    }
    if let Some(note) = &v.note {
        eprintln!("xtask: {note}");
    }
    if v.builds_from_source
        && (output("python3", &["-c", "import venv, ensurepip"]).is_none()
            || output("c++", &["--version"]).is_none())
    {
        apt_install(&["python3-venv", "python3-dev", "build-essential", "cmake"])?;
    }
    // --clear: a half-made or stale environment (another Python) is started afresh.
    let runs = Command::new(&python)
        .args(["-c", "pass"])
        .status()
        .is_ok_and(|s| s.success());
    let mut create = Command::new("python3");
    create.arg("-m").arg("venv");
    if !runs {
        create.arg("--clear");
    }
    run(create.arg(&venv))?;
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--disable-pip-version-check"]);
    if v.quiet {
        pip.arg("--quiet");
    }
    run(pip.args(&v.packages))?;
    if !imports_work(&python, v.imports) {
        return Err(format!(
            "{} was installed but `import {}` still fails in it",
            venv.display(),
            v.imports
        ));
    }
    Ok(venv)
}
