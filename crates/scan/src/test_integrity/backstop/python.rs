//! Backstop rules for Python: imports of the runner, code that ends the
//! process or hooks its end, and code that patches the runner or builtins.

use super::python_chain::{
    canonical, dotted, py_chain, py_dotted, py_target, runner_module, Chain, PyEnv,
};
use super::stream::{is_word, lit_value, Stream, Tk};
use super::{ends_msg, patch_msg, Ctx, Hits, RULE_ENDS_RUN, RULE_PATCHES_RUNNER};

/// Modules that end the process, hook its end, or hold the runner: a name
/// bound to one by assignment is followed like an import.
pub(super) const PY_MODULES: &[&str] = &[
    "__builtins__",
    "_pytest",
    "atexit",
    "builtins",
    "ctypes",
    "faulthandler",
    "gc",
    "importlib",
    "os",
    "pluggy",
    "pytest",
    "signal",
    "sys",
    "unittest",
];

/// Python that ends the process or hooks its end, anywhere.
pub(super) const PY_ENDS: &[&str] = &[
    "atexit.register",
    "os._exit",
    "os.abort",
    "os.execl",
    "os.execle",
    "os.execlp",
    "os.execlpe",
    "os.execv",
    "os.execve",
    "os.execvp",
    "os.execvpe",
    "signal.pthread_kill",
    "signal.raise_signal",
    "signal.signal",
];

/// The runner's internals, by name.
pub(super) const PY_INTERNALS: &[&str] = &[
    "CallInfo",
    "TestReport",
    "TestResult",
    "TextTestResult",
    "_TextTestResult",
    "addError",
    "addExpectedFailure",
    "addFailure",
    "addSkip",
    "addSubTest",
    "addSuccess",
    "addUnexpectedSuccess",
    "ihook",
    "pluginmanager",
];

pub(super) const W_IMPORT: &str = "the code under test imports the test runner";
pub(super) const W_DYN_IMPORT: &str = "the code under test imports a module by a computed name";
pub(super) const W_DYN_RUNNER: &str = "it imports the test runner by a computed name";
pub(super) const W_SET: &str = "it sets an attribute of the test runner";
pub(super) const W_BUILTIN: &str = "it replaces a builtin";
pub(super) const W_SETATTR_DYN: &str = "it sets an attribute named at run time";
pub(super) const W_SYS_MODULES_RUNNER: &str = "it replaces the test runner in `sys.modules`";
pub(super) const W_SYS_MODULES: &str = "the code under test reaches into `sys.modules`";
pub(super) const W_GC: &str =
    "it walks the interpreter's objects (`gc`), the test runner's among them";
pub(super) const W_INTERNALS: &str = "it reaches the test runner's internals";
pub(super) const W_GETATTR: &str = "it reaches the test runner through a computed name";
pub(super) const W_CTYPES_EXIT: &str = "it ends the process through `ctypes`";
pub(super) const W_CTYPES: &str = "it reaches into the interpreter through `ctypes`";
pub(super) const W_FAULT: &str = "it crashes the process through `faulthandler`";

pub(super) fn python(h: &mut Hits, ctx: &Ctx) {
    let st = h.st;
    let n = st.len();
    let mut env = PyEnv::default();
    let (in_import, imports) = py_imports(st, &mut env);
    star_import_aliases(&imports, &mut env);
    if !ctx.test_file {
        runner_import_hits(h, &imports);
    }
    let conftest = ctx.path.rsplit('/').next() == Some("conftest.py");
    for i in 0..n {
        if in_import.get(i).copied().unwrap_or(false) {
            continue;
        }
        let Some(w) = st.word(i) else { continue };
        if !conftest {
            internals_hit(h, i, w);
        }
        let prev = if i > 0 {
            st.t[i - 1]
        } else {
            Tk {
                s: 0,
                e: 0,
                text: "",
                lit: true,
            }
        };
        if !prev.lit && matches!(prev.text, "." | "def" | "class" | "as" | "import") {
            continue;
        }
        let Some(c) = py_chain(st, i, &env, 0) else {
            continue;
        };
        // `name = <module or member>`: an alias from here on.
        if st.starts[i] && c.segs.len() == 1 && st.is(c.end, "=") && !st.is(c.end + 1, "=") {
            if let Some(rhs) = py_chain(st, c.end + 1, &env, 0) {
                let to_end = rhs.end >= n || st.starts[rhs.end];
                if to_end && (rhs.imported || PY_MODULES.contains(&rhs.root())) && rhs.root() != "?"
                {
                    env.alias.insert(w.to_string(), (rhs.segs.clone(), true));
                }
            }
        }
        py_chain_hits(h, ctx, i, &c, &env);
    }
}

