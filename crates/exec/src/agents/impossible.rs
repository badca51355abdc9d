//! An author's declaration that its task is impossible, on disk:
//! `impossible.md` in its artifacts directory (the process and docker
//! launchers share that directory; kubernetes brings it back with the
//! workspace). Read bounded and never through a link; cleared before a
//! later attempt so an earlier one's cannot leak into it. What the text
//! becomes is `model::impossible`'s.

use rascal_core::model::impossible::{reason, FILE, MAX_REASON_BYTES};
use std::io::Read;
use std::path::Path;

/// The declaration in `artifacts`, if the agent left one: its reason
/// (bounded, cleaned). Anything at that name declares; only a regular file
/// is read (a link is never followed).
pub fn read(artifacts: &Path) -> Option<String> {
    let path = artifacts.join(FILE);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.file_type().is_file() {
        return Some(format!("(no reason read: {FILE} is not a regular file)"));
    }
    let mut raw = Vec::new();
    let read = std::fs::File::open(&path)
        .and_then(|f| f.take(MAX_REASON_BYTES as u64).read_to_end(&mut raw));
    if let Err(e) = read {
        return Some(format!("(no reason read: {FILE}: {e})"));
    }
    let mut text = reason(&raw);
    let rest = meta.len().saturating_sub(raw.len() as u64);
    if rest > 0 {
        text.push_str(&format!("\n…[{rest} more bytes not read]"));
    }
    Some(text)
}

/// Remove an earlier attempt's declaration from `artifacts` (nothing there
/// is fine).
pub fn clear(artifacts: &Path) -> std::io::Result<()> {
    let path = artifacts.join(FILE);
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.file_type().is_dir() => std::fs::remove_dir_all(&path),
        Ok(_) => std::fs::remove_file(&path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declaration_is_read_bounded_never_through_a_link_and_cleared() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()), None);
        std::fs::write(dir.path().join(FILE), "tests want 5\x1b[2J\n").unwrap();
        assert_eq!(read(dir.path()).as_deref(), Some("tests want 5[2J"));
        std::fs::write(dir.path().join(FILE), vec![b'y'; MAX_REASON_BYTES + 3]).unwrap();
        assert!(read(dir.path())
            .unwrap()
            .ends_with("…[3 more bytes not read]"));
        clear(dir.path()).unwrap();
        assert_eq!(read(dir.path()), None);
        clear(dir.path()).unwrap();
        // A link to a secret declares, but is not followed.
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "hunter2").unwrap();
        std::os::unix::fs::symlink(&secret, dir.path().join(FILE)).unwrap();
        let r = read(dir.path()).unwrap();
        assert!(!r.contains("hunter2"), "{r}");
        clear(dir.path()).unwrap();
        assert!(secret.exists());
        assert_eq!(read(dir.path()), None);
    }
}
