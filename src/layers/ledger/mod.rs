//! The test ledger: which tests a test guardrail's runner knows by name at
//! the base commit and for a candidate, and which of them ran, passed,
//! failed or were ignored — read from the runners' own listings and
//! machine-readable results, never from prose. Pure: this module recognises
//! the runner in a guardrail command, writes the commands to run, and parses
//! what they printed; running them is the caller's job.
//!
//! Names are comparable between a listing and a run of the same runner:
//! cargo `alpha:src/lib.rs tests::adds` (target label, then the libtest name,
//! when the output carries cargo's `Running` lines), Go `pkg.TestX` (and
//! `pkg.TestX/sub` in results), pytest node ids `path.py::Class::test[id]`,
//! jest and vitest `file > describe > test` with the file relative to the
//! runner's directory once [`Listing::relative_to`] and
//! [`Results::relative_to`] have removed the copy's path.

mod cargo;
mod go;
mod js;
mod pytest;
mod shell;

use serde::{Deserialize, Serialize};
use shell::{quote, quote_assignment, Segment, Sep, Word};
use std::collections::HashMap;

/// A test runner whose listing and results rascal can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Runner {
    Cargo,
    Go,
    Pytest,
    Jest,
    Vitest,
}

/// How a recognised runner is started.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Launcher {
    /// The runner's own command: `cargo test`, `python -m pytest`, `npx jest`.
    Direct,
    /// A package script (`npm test`, `yarn run unit`) whose text runs the runner.
    Script(Manager),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Manager {
    Npm,
    Yarn,
    Pnpm,
}

/// The test command found in a guardrail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recognised {
    pub runner: Runner,
    /// The directory the runner runs in, relative to where the guardrail
    /// starts (from `cd sub && …`, and a package script's own `cd`).
    pub dir: Option<String>,
    /// `NAME=value` assignments that prefix the runner, as written.
    pub env: Vec<String>,
    /// The words that start the runner: `cargo test`, `python3 -m pytest`,
    /// `npx jest`, `npx vitest run`. A package script's bare `jest` becomes
    /// `npx jest` here, so the listing can run outside the script.
    pub program: Vec<String>,
    /// The words after the program: packages, paths, filters and flags.
    pub args: Vec<String>,
    /// Which simple command of the guardrail (0-based) starts the runner.
    segment: usize,
    launcher: Launcher,
    /// A package script's own `cd`, applied after the guardrail's.
    script_dir: Option<String>,
}

/// The tests a runner would run, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listing {
    /// Names in the runner's order; a name listed twice (two binaries with
    /// the same test and no label to tell them apart) appears twice.
    pub tests: Vec<String>,
    /// The listing ended as the runner ends a good listing, with nothing it
    /// could not read. False for a build or collection error and for an
    /// unrecognised output.
    pub complete: bool,
    /// `tests` holds test files, not test names (jest's `--listTests`,
    /// pytest's `-qq`): names cannot be listed before running.
    pub files_only: bool,
}

/// What a run reported, cross-checked against the listing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Results {
    pub passed: Vec<String>,
    pub failed: Vec<String>,
    pub ignored: Vec<String>,
    /// Results for names the listing does not have: not counted. A test
    /// that prints `test fake ... ok` lands here.
    pub unlisted: Vec<String>,
    /// Packages, binaries, files or suites that failed outside any test (a
    /// build failure, a collection error, a suite that did not load): their
    /// tests have no result.
    pub broken: Vec<String>,
    /// What the parser noticed and could not settle (more results than a
    /// binary announced, a name reported twice).
    pub notes: Vec<String>,
    /// The results were read in full: the file was there and parsed, the
    /// output had the runner's closing lines.
    pub complete: bool,
}

/// The ledger a test guardrail's report carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    pub runner: Runner,
    pub at_base: Vec<String>,
    pub now: Vec<String>,
    /// Tests that ran to a verdict: passed plus failed.
    pub ran: usize,
    pub passed: Vec<String>,
    pub failed: Vec<String>,
    pub ignored: Vec<String>,
    /// Listed at the base, not listed now: tests the change removed or
    /// renamed. Cargo doc tests are compared without their `(line N)`.
    pub missing: Vec<String>,
    /// Listed now, not at the base.
    pub added: Vec<String>,
    /// Listed now with no result: the run stopped early, a binary or
    /// package did not build, or the selection differed.
    pub not_run: Vec<String>,
    /// Results for names that neither listing had; not counted.
    pub unlisted: Vec<String>,
    pub broken: Vec<String>,
    /// The names are test files, not tests (jest): missing, added and
    /// not_run are files.
    pub files_only: bool,
    /// Both listings and the results were read in full.
    pub complete: bool,
}

