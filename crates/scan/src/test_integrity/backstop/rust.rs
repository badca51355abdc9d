//! Backstop rules for Rust: code that runs before `main` (link sections,
//! constructors, assembly), redefined assertions, a stand-in `std`, and test
//! code that ends the process.

use super::stream::{lit_value, Stream};
use super::{
    before_msg, ends_msg, Ctx, Hits, ASSERT_NAMES, MAX_NEST, RULE_ASSERT_MACRO, RULE_ENDS_RUN,
    RULE_RUNS_BEFORE, STD_NAMES,
};
use std::collections::HashMap;

/// Whether the section `v` runs its functions before `main` (`Some(true)`)
/// or after it (`Some(false)`), matched by prefix (priorities and the
/// letters after `.CRT$XC` vary).
pub(super) fn section_runs(v: &str) -> Option<bool> {
    let v: String = v
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    const BEFORE: &[&str] = &[
        ".init_array",
        ".preinit_array",
        ".ctors",
        ".crt$xc",
        ".crt$xi",
        ".crt$xl",
    ];
    const AFTER: &[&str] = &[".fini_array", ".dtors", ".crt$xt", ".crt$xp"];
    if v == ".init" || v.contains("mod_init_func") || BEFORE.iter().any(|p| v.starts_with(p)) {
        Some(true)
    } else if v == ".fini" || v.contains("mod_term_func") || AFTER.iter().any(|p| v.starts_with(p))
    {
        Some(false)
    } else {
        None
    }
}

/// Whether assembly text `v` puts something in a constructor or destructor
/// section.
pub(super) fn asm_sections(v: &str) -> Option<bool> {
    let v = v.to_ascii_lowercase();
    const BEFORE: &[&str] = &[
        ".init_array",
        ".preinit_array",
        ".ctors",
        "mod_init_func",
        ".crt$xc",
        ".crt$xi",
        ".crt$xl",
    ];
    const AFTER: &[&str] = &[".fini_array", ".dtors", "mod_term_func", ".crt$xt"];
    if BEFORE.iter().any(|p| v.contains(p)) {
        Some(true)
    } else if AFTER.iter().any(|p| v.contains(p)) {
        Some(false)
    } else {
        None
    }
}

// ---------------------------------------------------------------------------
// Rust.

/// A name a `use` or `extern crate` binds, and the path it names.
pub(super) struct Bind {
    pub(super) name: String,
    pub(super) path: Vec<String>,
    /// The statement, as a token range.
    pub(super) stmt: (usize, usize),
    /// Bound by `extern crate`.
    pub(super) extern_crate: bool,
}

/// The bindings of the `use` tree at `i` (after `prefix`); returns the
/// token after the tree.
pub(super) fn use_tree(
    st: &Stream,
    mut i: usize,
    prefix: &[String],
    stmt: (usize, usize),
    out: &mut (Vec<Bind>, Vec<Vec<String>>),
    depth: usize,
) -> usize {
    let mut path = prefix.to_vec();
    if st.path_sep(i) {
        i += 2;
    }
    loop {
        if st.is(i, "{") {
            let end = st.close[i].min(st.len());
            if depth < MAX_NEST {
                let mut j = i + 1;
                while j < end {
                    j = use_tree(st, j, &path, stmt, out, depth + 1);
                    while j < end && !st.is(j, ",") {
                        j = st.after(j);
                    }
                    j += 1;
                }
            }
            return end + 1;
        }
        if st.is(i, "*") {
            out.1.push(path);
            return i + 1;
        }
        let Some(w) = st.word(i) else {
            return i + 1;
        };
        if st.path_sep(i + 1) {
            path.push(w.to_string());
            i += 3;
            continue;
        }
        let (alias, next) = if st.word(i + 1) == Some("as") {
            (st.word(i + 2), i + 3)
        } else {
            (None, i + 1)
        };
        if w != "self" {
            path.push(w.to_string());
        }
        let name = alias.unwrap_or_else(|| path.last().map_or("", String::as_str));
        if !name.is_empty() && name != "_" {
            out.0.push(Bind {
                name: name.to_string(),
                path,
                stmt,
                extern_crate: false,
            });
        }
        return next;
    }
}