/// An import statement: the module, the members it names (`from m import
/// a, b`), and its tokens.
type PyImport = (String, Vec<String>, usize, usize);

/// Every import of the file, its names bound in `env`, and which tokens
/// belong to an import.
fn py_imports(st: &Stream, env: &mut PyEnv) -> (Vec<bool>, Vec<PyImport>) {
    let n = st.len();
    let mut in_import = vec![false; n];
    // (module, members, statement) of every import.
    let mut imports: Vec<PyImport> = Vec::new();
    // The start of the next logical line after each token.
    let mut next_start = vec![n; n + 1];
    for i in (0..n).rev() {
        next_start[i] = if i + 1 < n && st.starts[i + 1] {
            i + 1
        } else {
            next_start[i + 1]
        };
    }
    for i in 0..n {
        let at_start = st.starts[i] || (i > 0 && st.is(i - 1, ":"));
        let kw = st.word(i);
        if in_import[i] || !at_start || !matches!(kw, Some("import" | "from")) {
            continue;
        }
        let end = next_start[i];
        in_import[i..end].iter_mut().for_each(|b| *b = true);
        if kw == Some("import") {
            import_names(st, i, end, env, &mut imports);
        } else if let Some(import) = from_import(st, i, end, env) {
            imports.push(import);
        }
    }
    (in_import, imports)
}

/// `import a.b as c, d` at `i`, up to `end`.
fn import_names(st: &Stream, i: usize, end: usize, env: &mut PyEnv, imports: &mut Vec<PyImport>) {
    let mut j = i + 1;
    while j < end {
        let (module, k) = py_dotted(st, j);
        if module.is_empty() {
            break;
        }
        let (name, path, k) = if st.word(k) == Some("as") {
            (
                st.word(k + 1).unwrap_or("_").to_string(),
                dotted(&module),
                k + 2,
            )
        } else {
            let root = module.split('.').next().unwrap_or("").to_string();
            (root.clone(), vec![root], k)
        };
        env.alias.insert(name, (canonical(path), true));
        imports.push((module, Vec::new(), i, end));
        if !st.is(k, ",") {
            break;
        }
        j = k + 1;
    }
}

/// `from m import a as b, c` (or `*`) at `i`, up to `end`; None when it is
/// not one.
fn from_import(st: &Stream, i: usize, end: usize, env: &mut PyEnv) -> Option<PyImport> {
    let mut j = i + 1;
    let mut module = String::new();
    while st.is(j, ".") {
        module.push('.');
        j += 1;
    }
    let (m, k) = py_dotted(st, j);
    module.push_str(&m);
    if st.word(k) != Some("import") {
        return None;
    }
    let (mut j, stop) = if st.is(k + 1, "(") {
        (k + 2, st.close[k + 1].min(end))
    } else {
        (k + 1, end)
    };
    let mut members = Vec::new();
    while j < stop {
        if st.is(j, "*") {
            members.push("*".to_string());
            j += 1;
        } else if let Some(w) = st.word(j) {
            let (name, next) = if st.word(j + 1) == Some("as") {
                (st.word(j + 2).unwrap_or("_"), j + 3)
            } else {
                (w, j + 1)
            };
            let mut path = dotted(&module);
            path.push(w.to_string());
            env.alias.insert(name.to_string(), (canonical(path), true));
            members.push(w.to_string());
            j = next;
        } else {
            j += 1;
        }
    }
    Some((module, members, i, end))
}