impl Listing {
    /// Names relative to `root` (the directory the runner ran in): jest and
    /// vitest print absolute paths, which differ between two copies.
    pub fn relative_to(mut self, root: &str) -> Self {
        for t in &mut self.tests {
            *t = strip_root(t, root);
        }
        self
    }
}

impl Results {
    /// See [`Listing::relative_to`].
    pub fn relative_to(mut self, root: &str) -> Self {
        for list in [
            &mut self.passed,
            &mut self.failed,
            &mut self.ignored,
            &mut self.unlisted,
            &mut self.broken,
        ] {
            for t in list.iter_mut() {
                *t = strip_root(t, root);
            }
        }
        self
    }
}

fn strip_root(name: &str, root: &str) -> String {
    let root = root.trim_end_matches('/');
    if root.is_empty() {
        return name.to_string();
    }
    match name
        .strip_prefix(root)
        .and_then(|rest| rest.strip_prefix('/'))
    {
        Some(rest) => rest.to_string(),
        None => name.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Recognising the runner.

/// The runner a guardrail command invokes, if any. The last test command of
/// a chain wins; `cd` before it sets `dir`; `NAME=value` prefixes and the
/// wrappers `env`, `time`, `timeout N`, `nice`, `command`, `exec` are seen
/// through. `npm test`, `yarn test`, `pnpm test` and `… run NAME` are
/// recognised only through `package_json` (the text of the package.json in
/// the directory they run in; see [`package_json_dir`]). A runner whose
/// output is piped into anything but `tee` is not recognised: its output
/// cannot be read.
pub fn recognise(command: &str, package_json: Option<&str>) -> Option<Recognised> {
    recognise_in(command, package_json, 0)
}

/// Where `npm test`-style commands in `command` run, relative to where the
/// guardrail starts (`""` for the same place): the caller reads that
/// directory's package.json for [`recognise`]. `None` when there is none.
pub fn package_json_dir(command: &str) -> Option<String> {
    let segs = shell::segments(command)?;
    let mut dir: Option<String> = None;
    let mut found = None;
    for seg in &segs {
        let (_, words) = command_words(&seg.words);
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        match texts.first() {
            Some(&"cd") | Some(&"pushd") => dir = change_dir(dir, words.get(1)),
            Some(_) if package_script(&texts).is_some() => {
                found = Some(dir.clone().unwrap_or_default());
            }
            _ => {}
        }
    }
    found
}

fn recognise_in(command: &str, package_json: Option<&str>, depth: usize) -> Option<Recognised> {
    let segs = shell::segments(command)?;
    let mut dir: Option<String> = None;
    let mut found = None;
    for (index, seg) in segs.iter().enumerate() {
        let (env, words) = command_words(&seg.words);
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        if matches!(texts.first(), Some(&"cd") | Some(&"pushd")) {
            dir = change_dir(dir, words.get(1));
            continue;
        }
        if seg.sep == Sep::Pipe && !piped_into_tee(&segs, index) {
            continue;
        }
        let env: Vec<String> = env.iter().map(|w| w.text.clone()).collect();
        if let Some((runner, program_len)) = direct(&texts) {
            found = Some(Recognised {
                runner,
                dir: dir.clone(),
                env,
                program: texts[..program_len].iter().map(|s| s.to_string()).collect(),
                args: texts[program_len..].iter().map(|s| s.to_string()).collect(),
                segment: index,
                launcher: Launcher::Direct,
                script_dir: None,
            });
        } else if let Some((manager, script, extra)) = package_script(&texts) {
            if depth >= 3 {
                continue;
            }
            let Some(inner) = package_json
                .and_then(|p| script_text(p, script))
                .and_then(|text| recognise_in(&text, package_json, depth + 1))
            else {
                continue;
            };
            let mut program = inner.program;
            if matches!(program.first().map(String::as_str), Some("jest" | "vitest")) {
                program.insert(0, "npx".into());
            }
            let mut args = inner.args;
            args.extend(extra.iter().map(|s| s.to_string()));
            let mut all_env = env;
            all_env.extend(inner.env);
            found = Some(Recognised {
                runner: inner.runner,
                dir: join_dirs(dir.as_deref(), inner.dir.as_deref()),
                env: all_env,
                program,
                args,
                segment: index,
                launcher: Launcher::Script(manager),
                script_dir: inner.dir,
            });
        }
    }
    found
}

/// Splits a simple command into its leading assignments and the command
/// proper, seeing through `env`, `time`, `timeout`, `nice`, `nohup`,
/// `command`, `exec` and `cross-env`.
fn command_words(words: &[Word]) -> (Vec<&Word>, &[Word]) {
    let mut env = Vec::new();
    let mut i = 0;
    loop {
        while i < words.len() && words[i].assignment {
            env.push(&words[i]);
            i += 1;
        }
        let Some(w) = words.get(i) else { break };
        match w.text.as_str() {
            "env" | "cross-env" | "command" | "exec" | "nohup" => {
                i += 1;
                while words
                    .get(i)
                    .is_some_and(|w| w.text.starts_with('-') && w.text.len() > 1)
                {
                    i += 1;
                }
            }
            "time" | "nice" => {
                i += 1;
                while words.get(i).is_some_and(|w| w.text.starts_with('-')) {
                    // `nice -n 5`: the flag's value.
                    if words[i].text == "-n" {
                        i += 1;
                    }
                    i += 1;
                }
            }
            "timeout" => {
                i += 1;
                while words.get(i).is_some_and(|w| w.text.starts_with('-')) {
                    if matches!(
                        words[i].text.as_str(),
                        "-s" | "-k" | "--signal" | "--kill-after"
                    ) {
                        i += 1;
                    }
                    i += 1;
                }
                // The duration.
                i += 1;
            }
            _ => break,
        }
    }
    (env, &words[i.min(words.len())..])
}

/// The directory after `cd ARG` from `dir`. An argument the shell would
/// expand (`cd $X`, `cd ~`) or none at all is kept as written.
fn change_dir(dir: Option<String>, arg: Option<&Word>) -> Option<String> {
    let Some(arg) = arg else {
        return Some("~".into());
    };
    if !arg.literal || arg.text.starts_with('~') || arg.text == "-" {
        return Some(arg.text.clone());
    }
    join_dirs(dir.as_deref(), Some(&arg.text))
}

/// `base/rel` with `.` and `..` resolved where they can be; `None` for the
/// starting directory itself.
fn join_dirs(base: Option<&str>, rel: Option<&str>) -> Option<String> {
    let joined = match (base, rel) {
        (_, Some(r)) if r.starts_with('/') => r.to_string(),
        (Some(b), Some(r)) => format!("{b}/{r}"),
        (Some(b), None) => b.to_string(),
        (None, Some(r)) => r.to_string(),
        (None, None) => return None,
    };
    let absolute = joined.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for p in joined.split('/') {
        match p {
            "" | "." => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            _ => parts.push(p),
        }
    }
    let s = parts.join("/");
    match (absolute, s.is_empty()) {
        (true, _) => Some(format!("/{s}")),
        (false, true) => None,
        (false, false) => Some(s),
    }
}

fn piped_into_tee(segs: &[Segment], index: usize) -> bool {
    segs.get(index + 1).is_some_and(|next| {
        let (_, words) = command_words(&next.words);
        words.first().is_some_and(|w| w.text == "tee") && next.sep != Sep::Pipe
    })
}

fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The runner a command starts directly, and how many words name it.
fn direct(words: &[&str]) -> Option<(Runner, usize)> {
    let first = *words.first()?;
    let has = |flag: &str| words.contains(&flag);
    match base(first) {
        "cargo" => {
            // `cargo +nightly --locked test`: toolchain and global flags first.
            let mut i = 1;
            while let Some(w) = words.get(i) {
                if w.starts_with('+') {
                    i += 1;
                } else if matches!(*w, "--config" | "-Z" | "-C" | "--color") {
                    i += 2;
                } else if w.starts_with('-') {
                    i += 1;
                } else {
                    break;
                }
            }
            let sub = *words.get(i)?;
            let libtest_list = words
                .iter()
                .skip_while(|w| **w != "--")
                .any(|w| *w == "--list");
            (matches!(sub, "test" | "t") && !has("--no-run") && !libtest_list)
                .then_some((Runner::Cargo, i + 1))
        }
        "go" => (words.get(1) == Some(&"test")
            && !words
                .iter()
                .any(|w| *w == "-c" || w.starts_with("-list") || w.starts_with("--list")))
        .then_some((Runner::Go, 2)),
        "pytest" | "py.test" => pytest_runs(words).then_some((Runner::Pytest, 1)),
        p if p.starts_with("python") && p[6..].chars().all(|c| c.is_ascii_digit() || c == '.') => {
            (words.get(1) == Some(&"-m")
                && matches!(words.get(2), Some(&"pytest") | Some(&"py.test"))
                && pytest_runs(words))
            .then_some((Runner::Pytest, 3))
        }
        "uv" | "poetry" | "pipenv" | "pdm" | "hatch" if words.get(1) == Some(&"run") => {
            let (runner, n) = direct(&words[2..])?;
            Some((runner, n + 2))
        }
        "npx" | "bunx" | "pnpx" => {
            // `npx --yes jest`: npx's own flags first.
            let mut i = 1;
            while words.get(i).is_some_and(|w| w.starts_with('-')) {
                i += 1;
            }
            js_runner(&words[i..]).map(|(r, n)| (r, n + i))
        }
        "yarn" | "pnpm" => match words.get(1) {
            Some(&"exec") | Some(&"dlx") => js_runner(&words[2..]).map(|(r, n)| (r, n + 2)),
            Some(_) => js_runner(&words[1..]).map(|(r, n)| (r, n + 1)),
            None => None,
        },
        "npm" if words.get(1) == Some(&"exec") => {
            let mut i = 2;
            if words.get(i) == Some(&"--") {
                i += 1;
            }
            js_runner(&words[i..]).map(|(r, n)| (r, n + i))
        }
        _ => js_runner(words),
    }
}

fn pytest_runs(words: &[&str]) -> bool {
    !words.iter().any(|w| {
        matches!(
            *w,
            "--collect-only" | "--co" | "--help" | "-h" | "--version" | "--fixtures"
        )
    })
}

/// `jest …`, `vitest run …`, `vitest …` (a single run when not on a
/// terminal), but not `vitest watch`, `vitest bench` or `jest --watch`.
fn js_runner(words: &[&str]) -> Option<(Runner, usize)> {
    let first = *words.first()?;
    let watching = words
        .iter()
        .any(|w| matches!(*w, "--watch" | "--watchAll" | "--listTests"));
    match base(first) {
        "jest" | "jest.js" if !watching => Some((Runner::Jest, 1)),
        "vitest" | "vitest.mjs" if !watching => match words.get(1) {
            Some(&"run") => Some((Runner::Vitest, 2)),
            Some(&("watch" | "dev" | "bench" | "list" | "init" | "typecheck")) => None,
            _ => Some((Runner::Vitest, 1)),
        },
        _ => None,
    }
}

/// `npm test`, `npm run NAME`, `yarn NAME`, `pnpm run NAME`…: the manager,
/// the script's name and the arguments the script receives.
fn package_script<'a>(words: &[&'a str]) -> Option<(Manager, &'a str, Vec<&'a str>)> {
    let manager = match base(words.first()?) {
        "npm" => Manager::Npm,
        "yarn" => Manager::Yarn,
        "pnpm" => Manager::Pnpm,
        _ => return None,
    };
    let (script, rest) = match (words.get(1).copied(), words.get(2).copied()) {
        (Some("test" | "t" | "tst"), _) => ("test", 2),
        (Some("run" | "run-script" | "rum" | "urn"), Some(name)) if !name.starts_with('-') => {
            (name, 3)
        }
        // `yarn unit`, `pnpm unit`: a script named like that, if there is one.
        (Some(name), _)
            if manager != Manager::Npm && !name.starts_with('-') && !yarn_builtin(name) =>
        {
            (name, 2)
        }
        _ => return None,
    };
    let rest = &words[rest.min(words.len())..];
    let extra = match manager {
        // npm passes only what follows `--`; what comes before is npm's own.
        Manager::Npm => rest
            .iter()
            .skip_while(|w| **w != "--")
            .skip(1)
            .copied()
            .collect(),
        Manager::Pnpm | Manager::Yarn => rest.iter().skip_while(|w| **w == "--").copied().collect(),
    };
    Some((manager, script, extra))
}

