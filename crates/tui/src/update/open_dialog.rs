//! Opening a dialog: an override, a question, a selection, a finalize,
//! a combination.

use super::*;

pub(super) fn start_override(app: &mut App) {
    let Some(layer) = app.override_layer() else {
        if let Some(c) = app.focused() {
            app.flash = Some(format!(
                "nothing to override: {} has no failing, warning or skipped check there",
                c.info.id
            ));
        }
        return;
    };
    // The strip shows which layer the dialog is about.
    if let Some(i) = STRIP.iter().position(|&l| l == layer) {
        app.layer_sel = i;
    }
    let Some(c) = app.focused() else { return };
    // The check: the selected one in the detail, else the layer's first
    // failing check not yet overridden, then a warning, then a skipped one.
    let first = |list: &[(rascal_core::model::verdict::Layer, String)]| {
        list.iter()
            .find(|(l, _)| *l == layer)
            .map(|(_, check)| (check.clone(), None))
    };
    let warning = c
        .reports
        .iter()
        .find(|r| r.layer == layer && r.status == Status::Warn)
        .map(|r| (r.check.clone(), None));
    let mut target = first(&c.blockers.failing)
        .or(warning)
        .or_else(|| first(&c.blockers.skipped));
    if app.screen == Screen::Detail {
        if let Some(&(ri, ii)) = app.detail_rows().get(app.detail_sel) {
            let r = &c.reports[ri];
            if matches!(r.status, Status::Fail | Status::Warn | Status::Skipped) {
                let rule = ii.and_then(|i| r.issues.get(i)).map(|i| i.rule.clone());
                target = Some((r.check.clone(), rule));
            }
        }
    }
    let Some((check, rule)) = target else {
        app.flash = Some(format!("nothing to override: {layer} did not fail"));
        return;
    };
    let candidate = c.info.id.clone();
    let kind = DecisionKind::Override {
        layer,
        check: check.clone(),
        rule: rule.clone(),
    };
    // What would be left once this override is recorded: the dialog says
    // so, and offers to accept the skipped checks in the same step.
    let left = match app.summary.candidates.iter().find(|s| s.id == candidate) {
        Some(s) => {
            let mut ds = s.current_decisions().to_vec();
            ds.push(decision(app, Some(candidate.clone()), kind, "?"));
            blockers(&s.reports, &ds)
        }
        None => Default::default(),
    };
    app.dialog = Some(Dialog::Override {
        candidate,
        layer,
        check,
        rule,
        input: String::new(),
        error: None,
        left,
        with_skipped: false,
    });
}

/// `a` on a contested run: its question, the tests that separate the
/// candidates as examples, answered with one digit.
pub(super) fn open_question(app: &mut App) {
    let Some(r) = app.ranking.as_ref() else {
        return;
    };
    let lines = r.question(8);
    if lines.is_empty() {
        return;
    }
    app.dialog = Some(Dialog::Question {
        candidates: r.question_candidates().into_iter().take(9).collect(),
        lead: r.question_lead(),
        lines,
    });
}

/// The select dialog for `candidate`; one that did not pass needs a reason.
pub(super) fn open_select(app: &mut App, candidate: String) {
    let cand = app.candidates.iter().find(|c| c.info.id == candidate);
    // It declared the task impossible: there is no verified change to
    // select, whatever a reason says.
    if let Some(why) = cand
        .filter(|c| c.impossible.is_some())
        .and_then(|c| c.select_refusal.clone())
    {
        app.flash = Some(format!("{why} — retry it (r) or choose another"));
        return;
    }
    let refusal = cand.and_then(|c| c.select_refusal.clone());
    // A combined candidate with new code is a human's choice: with a
    // reason, like one that did not pass.
    let new_code = cand.and_then(|c| rascal_engine::layers::needs_reason(&c.info.id, &c.reports));
    app.dialog = Some(Dialog::Select {
        candidate,
        input: String::new(),
        refusal,
        new_code,
        error: None,
    });
}

/// `F`: confirm finalizing the selected candidate (or the focused one,
/// selected on confirmation, when nothing is).
pub(super) fn start_finalize(app: &mut App, fx: &mut Vec<Effect>) {
    if app.live() {
        app.flash = Some("finalize once the run is over".into());
        return;
    }
    let (candidate, select_first) = match &app.summary.selected {
        Some(s) => (s.clone(), false),
        None => match app.focused() {
            Some(c) => (c.info.id.clone(), true),
            None => return,
        },
    };
    // A contested run has no pick for a reason: finalizing the focused one
    // would settle the disagreement without saying so.
    if let Some(why) = app
        .ranking
        .as_ref()
        .and_then(|r| r.contested.clone())
        .filter(|_| select_first)
    {
        app.flash = Some(format!(
            "no pick — answer the question (a) or select one with a reason (Space), then F: {why}"
        ));
        return;
    }
    let cand = app.candidates.iter().find(|c| c.info.id == candidate);
    if let Some(why) = cand
        .filter(|_| select_first)
        .and_then(|c| rascal_engine::layers::needs_reason(&c.info.id, &c.reports))
    {
        app.flash = Some(format!("{why} — select it with a reason first (Space)"));
        return;
    }
    let refusal = cand.and_then(|c| c.select_refusal.clone());
    app.dialog = Some(Dialog::Finalize(FinalizeDialog {
        candidate: candidate.clone(),
        select_first,
        refusal,
        ..Default::default()
    }));
    fx.push(Effect::PreviewFinalize(candidate));
}

/// `C` in compare: the finished run's best passing candidates go to the
/// combining agent (its candidate joins the run and streams here); when
/// combining is off or the run still goes, a line saying why.
pub(super) fn combine(app: &mut App, fx: &mut Vec<Effect>) {
    if !app.meta.combine {
        app.flash = Some(
            "combining is off: add `combine: { agent: NAME, top: 3 }` to .rascal/verification.yaml and commit it".into(),
        );
        return;
    }
    if app.live() {
        app.flash =
            Some("the run is still going: combine once every candidate has finished".into());
        return;
    }
    app.flash = Some("combining: the combining agent writes a new candidate…".into());
    app.screen = Screen::Dashboard;
    fx.push(Effect::Decide(decision(
        app,
        None,
        DecisionKind::Combine { from: Vec::new() },
        "",
    )));
}
