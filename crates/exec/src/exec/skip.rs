//! The one way a test that cannot run here says so: every skip in the
//! workspace's tests (crate tests and `tests/it`) goes through [`skip`],
//! so CI can turn each into a failure and count them.

/// A test that cannot run here because `why`: a failure when `require` (a
/// `RASCAL_REQUIRE_*` variable) is set, as CI sets them all; otherwise the
/// reason is printed and appended, with the test's name, to the file named
/// by `RASCAL_SKIP_LOG` (CI prints that file's summary at the end).
pub fn skip(require: &str, why: &str) {
    if std::env::var_os(require).is_some_and(|v| !v.is_empty()) {
        panic!("{require} is set but {why}");
    }
    let test = std::thread::current().name().unwrap_or("?").to_string();
    eprintln!("skipped: {why} (set {require}=1 to make this a failure)");
    if let Some(log) = std::env::var_os("RASCAL_SKIP_LOG") {
        // One line a skip: the CI summary counts lines.
        let why = why.replace(['\n', '\t'], " ");
        let line = format!("{require}\t{test}\t{why}\n");
        let open = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log);
        let _ = open.and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    }
}
