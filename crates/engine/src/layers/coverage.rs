//! What a verifier (the reviewer, an `llm-judge` criterion's judge, the
//! comparator's judge) saw of a change, against its budget of tokens and
//! time. A verifier that did not see all of the change is never a PASS:
//! these are the messages that say how much it saw and what to raise.
//! Pure functions; tokens are estimated as bytes / 4 (`tokens_of`).

use rascal_core::config::verification::tokens_of;
use std::time::Duration;

/// A token count as people read it: `950`, `64k`, `4.2M`.
pub fn tokens_word(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    } else if n >= 10_000 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// A duration as it is written in config: `30m`, `90s`, `1h5m`.
fn duration_word(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, 0, 0) => format!("{h}h"),
        (h, m, _) => format!("{h}h{m}m"),
    }
}

/// Why a change cannot be reviewed within `budget` tokens (every chunk's
/// text, one reviewer), or None when it can.
pub fn over_tokens<'a>(
    chunks: impl ExactSizeIterator<Item = &'a str>,
    budget: u64,
) -> Option<String> {
    let n = chunks.len();
    let need: u64 = chunks.map(tokens_of).sum();
    (need > budget).then(|| {
        format!(
            "review incomplete: 0 of {n} chunk{} — the change needs about {} tokens of review, over `review.budget.tokens` ({}); raise it in .rascal/verification.yaml or make the change smaller",
            if n == 1 { "" } else { "s" },
            tokens_word(need),
            tokens_word(budget)
        )
    })
}

/// Why a review that reviewed `reviewed` of `total` chunks before its time
/// (`time`) ran out is incomplete.
pub fn ran_out(reviewed: usize, total: usize, time: Duration) -> String {
    format!(
        "review incomplete: {reviewed} of {total} chunk{} — `review.budget.time` ({}) ran out; raise it (or `review.parallel`) in .rascal/verification.yaml, or make the change smaller",
        if total == 1 { "" } else { "s" },
        duration_word(time)
    )
}

/// Why a judge (`who`, e.g. "the judge", and the config key that sets its
/// budget) cannot be shown `text` whole within `budget` tokens, or None.
pub fn judge_over(text: &str, budget: u64, key: &str) -> Option<String> {
    let need = tokens_of(text);
    (need > budget).then(|| {
        format!(
            "judge incomplete: the diff is about {} tokens, over `{key}` ({}); a judge that sees part of a change is no evidence — raise it in .rascal/verification.yaml (the judge's model must hold it) or make the change smaller",
            tokens_word(need),
            tokens_word(budget)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_over_the_token_budget_is_named_with_what_to_raise() {
        let (a, b, c) = ("x".repeat(400), "x".repeat(400), "x".repeat(401));
        assert_eq!(over_tokens([a.as_str(), b.as_str()].into_iter(), 200), None);
        let why = over_tokens([a.as_str(), c.as_str()].into_iter(), 200).unwrap();
        assert!(
            why.starts_with("review incomplete: 0 of 2 chunks — the change needs about 201 tokens"),
            "{why}"
        );
        assert!(why.contains("`review.budget.tokens` (200)"), "{why}");
    }

    #[test]
    fn time_running_out_says_how_much_was_reviewed() {
        let why = ran_out(8, 14, Duration::from_secs(1800));
        assert!(
            why.starts_with(
                "review incomplete: 8 of 14 chunks — `review.budget.time` (30m) ran out"
            ),
            "{why}"
        );
        assert_eq!(duration_word(Duration::from_secs(90)), "1m30s");
        assert_eq!(duration_word(Duration::from_secs(3900)), "1h5m");
        assert_eq!(tokens_word(4_200_000), "4.2M");
        assert_eq!(tokens_word(65_536), "65k");
    }

    #[test]
    fn a_judge_is_shown_all_or_nothing() {
        assert_eq!(judge_over("abcd", 1, "criteria.budget.tokens"), None);
        let why = judge_over("abcde", 1, "criteria.budget.tokens").unwrap();
        assert!(
            why.starts_with(
                "judge incomplete: the diff is about 2 tokens, over `criteria.budget.tokens` (1)"
            ),
            "{why}"
        );
    }
}