/// The token ending the statement that starts at `i` (its `;`, or the
/// closing brace around it).
pub(super) fn statement_end(st: &Stream, i: usize) -> usize {
    let mut j = i + 1;
    while j < st.len() && !st.is(j, ";") && !st.is(j, "}") {
        j = st.after(j);
    }
    j.min(st.len().saturating_sub(1))
}

/// Whether a resolved Rust path ends the process.
pub(super) fn rust_exit(p: &[String]) -> bool {
    const TAILS: &[&[&str]] = &[
        &["process", "exit"],
        &["process", "abort"],
        &["libc", "_exit"],
        &["libc", "exit"],
        &["libc", "abort"],
        &["unistd", "_exit"],
        &["intrinsics", "abort"],
    ];
    TAILS.iter().any(|t| {
        p.len() >= t.len()
            && p[p.len() - t.len()..]
                .iter()
                .zip(t.iter())
                .all(|(a, b)| a == b)
    })
}

/// The path at `i` (`a::b::c`) and the token after it.
pub(super) fn rust_path(st: &Stream, i: usize) -> (Vec<String>, usize) {
    let mut segs = Vec::new();
    let mut k = i;
    while let Some(w) = st.word(k) {
        segs.push(w.to_string());
        if st.path_sep(k + 1) && st.word(k + 3).is_some() {
            k += 3;
        } else {
            k += 1;
            break;
        }
    }
    (segs, k)
}

pub(super) fn runner_msg(name: String) -> impl Fn(&str) -> String {
    move |t| {
        format!("`{t}` was added: a stand-in named `{name}` takes the place of the crate the tests' `{name}::` paths and assertions name")
    }
}

pub(super) fn assert_msg(name: String, renamed: bool) -> impl Fn(&str) -> String {
    move |t| {
        if renamed {
            format!("a macro was renamed `{name}!` (`{t}`): it replaces the standard assertion in the code that sees it")
        } else {
            format!("a macro named `{name}!` was defined: it replaces the standard assertion in the code that sees it")
        }
    }
}

pub(super) fn rust(h: &mut Hits, ctx: &Ctx) {
    let st = h.st;
    let n = st.len();
    let RustImports {
        binds,
        globs,
        in_use,
    } = rust_imports(st);
    let alias: HashMap<&str, &Vec<String>> =
        binds.iter().map(|b| (b.name.as_str(), &b.path)).collect();
    let resolve = |mut p: Vec<String>| {
        for _ in 0..4 {
            let Some(first) = p.first() else { break };
            if matches!(first.as_str(), "crate" | "self" | "super") {
                break;
            }
            match alias.get(first.as_str()) {
                Some(to) if to.first() != Some(first) || to.len() > 1 => {
                    let mut q = (*to).clone();
                    q.extend(p.drain(1..));
                    p = q;
                }
                _ => break,
            }
        }
        p
    };
    import_hits(h, &binds);
    for i in 0..n {
        let prev_joins = i > 0 && (st.is(i - 1, ".") || (i > 1 && st.path_sep(i - 2)));
        if st.is(i, "#") {
            let mut j = i + 1;
            if st.is(j, "!") {
                j += 1;
            }
            if st.is(j, "[") {
                rust_attribute(h, i, j, &resolve);
            }
            continue;
        }
        let Some(w) = st.word(i) else { continue };
        match w {
            "macro_rules" if st.is(i + 1, "!") => assert_macro(h, i, i + 2),
            "macro" => assert_macro(h, i, i + 1),
            "global_asm" | "asm" | "naked_asm" if st.is(i + 1, "!") => rust_asm(h, i),
            "link_section" if st.is(i + 1, "=") => rust_link_section(h, i),
            "mod" => {
                if let Some(name) = st
                    .word(i + 1)
                    .filter(|n| matches!(*n, "std" | "core" | "alloc"))
                {
                    h.push(
                        super::super::RULE_RUNNER,
                        format!("mod {name}"),
                        i,
                        i + 2,
                        runner_msg(name.to_string()),
                    );
                }
            }
            _ if !in_use.get(i).copied().unwrap_or(false)
                && !prev_joins
                && ctx.in_tests(st.t[i].s) =>
            {
                exit_in_tests(h, i, &alias, &globs, &resolve)
            }
            _ => {}
        }
    }
}

