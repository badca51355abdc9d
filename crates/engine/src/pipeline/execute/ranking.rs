//! The run's ranking: the comparator's order of the contenders, a tie at the
//! top taken to the judge, and unseparated code probed by the discriminator.

use super::*;
use crate::pipeline::prepare::CombineStart;

impl JobTemplate {
    /// Code differs but no test separates it from the pick: the
    /// discriminator's probe (when configured) may turn that into a
    /// question in `ranking`.
    pub(super) async fn probe_unseparated(
        &self,
        ranking: &mut Ranking,
        results: &[CandidateOutcome],
        worktrees: &BTreeMap<String, PathBuf>,
        cancel: &CancellationToken,
    ) {
        if crate::pipeline::compare::discriminate::configured(&self.config).is_none()
            || ranking.unseparated.is_empty()
        {
            return;
        }
        let ids: Vec<String> = ranking
            .pick
            .iter()
            .chain(ranking.unseparated.iter())
            .cloned()
            .collect();
        let diffs: BTreeMap<String, String> = crate::pipeline::judge::diffs_of(
            &ids,
            &self.repo_dir,
            worktrees,
            self.base,
            &self.task.holdout,
        )
        .into_iter()
        .collect();
        let places: BTreeMap<String, rascal_exec::exec::place::Place> = results
            .iter()
            .filter_map(|r| Some((r.id.clone(), r.place.clone()?)))
            .collect();
        let site = self.helper_site("discriminator");
        let base = self.base.to_string();
        let d = crate::pipeline::compare::discriminate::Discriminate {
            config: &self.config,
            instruction: &self.request.instruction,
            diffs: &diffs,
            places: &places,
            base: &base,
            site: &site,
            cancel,
        };
        crate::pipeline::compare::discriminate::discriminate(&d, ranking).await;
    }

    /// The comparator's ranking of the contenders; a tie at the top goes
    /// to the judge when one is configured.
    pub(super) async fn rank(
        &self,
        contenders: &[Contender],
        worktrees: &BTreeMap<String, PathBuf>,
        cancel: &CancellationToken,
    ) -> Ranking {
        let mut ranking = compare::rank(contenders);
        let Some(judge) = self
            .config
            .verification
            .as_ref()
            .and_then(|v| v.judge.clone())
        else {
            return ranking;
        };
        let tied = compare::tied_at_top(&ranking);
        if tied.is_empty() {
            return ranking;
        }
        let site = self.helper_site("judge");
        let note = ask_judge(&Tie {
            config: &self.config,
            holdout: &self.task.holdout,
            judge: &judge,
            instruction: &self.request.instruction,
            tied: &tied,
            origin: &self.repo_dir,
            worktrees,
            base: self.base,
            site: &site,
            cancel,
        })
        .await;
        compare::apply_judge(&mut ranking, note);
        ranking
    }
}

/// The run's other candidates a combine or a retry ranks its new one
/// with, and what they bring.
pub(super) struct Others {
    /// The other candidates' verdicts as the journal has them (a combine).
    recorded: Option<BTreeMap<String, Verdict>>,
    /// Who a combined candidate was combined from: they do not contest it
    /// where it passes all their tests.
    sources: BTreeMap<String, Vec<String>>,
}

