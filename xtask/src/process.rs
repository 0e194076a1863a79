//! Running commands: the workspace's root, cargo, a command echoed and checked, a command's
//! output, PATH, the per-user cache and Debian packages.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Result;

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

pub(crate) fn cargo() -> String {
    env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

pub(crate) fn cargo_bin_dir() -> PathBuf {
    let home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env::var("HOME").unwrap_or_else(|_| "/root".into())).join(".cargo")
        });
    home.join("bin")
}

/// Runs a command, echoing it, and fails with its exit status.
pub(crate) fn run(cmd: &mut Command) -> Result {
    eprintln!("xtask: $ {}", describe(cmd));
    let status = cmd
        .status()
        .map_err(|e| format!("could not start `{}`: {e}", describe(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", describe(cmd)))
    }
}

pub(crate) fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// The stdout of a command, or None when it cannot run.
pub(crate) fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Puts `dir` first on this process's PATH (children inherit it).
pub(crate) fn prepend_path(dir: PathBuf) -> Result {
    let path = env::var_os("PATH").unwrap_or_default();
    let mut paths: Vec<PathBuf> = env::split_paths(&path).filter(|p| *p != dir).collect();
    paths.insert(0, dir);
    env::set_var("PATH", env::join_paths(paths).map_err(|e| e.to_string())?);
    Ok(())
}

/// `${XDG_CACHE_HOME:-~/.cache}/tracelab`: heavy installs, kept outside the clone, keyed by version.
pub(crate) fn cache_dir() -> PathBuf {
    match env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env::var("HOME").unwrap_or_else(|_| "/root".into())).join(".cache"),
    }
    .join("tracelab")
}

/// Installs Debian packages (as root, or through `sudo -n`).
pub(crate) fn apt_install(packages: &[&str]) -> Result {
    let is_root = output("id", &["-u"])
        .map(|s| s.trim() == "0")
        .unwrap_or(false);
    let apt = |args: &[&str]| -> Command {
        let mut cmd = if is_root {
            Command::new("apt-get")
        } else {
            let mut c = Command::new("sudo");
            c.arg("-n").arg("apt-get");
            c
        };
        cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        cmd
    };
    run(&mut apt(&["update"]))
        .and_then(|_| run(apt(&["install", "-y", "--no-install-recommends"]).args(packages)))
        .map_err(|e| {
            format!(
                "{e}\nInstall them by hand: `sudo apt-get install {}`",
                packages.join(" ")
            )
        })
}

/// The space free on the disk that holds `dir`, in bytes, as `df` reports it.
pub(crate) fn free_bytes(dir: &Path) -> std::result::Result<u64, String> {
    let text = Command::new("df")
        .arg("-Pk")
        .arg(dir)
        .output()
        .map_err(|e| format!("could not start `df`: {e}"))
        .and_then(|o| {
            if o.status.success() {
                Ok(String::from_utf8_lossy(&o.stdout).into_owned())
            } else {
                Err(format!("`df -Pk {}` failed ({})", dir.display(), o.status))
            }
        })?;
    free_kib_from_df(&text)
        .map(|kib| kib * 1024)
        .ok_or_else(|| {
            format!(
                "cannot read the free space from `df -Pk {}`:\n{text}",
                dir.display()
            )
        })
}

/// The "Available" column (1 KiB blocks) of `df -P`'s one data line: the field before the
/// capacity ("94%"), counted from there because a filesystem's name may hold spaces.
fn free_kib_from_df(text: &str) -> Option<u64> {
    let fields: Vec<&str> = text.lines().nth(1)?.split_whitespace().collect();
    let capacity = fields.iter().rposition(|f| f.ends_with('%'))?;
    fields.get(capacity.checked_sub(1)?)?.parse().ok()
}

/// Warns, before a long build, when the disk that holds `dir` has less than `needed` bytes free:
/// a full disk otherwise shows up minutes later as rustc's "No space left on device".
pub(crate) fn warn_if_disk_is_short(dir: &Path, needed: u64, what: &str) {
    const GB: f64 = 1e9;
    // A fresh clone has no target/ yet: the nearest folder that exists is on the same disk.
    let dir = dir.ancestors().find(|a| a.exists()).unwrap_or(dir);
    match free_bytes(dir) {
        Ok(free) if free < needed => eprintln!(
            "xtask: warning: {:.1} GB free on the disk that holds {}; {what} needs about {:.0} GB there. \
             Free some (`cargo clean` in an old clone, for one) if the build fails with \"No space left on device\".",
            free as f64 / GB,
            dir.display(),
            needed as f64 / GB
        ),
        Ok(_) => {}
        Err(e) => eprintln!("xtask: warning: could not check the free disk space ({e}); {what} needs about {:.0} GB.", needed as f64 / GB),
    }
}

#[cfg(test)]
mod tests {
    use super::free_kib_from_df;

    #[test]
    fn the_available_column_is_read_from_df() {
        let text = "Filesystem     1024-blocks     Used Available Capacity Mounted on\n/dev/vda        263174212 90123456 5967832      94% /\n";
        assert_eq!(free_kib_from_df(text), Some(5_967_832));
        assert_eq!(
            free_kib_from_df("Filesystem 1024-blocks Used Available Capacity Mounted on\n"),
            None
        );
        let spaced = "Filesystem 1024-blocks Used Available Capacity Mounted on\nmy disk  1000 400 600 40% /mnt/my disk\n";
        assert_eq!(free_kib_from_df(spaced), Some(600));
    }
}
