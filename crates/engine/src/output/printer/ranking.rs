//! The comparator's ranking as printed: positions, the similarity matrix,
//! the judge's and the discriminator's findings, the pick, and a contested
//! run's question.

use rascal_core::text::{ellipsis, pad, pad_left, sanitize, width};

/// The comparator's ranking, the similarity matrix and its pick.
pub fn ranking_lines(r: &rascal_core::model::ranking::Ranking, run: &str) -> Vec<String> {
    let mut out = Vec::new();
    // One candidate is not a comparison: only the pick is said.
    let compared = r.positions.len() > 1;
    if compared {
        out.push("ranking (compare):".to_string());
    }
    for p in r.positions.iter().filter(|_| compared) {
        out.push(format!(
            "  {}. {} {} · similarity {} · {} — {}",
            p.position,
            sanitize(&p.candidate),
            p.verdict,
            p.consensus_text(),
            rascal_core::text::change_size(p.files as u64, p.lines),
            sanitize(&p.reason)
        ));
    }
    if r.ids.len() > 1 {
        let w = r
            .ids
            .iter()
            .map(|i| width(&sanitize(i)))
            .max()
            .unwrap_or(4)
            .max(4);
        let mut head = format!("  {:w$}", "similarity");
        let w = w.max(10);
        head = format!("  {:<w$}", head.trim());
        for id in &r.ids {
            head.push_str(&format!(" {}", pad_left(&ellipsis(&sanitize(id), 8), 8)));
        }
        out.push(head);
        for (i, id) in r.ids.iter().enumerate() {
            let mut row = format!("  {}", pad(&ellipsis(&sanitize(id), w), w));
            for v in &r.matrix[i] {
                row.push_str(&format!(" {v:>8.2}"));
            }
            out.push(row);
        }
    }
    if let Some(a) = &r.agreement {
        out.push("  agreement (rows: candidates' code; columns: tests they wrote that fail at the base):".into());
        out.extend(a.render().iter().map(|l| format!("    {}", sanitize(l))));
    }
    if let Some(j) = &r.judge {
        out.push(match (&j.pick, &j.problem) {
            (_, Some(p)) => format!(
                "judge `{}` was not used ({}): the ranking stands",
                sanitize(&j.agent),
                sanitize(p)
            ),
            (Some(pick), None) => format!(
                "judge `{}` picked {} among {}: {}",
                sanitize(&j.agent),
                sanitize(pick),
                sanitize(&j.tied.join(", ")),
                sanitize(&j.reason)
            ),
            (None, None) => format!("judge `{}` gave no pick", sanitize(&j.agent)),
        });
    }
    if let Some(p) = &r.probes {
        out.push(probes_line(p));
    }
    out.push(match &r.pick {
        Some(p) if !r.unseparated.is_empty() => format!(
            "pick: {} — no test separates it from {} (its code differs; it ranks first, it is not shown better) (finalize it with `rascal finalize {}`, or choose another with `rascal select {} CANDIDATE`)",
            sanitize(p),
            sanitize(&r.unseparated.join(", ")),
            sanitize(run),
            sanitize(run)
        ),
        Some(p) => format!(
            "pick: {} (finalize it with `rascal finalize {}`, or choose another with `rascal select {} CANDIDATE`)",
            sanitize(p),
            sanitize(run),
            sanitize(run)
        ),
        None => match &r.contested {
            Some(why) => format!("pick: none — {}", sanitize(why)),
            None => NONE_PASSED_PICK.to_string(),
        },
    });
    if r.pick.is_none() && r.contested.is_some() {
        out.extend(question_lines(r, run));
    }
    out
}

/// What the discriminator's probe found, in one line.
pub fn probes_line(p: &rascal_core::model::ranking::Probes) -> String {
    let who = format!(
        "discriminator `{}` probed {}",
        sanitize(&p.agent),
        sanitize(&p.candidates.join(", "))
    );
    match (&p.problem, p.differences.len()) {
        (Some(why), _) => format!("{who}: no finding — {}", sanitize(why)),
        (None, 0) => format!(
            "{who}: {} with the same output on each — no input tells them apart",
            rascal_core::text::plural(p.calls as u64, "call")
        ),
        (None, n) => format!(
            "{who}: {} of {} differ (below) — a human answers which is right",
            n,
            rascal_core::text::plural(p.calls as u64, "call")
        ),
    }
}

/// The pick line when nothing passed (the printer says why when it was
/// a cancel).
pub(super) const NONE_PASSED_PICK: &str = "pick: none — no candidate passed";

/// A contested run's question: the tests that separate the candidates, as
/// examples, and how to answer.
pub fn question_lines(r: &rascal_core::model::ranking::Ranking, run: &str) -> Vec<String> {
    let q = r.question(6);
    if q.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!("question — which is right? {}:", r.question_lead())];
    out.extend(q.iter().map(|l| format!("  {}", sanitize(l))));
    out.push(format!(
        "  answer: `rascal finalize {run} --pick CANDIDATE --reason \"CANDIDATE is right here\"` (or `rascal select {run} CANDIDATE`)",
        run = sanitize(run)
    ));
    out
}