/// What a file's `use` and `extern crate` statements bind.
struct RustImports {
    binds: Vec<Bind>,
    /// Paths imported with `*`.
    globs: Vec<Vec<String>>,
    /// Which tokens belong to those statements.
    in_use: Vec<bool>,
}

fn rust_imports(st: &Stream) -> RustImports {
    let n = st.len();
    let mut uses = (Vec::<Bind>::new(), Vec::<Vec<String>>::new());
    let mut in_use = vec![false; n];
    let mut i = 0;
    while i < n {
        let w = st.word(i);
        if w == Some("use") {
            let end = statement_end(st, i);
            use_tree(st, i + 1, &[], (i, end + 1), &mut uses, 0);
            in_use[i..=end].iter_mut().for_each(|b| *b = true);
            i = end + 1;
            continue;
        }
        if w == Some("extern") && st.word(i + 1) == Some("crate") {
            let end = statement_end(st, i);
            if let Some(krate) = st.word(i + 2) {
                let alias = (st.word(i + 3) == Some("as"))
                    .then(|| st.word(i + 4))
                    .flatten();
                let name = alias.unwrap_or(krate);
                if name != "_" {
                    uses.0.push(Bind {
                        name: name.to_string(),
                        path: vec![krate.to_string()],
                        stmt: (i, end + 1),
                        extern_crate: true,
                    });
                }
            }
            in_use[i..=end].iter_mut().for_each(|b| *b = true);
            i = end + 1;
            continue;
        }
        i += 1;
    }
    let (binds, globs) = uses;
    RustImports {
        binds,
        globs,
        in_use,
    }
}

/// A standard assertion renamed by `use … as`, and `std`/`core`/`alloc`
/// bound to a stand-in.
fn import_hits(h: &mut Hits, binds: &[Bind]) {
    for b in binds {
        let renamed = b.path.last() != Some(&b.name);
        if ASSERT_NAMES.binary_search(&b.name.as_str()).is_ok() && renamed && !b.extern_crate {
            h.push(
                RULE_ASSERT_MACRO,
                format!("use as {}: {}", b.name, b.path.join("::")),
                b.stmt.0,
                b.stmt.1,
                assert_msg(b.name.clone(), true),
            );
        }
        let std_name = if b.extern_crate {
            STD_NAMES.contains(&b.name.as_str())
        } else {
            matches!(b.name.as_str(), "std" | "core" | "alloc")
        };
        if std_name && renamed {
            h.push(
                super::super::RULE_RUNNER,
                format!("{} as {}", b.path.join("::"), b.name),
                b.stmt.0,
                b.stmt.1,
                runner_msg(b.name.clone()),
            );
        }
    }
}

/// A macro named like a standard assertion, its name at `name_at`.
fn assert_macro(h: &mut Hits, i: usize, name_at: usize) {
    if let Some(name) = h.st.word(name_at) {
        if ASSERT_NAMES.binary_search(&name).is_ok() {
            h.push(
                RULE_ASSERT_MACRO,
                format!("macro {name}"),
                i,
                name_at + 1,
                assert_msg(name.to_string(), false),
            );
        }
    }
}

/// Assembly at `i` that puts code in a constructor or destructor section.
fn rust_asm(h: &mut Hits, i: usize) {
    let st = h.st;
    let open = i + 2;
    let end = st.after(open);
    for k in open..end.min(open + 4096) {
        if st.t[k].lit {
            if let Some(before) = asm_sections(&lit_value(st.t[k].text)) {
                h.push(
                    RULE_RUNS_BEFORE,
                    format!("asm {before}"),
                    i,
                    end,
                    before_msg(before),
                );
                break;
            }
        }
    }
}

