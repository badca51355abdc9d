//! The commands rascal runs for a recognised runner: one that lists its
//! tests, and the guardrail itself changed only so its results can be read.

use super::recognise::{command_words, direct, package_script};
use super::shell::{self, quote, quote_assignment, Word};
use super::{cargo, go, js, pytest, unittest, Launcher, Manager, Recognised, Runner};

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
        Runner::Unittest => (
            vec![r.program[0].clone(), "-c".into(), unittest::LIST.into()],
            r.args.clone(),
            "",
        ),
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
///   attribute turns a test case back into its node id, and
///   `--continue-on-collection-errors`, so a file that fails to import
///   hides no other file's results.
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
    if r.runner == Runner::Unittest {
        let command = unittest_results_command(original, words, &file_arg, prefix, results_file);
        return (command, Some(results_file.to_string()));
    }
    let mut edits: Vec<(usize, String)> = Vec::new();
    let (flags, file) = results_flags(r, seg.end, words, &file_arg, results_file, &mut edits);
    if !flags.is_empty() {
        edits.push(flags_at(r, words, program_len, &flags.join(" ")));
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

/// `python -m unittest` becomes `python -c RUN FILE`, its arguments kept;
/// FILE's directory is made first.
fn unittest_results_command(
    original: &str,
    words: &[Word],
    file_arg: &str,
    prefix: Option<String>,
    results_file: &str,
) -> String {
    let mut command = format!(
        "{}-c {} {file_arg}{}",
        &original[..words[1].start],
        quote(unittest::RUN),
        &original[words[2].end..]
    );
    if let Some(p) = prefix {
        command = format!("{p}{command}");
    }
    if let Some((parent, _)) = results_file.rsplit_once('/') {
        command = format!("mkdir -p {}; {command}", quote(parent));
    }
    command
}

/// The flags that make the runner write results rascal reads, and the
/// results file it writes (None: its stdout is read). Cargo's edits, which
/// are not flags after the runner, go to `edits`.
fn results_flags(
    r: &Recognised,
    seg_end: usize,
    words: &[Word],
    file_arg: &str,
    results_file: &str,
    edits: &mut Vec<(usize, String)>,
) -> (Vec<String>, Option<String>) {
    let file = Some(results_file.to_string());
    match r.runner {
        Runner::Unittest => (Vec::new(), None),
        Runner::Cargo => {
            edits.push((seg_end, " 2>&1".into()));
            if cargo::quiet(&r.args) && r.launcher == Launcher::Direct {
                match words.iter().position(|w| w.text == "--") {
                    Some(i) => edits.push((words[i].end, " --format pretty".into())),
                    None => edits.push((words[words.len() - 1].end, " -- --format pretty".into())),
                }
            }
            (Vec::new(), None)
        }
        Runner::Go => {
            if r.args
                .iter()
                .any(|a| a == "-json" || a == "--json" || a.starts_with("-json="))
            {
                (Vec::new(), None)
            } else {
                (vec!["-json".into()], None)
            }
        }
        Runner::Pytest => (
            vec![
                format!("--junitxml={file_arg}"),
                "--override-ini=junit_family=xunit1".into(),
                // One test file that does not import (a name another
                // candidate's code lacks) must not hide every other
                // file's outcome: the run still exits non-zero.
                "--continue-on-collection-errors".into(),
            ],
            file,
        ),
        Runner::Jest => (
            vec!["--json".into(), format!("--outputFile={file_arg}")],
            file,
        ),
        Runner::Vitest => (
            vec![
                "--reporter=default".into(),
                "--reporter=json".into(),
                format!("--outputFile={file_arg}"),
            ],
            file,
        ),
    }
}

/// Where `flags` go: after the runner's own words, or at the end of a
/// package script's command (after npm's `--`, which passes them on).
fn flags_at(r: &Recognised, words: &[Word], program_len: usize, flags: &str) -> (usize, String) {
    match &r.launcher {
        Launcher::Direct => (words[program_len - 1].end, format!(" {flags}")),
        Launcher::Script(manager) => {
            let last = words[words.len() - 1].end;
            match (manager, words.iter().position(|w| w.text == "--")) {
                (Manager::Npm, Some(i)) => (words[i].end, format!(" {flags}")),
                (Manager::Npm, None) => (last, format!(" -- {flags}")),
                _ => (last, format!(" {flags}")),
            }
        }
    }
}

/// `original` with cargo's `--no-fail-fast` (every test target runs even
/// when one fails), for a `cargo test` started directly; else unchanged.
pub fn no_fail_fast(r: &Recognised, original: &str) -> String {
    if r.runner != Runner::Cargo || r.args.iter().any(|a| a == "--no-fail-fast") {
        return original.to_string();
    }
    let Some(seg) = shell::segments(original).and_then(|s| s.into_iter().nth(r.segment)) else {
        return original.to_string();
    };
    let (_, words) = command_words(&seg.words);
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    match (&r.launcher, direct(&texts)) {
        (Launcher::Direct, Some((Runner::Cargo, n))) => {
            let at = words[n - 1].end;
            format!("{} --no-fail-fast{}", &original[..at], &original[at..])
        }
        _ => original.to_string(),
    }
}

/// `original` (a direct `cargo test`) in the profile the project ships:
/// `--release` after `cargo test`. None when it already names a profile
/// (`--release`, `--profile`), is not a direct `cargo test`, or is not
/// cargo's: there is no other profile to compare with.
pub fn shipped_profile(r: &Recognised, original: &str) -> Option<String> {
    let named = |a: &String| a == "--release" || a == "-r" || a.starts_with("--profile");
    if r.runner != Runner::Cargo || r.args.iter().any(named) {
        return None;
    }
    let seg = shell::segments(original)?.into_iter().nth(r.segment)?;
    let (_, words) = command_words(&seg.words);
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    match (&r.launcher, direct(&texts)) {
        (Launcher::Direct, Some((Runner::Cargo, n))) => {
            let at = words[n - 1].end;
            Some(format!("{} --release{}", &original[..at], &original[at..]))
        }
        _ => None,
    }
}

/// [`results_command`] ready to run: a results file the change itself
/// holds is never read, so it is removed first. The command, and the
/// results file to read back, relative to where the command starts.
pub fn results_run(r: &Recognised, original: &str, results_file: &str) -> (String, Option<String>) {
    let (command, file) = results_command(r, original, results_file);
    let Some(file) = file else {
        return (command, None);
    };
    // The runner writes it there from its own directory (`../FILE` after
    // a `cd`): where the command starts, not under the runner's `cd`.
    (format!("rm -rf -- {}; {command}", quote(&file)), Some(file))
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