fn yarn_builtin(name: &str) -> bool {
    matches!(
        name,
        "add"
            | "install"
            | "remove"
            | "upgrade"
            | "exec"
            | "dlx"
            | "build"
            | "run"
            | "info"
            | "why"
            | "link"
            | "workspace"
            | "workspaces"
            | "cache"
            | "config"
            | "init"
            | "publish"
            | "pack"
            | "audit"
    )
}

/// The text of `scripts.NAME` in a package.json.
fn script_text(package_json: &str, name: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(package_json).ok()?;
    v.get("scripts")?.get(name)?.as_str().map(str::to_string)
}

// ---------------------------------------------------------------------------
// Commands.

/// A shell command, run where the guardrail starts, that lists the tests
/// the guardrail selects without running them. It keeps the guardrail's
/// setup before the runner (`cd`, `export`, `source`, assignments) and
/// drops the rest (a `cargo fmt --check &&` that fails must not hide the
/// listing).
pub fn listing_command(r: &Recognised, original: &str) -> String {
    let mut parts = setup_before(r, original);
    if let Some(d) = &r.script_dir {
        parts.push(format!("cd {}", quote(d)));
    }
    let mut words: Vec<String> = r.env.iter().map(|e| quote_assignment(e)).collect();
    let (program, args, suffix) = match r.runner {
        Runner::Cargo => (r.program.clone(), cargo::listing_args(&r.args), " 2>&1"),
        Runner::Go => (r.program.clone(), go::listing_args(&r.args), ""),
        Runner::Pytest => (r.program.clone(), pytest::listing_args(&r.args), ""),
        Runner::Jest => (r.program.clone(), js::jest_listing_args(&r.args), ""),
        Runner::Vitest => {
            let mut program = r.program.clone();
            if program.last().map(String::as_str) == Some("run") {
                program.pop();
            }
            program.push("list".into());
            (program, js::vitest_listing_args(&r.args), "")
        }
    };
    words.extend(program.iter().chain(args.iter()).map(|w| quote(w)));
    parts.push(format!("{}{suffix}", words.join(" ")));
    parts.join(" && ")
}

