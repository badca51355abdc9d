//! The discriminator, as the pipeline runs it: when the ranking has a pick
//! and other passing candidates whose code differs but that no test
//! separates from it (`ranking.unseparated`), the `discriminator:` agent
//! of `.rascal/verification.yaml` is asked for a probe (`layers::probes`),
//! the probe is laid into a fresh sandboxed copy of each of those
//! candidates' changes and run there (network off), and every call whose
//! output differs becomes the run's question: the pick is withdrawn and
//! the run is CONTESTED until a human answers. Without a difference the
//! pick stands and says how many calls agreed. The probe never fails or
//! passes anyone.

use crate::layers::probes;
use crate::Error;
use rascal_core::config::verification::DiscriminatorConfig;
use rascal_core::config::Config;
use rascal_core::model::ranking::{Probes, Ranking};
use rascal_exec::agents::ask::Site;
use rascal_exec::exec::place::Place;
use rascal_exec::exec::runner::{CommandSpec, Stream};
use std::collections::BTreeMap;
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// What asking and running the probe needs.
pub(crate) struct Discriminate<'a> {
    pub(crate) config: &'a Config,
    pub(crate) instruction: &'a str,
    /// Each candidate's change as a diff against the base (held-out tests
    /// stripped), by id.
    pub(crate) diffs: &'a BTreeMap<String, String>,
    /// Where each passing candidate's checks run, by id.
    pub(crate) places: &'a BTreeMap<String, Place>,
    pub(crate) base: &'a str,
    pub(crate) site: &'a Site,
    pub(crate) cancel: &'a CancellationToken,
}

/// The discriminator's settings, when one is configured.
pub(crate) fn configured(config: &Config) -> Option<&DiscriminatorConfig> {
    config.verification.as_ref()?.discriminator.as_ref()
}

/// Probe the pick and the candidates no test separates from it; record
/// what was found on `ranking` and, when outputs differ, contest it.
pub(crate) async fn discriminate(d: &Discriminate<'_>, ranking: &mut Ranking) {
    let (Some(cfg), Some(pick)) = (configured(d.config), ranking.pick.clone()) else {
        return;
    };
    if ranking.unseparated.is_empty() {
        return;
    }
    let candidates: Vec<String> = std::iter::once(pick.clone())
        .chain(ranking.unseparated.iter().cloned())
        .collect();
    let mut found = Probes {
        agent: cfg.agent.clone(),
        candidates: candidates.clone(),
        ..Default::default()
    };
    match probe(d, cfg, &candidates).await {
        Ok((source, runs)) => {
            found.source = Some(source);
            let mut calls: Vec<&String> = runs.iter().flat_map(|(_, o)| o.keys()).collect();
            calls.sort();
            calls.dedup();
            found.calls = calls.len();
            found.differences = probes::differences(&runs);
            if found.calls == 0 {
                found.problem = Some("the probe printed no `PROBE` line on any candidate".into());
            }
        }
        Err(why) => found.problem = Some(why.to_string()),
    }
    if !found.differences.is_empty() {
        ranking.contested = Some(format!(
            "the discriminator `{}` found {} where {} differ{} and no test says which is right",
            cfg.agent,
            rascal_core::text::plural(found.differences.len() as u64, "input"),
            candidates.join(", "),
            if candidates.len() == 2 { "" } else { "s" },
        ));
        ranking.pick = None;
    }
    ranking.probes = Some(found);
}

/// Ask for the probe and run it on each candidate: each one's outputs.
#[allow(clippy::type_complexity)]
async fn probe(
    d: &Discriminate<'_>,
    cfg: &DiscriminatorConfig,
    candidates: &[String],
) -> Result<
    (
        rascal_core::model::ranking::ProbeSource,
        Vec<(String, BTreeMap<String, String>)>,
    ),
    Error,
> {
    let agent = d.config.main.agents.get(&cfg.agent).ok_or_else(|| {
        Error::Usage(format!(
            "the discriminator `{}` is not an agent in .rascal/config.yaml",
            cfg.agent
        ))
    })?;
    let nonce = crate::layers::review::new_nonce()
        .map_err(|e| Error::Agent(format!("could not get a nonce from /dev/urandom: {e}")))?;
    let shown: Vec<(String, String)> = candidates
        .iter()
        .map(|c| (c.clone(), d.diffs.get(c).cloned().unwrap_or_default()))
        .collect();
    let prompt = probes::prompt(d.instruction, &shown, &nonce);
    let env = [(
        rascal_exec::agents::ask::REVIEW_NONCE_ENV.to_string(),
        nonce.clone(),
    )];
    let answer = rascal_exec::agents::ask::ask(
        &cfg.agent,
        agent,
        &prompt,
        &env,
        &d.site.dir,
        d.site,
        cfg.timeout.get(),
        d.cancel,
    )
    .await;
    if let Some(p) = answer.problem {
        return Err(Error::Agent(format!("the discriminator {p}")));
    }
    let probe = probes::parse_answer(&answer.text, &nonce)
        .map_err(|e| Error::Agent(format!("the discriminator answered unusably: {e}")))?;
    let mut runs = Vec::new();
    for c in candidates {
        let place = d.places.get(c).ok_or_else(|| {
            Error::Verification(format!("candidate `{c}` has no place for its checks"))
        })?;
        let lines = run_probe(place, d.base, &probe, cfg.probe_timeout.get(), d.cancel)
            .await
            .map_err(|e| Error::Verification(format!("the probe could not run on `{c}`: {e}")))?;
        runs.push((
            c.clone(),
            probes::outputs(lines.iter().map(String::as_str), &nonce),
        ));
    }
    Ok((probe.source(), runs))
}

/// Run the probe in a fresh copy of `place`'s change (on `base`) with
/// its file laid in: the lines it printed on stdout.
pub(crate) async fn run_probe(
    place: &Place,
    base: &str,
    probe: &probes::Probe,
    timeout: std::time::Duration,
    cancel: &CancellationToken,
) -> Result<Vec<String>, Error> {
    let laid = crate::layers::evidence::base_defined::with_file(
        place,
        base,
        &probe.file,
        probe.content.as_bytes(),
    )?;
    let (tx, mut rx): (
        rascal_exec::exec::runner::LogTx,
        rascal_exec::exec::runner::LogRx,
    ) = tokio::sync::mpsc::channel(64);
    let spec = CommandSpec::new(probe.command.clone(), Path::new(".").into(), timeout);
    let collect = async {
        let mut out = Vec::new();
        while let Some(batch) = rx.recv().await {
            out.extend(
                batch
                    .into_iter()
                    .filter(|l| l.stream == Stream::Stdout)
                    .map(|l| l.text),
            );
        }
        out
    };
    let (ran, lines) = tokio::join!(laid.run(spec, &[], false, Some(tx), cancel), collect);
    ran?;
    Ok(lines)
}
