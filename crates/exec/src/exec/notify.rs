//! Runs your `notify:` command (`.rascal/config.yaml`) when a run needs
//! you: the argv as written — never through a shell —, your own
//! environment plus the notice's `RASCAL_*` variables, in the repository's
//! top folder (never a candidate's workspace), for at most 10 s. Its output
//! is not shown; a failure comes back as one line to show, never as the
//! run's failure. Every variable's value passes the output policy
//! (`text::inert::env_value`): one line, no control or hidden character as
//! itself — a reviewer's escape sequence quoted in an escalation reason
//! reaches the command as visible text.

use crate::exec::runner::{self, CommandSpec, Env};
use std::path::Path;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long the command may take.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);

/// Run `argv` in `dir` with `vars` added to the environment. Err: what went
/// wrong, in one line.
pub async fn run(
    argv: &[String],
    dir: &Path,
    vars: Vec<(String, String)>,
) -> crate::error::Result<()> {
    let program = argv.first().cloned().unwrap_or_default();
    let mut spec = CommandSpec::new(argv.to_vec(), dir.to_path_buf(), TIMEOUT);
    let vars = vars
        .into_iter()
        .map(|(k, v)| (k, rascal_core::text::inert::env_value(&v)))
        .collect();
    spec.env = Env::Inherit(vars);
    let out = runner::run(&spec, None, &CancellationToken::new())
        .await
        .map_err(|e| {
            crate::Error::Notify(match e {
                runner::RunError::Spawn { source, .. } => {
                    format!("`{program}` could not be started: {source}")
                }
                other => other.to_string(),
            })
        })?;
    if let Some(problem) = out.exit.problem(TIMEOUT) {
        return Err(crate::Error::Notify(format!("`{program}` {problem}")));
    }
    if !out.exit.success() {
        let last = out.tail.lines().last().unwrap_or("").trim();
        return Err(crate::Error::Notify(format!(
            "`{program}` exited with code {}{}",
            out.exit.code.map(|c| c.to_string()).unwrap_or("?".into()),
            if last.is_empty() {
                String::new()
            } else {
                format!(
                    ": {}",
                    rascal_core::text::ellipsis(&rascal_core::text::sanitize(last), 120)
                )
            }
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[tokio::test]
    async fn the_command_gets_the_variables_and_runs_in_the_folder_given() {
        let dir = tempfile::tempdir().unwrap();
        let vars = vec![
            ("RASCAL_EVENT".to_string(), "finished".to_string()),
            ("RASCAL_MESSAGE".to_string(), "a; b $(no shell)".to_string()),
        ];
        let cmd = argv(&[
            "sh",
            "-c",
            "printf '%s|%s|%s' \"$RASCAL_EVENT\" \"$RASCAL_MESSAGE\" \"$(pwd)\" > seen",
        ]);
        run(&cmd, dir.path(), vars).await.unwrap();
        let seen = std::fs::read_to_string(dir.path().join("seen")).unwrap();
        let here = dir.path().canonicalize().unwrap();
        assert_eq!(
            seen,
            format!("finished|a; b $(no shell)|{}", here.display())
        );
    }

    #[tokio::test]
    async fn a_reviewers_escape_sequences_reach_the_command_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let raw = "run r-1: a was escalated — reviewer said \u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\u{9b}1m\u{202e}\nnext";
        let vars = vec![("RASCAL_MESSAGE".to_string(), raw.to_string())];
        let cmd = argv(&["sh", "-c", "printf '%s' \"$RASCAL_MESSAGE\" > seen"]);
        run(&cmd, dir.path(), vars).await.unwrap();
        let seen = std::fs::read_to_string(dir.path().join("seen")).unwrap();
        assert!(
            !seen.chars().any(rascal_core::text::inert::is_unsafe),
            "{seen:?}"
        );
        assert_eq!(
            seen,
            "run r-1: a was escalated — reviewer said ^[]52;c;ZXZpbA==^G^[[2J\u{fffd}1m<U+202E> next"
        );
    }

    #[tokio::test]
    async fn a_failing_or_missing_command_is_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let e = run(
            &argv(&["sh", "-c", "echo no display >&2; exit 4"]),
            dir.path(),
            vec![],
        )
        .await
        .unwrap_err()
        .to_string();
        assert_eq!(e, "`sh` exited with code 4: no display");
        let e = run(&argv(&["/no/such/notifier"]), dir.path(), vec![])
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("`/no/such/notifier` could not be started"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
    }
}
