//! `.rascal/guardrails.yaml` — Layer 2: commands, banned patterns, diff
//! size and the built-in secret scan. Each entry is one of these kinds; an
//! entry that mixes kinds or names none is an error at its location.

use super::Dur;
use serde::{Deserialize, Serialize};

/// Where banned patterns look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Only lines the change adds.
    #[default]
    DiffOnly,
    /// Every line of every changed file after the change.
    All,
}

/// A regex, compiled when the config is read so a bad one is a located error.
#[derive(Debug, Clone)]
pub struct Pattern(pub regex::Regex);

impl PartialEq for Pattern {
    fn eq(&self, o: &Self) -> bool {
        self.0.as_str() == o.0.as_str()
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        regex::Regex::new(&s).map(Pattern).map_err(|e| {
            serde::de::Error::custom(format!(
                "invalid regex `{s}`: {}",
                e.to_string().lines().last().unwrap_or("syntax error")
            ))
        })
    }
}

impl Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Builtin {
    Secrets,
    /// The test tamper check (on by default when a test guardrail exists).
    TestIntegrity,
}

#[derive(Debug, Clone, PartialEq)]
pub enum GuardrailKind {
    Command {
        command: String,
        timeout: Dur,
        parallel: bool,
        /// Host variables the command may see besides the base set
        /// (`PATH HOME LANG LC_ALL TERM TMPDIR USER`).
        env: Vec<String>,
        /// The command may use the network (`network: host`; default none).
        network: bool,
        /// This command is the test run (`tests: true`): its report carries
        /// the test ledger. None: decided from the command (a known test
        /// runner such as `cargo test`, `go test`, `pytest` is one).
        tests: Option<bool>,
        /// `results: PATH`: the JUnit XML file the command writes (relative
        /// to where it starts), read for a runner rascal does not know.
        results: Option<String>,
        /// `where: local`: run in bubblewrap on this machine even when the
        /// candidate ran in a container (default: where the agent ran).
        local: bool,
        /// `release_profile: false`: the base's tests are not run again in
        /// the profile the project ships (cargo's `--release`; default on).
        release_profile: bool,
    },
    Patterns {
        patterns: Vec<Pattern>,
        scope: Scope,
    },
    DiffSize {
        max_lines: Option<u64>,
        max_files: Option<u64>,
    },
    Secrets(SecretsOptions),
    /// `builtin: test-integrity`: tests removed, skipped or weakened, and
    /// edits to what decides how tests run.
    TestIntegrity,
}

/// One guardrail.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawGuardrail")]
pub struct Guardrail {
    pub name: String,
    /// A failing required guardrail fails the candidate; an optional one warns.
    pub required: bool,
    pub kind: GuardrailKind,
}

pub const DEFAULT_COMMAND_TIMEOUT: Dur = Dur::from_secs(300);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGuardrail {
    name: String,
    #[serde(default)]
    required: Option<bool>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    timeout: Option<Dur>,
    #[serde(default)]
    parallel: Option<bool>,
    #[serde(default)]
    env: Option<Vec<String>>,
    #[serde(default)]
    network: Option<String>,
    #[serde(default)]
    patterns: Option<Vec<Pattern>>,
    #[serde(default)]
    scope: Option<Scope>,
    #[serde(default)]
    max_lines: Option<u64>,
    #[serde(default)]
    max_files: Option<u64>,
    #[serde(default)]
    builtin: Option<Builtin>,
    #[serde(default)]
    allow_paths: Option<Vec<String>>,
    #[serde(default)]
    max_file_bytes: Option<u64>,
    #[serde(default)]
    tests: Option<bool>,
    #[serde(default)]
    results: Option<String>,
    #[serde(default)]
    release_profile: Option<bool>,
    /// `kind: tests` is another way to say `tests: true`.
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    on_unscanned: Option<OnUnscanned>,
    #[serde(default)]
    unscanned_allowed: Option<Vec<String>>,
    /// `local` or `agent` (default): where a command runs.
    #[serde(default, rename = "where")]
    place: Option<String>,
}

