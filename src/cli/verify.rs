//! `rascal verify RUN`: check a run's journal against its hash chain, and
//! optionally that a head published earlier (the PR body's) is still part
//! of it.

use super::args::VerifyArgs;
use super::exit::{CliError, FAIL, PASS};
use super::shared::{open_store_read, say};
use rascal_engine::store::{ChainBroken, ChainHead, Store, StoreError};
use std::path::Path;

pub fn verify(dir: &Path, args: VerifyArgs) -> Result<i32, CliError> {
    let VerifyArgs { run, expect, json } = args;
    let store = open_store_read(dir)?;
    let head = match store.verify_chain(&run) {
        Ok(head) => head,
        Err(StoreError::Tampered(b)) => {
            if json {
                say!(
                    "{}",
                    serde_json::json!({
                        "run": run,
                        "chain": "broken",
                        "event": b.event,
                        "why": b.why,
                    })
                );
            } else {
                say!("run {run}: chain broken at event {}: {}", b.event, b.why);
            }
            return Err(CliError::Tampered(b));
        }
        Err(e) => return Err(e.into()),
    };
    let segments = check_log_segments(dir, &store, &run, json)?;
    // Where the published head sits in the chain (None: not in it).
    let expected = match &expect {
        Some(h) => Some(store.chain_position(&run, h.trim())?),
        None => None,
    };
    let expect = expect.as_deref().map(str::trim);
    if json {
        say_json(&run, &head, segments, expect, expected.flatten());
    } else {
        say_text(&run, &head, segments, expect, expected.flatten());
    }
    Ok(match expected {
        Some(None) => FAIL,
        _ => PASS,
    })
}

/// The agents' logs live in files the journal's segments hash: each is
/// read back and checked. Returns how many there are.
fn check_log_segments(dir: &Path, store: &Store, run: &str, json: bool) -> Result<u64, CliError> {
    let files = rascal_exec::git::workspace::files_dir(&rascal_exec::git::workspace::open(dir)?);
    let (events, _) = store.verified_events(run)?;
    let mut segments = 0u64;
    for (i, ev) in events.iter().enumerate() {
        let rascal_core::model::event::RunEvent::LogSegment(seg) = ev else {
            continue;
        };
        segments += 1;
        if let Err(e) = rascal_engine::store::read_bytes(&files, seg) {
            let b = ChainBroken {
                run: run.to_string(),
                event: i as u64 + 1,
                why: e.to_string(),
            };
            if json {
                say!(
                    "{}",
                    serde_json::json!({"run": run, "chain": "intact", "logs": "changed", "event": b.event, "why": b.why})
                );
            } else {
                say!("run {run}: log segment at event {}: {}", b.event, b.why);
            }
            return Err(CliError::Tampered(b));
        }
    }
    Ok(segments)
}

fn say_json(run: &str, head: &ChainHead, segments: u64, expect: Option<&str>, at: Option<u64>) {
    let chain = if head.head.is_some() {
        "intact"
    } else {
        "unchained"
    };
    let mut doc = serde_json::json!({
        "run": run,
        "chain": chain,
        "events": head.events,
        "head": head.head,
        "log_segments": segments,
    });
    if let Some(h) = expect {
        doc["expect"] = serde_json::json!(h);
        doc["expect_event"] = serde_json::json!(at);
    }
    say!("{doc}");
}

fn say_text(run: &str, head: &ChainHead, segments: u64, expect: Option<&str>, at: Option<u64>) {
    match &head.head {
        Some(h) => say!(
            "run {run}: {} events, chain intact, head {h}; {} log segments match their files",
            head.events,
            segments
        ),
        None => say!(
            "run {run}: {} events, unchained: recorded by an older rascal, before the journal was chained; nothing to check",
            head.events
        ),
    }
    match (expect, at) {
        (Some(h), Some(n)) => say!(
            "  {h} is the hash of event {n}: the record up to it is unchanged{}",
            if n < head.events {
                format!(" ({} events added since)", head.events - n)
            } else {
                String::new()
            }
        ),
        (Some(h), None) => say!(
            "  {h} is not in this run's chain: the record was rewritten after that head was published"
        ),
        (None, _) => {}
    }
}
