//! The prompts rascal composes for an author: a real agent CLI (claude,
//! codex, goose) gets the task as the user wrote it, then what rascal asks
//! of every author — the honest way out (`impossible.md`) instead of
//! bending the tests. A `command` agent gets the raw instruction; its
//! contract (README, docs/configuration.md) says the same.

/// What every prompt rascal composes for an author says, last.
pub const WAY_OUT: &str = "If you find the task impossible or contradictory (for example tests that contradict the instruction, or a dependency that is missing), do not edit, delete or special-case tests to make them pass: write your reason to `$RASCAL_ARTIFACTS_DIR/impossible.md` and stop. rascal then reports the task as impossible to a human instead of judging a change.";

/// `text` ending with [`WAY_OUT`] (once: a follow-up that already says it
/// is left as it is).
pub fn with_way_out(text: &str) -> String {
    if text.contains(WAY_OUT) {
        return text.to_string();
    }
    format!("{}\n\n{WAY_OUT}\n", text.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_way_out_is_said_once() {
        let p = with_way_out("Add shout().\n");
        assert_eq!(p, format!("Add shout().\n\n{WAY_OUT}\n"));
        assert!(p.contains("$RASCAL_ARTIFACTS_DIR/impossible.md"));
        assert_eq!(with_way_out(&p), p);
    }
}
