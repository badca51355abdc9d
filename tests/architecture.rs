//! The architecture as a test: data flows one way through the folders of
//! `src/`, and no file depends on itself through others. The import graph is
//! read from `crate::…` and `super::…` paths in the sources (the same thing a
//! reader follows), resolved to the file that defines the module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Folders (top-level modules) from the bottom up: each may use only the
/// ones before it (and itself).
const LAYERS: &[&str] = &[
    "digest", "text", "config", "model", "git", "egress", "exec", "agents", "layers", "store",
    "output", "pipeline", "gc", "finalize", "doctor", "init", "tui", "cli",
];

/// Module path (`a::b`) → source file, for every module in `src/`.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().map(|s| s.as_str()) == Some("mod") {
                parts.pop();
            }
            if parts == ["lib"] || parts == ["main"] {
                continue;
            }
            out.insert(parts.join("::"), path);
        }
    }
    out
}

/// The longest module path that prefixes `segments`.
fn resolve(modules: &BTreeMap<String, PathBuf>, segments: &[String]) -> Option<String> {
    (1..=segments.len())
        .rev()
        .map(|n| segments[..n].join("::"))
        .find(|m| modules.contains_key(m))
}

/// Paths used by one file, as module paths: `crate::a::b::{c, d}` gives
/// `a::b::c` and `a::b::d`; `super::x` is resolved against `module`.
fn used_paths(code: &str, module: &str, is_mod_rs: bool) -> Vec<Vec<String>> {
    let path_re = regex::Regex::new(r"\b(crate|super)((?:::\w+)+)(::\{([^}]*)\})?").unwrap();
    let mut out = Vec::new();
    for line in code.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        for cap in path_re.captures_iter(line) {
            let mut base: Vec<String> = match &cap[1] {
                "crate" => Vec::new(),
                _ => {
                    // `super` of a file `a/b.rs` (module a::b) is `a`; of
                    // `a/b/mod.rs` (module a::b) it is `a` as well.
                    let mut m: Vec<String> = module.split("::").map(String::from).collect();
                    let _ = is_mod_rs;
                    m.pop();
                    m
                }
            };
            base.extend(
                cap[2]
                    .split("::")
                    .filter(|s| !s.is_empty() && *s != "super")
                    .map(String::from),
            );
            match cap.get(4) {
                Some(group) => {
                    for item in group.as_str().split(',') {
                        let name = item.trim().split("::").next().unwrap_or("").trim();
                        if name.is_empty() || name == "self" || name == "*" {
                            out.push(base.clone());
                            continue;
                        }
                        let mut p = base.clone();
                        p.push(name.to_string());
                        out.push(p);
                    }
                }
                None => out.push(base),
            }
        }
    }
    out
}

/// File-level dependency graph: module → modules it uses (other than itself).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = modules(&src);
    let mut g = BTreeMap::new();
    for (module, path) in &modules {
        let code = std::fs::read_to_string(path).unwrap();
        // Unit tests inside a file may reach anywhere below; they are not
        // part of the shipped graph.
        let code = code.split("#[cfg(test)]").next().unwrap_or("");
        let is_mod_rs = path.file_name().unwrap() == "mod.rs";
        let deps: BTreeSet<String> = used_paths(code, module, is_mod_rs)
            .iter()
            .filter_map(|p| resolve(&modules, p))
            .filter(|m| m != module)
            .collect();
        g.insert(module.clone(), deps);
    }
    g
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap()
}

#[test]
fn every_folder_is_ranked() {
    let g = graph();
    let unranked: BTreeSet<&str> = g
        .keys()
        .map(|m| top(m))
        .filter(|t| !LAYERS.contains(t))
        .collect();
    assert!(
        unranked.is_empty(),
        "top-level modules missing from LAYERS in tests/architecture.rs: {unranked:?}"
    );
}

#[test]
fn lower_folders_never_use_higher_ones() {
    let rank = |m: &str| {
        LAYERS
            .iter()
            .position(|l| *l == top(m))
            .unwrap_or(usize::MAX)
    };
    let mut wrong = Vec::new();
    for (from, deps) in graph() {
        for to in deps {
            if top(&from) != top(&to) && rank(&to) > rank(&from) {
                wrong.push(format!("{from} uses {to}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "upward dependencies (order: {}):\n  {}",
        LAYERS.join(" < "),
        wrong.join("\n  ")
    );
}

#[test]
fn no_file_depends_on_itself_through_others() {
    // Tarjan's strongly connected components over the file graph.
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        on_stack: BTreeSet<&'a str>,
        stack: Vec<&'a str>,
        next: usize,
        cycles: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.g.contains_key(w) {
                continue;
            }
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.cycles.push(comp);
            }
        }
    }
    let g = graph();
    let mut s = State {
        g: &g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        on_stack: BTreeSet::new(),
        stack: Vec::new(),
        next: 0,
        cycles: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    let cycles: Vec<String> = s.cycles.iter().map(|c| c.join(" ↔ ")).collect();
    assert!(
        cycles.is_empty(),
        "import cycles:\n  {}",
        cycles.join("\n  ")
    );
}

#[test]
fn the_graph_is_read_from_the_sources() {
    // The checker itself must see real edges, or the two tests above pass
    // on nothing.
    let g = graph();
    assert!(g["pipeline"].iter().any(|m| m.starts_with("model::")));
    assert!(g.len() > 40, "only {} modules found", g.len());
}

#[test]
fn yaml_is_read_only_in_config() {
    // Domain types take plain strings and numbers; the YAML schema and its
    // parser stay in src/config/.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let outside: Vec<String> = modules(&src)
        .into_iter()
        .filter(|(m, _)| top(m) != "config")
        .filter(|(_, p)| std::fs::read_to_string(p).unwrap().contains("serde_yaml"))
        .map(|(m, _)| m)
        .collect();
    assert!(
        outside.is_empty(),
        "serde_yaml used outside src/config/: {outside:?}"
    );
}