impl RawGuardrail {
    /// Exactly one kind is set: a command, patterns, a diff size or a
    /// builtin.
    fn one_kind(&self) -> Result<(), crate::Error> {
        let name = &self.name;
        let kinds = [
            self.command.is_some(),
            self.patterns.is_some(),
            self.max_lines.is_some() || self.max_files.is_some(),
            self.builtin.is_some(),
        ];
        let n = kinds.iter().filter(|k| **k).count();
        if n != 1 {
            return Err(crate::Error::Invalid(format!(
                "guardrail `{name}` must have exactly one of: `command` (a shell command), \
                 `patterns` (banned regexes), `max_lines`/`max_files` (diff size), `builtin: secrets` or `builtin: test-integrity`{}",
                if n == 0 { " — it has none" } else { " — it has several" }
            )));
        }
        Ok(())
    }

    /// `where: local` (true) or `agent` (the default).
    fn local(&self) -> Result<bool, crate::Error> {
        let name = &self.name;
        match self.place.as_deref() {
            None | Some("agent") => Ok(false),
            Some("local") => Ok(true),
            Some(other) => Err(crate::Error::Invalid(format!(
                "guardrail `{name}`: `where: {other}` is not known: use agent (default: where the agent ran, a container for a docker candidate) or local (bubblewrap on this machine)"
            ))),
        }
    }

    /// Whether the command is the test run: `tests`, or `kind: tests`.
    fn test_run(&self) -> Result<Option<bool>, crate::Error> {
        let name = &self.name;
        match self.kind.as_deref() {
            None => Ok(self.tests),
            Some("tests") if self.tests != Some(false) => Ok(Some(true)),
            Some("tests") => Err(crate::Error::Invalid(format!(
                "guardrail `{name}`: `kind: tests` and `tests: false` contradict each other"
            ))),
            Some(other) => Err(crate::Error::Invalid(format!(
                "guardrail `{name}`: `kind: {other}` is not known: the only kind is `tests` (this command is the test run)"
            ))),
        }
    }
}

/// A command guardrail's `network`: `host` (true) or `none` (the default).
fn host_network(name: &str, network: Option<&str>) -> Result<bool, crate::Error> {
    match network {
        None | Some("none") => Ok(false),
        Some("host") => Ok(true),
        Some(other) => Err(crate::Error::Invalid(format!(
            "guardrail `{name}`: `network: {other}` is not known: use none (default) or host"
        ))),
    }
}

/// The `secrets` builtin with its options, checked: `max_file_bytes`
/// within the scan's cap, and both path lists valid globs.
fn secrets_kind(name: &str, opts: SecretsOptions) -> Result<GuardrailKind, crate::Error> {
    if let Some(max) = opts.max_file_bytes.filter(|&m| m > MAX_SCAN_FILE_BYTES) {
        return Err(crate::Error::Invalid(format!(
            "guardrail `{name}`: `max_file_bytes: {max}` is over the secret scan's cap of \
             {MAX_SCAN_FILE_BYTES} bytes (1 GiB) a file; leave it out to scan up to the cap, \
             and list larger files in `unscanned_allowed` if they may pass unscanned"
        )));
    }
    secrets_allow_set(&opts.allow_paths)
        .map_err(|e| crate::Error::Invalid(format!("guardrail `{name}`: {e}")))?;
    secrets_allow_set(&opts.unscanned_allowed).map_err(|e| {
        crate::Error::Invalid(format!(
            "guardrail `{name}`: {}",
            e.to_string().replace("allow_paths", "unscanned_allowed")
        ))
    })?;
    Ok(GuardrailKind::Secrets(opts))
}

