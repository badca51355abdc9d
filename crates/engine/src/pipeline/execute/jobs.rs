//! What every candidate's job in one run shares, and the jobs started from
//! it: the run announced, planned, every candidate spawned (and retried
//! when a human asks), and a run that was never approved ended.

use super::*;

/// What every candidate's job in one run shares.
pub(super) struct JobTemplate {
    pub(super) run: String,
    pub(super) config: Arc<rascal_core::config::Config>,
    pub(super) base: git2::Oid,
    pub(super) repo_dir: PathBuf,
    pub(super) state: PathBuf,
    pub(super) request: RunRequest,
    pub(super) journal: Journal,
    pub(super) launcher: Arc<dyn Launcher>,
    pub(super) task: Arc<rascal_core::config::spec::Task>,
    pub(super) resume: Option<Resumption>,
    pub(super) human_feedback: HumanFeedback,
    pub(super) budgets: crate::pipeline::budget::Budgets,
    /// The candidate with a brief of its own, and the brief (`combine`).
    pub(super) brief: Option<(String, Arc<crate::pipeline::candidate::Brief>)>,
}

/// A candidate's identity, agent and cancel token: enough to run it again.
pub(super) type Again = (
    CandidateInfo,
    rascal_core::config::AgentConfig,
    CancellationToken,
);

/// The candidates' tasks as they were started.
pub(super) struct Spawned {
    pub(super) tasks: Vec<tokio::task::JoinHandle<CandidateOutcome>>,
    /// Each candidate's cancel token, for live cancels.
    pub(super) tokens: BTreeMap<String, CancellationToken>,
    /// What it takes to run each candidate again.
    pub(super) again: BTreeMap<String, Again>,
}

impl JobTemplate {
    /// Journal the run's start: its candidates, and the task when it came
    /// from a spec or an issue (or the working tree has a note).
    pub(super) fn announce(
        &self,
        candidates: &[(CandidateInfo, rascal_core::config::AgentConfig)],
        task_source: Option<String>,
        worktree: rascal_core::model::event::WorkingTree,
    ) {
        self.journal.emit(RunEvent::RunStarted {
            run: self.run.clone(),
            repo: self.repo_dir.to_string_lossy().into_owned(),
            base: self.base.to_string(),
            instruction: self.request.instruction.clone(),
            launcher: self.launcher.name().into(),
            candidates: candidates.iter().map(|(c, _)| c.clone()).collect(),
        });
        if task_source.is_some() || !worktree.is_clean() {
            self.journal.emit(RunEvent::TaskLoaded {
                source: task_source.unwrap_or_else(|| "instruction".into()),
                task: Box::new((*self.task).clone()),
                worktree,
            });
        }
    }

    /// Plan the run (see `pipeline::plan`).
    pub(super) async fn plan(
        &self,
        decisions: &mut mpsc::UnboundedReceiver<Decision>,
        cancel: &CancellationToken,
    ) -> crate::pipeline::plan::Planned {
        let planning = crate::pipeline::plan::Planning {
            run: &self.run,
            config: &self.config,
            request: &self.request,
            repo_dir: &self.repo_dir,
            state: &self.state,
            base: self.base,
            task: &self.task,
            journal: &self.journal,
            cancel,
        };
        crate::pipeline::plan::plan(&planning, decisions).await
    }

    /// End a run whose plan was not approved, before any candidate
    /// started: `why` escalates it to a human (exit 3); None, it was
    /// cancelled (exit 1).
    pub(super) async fn end_unplanned(
        self,
        writer: std::thread::JoinHandle<Result<(), crate::store::StoreError>>,
        why: Option<String>,
    ) -> Result<RunOutcome, PipelineError> {
        let escalated = why.is_some();
        if let Some(why) = why {
            self.journal.emit(RunEvent::DecisionRecorded {
                decision: Decision::new(None, DecisionKind::Escalate, "rascal", &why),
            });
        }
        let exit_code = run_exit_code(Verdict::Fail, escalated);
        self.finish(writer, Verdict::Fail, exit_code).await
    }

    /// End the run: journal its verdict and exit code, let the launcher
    /// settle, and wait for the journal's writer to flush.
    pub(super) async fn finish(
        self,
        writer: std::thread::JoinHandle<Result<(), crate::store::StoreError>>,
        verdict: Verdict,
        exit_code: i32,
    ) -> Result<RunOutcome, PipelineError> {
        self.journal
            .emit(RunEvent::RunFinished { verdict, exit_code });
        // Containers removed off the critical path are gone before rascal is.
        self.launcher.settle().await;
        let run = self.run.clone();
        // The journal's writer ends once every sender is gone.
        drop(self);
        wait_for_writer(writer).await?;
        Ok(RunOutcome {
            run,
            verdict,
            exit_code,
        })
    }