/// The guardrail's simple commands before the runner that set the stage:
/// `cd`, `pushd`, `export`, `source`, `.`, `set`, `unset`, `umask`, `ulimit`
/// and bare assignments, as written.
fn setup_before(r: &Recognised, original: &str) -> Vec<String> {
    let Some(segs) = shell::segments(original) else {
        return r.dir.iter().map(|d| format!("cd {}", quote(d))).collect();
    };
    segs.iter()
        .take(r.segment)
        .filter(|seg| {
            let (env, words) = command_words(&seg.words);
            match words.first() {
                None => !env.is_empty(),
                Some(w) => matches!(
                    w.text.as_str(),
                    "cd" | "pushd"
                        | "export"
                        | "source"
                        | "."
                        | "set"
                        | "unset"
                        | "umask"
                        | "ulimit"
                ),
            }
        })
        .map(|seg| original[seg.start..seg.end].to_string())
        .collect()
}

/// How to run the guardrail so its results can be read: the command, and
/// the file (relative to where the guardrail starts, as `results_file` was
/// given) to read afterwards. Only the runner's own words change:
/// - Cargo: unchanged but for `2>&1` after the runner, so cargo's `Running`
///   lines stay in order with libtest's, and `--format pretty` when `-q`
///   would hide the per-test lines (libtest's JSON is unstable). Read stdout.
/// - Go: `-json` after `go test`. Read stdout.
/// - pytest: `--junitxml=FILE` with the xunit1 family, whose `file`
///   attribute turns a test case back into its node id.
/// - jest: `--json --outputFile=FILE`; vitest: its JSON reporter beside the
///   default one, `--outputFile=FILE`.
///
/// When the guardrail `cd`s first, FILE is written as a path from there;
/// FILE's directory is made first.
pub fn results_command(
    r: &Recognised,
    original: &str,
    results_file: &str,
) -> (String, Option<String>) {
    let Some(segs) = shell::segments(original) else {
        return (original.to_string(), None);
    };
    let Some(seg) = segs.get(r.segment) else {
        return (original.to_string(), None);
    };
    let (_, words) = command_words(&seg.words);
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    // The segment must still be the runner this was recognised from.
    let program_len = match (&r.launcher, direct(&texts)) {
        (Launcher::Direct, Some((runner, n))) if runner == r.runner => n,
        (Launcher::Script(_), _) if package_script(&texts).is_some() => 0,
        _ => return (original.to_string(), None),
    };
    let (file_arg, prefix) = path_from_dir(r.dir.as_deref(), results_file);
    let mut edits: Vec<(usize, String)> = Vec::new();
    let mut file = None;
    let flags: Vec<String> = match r.runner {
        Runner::Cargo => {
            edits.push((seg.end, " 2>&1".into()));
            if cargo::quiet(&r.args) && r.launcher == Launcher::Direct {
                match words.iter().position(|w| w.text == "--") {
                    Some(i) => edits.push((words[i].end, " --format pretty".into())),
                    None => edits.push((words[words.len() - 1].end, " -- --format pretty".into())),
                }
            }
            Vec::new()
        }
        Runner::Go => {
            if r.args
                .iter()
                .any(|a| a == "-json" || a == "--json" || a.starts_with("-json="))
            {
                Vec::new()
            } else {
                vec!["-json".into()]
            }
        }
        Runner::Pytest => {
            file = Some(results_file.to_string());
            vec![
                format!("--junitxml={file_arg}"),
                "--override-ini=junit_family=xunit1".into(),
            ]
        }
        Runner::Jest => {
            file = Some(results_file.to_string());
            vec!["--json".into(), format!("--outputFile={file_arg}")]
        }
        Runner::Vitest => {
            file = Some(results_file.to_string());
            vec![
                "--reporter=default".into(),
                "--reporter=json".into(),
                format!("--outputFile={file_arg}"),
            ]
        }
    };
    if !flags.is_empty() {
        let flags = flags.join(" ");
        match &r.launcher {
            Launcher::Direct => edits.push((words[program_len - 1].end, format!(" {flags}"))),
            Launcher::Script(manager) => {
                let last = words[words.len() - 1].end;
                match (manager, words.iter().position(|w| w.text == "--")) {
                    (Manager::Npm, Some(i)) => edits.push((words[i].end, format!(" {flags}"))),
                    (Manager::Npm, None) => edits.push((last, format!(" -- {flags}"))),
                    _ => edits.push((last, format!(" {flags}"))),
                }
            }
        }
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut command = original.to_string();
    for (at, text) in edits {
        command.insert_str(at, &text);
    }
    if let Some(p) = prefix {
        command = format!("{p}{command}");
    }
    // jest will not write into a directory that is not there.
    if let Some((parent, _)) = file.as_deref().and_then(|f| f.rsplit_once('/')) {
        if !parent.is_empty() {
            command = format!("mkdir -p {}; {command}", quote(parent));
        }
    }
    (command, file)
}

/// `file` as the runner, started in `dir`, should be told it, ready for
/// the shell: `../x` for a relative dir; through a variable holding the
/// starting directory when the dir cannot be walked back (absolute, `..`,
/// expanded), with the assignment to put first.
fn path_from_dir(dir: Option<&str>, file: &str) -> (String, Option<String>) {
    let Some(dir) = dir else {
        return (quote(file), None);
    };
    if file.starts_with('/') {
        return (quote(file), None);
    }
    let walkable = !dir.starts_with('/')
        && !dir.starts_with('~')
        && !dir.contains('$')
        && dir
            .split('/')
            .all(|p| !p.is_empty() && p != ".." && p != "." && p != "-");
    if walkable {
        let up = "../".repeat(dir.split('/').count());
        (quote(&format!("{up}{file}")), None)
    } else {
        (
            format!("\"${ROOT_VAR}\"/{}", quote(file)),
            Some(format!("{ROOT_VAR}=\"$PWD\"; ")),
        )
    }
}

/// The shell variable that remembers where the guardrail started.
const ROOT_VAR: &str = "RASCAL_LEDGER_ROOT";

// ---------------------------------------------------------------------------
// Parsing.

/// The names a listing command printed. For cargo, pass stdout and stderr
/// as one stream (the listing command merges them) so each name carries its
/// target.
pub fn parse_listing(runner: Runner, stdout: &str) -> Listing {
    match runner {
        Runner::Cargo => cargo::parse_listing(stdout),
        Runner::Go => go::parse_listing(stdout),
        Runner::Pytest => pytest::parse_listing(stdout),
        Runner::Jest => js::parse_jest_listing(stdout),
        Runner::Vitest => js::parse_vitest_listing(stdout),
    }
}

/// What a run reported: from stdout (cargo, Go) or the results file
/// (pytest's junit XML, jest's and vitest's JSON). With a listing, a result
/// whose name it lacks goes to `unlisted` instead of counting, and a name
/// reported more often than listed keeps its worst outcomes.
pub fn parse_results(
    runner: Runner,
    stdout: &str,
    file: Option<&str>,
    listing: Option<&Listing>,
) -> Results {
    let (reported, mut partial) = match runner {
        Runner::Cargo => cargo::parse_results(stdout),
        Runner::Go => go::parse_results(stdout),
        Runner::Pytest => match file {
            Some(xml) => pytest::parse_results(xml, listing),
            None => no_file(),
        },
        Runner::Jest | Runner::Vitest => match file {
            Some(json) => js::parse_results(json),
            None => no_file(),
        },
    };
    settle(runner, reported, listing, &mut partial);
    partial
}

/// One outcome as the runner reported it, before the listing's cross-check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Outcome {
    Passed,
    Ignored,
    Failed,
}

