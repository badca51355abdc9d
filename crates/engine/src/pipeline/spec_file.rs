//! A plan's criteria saved as a spec in the user's repository (`w` on
//! the TUI's plan screen): never over an existing file, never through a
//! link.

/// Write the plan's criteria as a spec at `path` in the repository at
/// `origin` (`w` on the plan screen): never over an existing file, never
/// through a link — not at the file, nor at a directory on the way (a
/// `.rascal` that links outside the repository is refused). What
/// happened, in one line.
pub fn save(origin: &std::path::Path, path: &str, text: &str) -> String {
    use rascal_exec::git::beneath::Beneath;
    let Ok(repo) = rascal_exec::git::workspace::open(origin) else {
        return "not saved: the repository could not be opened".into();
    };
    let rel = std::path::Path::new(path);
    let made = Beneath::open(&rascal_exec::git::workspace::workdir(&repo)).and_then(|root| {
        if let Some(dir) = rel.parent().filter(|d| !d.as_os_str().is_empty()) {
            root.create_dir_all(dir, false)?;
        }
        let mut f = root.create_new(rel, 0o644)?;
        std::io::Write::write_all(&mut f, text.as_bytes())
    });
    match made {
        Ok(()) => format!("saved {path} (not committed)"),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            format!("not saved: {path} exists (or a link is on its way)")
        }
        Err(e) if rascal_exec::git::beneath::is_link_on_way(&e) => {
            format!("not saved: a symlink is on the way to {path}; rascal never writes through one")
        }
        Err(e) => format!("not saved: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::save;
    use std::os::unix::fs::symlink;

    const SPEC: &str = ".rascal/specs/add-a.yaml";

    fn git_init(dir: &std::path::Path) {
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git init {}", dir.display());
    }

    fn repo() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        git_init(d.path());
        d
    }

    #[test]
    fn w_saves_a_new_spec_and_never_over_one() {
        let d = repo();
        let said = save(d.path(), SPEC, "instruction: a\n");
        assert_eq!(said, format!("saved {SPEC} (not committed)"));
        let said = save(d.path(), SPEC, "instruction: b\n");
        assert!(said.starts_with("not saved"), "{said}");
        let kept = std::fs::read_to_string(d.path().join(SPEC)).unwrap();
        assert_eq!(kept, "instruction: a\n");
    }

    #[test]
    fn w_never_writes_through_a_link_in_the_repository() {
        let outside = tempfile::tempdir().unwrap();
        // `.rascal` links outside the repository.
        let d = repo();
        symlink(outside.path(), d.path().join(".rascal")).unwrap();
        let said = save(d.path(), SPEC, "instruction: a\n");
        assert!(said.starts_with("not saved"), "{said}");
        assert!(!outside.path().join("specs").exists());
        // The spec file itself is a link (dangling, to a file outside).
        let d = repo();
        std::fs::create_dir_all(d.path().join(".rascal/specs")).unwrap();
        let target = outside.path().join("planted.yaml");
        symlink(&target, d.path().join(SPEC)).unwrap();
        let said = save(d.path(), SPEC, "instruction: a\n");
        assert!(said.starts_with("not saved"), "{said}");
        assert!(!target.exists());
    }
}
