//! The trace file, written as the run goes: the header first, then each attempt and GPU sample
//! the moment it exists, each line in one `write` so a kill leaves at most one cut-off last
//! line (which the core's parser drops with a warning). The footer is written last.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracelab_core::{write, Footer, GpuSample};

pub struct TraceWriter {
    path: PathBuf,
    inner: Mutex<Inner>,
}

struct Inner {
    file: File,
    attempts: u64,
    gpu_samples: u64,
    /// After the footer nothing more is written (a late GPU sample is dropped).
    closed: bool,
    error: Option<String>,
}

/// The counts the footer was written with.
#[derive(Debug, Clone, Copy)]
pub struct Written {
    pub attempts: u64,
    pub gpu_samples: u64,
}

impl TraceWriter {
    /// Creates the output, refusing to replace an existing file unless `force`.
    pub fn create(path: &Path, force: bool) -> Result<TraceWriter, String> {
        let mut options = OpenOptions::new();
        options.write(true);
        if force {
            options.create(true).truncate(true);
        } else {
            options.create_new(true);
        }
        let file = options.open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => exists(path, ""),
            _ => format!("cannot create {}: {e}", path.display()),
        })?;
        Ok(TraceWriter {
            path: path.to_path_buf(),
            inner: Mutex::new(Inner {
                file,
                attempts: 0,
                gpu_samples: 0,
                closed: false,
                error: None,
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn put(&self, line: &str, count: impl FnOnce(&mut Inner)) -> bool {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if inner.closed || inner.error.is_some() {
            return false;
        }
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        match inner.file.write_all(&buf) {
            Ok(()) => {
                count(&mut inner);
                true
            }
            Err(e) => {
                inner.error = Some(format!(
                    "cannot write to {}: {e} (is the disk full?)",
                    self.path.display()
                ));
                false
            }
        }
    }

    pub fn header(&self, line: &str) -> Result<(), String> {
        if self.put(line, |_| {}) {
            Ok(())
        } else {
            Err(self
                .error()
                .unwrap_or_else(|| "the trace is already closed".into()))
        }
    }

    /// Writes one attempt line; false when the file can no longer be written.
    pub fn attempt(&self, line: &str) -> bool {
        self.put(line, |i| i.attempts += 1)
    }

    pub fn gpu(&self, sample: &GpuSample) -> bool {
        self.put(&write::gpu_line(sample), |i| i.gpu_samples += 1)
    }

    /// One scrape of the serving engine's metrics.
    pub fn engine(&self, sample: &tracelab_core::trace::engine::EngineSample) -> bool {
        self.put(&tracelab_core::write::engine_line(sample), |_| {})
    }

    pub fn error(&self) -> Option<String> {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .error
            .clone()
    }

    /// Writes the footer and closes the trace to further lines.
    pub fn finish(&self, finished_cleanly: bool) -> Result<Written, String> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = &inner.error {
            return Err(e.clone());
        }
        // Counted under the same lock as the footer's write, so a late GPU sample cannot slip in.
        let footer = Footer {
            finished_cleanly,
            attempts: inner.attempts,
            gpu_samples: inner.gpu_samples,
        };
        inner.closed = true;
        let line = format!("{}\n", write::footer_line(&footer));
        inner
            .file
            .write_all(line.as_bytes())
            .and_then(|()| inner.file.sync_all())
            .map_err(|e| {
                format!(
                    "cannot write the footer to {}: {e} (is the disk full?)",
                    self.path.display()
                )
            })?;
        Ok(Written {
            attempts: footer.attempts,
            gpu_samples: footer.gpu_samples,
        })
    }
}

/// Replaces the header line of a finished trace (to add the window measured at the end). The
/// new file is written beside the old and renamed over it, so a crash here keeps the original.
/// The one overwrite guard of every command that writes a file: `path` may be written only
/// when it does not exist yet or `--force` was given. `why` (may be empty) says more, e.g. which
/// of several runs would overwrite it.
pub fn refuse_overwrite(path: &Path, force: bool, why: &str) -> Result<(), String> {
    if force || !path.exists() {
        return Ok(());
    }
    Err(exists(path, why))
}

fn exists(path: &Path, why: &str) -> String {
    format!(
        "{} already exists{why}; pass --force to overwrite it, or choose another output file",
        path.display()
    )
}

pub fn replace_header(path: &Path, header_line: &str) -> Result<(), String> {
    let text =
        std::fs::read(path).map_err(|e| format!("cannot read back {}: {e}", path.display()))?;
    let rest = match text.iter().position(|&b| b == b'\n') {
        Some(i) => &text[i + 1..],
        None => &[][..],
    };
    let mut tmp_name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    tmp_name.push(".tracelab-tmp");
    let tmp = path.with_file_name(tmp_name);
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(header_line.as_bytes())?;
        f.write_all(b"\n")?;
        f.write_all(rest)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot update the header of {}: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_to_overwrite_and_closes_after_footer() {
        let dir = std::env::temp_dir().join(format!("tracelab-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.jsonl");
        let _ = std::fs::remove_file(&path);
        let w = TraceWriter::create(&path, false).unwrap();
        w.header("{\"kind\":\"header\"}").unwrap();
        assert!(w.attempt("{\"kind\":\"attempt\"}"));
        let written = w.finish(true).unwrap();
        assert_eq!(written.attempts, 1);
        assert!(!w.attempt("late"), "nothing after the footer");
        let err = TraceWriter::create(&path, false).err().unwrap();
        assert!(err.contains("--force"), "{err}");
        replace_header(&path, "{\"kind\":\"header\",\"x\":1}").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with(
                "{\"kind\":\"header\",\"x\":1}\n{\"kind\":\"attempt\"}\n{\"attempts\":1"
            ),
            "{text}"
        );
        assert!(TraceWriter::create(&path, true).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