/// What a runner's parser hands back: every outcome as reported, and the
/// results so far (broken, notes, complete) for `settle` to fill in.
type Parsed = (Vec<(String, Outcome)>, Results);

fn no_file() -> Parsed {
    let notes = vec!["the results file was not there to read".to_string()];
    (
        Vec::new(),
        Results {
            notes,
            ..Results::default()
        },
    )
}

/// Where a reported name is looked up in a listing: Go subtests under
/// their top-level test, jest results under their file.
fn listing_key(runner: Runner, name: &str, files_only: bool) -> String {
    match runner {
        Runner::Go => go::top_level(name).to_string(),
        Runner::Jest | Runner::Vitest if files_only => js::file_of(name).to_string(),
        Runner::Pytest if files_only => pytest::file_of(name).to_string(),
        _ => name.to_string(),
    }
}

/// Cross-checks reported outcomes against the listing and sorts them into
/// `results`. A name listed n times keeps its n worst outcomes (a forged
/// `ok` cannot hide a real `FAILED`); a name not listed is `unlisted`
/// (except a skipped one when the runner's listing leaves skipped tests
/// out, as vitest's does).
fn settle(
    runner: Runner,
    reported: Vec<(String, Outcome)>,
    listing: Option<&Listing>,
    results: &mut Results,
) {
    // An empty listing that did not finish is no listing at all.
    let listing = listing.filter(|l| l.complete || !l.tests.is_empty());
    if listing.is_some_and(|l| !l.complete && !l.files_only) {
        results
            .notes
            .push("the listing was incomplete: results were checked against what it had".into());
    }
    let files_only = listing.is_some_and(|l| l.files_only);
    let mut listed: HashMap<&str, usize> = HashMap::new();
    if let Some(l) = listing {
        for t in &l.tests {
            *listed.entry(t.as_str()).or_default() += 1;
        }
    }
    // Subtests and files group many results under one listed key.
    let per_key = matches!(runner, Runner::Go) || files_only;
    let mut order: Vec<String> = Vec::new();
    let mut by_name: HashMap<String, Vec<Outcome>> = HashMap::new();
    for (name, outcome) in reported {
        let seen = by_name.entry(name.clone()).or_default();
        if seen.is_empty() {
            order.push(name);
        }
        seen.push(outcome);
    }
    for reported_name in order {
        let mut outcomes = by_name.remove(&reported_name).unwrap_or_default();
        outcomes.sort_by(|a, b| b.cmp(a));
        let mut name = reported_name;
        let allowed = match listing {
            None if per_key || runner != Runner::Cargo => 1,
            None => outcomes.len(),
            Some(_) => {
                let key = listing_key(runner, &name, files_only);
                let (n, relative) = match listed.get(key.as_str()) {
                    Some(n) => (*n, None),
                    None => js_suffix_match(runner, &key, &listed),
                };
                // Named as the listing names it: a path relative to the
                // runner's directory rather than this copy's absolute one.
                if let Some(prefix_len) = relative {
                    name = name[prefix_len..].to_string();
                }
                if per_key {
                    n.min(1)
                } else {
                    n
                }
            }
        };
        if allowed == 0 {
            let skipped_only = outcomes.iter().all(|o| *o == Outcome::Ignored);
            if skipped_only && runner == Runner::Vitest {
                results.ignored.push(name);
            } else {
                results.unlisted.push(name);
            }
            continue;
        }
        if outcomes.len() > allowed {
            results.notes.push(format!(
                "{name}: reported {} times, listed {allowed}; the worst outcomes count",
                outcomes.len()
            ));
        }
        for o in outcomes.into_iter().take(allowed) {
            match o {
                Outcome::Passed => results.passed.push(name.clone()),
                Outcome::Failed => results.failed.push(name.clone()),
                Outcome::Ignored => results.ignored.push(name.clone()),
            }
        }
    }
}

