//! A deadline for every test that runs the real binary or makes a real
//! repository: a hung test ends the test binary, naming itself, within
//! `RASCAL_TEST_DEADLINE` seconds (600 unless set), instead of holding CI
//! until its whole-run limit. `cargo test` has no per-test timeout; this
//! is ours.
//!
//! libtest runs each test on a thread named after it. The first helper call
//! on a test's thread ([`watch`]: `bin()`, `TestRepo::new`) notes the name
//! and the time; the note is taken back when the thread ends. One watcher
//! thread looks every second. With `RASCAL_TEST_TIMES` set to a file, each
//! watched test appends `seconds<TAB>name` when it ends, for `.ci/run`'s
//! slowest-tests list.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

/// Tests being watched: thread name → when it was first seen.
static RUNNING: Mutex<BTreeMap<String, Instant>> = Mutex::new(BTreeMap::new());
static WATCHER: Once = Once::new();

/// Taken back when its test's thread ends.
struct Note(String);

impl Drop for Note {
    fn drop(&mut self) {
        let started = RUNNING.lock().ok().and_then(|mut r| r.remove(&self.0));
        if let (Some(started), Ok(path)) = (started, std::env::var("RASCAL_TEST_TIMES")) {
            let line = format!("{:.1}\t{}\n", started.elapsed().as_secs_f64(), self.0);
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                let _ = f.write_all(line.as_bytes());
            }
        }
    }
}

thread_local! {
    static NOTED: std::cell::RefCell<Option<Note>> = const { std::cell::RefCell::new(None) };
}

/// The deadline of one test.
pub fn limit() -> Duration {
    let secs = std::env::var("RASCAL_TEST_DEADLINE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    Duration::from_secs(secs)
}

/// Watch the calling test from now (again: nothing; on a thread libtest
/// did not name after a test: nothing).
pub fn watch() {
    let Some(name) = std::thread::current().name().map(String::from) else {
        return;
    };
    if name == "main" {
        return;
    }
    NOTED.with(|n| {
        let mut n = n.borrow_mut();
        if n.is_none() {
            if let Ok(mut r) = RUNNING.lock() {
                r.insert(name.clone(), Instant::now());
            }
            *n = Some(Note(name));
        }
    });
    WATCHER.call_once(|| {
        std::thread::Builder::new()
            .name("rascal-test-deadline".into())
            .spawn(|| loop {
                std::thread::sleep(Duration::from_secs(1));
                if let Some(late) = overdue(
                    &RUNNING.lock().map(|r| r.clone()).unwrap_or_default(),
                    limit(),
                ) {
                    // Straight to the terminal: libtest captures `eprintln!`
                    // on threads a test spawned, and exiting would lose it.
                    let _ = std::io::stderr().write_all(
                        format!(
                            "\ntest {late} is still running after its deadline of {:?} \
                             (RASCAL_TEST_DEADLINE): it hangs or waits on something that \
                             never comes; stopping the test binary\n",
                            limit()
                        )
                        .as_bytes(),
                    );
                    std::process::exit(101);
                }
            })
            .expect("the deadline watcher starts");
    });
}

/// The first test in `running` past `limit`, if any.
fn overdue(running: &BTreeMap<String, Instant>, limit: Duration) -> Option<String> {
    running
        .iter()
        .find(|(_, started)| started.elapsed() > limit)
        .map(|(name, _)| name.clone())
}

#[test]
fn a_test_past_its_deadline_is_named_and_one_within_it_is_not() {
    let now = Instant::now();
    let long_ago = now
        .checked_sub(Duration::from_secs(30))
        .expect("a clock 30 s old");
    let running = BTreeMap::from([
        ("tui_e2e::hangs".to_string(), long_ago),
        ("run::quick".to_string(), now),
    ]);
    assert_eq!(
        overdue(&running, Duration::from_secs(10)),
        Some("tui_e2e::hangs".to_string())
    );
    assert_eq!(overdue(&running, Duration::from_secs(60)), None);
}

#[test]
fn a_test_is_noted_by_its_thread_name_and_taken_back_when_it_ends() {
    let name = "deadline::a_watched_thread";
    std::thread::Builder::new()
        .name(name.into())
        .spawn(|| {
            watch();
            assert!(RUNNING.lock().unwrap().contains_key(name));
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(!RUNNING.lock().unwrap().contains_key(name));
}