/// A path at `i` in test code that ends the process (resolved through
/// aliases and glob imports).
fn exit_in_tests(
    h: &mut Hits,
    i: usize,
    alias: &HashMap<&str, &Vec<String>>,
    globs: &[Vec<String>],
    resolve: &dyn Fn(Vec<String>) -> Vec<String>,
) {
    let st = h.st;
    let (segs, end) = rust_path(st, i);
    let single = segs.len() == 1 && !alias.contains_key(segs[0].as_str());
    let resolved = resolve(segs.clone());
    let exits = rust_exit(&resolved)
        || (single
            && globs.iter().any(|g| {
                let mut p = g.clone();
                p.push(segs[0].clone());
                rust_exit(&p)
            }));
    if exits {
        let end = if st.is(end, "(") { st.after(end) } else { end };
        let key = if single && !rust_exit(&resolved) {
            format!("glob {}", segs[0])
        } else {
            resolved.join("::")
        };
        h.push(
            RULE_ENDS_RUN,
            format!("tests {key}"),
            i,
            end,
            ends_msg("test code ends the process itself"),
        );
    }
}

/// An attribute `#[…]` whose `[` is at `open`, starting at `hash`.
pub(super) fn rust_attribute(
    h: &mut Hits,
    hash: usize,
    open: usize,
    resolve: &dyn Fn(Vec<String>) -> Vec<String>,
) {
    let st = h.st;
    let end = st.close[open].min(st.len());
    let mut k = open + 1;
    if st.word(k) == Some("unsafe") && st.is(k + 1, "(") {
        k += 2;
    }
    let (segs, _) = rust_path(st, k);
    let path = resolve(segs);
    let last = path.last().map_or("", String::as_str);
    let ctor = path.iter().any(|s| s == "ctor" || s == "dtor")
        || matches!(last, "constructor" | "destructor");
    if ctor {
        let before = !matches!(last, "dtor" | "destructor");
        h.push(
            RULE_RUNS_BEFORE,
            format!("attr {}", path.join("::")),
            hash,
            end + 1,
            before_msg(before),
        );
    }
    if path.len() == 1 && last == "proc_macro" {
        let mut j = end + 1;
        let stop = (end + 40).min(st.len());
        while j < stop && !st.is(j, "fn") {
            j += 1;
        }
        if let Some(name) = st
            .word(j + 1)
            .filter(|n| ASSERT_NAMES.binary_search(n).is_ok())
        {
            h.push(
                RULE_ASSERT_MACRO,
                format!("macro {name}"),
                hash,
                j + 2,
                assert_msg(name.to_string(), false),
            );
        }
    }
}

/// `link_section = …` at `i`, in an attribute (also within `unsafe(…)` or
/// `cfg_attr(…)`).
pub(super) fn rust_link_section(h: &mut Hits, i: usize) {
    let st = h.st;
    let mut v = i + 2;
    while v < st.len() && !st.is(v, ",") && !st.is(v, ")") && !st.is(v, "]") && !st.is(v, ";") {
        v = st.after(v);
    }
    // Shown from the attribute's `#` when it is near.
    let start = (i.saturating_sub(8)..i)
        .rev()
        .find(|&k| st.is(k, "#"))
        .unwrap_or(i);
    let end = if st.is(v, ")") || st.is(v, "]") {
        let mut e = v;
        while e < st.len() && e < v + 4 && (st.is(e, ")") || st.is(e, "]")) {
            e += 1;
        }
        e
    } else {
        v
    };
    match st.lit_eval(i + 2, v) {
        Some((value, _)) => {
            if let Some(before) = section_runs(&value) {
                h.push(RULE_RUNS_BEFORE, format!("link_section {value}"), start, end, before_msg(before));
            }
        }
        None => h.push(RULE_RUNS_BEFORE, "link_section ?".into(), start, end, |t| {
            format!("code was put in a link section the code does not name (`{t}`): it can run before `main` and print or decide a test run's results")
        }),
    }
}
