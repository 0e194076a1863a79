//! llama.cpp's C++ server, `llama-server`, for the recorder's real-server tests: built from the
//! llama.cpp that the pinned llama-cpp-python sdist vendors (PyPI is the one registry that ships
//! llama.cpp's source), only its `llama-server` target, CPU only, no TLS, tests, examples or web
//! UI, into `~/.cache/tracelab/llama-server-<version>/bin/`, once; reused while it runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::process::{apt_install, cache_dir, output, run};
use crate::versions::LLAMA_CPP_PYTHON_VERSION;
use crate::Result;

/// The cached `llama-server`, built first when it is missing or does not run.
pub(crate) fn ensure_llama_server() -> Result<PathBuf> {
    let home = cache_dir().join(format!("llama-server-{LLAMA_CPP_PYTHON_VERSION}"));
    let binary = home.join("bin").join("llama-server");
    if runs(&binary) {
        return Ok(binary);
    }
    eprintln!(
        "xtask: building llama.cpp's C++ server (llama-server, from llama-cpp-python {LLAMA_CPP_PYTHON_VERSION}'s source) \
         into {}: about 10 minutes on 2 idle cores (41 measured on 2 shared ones), once",
        home.display()
    );
    if output("cmake", &["--version"]).is_none()
        || output("ninja", &["--version"]).is_none()
        || output("c++", &["--version"]).is_none()
    {
        apt_install(&["cmake", "ninja-build", "build-essential"])?;
    }
    let work = home.join("build");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| {
        format!(
            "cannot create {}: {e}; check the disk and its permissions",
            work.display()
        )
    })?;
    let started = Instant::now();
    let source = unpack_sdist(&work)?;
    let build = work.join("cmake");
    run(Command::new("cmake")
        .arg("-S")
        .arg(&source)
        .arg("-B")
        .arg(&build)
        .args([
            "-G",
            "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DBUILD_SHARED_LIBS=OFF",
        ])
        // The server and what it links; no tests, examples, web UI (it would be fetched), TLS.
        .args([
            "-DLLAMA_BUILD_SERVER=ON",
            "-DLLAMA_BUILD_TOOLS=ON",
            "-DLLAMA_BUILD_TESTS=OFF",
            "-DLLAMA_BUILD_EXAMPLES=OFF",
        ])
        .args([
            "-DLLAMA_BUILD_APP=OFF",
            "-DLLAMA_BUILD_UI=OFF",
            "-DLLAMA_USE_PREBUILT_UI=OFF",
            "-DLLAMA_OPENSSL=OFF",
        ])
        // A binary for any x86-64 with AVX2 rather than this CPU only; no OpenMP runtime.
        .args([
            "-DGGML_NATIVE=OFF",
            "-DGGML_OPENMP=OFF",
            "-DGGML_CCACHE=OFF",
        ]))?;
    run(Command::new("cmake")
        .arg("--build")
        .arg(&build)
        .args(["--target", "llama-server"]))?;
    let built = build.join("bin").join("llama-server");
    std::fs::create_dir_all(home.join("bin")).map_err(|e| e.to_string())?;
    std::fs::copy(&built, &binary).map_err(|e| {
        format!(
            "cannot copy {} to {}: {e}",
            built.display(),
            binary.display()
        )
    })?;
    let _ = std::fs::remove_dir_all(&work);
    if !runs(&binary) {
        return Err(format!(
            "{} was built but `llama-server --version` fails; delete {} and run again",
            binary.display(),
            home.display()
        ));
    }
    eprintln!(
        "xtask: llama-server built in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(binary)
}

fn runs(binary: &Path) -> bool {
    Command::new(binary)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Downloads the pinned sdist with pip (only that package from source, its build tools as
/// wheels) and unpacks it; returns the vendored llama.cpp folder.
fn unpack_sdist(work: &Path) -> Result<PathBuf> {
    let python = if output("python3", &["-m", "pip", "--version"]).is_some() {
        "python3"
    } else {
        "python"
    };
    run(Command::new(python)
        .args([
            "-m",
            "pip",
            "download",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-binary",
            "llama-cpp-python",
            "--dest",
        ])
        .arg(work)
        .arg(format!("llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}")))?;
    let sdist = work.join(format!(
        "llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
    ));
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&sdist)
        .arg("-C")
        .arg(work))?;
    let source = work
        .join(format!("llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}"))
        .join("vendor")
        .join("llama.cpp");
    if !source.join("CMakeLists.txt").is_file() {
        return Err(format!("{} holds no llama.cpp source (vendor/llama.cpp/CMakeLists.txt): has the sdist's layout changed?", sdist.display()));
    }
    Ok(source)
}
