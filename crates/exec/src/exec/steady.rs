//! Steady copies: the checks that share one build cache (a candidate's
//! attempt, a cross-test run) get their copies at one path, one at a time,
//! with each file's modification time kept for as long as its content is.
//! Cargo decides what to rebuild by comparing those times with its last
//! build's, so a check then compiles only what differs from the check
//! before it — the base's tests, a canary, a mutant — not the whole crate
//! again (issue 52, docs/security.md "Build caches").
//!
//! Why this is never stale: the checks on one cache are serialised (a
//! claim held from laying the copy to the command's end), so the cache's
//! last build of anything started after the copy it was built from was
//! laid. A file keeps its old time only when its content is byte for byte
//! what was laid last time, at that time; a file whose content differs in
//! any byte, that is new, or that came back after being absent gets a time
//! later than every earlier lay, hence later than every build — cargo
//! rebuilds what depends on it. Code that ran in a check can still write
//! the cache (it always could: the checks of one cache run the same
//! candidate's code); it never writes the record of what was laid, nor a
//! copy it did not run in.
//!
//! The record of what was laid sits beside the cache, where no command
//! can write, with a lock every rascal process takes (the base's cache in
//! the ledger is shared by runs); `begin` starts it again whenever rascal
//! empties or seeds a cache.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What was laid last in one cache's copies: each file's digest and the
/// time it was given (nanoseconds since the epoch), the latest time given,
/// and where they were laid (a build made elsewhere holds that path).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Laid {
    files: HashMap<PathBuf, (String, u64)>,
    latest: u64,
    at: Option<PathBuf>,
}

/// The record beside `cache` (where no command can write: only the cache
/// itself is bound writable), and the lock that gives the checks turns.
fn beside(cache: &Path, what: &str) -> PathBuf {
    let mut name = cache.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{what}"));
    cache.with_file_name(name)
}

/// `cache` was just emptied (or seeded) by rascal: its copies start a new
/// record, with nothing laid yet.
pub fn begin(cache: &Path) {
    let _ = std::fs::remove_file(beside(cache, "laid"));
}

/// `cache` is gone for good: so are its record and lock.
pub fn end(cache: &Path) {
    begin(cache);
    let _ = std::fs::remove_file(beside(cache, "lock"));
}

/// One check's hold on a cache: no other check of that cache — in this
/// process or another rascal's — lays or runs until it is dropped.
pub(crate) struct Claim {
    _lock: std::fs::File,
    record: PathBuf,
    laid: Laid,
    /// Where this cache's copies are laid.
    pub(crate) path: PathBuf,
}

/// Wait for `cache`'s turn. Its copies are laid at one path beside it,
/// whichever candidate's check lays them. Err when the lock cannot be
/// taken: the check then does not run, as a copy laid without its turn
/// would leave the record behind what the cache was built from.
pub(crate) async fn claim(cache: &Path) -> std::io::Result<Claim> {
    let (lock, record) = (beside(cache, "lock"), beside(cache, "laid"));
    let path = beside(cache, "copy");
    let taken = tokio::task::spawn_blocking(move || {
        if let Some(dir) = lock.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock)?;
        file.lock()?;
        // Its age is its last use (`rascal gc` removes old ledger entries).
        let _ = file.set_modified(SystemTime::now());
        // A record that cannot be read is none: every file new.
        let laid = std::fs::read(&record)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Ok(Claim {
            _lock: file,
            record,
            laid,
            path,
        })
    })
    .await;
    taken.unwrap_or_else(|e| Err(std::io::Error::other(e)))
}

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn time(nanos: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(nanos)
}

impl Claim {
    /// Give every regular file under `copy` its time: the one it was laid
    /// with before when its content is the same, else a new one, later
    /// than any given before. Forgets what was laid and is absent now; a
    /// copy laid elsewhere than the last (its path could not be used)
    /// gives every file a new time, as what was built holds the old path.
    /// The record is written before the command runs; when it cannot be,
    /// the copy is not used (Err).
    pub(crate) fn stamp(&mut self, copy: &Path) -> std::io::Result<()> {
        if self.laid.at.as_deref() != Some(copy) {
            self.laid.files.clear();
        }
        // A clock stepped back still gives a later time.
        let now = nanos(SystemTime::now()).max(self.laid.latest + 1_000_000);
        let mut files = HashMap::new();
        for (rel, digest) in digests(copy)? {
            let t = match self.laid.files.get(&rel) {
                Some((d, t)) if *d == digest => *t,
                _ => now,
            };
            std::fs::File::options()
                .write(true)
                .open(copy.join(&rel))?
                .set_modified(time(t))?;
            files.insert(rel, (digest, t));
        }
        self.laid = Laid {
            files,
            latest: now,
            at: Some(copy.to_path_buf()),
        };
        let fresh = self.record.with_extension("laid-new");
        std::fs::write(&fresh, serde_json::to_vec(&self.laid)?)?;
        std::fs::rename(&fresh, &self.record)
    }
}

/// Each regular file under `dir` (links and anything else left out, never
/// followed) with the digest of its content.
fn digests(dir: &Path) -> std::io::Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        for entry in std::fs::read_dir(dir.join(&rel))? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let path = rel.join(entry.file_name());
            if kind.is_dir() {
                todo.push(path);
            } else if kind.is_file() {
                let bytes = std::fs::read(entry.path())?;
                out.push((path, rascal_core::digest::digest(bytes)));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