    /// The spec's criteria on the unchanged base, while the candidates run
    /// (a planned run checked them before its approval; a continued run
    /// did when it first ran).
    pub(super) async fn criteria_on_base(&self, continued: bool, cancel: &CancellationToken) {
        if continued || self.request.plan != crate::pipeline::PlanGate::Off {
            return;
        }
        let p = crate::pipeline::vacuity::OnBaseRun {
            run: &self.run,
            config: &self.config,
            repo_dir: &self.repo_dir,
            state: &self.state,
            base: self.base,
            holdout: &self.task.holdout,
            journal: &self.journal,
            cancel,
        };
        crate::pipeline::vacuity::check(&p, &self.task.acceptance_criteria).await;
    }

    /// Journal the ranking, and with `--auto` the selection of its pick
    /// (when `may_select`).
    pub(super) fn emit_ranking(&self, ranking: Ranking, may_select: bool) {
        let pick = ranking.pick.clone();
        self.journal.emit(RunEvent::Ranked {
            ranking: Box::new(ranking),
        });
        if let (true, true, Some(p)) = (self.request.auto, may_select, &pick) {
            self.journal.emit(RunEvent::DecisionRecorded {
                decision: Decision::new(
                    Some(p),
                    DecisionKind::Select,
                    "rascal --auto",
                    "top of the comparator's ranking",
                ),
            });
        }
    }

    /// The job of one candidate (`start`: a human's retry's attempt and
    /// feedback).
    pub(super) fn job(
        &self,
        info: CandidateInfo,
        agent: rascal_core::config::AgentConfig,
        token: CancellationToken,
        start: Option<(u32, String)>,
    ) -> CandidateJob {
        CandidateJob {
            resume: self.resume.as_ref().and_then(|r| r.of(&info.id)),
            landed: self
                .resume
                .as_ref()
                .and_then(|r| r.agent_reports.get(&info.id).cloned()),
            repo: self.repo_dir.clone(),
            run: self.run.clone(),
            agent,
            config: self.config.clone(),
            base: self.base,
            state: self.state.clone(),
            request: self.request.clone(),
            journal: self.journal.clone(),
            launcher: self.launcher.clone(),
            cancel: token,
            task: self.task.clone(),
            start,
            human_feedback: self.human_feedback.clone(),
            budgets: self.budgets.clone(),
            brief: self
                .brief
                .as_ref()
                .filter(|(id, _)| *id == info.id)
                .map(|(_, b)| b.clone()),
            info,
        }
    }

    /// Start every candidate, at most `max_parallel` running at once.
    pub(super) fn spawn_all(
        &self,
        candidates: Vec<(CandidateInfo, rascal_core::config::AgentConfig)>,
        retry: &Option<RetryStart>,
        cancel: &CancellationToken,
    ) -> Spawned {
        let slots = Arc::new(tokio::sync::Semaphore::new(max_parallel(&self.config)));
        let mut spawned = Spawned {
            tasks: Vec::new(),
            tokens: BTreeMap::new(),
            again: BTreeMap::new(),
        };
        for (info, agent) in candidates {
            let start = retry
                .as_ref()
                .filter(|r| r.candidate == info.id)
                .map(|r| (r.attempt, r.feedback.clone()));
            let token = cancel.child_token();
            spawned.tokens.insert(info.id.clone(), token.clone());
            spawned.again.insert(
                info.id.clone(),
                (info.clone(), agent.clone(), token.clone()),
            );
            let job = self.job(info, agent, token, start);
            let slots = slots.clone();
            spawned.tasks.push(tokio::spawn(async move {
                let _slot = slots.acquire_owned().await;
                job.run().await
            }));
        }
        spawned
    }

    /// Retry decisions for candidates that had already finished while the
    /// run was live: their next attempt runs now, in the same worktree.
    pub(super) async fn retry_finished(
        &self,
        results: &mut [CandidateOutcome],
        again: &BTreeMap<String, Again>,
    ) {
        for _round in 0..3 {
            let pending: Vec<(String, String)> = self
                .human_feedback
                .lock()
                .map(|mut m| std::mem::take(&mut *m).into_iter().collect())
                .unwrap_or_default();
            if pending.is_empty() {
                break;
            }
            for (id, text) in pending {
                let (Some(i), Some((info, agent, token))) = (
                    results.iter().position(|r: &CandidateOutcome| r.id == id),
                    again.get(&id),
                ) else {
                    continue;
                };
                let job = self.job(
                    info.clone(),
                    agent.clone(),
                    token.clone(),
                    Some((results[i].attempt + 1, text)),
                );
                if let Ok(outcome) = tokio::spawn(job.run()).await {
                    results[i] = outcome;
                }
            }
        }
    }

    /// Where a run-level helper agent (`judge`, `discriminator`) runs: in
    /// bubblewrap like an author, its files under the run's `name` folder.
    pub(super) fn helper_site(&self, name: &str) -> Site {
        Site {
            hide: rascal_exec::exec::confine::private_paths(&self.repo_dir, &self.state)
                .into_iter()
                .chain(rascal_exec::git::holdout::outside_dirs(&self.task.holdout))
                .collect(),
            run: self.run.clone(),
            candidate: name.into(),
            dir: self.state.join("runs").join(&self.run).join(name),
            rascal_exe: self.request.rascal_exe.clone(),
            attempt: 1,
            tempo: self.request.tempo,
            read_only: Vec::new(),
        }
    }
}
