//! The hash chain over a run's journal: each event row carries a hash over
//! its content and the previous row's hash, so a row changed, removed,
//! moved or added after it was written no longer checks out.
//!
//! The hash of event `n` (1-based position in its run) is the sha256 (hex)
//! of these fields, each written as `<byte length>:<bytes>\n`, in order:
//!
//! 1. the scheme, `rascal-journal-v1`
//! 2. the run id
//! 3. `n`, in decimal
//! 4. the row's time `at` (ms since the epoch), in decimal
//! 5. the event's kind (`run_started`, `report_landed`, …)
//! 6. the event's JSON text, exactly as stored
//! 7. the previous event's hash; for event 1, [`genesis`] of the run
//!
//! The row's `seq` only orders the rows (the position `n` covers that) and
//! its `candidate_id` is an index copied from the JSON that nothing reads;
//! neither is hashed. The run's row in `runs` keeps the last hash and the
//! event count (the head), so a journal cut short is caught too. Everything lives in one
//! SQLite file, so a writer who recomputes every later hash and the head
//! goes unnoticed here: the head published elsewhere (the PR body) is what
//! such a rewrite cannot match.

pub use rascal_core::model::summary::ChainHead;

/// The scheme tag, the first hashed field of every event.
pub const SCHEME: &str = "rascal-journal-v1";

/// The "previous hash" of a run's first event.
pub fn genesis(run: &str) -> String {
    format!("{SCHEME} genesis {run}")
}

/// The chain hash of event `n` of `run` (see the module doc).
pub fn event_hash(run: &str, n: u64, at: i64, kind: &str, json: &str, prev: &str) -> String {
    let mut buf = Vec::with_capacity(json.len() + run.len() + prev.len() + 96);
    for field in [
        SCHEME.as_bytes(),
        run.as_bytes(),
        n.to_string().as_bytes(),
        at.to_string().as_bytes(),
        kind.as_bytes(),
        json.as_bytes(),
        prev.as_bytes(),
    ] {
        buf.extend_from_slice(field.len().to_string().as_bytes());
        buf.push(b':');
        buf.extend_from_slice(field);
        buf.push(b'\n');
    }
    rascal_core::digest::digest(buf)
}

/// Where a run's chain breaks: the first event (1-based) that does not
/// check out, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the record of run {run} was changed after it was written (event {event})")]
pub struct ChainBroken {
    pub run: String,
    pub event: u64,
    /// What is wrong with that event, for `rascal verify`.
    pub why: String,
}

/// One stored row of the `events` table, as the chain sees it.
#[derive(Debug, Clone)]
pub struct StoredEvent {
    pub n: Option<i64>,
    pub at: i64,
    pub kind: String,
    pub json: String,
    pub hash: Option<String>,
}

/// What the run's row in `runs` says about its journal.
#[derive(Debug, Clone, Default)]
pub struct RecordedHead {
    pub head: Option<String>,
    pub events: Option<i64>,
    /// The run is not one of those an older rascal recorded before this
    /// database chained its journal (a list the store keeps under a digest
    /// of its own, written once): it cannot be unchained. Never decided by
    /// a column no hash covers (a run's `started_at`).
    pub must_chain: bool,
}

