//! An attempt's change checked: read once file by file, its build cache
//! emptied and seeded from the base's, the place its checks run in, and
//! the layers (L2 → L4 → L3 → L5) run on it.

use super::*;

impl CandidateJob {
    /// The agent's change, read once file by file, then checked by the
    /// layers. The checks that read content see each file as it is read,
    /// and the same bytes are written as the change's git tree, whose id
    /// is what every receipt names and what finalize commits. Break: the
    /// attempt ends here (its workspace's `.git` is not reclaimed).
    pub(super) async fn check_change(
        &self,
        attempt: u32,
        dirs: AttemptDirs<'_>,
        done: &mut Attempt,
    ) -> ControlFlow<()> {
        let holdout = Arc::new(self.holdout());
        let permissions = sequence::permissions_in_force(&self.config, Origin::Agent);
        let change = crate::pipeline::content::read_candidate_change(
            &self.config,
            permissions.as_ref(),
            &self.repo,
            dirs.workdir,
            self.base,
            &holdout,
        );
        match change {
            Ok((changes, _)) if changes.is_empty() => {
                let r = Report::new(Layer::Agent, "changes")
                    .input("base", self.base.to_string())
                    .finish_with_issue(Issue::new(
                        "agent/no-changes",
                        Severity::Error,
                        "the agent finished without changing any file",
                    ));
                self.land(r, &mut done.reports);
                self.skip_layers(&mut done.reports, "skipped: the agent made no changes");
            }
            Ok((changes, read)) => {
                done.files = changes.files.len();
                done.lines = changes.lines_changed();
                // Shared by this attempt's own commands only, and
                // empty at its start: one candidate's build outputs
                // never reach another's, one attempt's never the next.
                let cache = match rascal_exec::exec::cache::fresh_for_attempt(dirs.candidate_dir) {
                    Ok(c) => c,
                    Err(e) => {
                        let r = Report::new(Layer::Agent, "changes")
                            .errored(format!(
                                "could not empty the build cache in {} before the checks: {e}",
                                dirs.candidate_dir.display()
                            ))
                            .finish();
                        self.land(r, &mut done.reports);
                        self.skip_layers(
                            &mut done.reports,
                            "skipped: the build cache could not be emptied",
                        );
                        done.changes = Some(changes);
                        return ControlFlow::Break(());
                    }
                };
                self.seed_cache(&cache).await;
                // The checks borrow the change; it is kept (moved, never
                // copied) for the comparator once they are done.
                let copy = Sandboxed {
                    origin: self.repo.clone(),
                    workspace: dirs.workdir.to_path_buf(),
                    tree: changes.tree.clone(),
                    run_tree: None,
                    scratch: dirs.candidate_dir.join("checks"),
                    cache: Some(cache),
                    hide: self.hidden(),
                    confined: rascal_exec::exec::sandbox::available().is_ok(),
                    holdout: holdout.clone(),
                    with_holdout: false,
                    limits: rascal_core::config::limits::Limits::of(&self.agent),
                };
                // What decides how the tests run comes from the base.
                let place = crate::layers::evidence::base_defined::checks_from_base(
                    &self.place(copy, attempt),
                    &changes,
                    &crate::layers::evidence::test_run::check_commands(
                        &self.config,
                        sequence::base_package_json(&self.repo, &changes.base).as_deref(),
                    ),
                    &self.task.allow_test_changes,
                );
                let (rs, outcome) = self
                    .run_layers(attempt, dirs, &place, &changes, &read)
                    .await;
                done.reports.extend(rs);
                done.review = outcome;
                done.changes = Some(changes);
                done.place = Some(place);
            }
            Err(e) => {
                let r = Report::new(Layer::Agent, "changes")
                    .errored(format!("could not compute the change: {e}"))
                    .finish();
                self.land(r, &mut done.reports);
                self.skip_layers(&mut done.reports, "skipped: the change could not be read");
            }
        }
        ControlFlow::Continue(())
    }

    /// Start the attempt's empty build cache from the base's seed (see
    /// `exec::cache::SEED`), saying so in the candidate's log. Only
    /// bubblewrap checks use it: a container's or a Job's checks never see
    /// it.
    async fn seed_cache(&self, cache: &std::path::Path) {
        if self.launcher.name() != "process" {
            return;
        }
        let seed = self
            .state
            .join("ledger")
            .join(rascal_exec::exec::cache::SEED);
        let build = cache.to_path_buf();
        let seeded =
            tokio::task::spawn_blocking(move || rascal_exec::exec::cache::seed(&build, &seed))
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
        let note = match seeded {
            Ok(0) => return,
            Ok(n) => format!(
                "rascal: the checks' build cache starts from the base's ({}, built by base code only)",
                bytesize::ByteSize::b(n).display().iec()
            ),
            Err(e) => format!("rascal: the checks start with an empty build cache: copying the base's failed: {e}"),
        };
        self.journal.emit(RunEvent::Log {
            display: None,
            candidate: self.info.id.clone(),
            stream: rascal_core::model::log::Stream::Stderr,
            text: note,
        });
    }

    /// Where the checks' commands run (see [`check_place`]).
    fn place(&self, copy: Sandboxed, attempt: u32) -> Place {
        check_place(
            &self.config,
            self.launcher.name(),
            (&self.run, &self.info.id, &self.agent),
            copy,
            attempt,
        )
    }

    /// The layers on the change (L2 → L4 → L3 → L5), their progress
    /// journalled as it comes.
    async fn run_layers(
        &self,
        attempt: u32,
        dirs: AttemptDirs<'_>,
        place: &Place,
        changes: &ChangeSet,
        read: &ContentRead,
    ) -> (Vec<Report>, Option<ReviewOutcome>) {
        let id = self.info.id.clone();
        let v = Verification {
            config: &self.config,
            place,
            changes,
            origin: Origin::Agent,
            allow_test_changes: &self.task.allow_test_changes,
            cancel: self.cancel.clone(),
        };
        let journal = self.journal.clone();
        let cid = id.clone();
        let sink = move |p: Progress| match p {
            Progress::LayerStarted(layer) => journal.emit(RunEvent::LayerStarted {
                candidate: cid.clone(),
                layer,
            }),
            Progress::Report(r) => journal.emit(RunEvent::ReportLanded {
                candidate: cid.clone(),
                report: Box::new(r),
            }),
        };
        let later = sequence::LaterLayers {
            config: &self.config,
            task: &self.task,
            place,
            base: self.base,
            changes,
            author: (&self.info.agent, &self.agent),
            site: Site {
                run: self.run.clone(),
                candidate: id,
                dir: dirs.candidate_dir.to_path_buf(),
                rascal_exe: self.request.rascal_exe.clone(),
                attempt,
                hide: self.hidden(),
                tempo: self.request.tempo,
                read_only: Vec::new(),
            },
            cancel: self.cancel.clone(),
        };
        sequence::layers_read(&v, Some(read), &later, &sink).await
    }
}