/// A `results:` path: relative, inside the directory the command starts
/// in, as the shell will be given it.
fn results_path(name: &str, p: &str) -> Result<String, crate::Error> {
    let path = std::path::Path::new(p.trim());
    let inside = !p.trim().is_empty()
        && path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
    if inside {
        Ok(p.trim().to_string())
    } else {
        Err(crate::Error::Invalid(format!(
            "guardrail `{name}`: `results: {p}` must be a relative path inside the repository (the JUnit XML file the command writes, e.g. `results: target/junit.xml`)"
        )))
    }
}

impl TryFrom<RawGuardrail> for Guardrail {
    type Error = crate::Error;
    fn try_from(r: RawGuardrail) -> Result<Self, crate::Error> {
        let name = r.name.clone();
        if name.trim().is_empty() {
            return Err(crate::Error::Invalid(
                "guardrail `name` must not be empty".into(),
            ));
        }
        r.one_kind()?;
        r.check_command_fields()?;
        let local = r.local()?;
        let (tests, results) = r.test_results()?;
        r.check_builtin_fields()?;
        let required = r.required.unwrap_or(true);
        let kind = r.into_kind(tests, results, local)?;
        Ok(Guardrail {
            name,
            required,
            kind,
        })
    }
}

/// Guardrail `name`'s `field` is refused unless `ok` (it applies to this
/// kind of guardrail).
fn stray(name: &str, field: &str, ok: bool) -> Result<(), crate::Error> {
    if ok {
        Ok(())
    } else {
        Err(crate::Error::Invalid(format!(
            "guardrail `{name}`: `{field}` does not apply to this kind of guardrail"
        )))
    }
}

impl RawGuardrail {
    /// The fields of a `command` (and `scope`, of `patterns`) refused on
    /// any other kind.
    fn check_command_fields(&self) -> Result<(), crate::Error> {
        let (name, r) = (&self.name, self);
        stray(name, "timeout", r.timeout.is_none() || r.command.is_some())?;
        stray(
            name,
            "parallel",
            r.parallel.is_none() || r.command.is_some(),
        )?;
        stray(name, "scope", r.scope.is_none() || r.patterns.is_some())?;
        stray(name, "tests", r.tests.is_none() || r.command.is_some())?;
        stray(name, "results", r.results.is_none() || r.command.is_some())?;
        stray(
            name,
            "release_profile",
            r.release_profile.is_none() || r.command.is_some(),
        )?;
        stray(name, "kind", r.kind.is_none() || r.command.is_some())?;
        stray(name, "where", r.place.is_none() || r.command.is_some())
    }

    /// Whether the command is the test run, and the results file it
    /// writes (which makes it the test run).
    fn test_results(&self) -> Result<(Option<bool>, Option<String>), crate::Error> {
        let name = &self.name;
        let mut tests = self.test_run()?;
        let results = match self.results.as_deref() {
            None => None,
            Some(_) if tests == Some(false) => {
                return Err(crate::Error::Invalid(format!(
                    "guardrail `{name}`: `results` names the test run's results, but `tests: false` says this is not the test run"
                )))
            }
            Some(p) => {
                tests = Some(true);
                Some(results_path(name, p)?)
            }
        };
        Ok((tests, results))
    }

    /// The options of a `builtin` refused on any other kind.
    fn check_builtin_fields(&self) -> Result<(), crate::Error> {
        let (name, r) = (&self.name, self);
        stray(
            name,
            "allow_paths",
            r.allow_paths.is_none() || r.builtin.is_some(),
        )?;
        stray(
            name,
            "max_file_bytes",
            r.max_file_bytes.is_none() || r.builtin.is_some(),
        )?;
        stray(
            name,
            "on_unscanned",
            r.on_unscanned.is_none() || r.builtin.is_some(),
        )?;
        stray(
            name,
            "unscanned_allowed",
            r.unscanned_allowed.is_none() || r.builtin.is_some(),
        )
    }