/// jest and vitest report absolute paths; a listing made relative with
/// [`Listing::relative_to`] (or made in another copy) names the same file
/// by a tail of that path. The count listed and how many bytes of the
/// reported key to drop.
fn js_suffix_match(
    runner: Runner,
    key: &str,
    listed: &HashMap<&str, usize>,
) -> (usize, Option<usize>) {
    if !matches!(runner, Runner::Jest | Runner::Vitest) || !key.starts_with('/') {
        return (0, None);
    }
    let file_end = key.find(" > ").unwrap_or(key.len());
    for (i, _) in key[..file_end].match_indices('/') {
        if let Some(n) = listed.get(&key[i + 1..]) {
            return (*n, Some(i + 1));
        }
    }
    (0, None)
}

// ---------------------------------------------------------------------------
// The ledger.

/// The ledger of one candidate's run: what was listed at the base and now,
/// what the run reported, and what disappeared.
pub fn ledger(runner: Runner, at_base: &Listing, now: &Listing, results: &Results) -> Ledger {
    let files_only = at_base.files_only || now.files_only;
    let stable = |n: &str| stable_name(runner, n);
    let missing = multiset_minus(&at_base.tests, &now.tests, stable);
    let added = multiset_minus(&now.tests, &at_base.tests, stable);
    let reported: Vec<String> = results
        .passed
        .iter()
        .chain(&results.failed)
        .chain(&results.ignored)
        .map(|n| listing_key(runner, n, now.files_only))
        .collect();
    let not_run = multiset_minus(&now.tests, &reported, |n| n.to_string());
    // Go subtests and jest files: one result is enough for the listed key.
    let not_run = if runner == Runner::Go || now.files_only {
        let set: std::collections::HashSet<&String> = reported.iter().collect();
        now.tests
            .iter()
            .filter(|t| !set.contains(t))
            .cloned()
            .collect()
    } else {
        not_run
    };
    Ledger {
        runner,
        at_base: at_base.tests.clone(),
        now: now.tests.clone(),
        ran: results.passed.len() + results.failed.len(),
        passed: results.passed.clone(),
        failed: results.failed.clone(),
        ignored: results.ignored.clone(),
        missing,
        added,
        not_run,
        unlisted: results.unlisted.clone(),
        broken: results.broken.clone(),
        files_only,
        complete: at_base.complete && now.complete && results.complete,
    }
}

/// A name as it should compare across two commits: a cargo doc test moves
/// with every line added above it, so its `(line N)` is left out.
fn stable_name(runner: Runner, name: &str) -> String {
    match runner {
        Runner::Cargo => cargo::without_line(name),
        _ => name.to_string(),
    }
}

/// `a` less `b`, each element of `b` cancelling one equal (by `key`)
/// element of `a`; `a`'s order kept.
fn multiset_minus(a: &[String], b: &[String], key: impl Fn(&str) -> String) -> Vec<String> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for x in b {
        *counts.entry(key(x)).or_default() += 1;
    }
    a.iter()
        .filter(|x| match counts.get_mut(&key(x)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests;