/// Check `rows` (the run's events in journal order) against the chain and
/// the recorded head.
pub fn check(
    run: &str,
    recorded: &RecordedHead,
    rows: &[StoredEvent],
) -> Result<ChainHead, ChainBroken> {
    let broken = |event: u64, why: String| ChainBroken {
        run: run.to_string(),
        event,
        why,
    };
    let unchained = rows.iter().all(|r| r.hash.is_none() && r.n.is_none())
        && recorded.head.is_none()
        && recorded.events.is_none();
    if unchained && !recorded.must_chain && !rows.is_empty() {
        return Ok(ChainHead {
            events: rows.len() as u64,
            head: None,
        });
    }
    if unchained && !rows.is_empty() {
        return Err(broken(
            1,
            "the run's journal carries no hashes, but it is not one of the runs this \
             database held before its journal was chained: its hashes were removed \
             (or the database's list of unchained runs was altered)"
                .into(),
        ));
    }
    let mut prev = genesis(run);
    for (i, row) in rows.iter().enumerate() {
        let p = i as u64 + 1;
        let Some(stored) = &row.hash else {
            return Err(broken(p, format!("event {p} has no hash")));
        };
        match row.n {
            Some(n) if n == p as i64 => {}
            Some(n) if n > p as i64 => {
                return Err(broken(
                    p,
                    format!("event {p} is missing (the journal goes on with event {n})"),
                ))
            }
            Some(n) => {
                return Err(broken(
                    p,
                    format!("event {p} is out of place (it was written as event {n})"),
                ))
            }
            None => return Err(broken(p, format!("event {p} has no position"))),
        }
        let expected = event_hash(run, p, row.at, &row.kind, &row.json, &prev);
        if *stored != expected {
            return Err(broken(
                p,
                format!("event {p} ({}) does not match its hash", row.kind),
            ));
        }
        prev = expected;
    }
    let count = rows.len() as u64;
    let (Some(head), Some(events)) = (&recorded.head, recorded.events) else {
        return Err(broken(
            count.max(1),
            "the run's record of its chain head was removed".into(),
        ));
    };
    let events = events.max(0) as u64;
    if events > count {
        return Err(broken(
            count + 1,
            format!(
                "event {} is missing: the journal ends after event {count}, the run recorded {events}",
                count + 1
            ),
        ));
    }
    if events < count {
        return Err(broken(
            events + 1,
            format!(
                "event {} is past the end the run recorded ({events} events)",
                events + 1
            ),
        ));
    }
    if *head != prev {
        return Err(broken(
            count.max(1),
            format!("the run's recorded chain head is not event {count}'s hash"),
        ));
    }
    Ok(ChainHead {
        events: count,
        head: Some(prev),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(run: &str, n: usize) -> (RecordedHead, Vec<StoredEvent>) {
        let mut prev = genesis(run);
        let mut rows = Vec::new();
        for i in 1..=n {
            let json = format!("{{\"i\":{i}}}");
            let h = event_hash(run, i as u64, 1000 + i as i64, "log", &json, &prev);
            rows.push(StoredEvent {
                n: Some(i as i64),
                at: 1000 + i as i64,
                kind: "log".into(),
                json,
                hash: Some(h.clone()),
            });
            prev = h;
        }
        let rec = RecordedHead {
            head: Some(prev),
            events: Some(n as i64),
            must_chain: true,
        };
        (rec, rows)
    }

    #[test]
    fn an_intact_chain_has_its_head() {
        let (rec, rows) = chain("r-1", 5);
        let head = check("r-1", &rec, &rows).unwrap();
        assert_eq!(head.events, 5);
        assert_eq!(head.head, rec.head);
        // The same rows under another run id do not check out.
        assert_eq!(check("r-2", &rec, &rows).unwrap_err().event, 1);
    }

    #[test]
    fn every_field_is_hashed_and_fields_cannot_run_together() {
        let base = event_hash("r", 1, 2, "k", "{}", "p");
        assert_eq!(base.len(), 64);
        for other in [
            event_hash("r2", 1, 2, "k", "{}", "p"),
            event_hash("r", 2, 2, "k", "{}", "p"),
            event_hash("r", 1, 3, "k", "{}", "p"),
            event_hash("r", 1, 2, "k2", "{}", "p"),
            event_hash("r", 1, 2, "k", "{ }", "p"),
            event_hash("r", 1, 2, "k", "{}", "p2"),
            // Moving a byte from one field to the next changes the hash.
            event_hash("r", 1, 2, "k{", "}", "p"),
        ] {
            assert_ne!(base, other);
        }
    }

    #[test]
    fn a_changed_moved_or_missing_event_is_named() {
        let (rec, rows) = chain("r", 6);
        let mut edited = rows.clone();
        edited[2].json = "{\"i\":99}".into();
        assert_eq!(check("r", &rec, &edited).unwrap_err().event, 3);

        let mut deleted = rows.clone();
        deleted.remove(3);
        let e = check("r", &rec, &deleted).unwrap_err();
        assert_eq!(e.event, 4, "{e:?}");
        assert!(e.why.contains("missing"), "{}", e.why);

        let mut swapped = rows.clone();
        swapped.swap(1, 2);
        assert_eq!(check("r", &rec, &swapped).unwrap_err().event, 2);

        let mut nulled = rows.clone();
        nulled[4].hash = None;
        assert_eq!(check("r", &rec, &nulled).unwrap_err().event, 5);

        let mut cut = rows.clone();
        cut.pop();
        let e = check("r", &rec, &cut).unwrap_err();
        assert_eq!(e.event, 6, "{e:?}");

        // A rewritten event whose own hash was recomputed breaks the next.
        let mut rehashed = rows.clone();
        rehashed[1].json = "{\"i\":42}".into();
        rehashed[1].hash = Some(event_hash(
            "r",
            2,
            rehashed[1].at,
            "log",
            &rehashed[1].json,
            rows[0].hash.as_ref().unwrap(),
        ));
        assert_eq!(check("r", &rec, &rehashed).unwrap_err().event, 3);

        let mut at = rows.clone();
        at[0].at += 1;
        assert_eq!(check("r", &rec, &at).unwrap_err().event, 1);
    }

    #[test]
    fn the_recorded_head_catches_a_cut_tail() {
        let (rec, rows) = chain("r", 3);
        let mut stale = rec.clone();
        stale.head = rows[1].hash.clone();
        assert_eq!(check("r", &stale, &rows).unwrap_err().event, 3);
        let gone = RecordedHead {
            head: None,
            events: None,
            must_chain: false,
        };
        assert_eq!(check("r", &gone, &rows).unwrap_err().event, 3);
        let short = RecordedHead {
            events: Some(2),
            ..rec.clone()
        };
        assert_eq!(check("r", &short, &rows).unwrap_err().event, 3);
        // Every row gone.
        assert_eq!(check("r", &rec, &[]).unwrap_err().event, 1);
    }

    #[test]
    fn only_a_run_without_any_hash_is_unchained() {
        let (rec, rows) = chain("r", 3);
        let strip = |rows: &[StoredEvent]| -> Vec<StoredEvent> {
            rows.iter()
                .cloned()
                .map(|mut r| {
                    r.hash = None;
                    r.n = None;
                    r
                })
                .collect()
        };
        let old = RecordedHead {
            head: None,
            events: None,
            must_chain: false,
        };
        let head = check("r", &old, &strip(&rows)).unwrap();
        assert_eq!((head.events, head.head), (3, None));
        // Stripped, but the run still records its head: broken at once.
        assert_eq!(check("r", &rec, &strip(&rows)).unwrap_err().event, 1);
        // Stripped, in a run started after the journal was chained.
        let new = RecordedHead {
            must_chain: true,
            ..old.clone()
        };
        assert_eq!(check("r", &new, &strip(&rows)).unwrap_err().event, 1);
        // Some hashed rows and a hole: never unchained.
        let mut holed = rows.clone();
        holed[1].hash = None;
        holed[1].n = None;
        assert_eq!(check("r", &old, &holed).unwrap_err().event, 2);
    }
}
