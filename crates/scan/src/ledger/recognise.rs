//! Finding the test command in a guardrail: the last runner of a chain,
//! seen through `cd`, assignments, wrappers and package scripts.

use super::shell::{self, Segment, Sep, Word};
use super::{Launcher, Manager, Recognised, Runner};

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
pub(super) fn command_words(words: &[Word]) -> (Vec<&Word>, &[Word]) {
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
pub(super) fn direct(words: &[&str]) -> Option<(Runner, usize)> {
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
            if words.get(1) != Some(&"-m") {
                return None;
            }
            match words.get(2) {
                Some(&"pytest") | Some(&"py.test") if pytest_runs(words) => {
                    Some((Runner::Pytest, 3))
                }
                Some(&"unittest") if !has("-h") && !has("--help") => Some((Runner::Unittest, 3)),
                _ => None,
            }
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
pub(super) fn package_script<'a>(words: &[&'a str]) -> Option<(Manager, &'a str, Vec<&'a str>)> {
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