/// `from os import *`: the module's dangerous members by their bare names.
fn star_import_aliases(imports: &[PyImport], env: &mut PyEnv) {
    for (module, members, _, _) in imports {
        if members.iter().any(|m| m == "*") {
            for d in PY_ENDS.iter().chain(&["sys.exit"]) {
                if let Some(member) =
                    d.strip_prefix(&format!("{}.", canonical(dotted(module)).join("."))[..])
                {
                    env.alias
                        .entry(member.to_string())
                        .or_insert_with(|| (dotted(d), true));
                }
            }
        }
    }
}

/// Code under test that imports the runner (not `unittest.mock` alone).
fn runner_import_hits(h: &mut Hits, imports: &[PyImport]) {
    for (module, members, a, b) in imports {
        let only_mock =
            module == "unittest" && !members.is_empty() && members.iter().all(|m| m == "mock");
        if runner_module(module) && !only_mock {
            h.push(
                RULE_PATCHES_RUNNER,
                format!("import {module}"),
                *a,
                *b,
                patch_msg(W_IMPORT),
            );
        }
    }
}

/// A name of the runner's internals at `i` (outside `conftest.py`).
fn internals_hit(h: &mut Hits, i: usize, w: &str) {
    let st = h.st;
    if PY_INTERNALS.binary_search(&w).is_ok() {
        h.push(
            RULE_PATCHES_RUNNER,
            format!("internals {w}"),
            i,
            i + 1,
            patch_msg(W_INTERNALS),
        );
    } else if w == "hook" && i >= 2 && st.is(i - 1, ".") && st.word(i - 2) == Some("config") {
        h.push(
            RULE_PATCHES_RUNNER,
            "internals config.hook".into(),
            i - 2,
            i + 1,
            patch_msg(W_INTERNALS),
        );
    }
}

pub(super) fn py_chain_hits(h: &mut Hits, ctx: &Ctx, i: usize, c: &Chain, env: &PyEnv) {
    py_ends_hits(h, ctx, i, c, env);
    let sys_modules = c.root() == "sys" && c.seg(1) == "modules";
    py_set_hits(h, i, c, env, sys_modules);
    if sys_modules {
        py_sys_modules_hits(h, ctx, i, c);
    }
    py_reach_hits(h, ctx, i, c);
}

/// A `patches-runner` hit over the chain `c` at `i`.
fn patch(h: &mut Hits, i: usize, c: &Chain, key: String, why: &'static str) {
    h.push(RULE_PATCHES_RUNNER, key, i, c.end, patch_msg(why));
}

/// The chain `c` at `i` ends the process or hooks its end.
fn py_ends_hits(h: &mut Hits, ctx: &Ctx, i: usize, c: &Chain, env: &PyEnv) {
    let st = h.st;
    let names = c.names();
    let root = c.root();
    let end = c.end;
    let call_args = |open: Option<usize>| open.map(|p| st.args(p)).unwrap_or_default();
    // Ending the process.
    let ends_why = if ctx.test_file {
        "test code ends the process itself"
    } else {
        "code the tests run ends the process itself"
    };
    if let Some(d) = PY_ENDS
        .iter()
        .find(|d| names == **d || names.starts_with(&format!("{d}.")))
    {
        let hooks = matches!(*d, "atexit.register" | "signal.signal");
        h.push(RULE_ENDS_RUN, format!("py {d}"), i, end, move |t| {
            if hooks {
                format!("code hooks the end of the test process (`{t}`): it runs when the tests end, and the exit status is its choice")
            } else {
                ends_msg(ends_why)(t)
            }
        });
    }
    if matches!(names.as_str(), "os.kill" | "os.killpg") {
        let own = call_args(c.first_call).first().is_some_and(|&(a, b)| {
            (b == a + 1 && st.is(a, "0"))
                || (a..b).any(|k| {
                    matches!(
                        st.word(k),
                        Some("getpid" | "getppid" | "getpgid" | "getpgrp")
                    )
                })
        });
        if own {
            h.push(
                RULE_ENDS_RUN,
                format!("py {names} own"),
                i,
                end,
                ends_msg(ends_why),
            );
        }
    }
    if ctx.test_file {
        let builtin_exit = matches!(names.as_str(), "exit" | "quit")
            && c.segs.len() >= 2
            && !c.imported
            && !env.alias.contains_key(root);
        if names == "sys.exit" || builtin_exit {
            h.push(
                RULE_ENDS_RUN,
                format!("py {names}"),
                i,
                end,
                ends_msg(ends_why),
            );
        }
    }
    if matches!(root, "os" | "sys" | "atexit" | "signal") && (c.dynamic || c.has("__dict__")) {
        h.push(RULE_ENDS_RUN, format!("py computed {root}"), i, end, move |t| {
            format!("code reaches `{root}` through a computed name (`{t}`): it can end the process where no reader sees it")
        });
    }
}