    /// The guardrail's kind, from the one kind field it has.
    fn into_kind(
        self,
        tests: Option<bool>,
        results: Option<String>,
        local: bool,
    ) -> Result<GuardrailKind, crate::Error> {
        let r = self;
        let name = r.name.as_str();
        Ok(if let Some(command) = r.command {
            if command.trim().is_empty() {
                return Err(crate::Error::Invalid(format!(
                    "guardrail `{name}`: `command` is empty"
                )));
            }
            let network = host_network(name, r.network.as_deref())?;
            GuardrailKind::Command {
                command,
                timeout: r.timeout.unwrap_or(DEFAULT_COMMAND_TIMEOUT),
                parallel: r.parallel.unwrap_or(false),
                env: r.env.unwrap_or_default(),
                network,
                tests,
                results,
                local,
                release_profile: r.release_profile.unwrap_or(true),
            }
        } else if let Some(patterns) = r.patterns {
            if patterns.is_empty() {
                return Err(crate::Error::Invalid(format!(
                    "guardrail `{name}`: `patterns` is empty"
                )));
            }
            GuardrailKind::Patterns {
                patterns,
                scope: r.scope.unwrap_or_default(),
            }
        } else if r.builtin == Some(Builtin::TestIntegrity) {
            stray(name, "allow_paths", r.allow_paths.is_none())?;
            stray(name, "max_file_bytes", r.max_file_bytes.is_none())?;
            stray(name, "unscanned_allowed", r.unscanned_allowed.is_none())?;
            GuardrailKind::TestIntegrity
        } else if r.builtin.is_some() {
            let opts = SecretsOptions {
                allow_paths: r.allow_paths.unwrap_or_default(),
                max_file_bytes: r.max_file_bytes,
                on_unscanned: r.on_unscanned.unwrap_or_default(),
                unscanned_allowed: r.unscanned_allowed.unwrap_or_default(),
                rule_files: Vec::new(),
            };
            secrets_kind(name, opts)?
        } else {
            GuardrailKind::DiffSize {
                max_lines: r.max_lines,
                max_files: r.max_files,
            }
        })
    }
}

/// Options of the `secrets` builtin check (from `.rascal/` config).
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(default)]
pub struct SecretsOptions {
    /// Globs of files that are never scanned. A glob without `/` also
    /// matches the file name in any directory (`*.pem`); `*` does not cross
    /// `/`, `**` does.
    pub allow_paths: Vec<String>,
    /// At most this many bytes of each file are scanned (a text file's
    /// added lines, a binary file's content), streamed: the rest is named
    /// in a `secrets/unscanned` issue. Default and most: 1 GiB
    /// ([`MAX_SCAN_FILE_BYTES`]).
    pub max_file_bytes: Option<u64>,
    /// What a file that could not be scanned whole is: an error that fails
    /// the check (`fail`, the default) or, with `warn`, a warning for every
    /// such file (prefer `unscanned_allowed`, by path).
    pub on_unscanned: OnUnscanned,
    /// Globs of files that may pass not fully scanned: their unscanned part
    /// is a warning, not an error (same glob rules as `allow_paths`).
    pub unscanned_allowed: Vec<String>,
    /// The repository's rule files (`.rascal/secrets.toml`,
    /// `.gitleaks.toml`), read from the base commit with the rest of the
    /// config (`config::secrets::attach`), never from the YAML.
    #[serde(skip)]
    pub rule_files: Vec<super::secrets::RuleFile>,
}

/// What the secret scan makes of a file it could not scan whole.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnUnscanned {
    Warn,
    #[default]
    Fail,
}

/// The most `max_file_bytes` may be: the secret scan reads at most 1 GiB of
/// a file (`layers::secrets::HARD_MAX_FILE_BYTES`).
pub const MAX_SCAN_FILE_BYTES: u64 = 1024 * 1024 * 1024;

