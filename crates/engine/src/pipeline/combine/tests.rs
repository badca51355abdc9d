use super::*;
use rascal_core::model::ranking::{Ranked, Ranking};

fn cand(id: &str, verdict: Verdict) -> CandidateSummary {
    let mut s = RunSummary::new();
    s.apply(&RunEvent::RunStarted {
        run: "r".into(),
        repo: String::new(),
        base: String::new(),
        instruction: String::new(),
        launcher: "process".into(),
        candidates: vec![CandidateInfo {
            id: id.into(),
            agent: id.into(),
            runtime: "command".into(),
            worktree: String::new(),
            unsandboxed: false,
        }],
    });
    let mut agent = rascal_core::model::verdict::Report::new(Layer::Agent, "agent");
    if verdict == Verdict::Fail {
        agent.issues.push(rascal_core::model::verdict::Issue::new(
            "agent/failed",
            Severity::Error,
            "exit 1",
        ));
    }
    s.apply(&RunEvent::ReportLanded {
        candidate: id.into(),
        report: Box::new(agent.finish()),
    });
    s.apply(&RunEvent::CandidateFinished {
        candidate: id.into(),
        verdict,
        reason: None,
        files: 1,
        lines: 1,
        tree: Some("ab".into()),
        cancelled: false,
    });
    s.candidates.remove(0)
}

fn run_of(cands: Vec<CandidateSummary>, order: &[&str]) -> RunSummary {
    let mut s = RunSummary::new();
    s.run = "r-1".into();
    s.candidates = cands;
    s.ranking = Some(Ranking {
        positions: order
            .iter()
            .enumerate()
            .map(|(i, c)| Ranked {
                position: i + 1,
                candidate: c.to_string(),
                verdict: Verdict::Pass,
                layers_passed: 0,
                criteria_met: 0,
                consensus: 1.0,
                lines: 0,
                files: 0,
                reason: String::new(),
                usage: None,
                agreement: None,
            })
            .collect(),
        ids: Vec::new(),
        matrix: Vec::new(),
        pick: None,
        judge: None,
        agreement: None,
        contested: None,
        unseparated: Vec::new(),
        probes: None,
    });
    s
}

#[test]
fn the_passing_candidates_in_the_rankings_order_at_most_top() {
    let s = run_of(
        vec![
            cand("a", Verdict::Pass),
            cand("b", Verdict::Fail),
            cand("c", Verdict::Warn),
            cand("d", Verdict::Pass),
        ],
        &["d", "c", "a", "b"],
    );
    let ids = |v: Vec<&CandidateSummary>| v.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(chosen(&s, 3)), ["d", "c", "a"]);
    assert_eq!(ids(chosen(&s, 2)), ["d", "c"]);
    assert!(too_few("r-1", &chosen(&s, 2)).is_none());
}

#[test]
fn fewer_than_two_passing_is_refused_saying_why() {
    let s = run_of(
        vec![cand("a", Verdict::Pass), cand("b", Verdict::Fail)],
        &["a", "b"],
    );
    let why = too_few("r-1", &chosen(&s, 3)).unwrap();
    assert!(why.contains("only `a` passed"), "{why}");
    assert!(
        why.contains("combining one candidate is pointless"),
        "{why}"
    );
    let none = run_of(vec![cand("b", Verdict::Fail)], &["b"]);
    let why = too_few("r-1", &chosen(&none, 3)).unwrap();
    assert!(why.contains("no candidate passed"), "{why}");
}

#[test]
fn a_second_combine_gets_a_name_of_its_own() {
    let s = run_of(vec![cand("a", Verdict::Pass)], &["a"]);
    assert_eq!(combined_name(&s), "combined");
    let s = run_of(vec![cand("combined", Verdict::Pass)], &["combined"]);
    assert_eq!(combined_name(&s), "combined-2");
}
