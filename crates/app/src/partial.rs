//! Output files written whole or not at all: a command's output is written to a hidden file
//! beside it and renamed over it at the end, so a full disk, an error or Ctrl-C never leaves a
//! half-written report, summary or redacted dump behind (issue 35: an interrupted `redact`
//! left a 339 MB `.leakscope-redact-…` in the output folder).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

/// The hidden files being written now, removed when the process is interrupted.
static WRITING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A file being written beside its final path; removed when dropped unless [`Partial::persist`]ed.
pub struct Partial {
    /// Taken by `persist`.
    file: Option<tempfile::NamedTempFile>,
    path: PathBuf,
}

impl Partial {
    /// A hidden file in `output`'s folder (`.leakscope-PURPOSE-…`), removed if the process is
    /// interrupted by SIGINT, SIGTERM or SIGHUP before it is persisted.
    pub fn beside(output: &Path, purpose: &str) -> std::io::Result<Partial> {
        remove_on_interrupt();
        let dir = output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        // Readable as any file the user writes (the umask decides), not only by them as a
        // temporary file is.
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o666);
        let file =
            tempfile::Builder::new().prefix(&format!(".leakscope-{purpose}-")).permissions(mode).tempfile_in(dir)?;
        let path = file.path().to_owned();
        lock().push(path.clone());
        Ok(Partial { file: Some(file), path })
    }

    /// The file, to write to.
    pub fn as_file(&self) -> &std::fs::File {
        self.file.as_ref().expect("not persisted yet").as_file()
    }

    /// Makes the file `output`, once it is on disk whole.
    pub fn persist(mut self, output: &Path) -> std::io::Result<()> {
        let file = self.file.take().expect("persisted once");
        file.as_file().sync_all()?;
        file.persist(output).map(drop).map_err(|e| e.error)
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        lock().retain(|p| *p != self.path);
    }
}

/// Writes `bytes` to `output` whole: nothing is left there when the write fails.
pub fn write_whole(output: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let p = Partial::beside(output, "out")?;
    p.as_file().write_all(bytes)?;
    p.persist(output)
}

fn lock() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    WRITING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Once per process: on SIGINT, SIGTERM or SIGHUP, the files being written are removed, then
/// the signal does what it would have done (the process ends with it).
fn remove_on_interrupt() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else { return };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                for path in lock().drain(..) {
                    let _ = std::fs::remove_file(path);
                }
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
    });
}

#[cfg(test)]
mod tests {
    use super::{write_whole, Partial};

    #[test]
    fn a_file_is_there_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("report.html");
        write_whole(&out, b"<html>").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"<html>");
        // As a file the user writes: others may read it unless the umask says otherwise.
        let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&out).unwrap().permissions());
        let umask = std::process::Command::new("sh").args(["-c", "umask"]).output().unwrap().stdout;
        let umask = u32::from_str_radix(String::from_utf8(umask).unwrap().trim(), 8).unwrap();
        assert_eq!(mode & 0o777, 0o666 & !umask);
        // A write abandoned before it is persisted leaves nothing, not even its hidden file.
        let p = Partial::beside(&dir.path().join("other.hprof"), "redact").unwrap();
        std::io::Write::write_all(&mut p.as_file(), b"half").unwrap();
        drop(p);
        let names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        assert_eq!(names, ["report.html"]);
    }
}
