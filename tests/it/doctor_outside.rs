//! `rascal doctor` outside a git repository (issue 31, item 9): the
//! machine's checks only — the sandbox line (bubblewrap where it works)
//! and its limits — with a note that agents are checked in a repository.

use crate::common;
use common::{code, stderr, stdout};

#[test]
fn doctor_outside_a_repository_checks_the_machine() {
    let dir = tempfile::tempdir().unwrap();
    let o = common::rascal_in(dir.path(), &["doctor"]);
    let out = stdout(&o);
    assert!(
        out.contains("agents: not checked") && out.contains("not in a git repository"),
        "{out}{}",
        stderr(&o)
    );
    let sandbox = out
        .lines()
        .find(|l| l.starts_with("sandbox: "))
        .unwrap_or_else(|| panic!("no sandbox line: {out}"));
    if rascal_exec::exec::sandbox::available().is_ok() {
        assert!(sandbox.contains("bubblewrap at "), "{sandbox}");
        assert_eq!(code(&o), 0, "{out}");
    } else {
        assert_eq!(code(&o), 1, "{out}");
    }
    assert!(out.lines().any(|l| l.contains("limits: ")), "{out}");
    let o = common::rascal_in(dir.path(), &["doctor", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        doc["sandbox"][0].as_str().unwrap().starts_with("sandbox: "),
        "{doc}"
    );
}