impl JobTemplate {
    /// The run's other candidates, as they ended, joined to `results`: a
    /// combine's are cross-tested and ranked with the combined one (whose
    /// lines are traced to where they came from), a retry's with the new
    /// attempt.
    pub(super) fn with_others(
        &self,
        combine: Option<CombineStart>,
        retry: Option<RetryStart>,
        results: &mut Vec<CandidateOutcome>,
        worktrees: &mut BTreeMap<String, PathBuf>,
    ) -> Others {
        let mut recorded = None;
        let mut sources: BTreeMap<String, Vec<String>> = BTreeMap::new();
        if let Some(c) = combine {
            for ev in &c.announce {
                if let RunEvent::CandidateAdded {
                    candidate,
                    combined_from,
                } = ev
                {
                    sources.insert(candidate.id.clone(), combined_from.clone());
                }
            }
            worktrees.extend(c.worktrees);
            recorded = Some(c.recorded);
            // Where the combined change's lines came from: new code is listed
            // and keeps it from being the automatic pick.
            for o in results.iter_mut().filter(|o| o.id == c.candidate) {
                if o.changes.is_some() && o.finished_cleanly {
                    let r = c.provenance.report(&self.repo_dir, self.base, o);
                    agree::land(&self.journal, o, r);
                }
            }
            *results = c
                .others
                .into_iter()
                .chain(std::mem::take(results))
                .collect();
        }
        if let Some(r) = retry {
            *results = r
                .others
                .into_iter()
                .chain(std::mem::take(results))
                .collect();
        }
        Others { recorded, sources }
    }

    /// Layer 1 and the ranking: base tests updated with an API settled by
    /// the others, a human's earlier answers judged, the passing
    /// candidates testing each other, then the ranking journalled. Says
    /// whether the run is contested and whether the declarations that the
    /// task cannot be done escalate it.
    pub(super) async fn compare_and_rank(
        &self,
        results: &mut [CandidateOutcome],
        worktrees: &BTreeMap<String, PathBuf>,
        others: &Others,
        cancel: &CancellationToken,
    ) -> Ending {
        let gate: BTreeMap<String, Verdict> =
            results.iter().map(|r| (r.id.clone(), r.verdict)).collect();
        // Base tests a candidate updated for an API it altered: the others
        // say whether the task asked for that.
        crate::pipeline::compare::api_change::settle(results, &self.journal);
        // A human's earlier answers to this task's questions are tests.
        let kept = crate::pipeline::answers::kept(&self.repo_dir, &self.request.instruction);
        let probe_timeout = crate::pipeline::compare::discriminate::configured(&self.config)
            .map_or(std::time::Duration::from_secs(120), |d| {
                d.probe_timeout.get()
            });
        crate::pipeline::answers::judge(
            &self.config,
            &kept,
            results,
            &self.base.to_string(),
            probe_timeout,
            &self.journal,
            cancel,
        )
        .await;
        // Layer 1: the passing candidates test each other, then the ranking.
        let agreement = agree::agree(&self.config, &self.journal, results, cancel).await;
        if let Some(recorded) = &others.recorded {
            crate::pipeline::combine::settle(recorded, &gate, results, &self.journal);
        }
        let mut contenders = contenders(results);
        let declarations_escalate = self.declarations_escalate(&contenders);
        if let Some(m) = &agreement {
            agree::with_standings(&mut contenders, m);
        }
        let mut ranking = self.rank(&contenders, worktrees, cancel).await;
        if let Some(m) = agreement {
            agree::settle(
                &mut ranking,
                m,
                &contenders,
                self.config.main.compare.on_disagreement,
                &others.sources,
            );
        }
        agree::unseparated(&mut ranking, &contenders);
        self.probe_unseparated(&mut ranking, results, worktrees, cancel)
            .await;
        let contested = ranking.contested.is_some();
        // A run the declarations escalate is a human's to decide: `--auto`
        // selects nothing.
        self.emit_ranking(ranking, !declarations_escalate);
        Ending {
            contested,
            declarations_escalate,
            ..Ending::default()
        }
    }

    /// Whether the candidates' declarations that the task cannot be done
    /// escalate the run, from every candidate's state (those of a reattach
    /// included).
    fn declarations_escalate(&self, contenders: &[Contender]) -> bool {
        let states: Vec<State> = self
            .resume
            .as_ref()
            .map(|r| r.states.clone())
            .unwrap_or_default()
            .into_iter()
            .chain(contenders.iter().map(|c| {
                if c.impossible {
                    State::Impossible
                } else {
                    State::of(c.verdict)
                }
            }))
            .collect();
        rascal_core::model::impossible::escalates(&states)
    }
}
