//! Backstop rules for Go and C: code that runs before `main` or ends the
//! process.

use super::rust::section_runs;
use super::stream::lit_value;
use super::{before_msg, ends_msg, Ctx, Hits, RULE_ENDS_RUN, RULE_RUNS_BEFORE};
use std::collections::HashMap;

pub(super) fn go(h: &mut Hits, ctx: &Ctx) {
    let st = h.st;
    let n = st.len();
    // Import name → package path; packages imported with `.`.
    let mut alias: HashMap<String, String> = HashMap::new();
    let mut dot: Vec<String> = Vec::new();
    for i in 0..n {
        if st.word(i) != Some("import") || (i > 0 && st.is(i - 1, ".")) {
            continue;
        }
        let grouped = st.is(i + 1, "(");
        let (mut j, stop) = if grouped {
            (i + 2, st.close[i + 1].min(n))
        } else {
            (i + 1, (i + 3).min(n))
        };
        while j < stop {
            let name = if st.t[j].lit {
                None
            } else if st.word(j).is_some() || st.is(j, ".") {
                j += 1;
                Some(st.t[j - 1].text)
            } else {
                j += 1;
                continue;
            };
            let Some(lit) = st.t.get(j).filter(|t| t.lit) else {
                continue;
            };
            let path = lit_value(lit.text);
            j += 1;
            match name {
                Some(".") => dot.push(path),
                Some("_") => {}
                Some(a) => {
                    alias.insert(a.to_string(), path);
                }
                None => {
                    let last = path.rsplit('/').next().unwrap_or(&path).to_string();
                    alias.insert(last, path);
                }
            }
            if !grouped {
                break;
            }
        }
    }
    if !ctx.test_file {
        return;
    }
    const EXITS: &[&str] = &["os.Exit", "syscall.Exit", "golang.org/x/sys/unix.Exit"];
    for i in 0..n {
        let Some(w) = st.word(i) else { continue };
        if i > 0 && st.is(i - 1, ".") {
            continue;
        }
        let (full, open) = if st.is(i + 1, ".") && st.word(i + 2).is_some() {
            let pkg = alias.get(w).cloned().unwrap_or_else(|| w.to_string());
            (format!("{pkg}.{}", st.t[i + 2].text), i + 3)
        } else if !dot.is_empty() {
            match dot
                .iter()
                .find(|p| EXITS.contains(&format!("{p}.{w}").as_str()))
            {
                Some(p) => (format!("{p}.{w}"), i + 1),
                None => continue,
            }
        } else {
            continue;
        };
        if !EXITS.contains(&full.as_str()) {
            continue;
        }
        // `os.Exit(m.Run())`: the usual end of a `TestMain`.
        let args = if st.is(open, "(") {
            st.args(open)
        } else {
            Vec::new()
        };
        let run = args.len() == 1 && {
            let (a, b) = args[0];
            b == a + 5
                && st.word(a).is_some()
                && st.is(a + 1, ".")
                && st.word(a + 2) == Some("Run")
                && st.is(a + 3, "(")
                && st.is(a + 4, ")")
        };
        if !run {
            let end = st.after(open);
            h.push(
                RULE_ENDS_RUN,
                format!("go {full}"),
                i,
                end,
                ends_msg("test code ends the process itself"),
            );
        }
    }
}

pub(super) fn c(h: &mut Hits) {
    let st = h.st;
    let n = st.len();
    for i in 0..n {
        let t = st.t[i];
        if t.lit {
            if let Some(before) = section_runs(&lit_value(t.text)) {
                h.push(
                    RULE_RUNS_BEFORE,
                    format!("c section {before}"),
                    i,
                    i + 1,
                    before_msg(before),
                );
            }
            continue;
        }
        let attr = |w: Option<&str>| match w {
            Some("constructor" | "__constructor__") => Some(true),
            Some("destructor" | "__destructor__") => Some(false),
            _ => None,
        };
        match t.text {
            "__attribute__" | "__attribute" if st.is(i + 1, "(") => {
                let end = st.after(i + 1);
                if let Some(before) = (i + 2..end.min(i + 256)).find_map(|k| attr(st.word(k))) {
                    h.push(
                        RULE_RUNS_BEFORE,
                        format!("c attr {before}"),
                        i,
                        end,
                        before_msg(before),
                    );
                }
            }
            "gnu" | "__gnu__" if st.path_sep(i + 1) => {
                if let Some(before) = attr(st.word(i + 3)) {
                    h.push(
                        RULE_RUNS_BEFORE,
                        format!("c attr {before}"),
                        i,
                        i + 4,
                        before_msg(before),
                    );
                }
            }
            "#" if st.word(i + 1) == Some("pragma") => {
                let before = match st.word(i + 2) {
                    Some("init") => Some(true),
                    Some("fini") => Some(false),
                    _ => None,
                };
                if let Some(before) = before {
                    h.push(
                        RULE_RUNS_BEFORE,
                        format!("c pragma {before}"),
                        i,
                        i + 3,
                        before_msg(before),
                    );
                }
            }
            _ => {}
        }
    }
}