/// The chain `c` at `i` sets or patches an attribute of the runner or of
/// the builtins (`sys.modules` is read by [`py_sys_modules_hits`]).
fn py_set_hits(h: &mut Hits, i: usize, c: &Chain, env: &PyEnv, sys_modules: bool) {
    let st = h.st;
    let names = c.names();
    let end = c.end;
    let call_args = |open: Option<usize>| open.map(|p| st.args(p)).unwrap_or_default();
    if c.segs.len() >= 2 && !sys_modules && py_target(st, i, end) {
        if c.is_runner() {
            patch(h, i, c, format!("set {}", c.segs.join(".")), W_SET);
        } else if c.is_builtins() {
            patch(h, i, c, format!("set {}", c.segs.join(".")), W_BUILTIN);
        }
    }
    let setattr = matches!(
        names.as_str(),
        "setattr"
            | "delattr"
            | "builtins.setattr"
            | "builtins.delattr"
            | "object.__setattr__"
            | "object.__delattr__"
            | "type.__setattr__"
            | "type.__delattr__"
    ) && c.seg(names.split('.').count()) == "()";
    if setattr {
        let args = call_args(c.first_call);
        let target = args
            .first()
            .and_then(|&(a, b)| py_chain(st, a, env, 1).filter(|t| t.end == b));
        let name = args.get(1).and_then(|&(a, b)| st.lit_eval(a, b));
        match &target {
            Some(t) if t.is_runner() => {
                patch(h, i, c, format!("setattr {}", t.segs.join(".")), W_SET)
            }
            Some(t) if t.is_builtins() => {
                patch(h, i, c, format!("setattr {}", t.segs.join(".")), W_BUILTIN)
            }
            _ => {
                let plain = target.as_ref().is_some_and(|t| {
                    !t.imported
                        && !t.dynamic
                        && t.segs.iter().all(|s| is_word(s))
                        && !PY_MODULES.contains(&t.root())
                });
                if name.is_none() && !plain {
                    patch(h, i, c, "setattr computed".into(), W_SETATTR_DYN);
                }
            }
        }
    } else if c.segs.len() >= 2 || names == "patch" {
        let last = names.rsplit('.').next().unwrap_or("");
        if matches!(
            last,
            "setattr" | "delattr" | "patch" | "object" | "setitem" | "delitem" | "dict"
        ) {
            let args = call_args(c.first_call);
            if let Some(&(a, b)) = args.first() {
                if let Some((v, _)) = st.lit_eval(a, b) {
                    if runner_module(&v) {
                        patch(h, i, c, format!("patch {v}"), W_SET);
                    }
                } else if let Some(t) = py_chain(st, a, env, 1).filter(|t| t.end == b) {
                    if t.is_runner() {
                        patch(h, i, c, format!("patch {}", t.segs.join(".")), W_SET);
                    } else if t.root() == "sys" && t.seg(1) == "modules" && t.segs.len() == 2 {
                        let (open, close) = (
                            c.first_call.unwrap_or(0),
                            st.after(c.first_call.unwrap_or(0)),
                        );
                        let runner = (open..close)
                            .any(|k| st.t[k].lit && runner_module(&lit_value(st.t[k].text)));
                        if runner {
                            patch(h, i, c, "sys.modules runner".into(), W_SYS_MODULES_RUNNER);
                        }
                    }
                }
            }
        }
    }
}

