//! A cross-test run's cells are worked out once per exact input (issue
//! 52): one author's tests on one target's code give the same cells when
//! the base, both change trees (and the trees run), the tests asked for,
//! the test guardrail, the configuration and rascal are the same — a
//! retry, or the next run with the same candidates, reuses them and the
//! agreement report says how many runs were reused.
//!
//! The same rules as a test guardrail's reuse (`layers::evidence::reuse`):
//! only rascal writes the kept cells (`ledger/cross-tests/` beside the run
//! files, never inside a sandbox's copy), a kept entry is found by a
//! digest of all its inputs (one byte of a test file is a new author tree,
//! a new key, a fresh run), and only confined bubblewrap checks reuse —
//! never a container (its image is not hashed), a held-out run or an
//! unconfined check. `RASCAL_FRESH=1` runs everything again.

use crate::layers::evidence::reuse;
use rascal_core::config::{Config, Guardrail};
use rascal_core::model::agreement::Cell;
use rascal_exec::exec::place::Place;
use std::path::PathBuf;

/// One kept cell: the test's name, its mark, and what the mark does not say.
pub(crate) type KeptCell = (String, Cell, Option<String>);

/// What one cross-test run depends on, on one side (author or target):
/// its id (a cell's note names the author), its place and change tree.
pub(crate) struct Side<'a> {
    pub id: &'a str,
    pub place: &'a Place,
    pub tree: &'a str,
}

/// What one cross-test run depends on besides the two sides.
pub(crate) struct Inputs<'a> {
    pub base: &'a str,
    pub guardrail: &'a Guardrail,
    pub config: &'a Config,
    /// The author's tests asked for, its test files, and those of its
    /// tests that did not build at the base.
    pub names: &'a [String],
    pub files: &'a [String],
    pub unbuilt: &'a [String],
}

/// Where the cells of one author's tests on one target's code are kept.
pub(crate) struct Kept {
    file: PathBuf,
}

impl Kept {
    /// The kept cells' place for `author`'s tests on `target`'s code, or
    /// None where reuse is not safe to decide (see the module text).
    pub(crate) fn of(author: &Side<'_>, target: &Side<'_>, i: &Inputs<'_>) -> Option<Kept> {
        let ran_author = reuse::reusable_run(author.place, author.tree)?;
        let ran_target = reuse::reusable_run(target.place, target.tree)?;
        let key = key(
            [author.id, author.tree, ran_author],
            [target.id, target.tree, ran_target],
            i,
        );
        let file = reuse::kept_file(target.place, "cross-tests", &key)?;
        Some(Kept { file })
    }

    /// The cells kept for these inputs, if any.
    pub(crate) fn cells(&self) -> Option<Vec<KeptCell>> {
        let bytes = std::fs::read(&self.file).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Keep `cells` for the next run with the same inputs.
    pub(crate) fn keep(&self, cells: &[KeptCell]) {
        if let Some(dir) = self.file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(&self.file, serde_json::to_vec(cells).unwrap_or_default());
    }
}

/// The digest of everything a cross-test run's cells depend on besides
/// the machine: each side's id, change tree and the tree run, the base,
/// the tests, the guardrail, every `.rascal/` file, and rascal's version.
fn key(author: [&str; 3], target: [&str; 3], i: &Inputs<'_>) -> String {
    let text = serde_json::json!({
        "rascal": env!("CARGO_PKG_VERSION"),
        "base": i.base,
        "author": author,
        "target": target,
        "names": i.names,
        "files": i.files,
        "unbuilt": i.unbuilt,
        "guardrail": format!("{:?}", i.guardrail),
        "config": format!("{:?}", i.config.digests),
    });
    rascal_core::digest::digest(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use reuse::guardrail;

    #[test]
    fn every_input_is_in_the_key() {
        let g = guardrail("cargo test");
        let config = Config::default();
        let names = ["t1".to_string()];
        let files = ["src/lib.rs".to_string()];
        let i = Inputs {
            base: "base",
            guardrail: &g,
            config: &config,
            names: &names,
            files: &files,
            unbuilt: &[],
        };
        const A: [&str; 3] = ["x", "a", "a"];
        const T: [&str; 3] = ["y", "t", "t"];
        let k = key(A, T, &i);
        assert_eq!(k, key(A, T, &i), "the same inputs");
        assert_ne!(k, key(["x", "a2", "a"], T, &i), "the author's tree");
        assert_ne!(k, key(["x", "a", "a2"], T, &i), "the author's run");
        assert_ne!(k, key(A, ["y", "t2", "t"], &i), "the target's tree");
        assert_ne!(k, key(A, ["y", "t", "t2"], &i), "the target's run");
        assert_ne!(k, key(T, A, &i), "the sides swapped");
        assert_ne!(k, key(["z", "a", "a"], T, &i), "the author's id");
        assert_ne!(k, key(A, ["z", "t", "t"], &i), "the target's id");
        let other = guardrail("cargo test -q");
        for (what, changed) in [
            ("base", Inputs { base: "b2", ..i }),
            (
                "guardrail",
                Inputs {
                    guardrail: &other,
                    ..i
                },
            ),
            ("names", Inputs { names: &[], ..i }),
            ("files", Inputs { files: &[], ..i }),
            (
                "unbuilt",
                Inputs {
                    unbuilt: &names,
                    ..i
                },
            ),
        ] {
            assert_ne!(k, key(A, T, &changed), "{what}");
        }
        let mut edited = Config::default();
        edited
            .digests
            .insert(".rascal/config.yaml".into(), "other".into());
        let c2 = Inputs {
            config: &edited,
            ..i
        };
        assert_ne!(k, key(A, T, &c2), "configuration");
    }

    #[test]
    fn kept_cells_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let kept = Kept {
            file: dir.path().join("ledger/cross-tests/k.json"),
        };
        assert_eq!(kept.cells(), None, "nothing kept yet");
        let cells = vec![
            ("t1".to_string(), Cell::Passed, None),
            (
                "t2".to_string(),
                Cell::Failed,
                Some("fails here".to_string()),
            ),
        ];
        kept.keep(&cells);
        assert_eq!(kept.cells(), Some(cells));
    }
}