/// The secrets guardrail's `allow_paths` as one matcher. A glob without `/`
/// also matches the file name in any directory (`*.pem`).
pub fn secrets_allow_set(paths: &[String]) -> Result<globset::GlobSet, crate::Error> {
    let mut allow = globset::GlobSetBuilder::new();
    for g in paths {
        let mut add = |pat: &str| -> Result<(), crate::Error> {
            let glob = globset::GlobBuilder::new(pat)
                .literal_separator(true)
                .build()
                .map_err(|e| {
                    crate::Error::Invalid(format!("secrets: bad allow_paths glob {g:?}: {e}"))
                })?;
            allow.add(glob);
            Ok(())
        };
        add(g)?;
        if !g.contains('/') {
            add(&format!("**/{g}"))?;
        }
    }
    allow
        .build()
        .map_err(|e| crate::Error::Invalid(format!("secrets: bad allow_paths: {e}")))
}

#[cfg(test)]
mod where_tests {
    use super::*;

    fn one(yaml: &str) -> Result<Guardrail, String> {
        serde_yaml::from_str::<Guardrail>(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn where_is_agent_by_default_local_on_request_and_nothing_else() {
        let local = |g: Guardrail| match g.kind {
            GuardrailKind::Command { local, .. } => local,
            _ => panic!("not a command"),
        };
        assert!(!local(one("{ name: t, command: 'true' }").unwrap()));
        assert!(!local(
            one("{ name: t, command: 'true', where: agent }").unwrap()
        ));
        assert!(local(
            one("{ name: t, command: 'true', where: local }").unwrap()
        ));
        let e = one("{ name: t, command: 'true', where: cloud }").unwrap_err();
        assert!(e.contains("`where: cloud` is not known"), "{e}");
        let e = one("{ name: t, max_lines: 3, where: local }").unwrap_err();
        assert!(e.contains("`where` does not apply"), "{e}");
    }

    #[test]
    fn results_names_a_junit_file_inside_and_makes_the_guardrail_the_test_run() {
        let kind = |g: Guardrail| match g.kind {
            GuardrailKind::Command { tests, results, .. } => (tests, results),
            _ => panic!("not a command"),
        };
        assert_eq!(
            kind(one("{ name: unit, command: 'make check', results: out/junit.xml }").unwrap()),
            (Some(true), Some("out/junit.xml".to_string()))
        );
        assert_eq!(
            kind(one("{ name: unit, command: 'make check' }").unwrap()).1,
            None
        );
        for bad in ["/tmp/junit.xml", "../junit.xml", "out/../../j.xml", "''"] {
            let e = one(&format!(
                "{{ name: unit, command: 'make check', results: {bad} }}"
            ))
            .unwrap_err();
            assert!(e.contains("must be a relative path inside"), "{bad}: {e}");
        }
        let e = one("{ name: unit, command: 'make', results: j.xml, tests: false }").unwrap_err();
        assert!(
            e.contains("`tests: false` says this is not the test run"),
            "{e}"
        );
        let e = one("{ name: unit, max_lines: 3, results: j.xml }").unwrap_err();
        assert!(e.contains("`results` does not apply"), "{e}");
    }

    #[test]
    fn the_release_profile_is_compared_unless_turned_off_on_a_command() {
        let on = |g: Guardrail| match g.kind {
            GuardrailKind::Command {
                release_profile, ..
            } => release_profile,
            _ => panic!("not a command"),
        };
        assert!(on(one("{ name: t, command: 'cargo test' }").unwrap()));
        assert!(!on(one(
            "{ name: t, command: 'cargo test', release_profile: false }"
        )
        .unwrap()));
        let e = one("{ name: t, max_lines: 3, release_profile: false }").unwrap_err();
        assert!(e.contains("`release_profile` does not apply"), "{e}");
        let e = one("{ name: t, command: 'x', release_profile: maybe }").unwrap_err();
        assert!(e.contains("release_profile"), "{e}");
    }
}