/// The chain `c` at `i` reaches into `sys.modules`: the runner's entry, or
/// (in code under test) an entry by a computed key.
fn py_sys_modules_hits(h: &mut Hits, ctx: &Ctx, i: usize, c: &Chain) {
    let st = h.st;
    let call_args = |open: Option<usize>| open.map(|p| st.args(p)).unwrap_or_default();
    let key = c.seg(2);
    let runner_key = key
        .strip_prefix('[')
        .and_then(|k| k.strip_suffix(']'))
        .is_some_and(runner_module);
    let getter = matches!(key, "get" | "pop" | "setdefault") && c.seg(3) == "()";
    let getter_arg = if getter {
        call_args(c.first_call).first().map(|&(a, b)| {
            (
                st.lit_eval(a, b).map(|v| v.0),
                b == a + 1 && st.word(a) == Some("__name__"),
            )
        })
    } else {
        None
    };
    let runner_get = getter_arg
        .as_ref()
        .is_some_and(|(v, _)| v.as_deref().is_some_and(runner_module));
    if runner_key || runner_get {
        patch(h, i, c, "sys.modules runner".into(), W_SYS_MODULES_RUNNER);
    } else if !ctx.test_file {
        let literal_key = key.starts_with('[') && key != "[?]";
        let literal_get = getter_arg.is_some_and(|(v, name)| v.is_some() || name);
        let membership = c.segs.len() == 2 && i > 0 && st.word(i - 1) == Some("in");
        if !(literal_key || literal_get || membership) {
            patch(h, i, c, "sys.modules code".into(), W_SYS_MODULES);
        }
    }
}

/// The chain `c` at `i` imports the runner by name, walks the interpreter's
/// objects, or reaches the process through `ctypes` or `faulthandler`.
fn py_reach_hits(h: &mut Hits, ctx: &Ctx, i: usize, c: &Chain) {
    let st = h.st;
    let names = c.names();
    let root = c.root();
    let call_args = |open: Option<usize>| open.map(|p| st.args(p)).unwrap_or_default();
    for (v, pieces) in &c.imports {
        match v {
            None if !ctx.test_file => patch(h, i, c, "import computed".into(), W_DYN_IMPORT),
            Some(m) if runner_module(m) && *pieces => {
                patch(h, i, c, format!("import {m}"), W_DYN_RUNNER)
            }
            Some(m) if runner_module(m) && !ctx.test_file => {
                patch(h, i, c, format!("import {m}"), W_IMPORT)
            }
            _ => {}
        }
    }
    if root == "gc" && matches!(c.seg(1), "get_objects" | "get_referrers" | "get_referents") {
        patch(h, i, c, format!("gc {}", c.seg(1)), W_GC);
    }
    if c.is_runner() && (c.dynamic || c.has("__dict__")) {
        patch(h, i, c, format!("computed {root}"), W_GETATTR);
    }
    if root == "ctypes" || root == "_ctypes" {
        if c.has("pythonapi") {
            patch(h, i, c, "ctypes pythonapi".into(), W_CTYPES);
        }
        if c.segs.iter().any(|s| {
            matches!(
                s.as_str(),
                "_exit" | "exit" | "_Exit" | "quick_exit" | "abort" | "kill" | "raise"
            )
        }) {
            patch(h, i, c, "ctypes exit".into(), W_CTYPES_EXIT);
        }
        let last = names.rsplit('.').next().unwrap_or("");
        if matches!(last, "CDLL" | "PyDLL" | "LoadLibrary" | "find_library") || c.has("msvcrt") {
            let own = call_args(c.first_call).first().is_some_and(|&(a, b)| {
                (b == a + 1 && st.word(a) == Some("None"))
                    || st.lit_eval(a, b).is_some_and(|(v, _)| {
                        let v = v.to_ascii_lowercase();
                        v == "c"
                            || ["libc", "msvcrt", "ucrtbase", "libsystem"]
                                .iter()
                                .any(|l| v.contains(l))
                    })
            });
            if own || c.has("msvcrt") {
                patch(h, i, c, "ctypes libc".into(), W_CTYPES);
            }
        }
    }
    if root == "faulthandler" && c.seg(1).starts_with('_') && is_word(c.seg(1)) {
        patch(h, i, c, format!("faulthandler {}", c.seg(1)), W_FAULT);
    }
}
