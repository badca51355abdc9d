//! The architecture as a test. The workspace's crates depend only
//! downward (`rascal-core` < `rascal-scan`, `rascal-exec` < `rascal`: the
//! compiler already refuses a cycle, this names the order), and inside the
//! one module tree they make together, data flows one way through the
//! folders and no file depends on itself through others. The import graph
//! is read from `crate::…`, `super::…`, `self::…` and `rascal_…::` paths
//! in the sources (the same thing a reader follows), resolved to the file
//! that defines the module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Folders (top-level modules) from the bottom up: each may use only the
/// ones before it (and itself).
const LAYERS: &[&str] = &[
    "digest",
    "text",
    "config",
    "model",
    "git",
    "egress",
    "exec",
    "agents",
    "layers",
    "store",
    "output",
    "changes",
    "pipeline",
    "gc",
    "finalize",
    "doctor",
    "init",
    "error",
    "run_handle",
    "tui",
    "cli",
];

/// The workspace's crates from the bottom up: package, source folder, and
/// where its modules sit in the one module tree (`rascal-scan`'s scanners
/// are placed as `layers::secrets`, …: the verification layers).
const CRATES: &[(&str, &str, &str)] = &[
    ("rascal-core", "crates/core/src", ""),
    ("rascal-scan", "crates/scan/src", "layers"),
    ("rascal-exec", "crates/exec/src", ""),
    ("rascal-engine", "crates/engine/src", ""),
    ("rascal-tui", "crates/tui/src", "tui"),
    ("rascal", "src", ""),
];

/// The crates each crate may depend on: the TUI only on the engine and
/// the core (no git, store or container library of its own).
const ALLOWED: &[(&str, &[&str])] = &[
    ("rascal-core", &[]),
    ("rascal-scan", &["rascal-core"]),
    ("rascal-exec", &["rascal-core"]),
    (
        "rascal-engine",
        &["rascal-core", "rascal-scan", "rascal-exec"],
    ),
    ("rascal-tui", &["rascal-core", "rascal-engine"]),
    (
        "rascal",
        &[
            "rascal-core",
            "rascal-scan",
            "rascal-exec",
            "rascal-engine",
            "rascal-tui",
        ],
    ),
];

/// The core's folders: a path into them (`rascal_core::model`) is the
/// core's from any crate.
const CORE: &[&str] = &["config", "digest", "model", "text"];

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

/// Paths used by one file, as module paths, read with a real parser: the
/// file's items minus those under `#[cfg(test)]` (unit tests may reach
/// anywhere below; they are not part of the shipped graph), then every
/// `crate::…`, `super::…` and `self::…` path in their tokens — in `use`
/// trees with groups nested to any depth (`use super::{a, b::{c, d}}`), in
/// expressions and types, and inside macro calls. Comments are not tokens
/// and strings are literals, so neither can hide or invent an edge.
fn used_paths(code: &str, module: &str) -> Result<Vec<Vec<String>>, String> {
    let file = syn::parse_file(code).map_err(|e| e.to_string())?;
    let here: Vec<String> = module.split("::").map(String::from).collect();
    let mut out = Vec::new();
    for item in file.items.iter().filter(|i| !is_test_only(i)) {
        walk_item(item, &here, &mut out);
    }
    Ok(out)
}

/// Whether an item is compiled only for tests (`#[cfg(test)]`).
fn is_test_only(item: &syn::Item) -> bool {
    use quote::ToTokens;
    let attrs: &[syn::Attribute] = match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    };
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .to_token_stream()
                .to_string()
                .replace(' ', "")
                .eq("cfg(test)")
    })
}

/// One item's paths; an inline `mod x { … }` is walked as module `here::x`
/// (its own test-only items left out).
fn walk_item(item: &syn::Item, here: &[String], out: &mut Vec<Vec<String>>) {
    use quote::ToTokens;
    if let syn::Item::Mod(m) = item {
        if let Some((_, items)) = &m.content {
            let mut inner = here.to_vec();
            inner.push(m.ident.to_string());
            for i in items.iter().filter(|i| !is_test_only(i)) {
                walk_item(i, &inner, out);
            }
            return;
        }
    }
    let tokens: Vec<proc_macro2::TokenTree> = item.to_token_stream().into_iter().collect();
    walk_tokens(&tokens, here, out);
}

/// Every rooted path in a token sequence (groups are entered).
fn walk_tokens(tokens: &[proc_macro2::TokenTree], here: &[String], out: &mut Vec<Vec<String>>) {
    use proc_macro2::TokenTree;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Group(g) => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                walk_tokens(&inner, here, out);
                i += 1;
            }
            TokenTree::Ident(id)
                if ["crate", "super", "self"].contains(&id.to_string().as_str())
                    || crate_root(&id.to_string()).is_some() =>
            {
                // Not a path root when it follows `::` (`a::self`) or is a
                // lone `self` receiver.
                let after_colons = i >= 2 && is_colons(&tokens[i - 2..i]);
                if after_colons || !tokens.get(i + 1..i + 3).is_some_and(is_colons) {
                    i += 1;
                    continue;
                }
                let mut base: Vec<String> = match id.to_string().as_str() {
                    "crate" => Vec::new(),
                    other if crate_root(other).is_some() => crate_root(other).unwrap_or_default(),
                    "self" => here.to_vec(),
                    _ => here[..here.len().saturating_sub(1)].to_vec(),
                };
                i = read_path(tokens, i + 1, &mut base, out);
            }
            _ => i += 1,
        }
    }
}

/// Where a workspace crate's root sits in the one module tree, when a
/// path names the crate (`rascal_exec::git::…` is `git::…`,
/// `rascal_scan::secrets` is `layers::secrets`).
fn crate_root(name: &str) -> Option<Vec<String>> {
    CRATES
        .iter()
        .find(|c| c.0.replace('-', "_") == name)
        .map(|c| {
            c.2.split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        })
}

fn is_colons(t: &[proc_macro2::TokenTree]) -> bool {
    use proc_macro2::{Spacing, TokenTree};
    matches!(t, [TokenTree::Punct(a), TokenTree::Punct(b)]
        if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
}

/// Read `::seg::seg…` (and a final `::{…}` group of use-trees) from `i`,
/// pushing each full path found; returns the index after the path.
fn read_path(
    tokens: &[proc_macro2::TokenTree],
    mut i: usize,
    base: &mut Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    use proc_macro2::{Delimiter, TokenTree};
    while tokens.get(i..i + 2).is_some_and(is_colons) {
        match tokens.get(i + 2) {
            Some(TokenTree::Ident(seg)) => {
                let seg = seg.to_string();
                if seg == "super" {
                    base.pop();
                } else if seg != "self" {
                    base.push(seg);
                }
                i += 3;
            }
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                for tree in inner.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
                {
                    read_use_tree(tree, base.clone(), out);
                }
                return i + 3;
            }
            _ => {
                // `::*` or `::<T>`: the path so far is what is used.
                break;
            }
        }
    }
    out.push(base.clone());
    i
}

/// One use-tree inside a group: `a`, `a::b`, `a::{…}`, `self`, `*`, `a as b`.
fn read_use_tree(tree: &[proc_macro2::TokenTree], base: Vec<String>, out: &mut Vec<Vec<String>>) {
    use proc_macro2::TokenTree;
    match tree.first() {
        Some(TokenTree::Ident(first)) => {
            let mut p = base;
            match first.to_string().as_str() {
                "self" => {}
                "super" => {
                    p.pop();
                }
                seg => p.push(seg.to_string()),
            }
            read_path(tree, 1, &mut p, out);
        }
        Some(TokenTree::Group(_)) => {
            let mut p = base;
            read_path(tree, 0, &mut p, out);
        }
        _ => {
            if !tree.is_empty() {
                out.push(base);
            }
        }
    }
}

/// File-level dependency graph of the sources under `src` (one crate,
/// its modules at the top): module → modules it uses (other than itself).
fn graph_of(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    graph_from(&modules(src), |_, p| p)
}

/// The graph of `modules`, each file's used paths first placed in the one
/// module tree by `place(module, path)`.
fn graph_from(
    modules: &BTreeMap<String, PathBuf>,
    place: impl Fn(&str, Vec<String>) -> Vec<String>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut g = BTreeMap::new();
    for (module, path) in modules {
        let code = std::fs::read_to_string(path).unwrap();
        let used = used_paths(&code, module)
            .unwrap_or_else(|e| panic!("{}: cannot parse: {e}", path.display()));
        let deps: BTreeSet<String> = used
            .into_iter()
            .map(|p| place(module, p))
            .filter_map(|p| resolve(modules, &p))
            .filter(|m| m != module)
            .collect();
        g.insert(module.clone(), deps);
    }
    g
}

/// Crates whose one error (`error.rs`) stands beside the layering, not in
/// it: it folds the errors of the crate's own modules (so it uses them)
/// and every module returns it (so they use it) — the crate's `Error`,
/// as `thiserror` crates are built. The engine's `error` is ranked: it
/// folds other crates' errors and only the CLI and the TUI use it.
const ERRORS_BESIDE: &[&str] = &["rascal-core", "rascal-exec"];

/// Every module of every crate of the workspace, in the one module tree.
fn workspace_modules() -> BTreeMap<String, PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = BTreeMap::new();
    for (package, dir, prefix) in CRATES {
        for (m, p) in modules(&root.join(dir)) {
            if ERRORS_BESIDE.contains(package) && top(&m) == "error" {
                continue;
            }
            let m = if prefix.is_empty() {
                m
            } else {
                format!("{prefix}::{m}")
            };
            assert!(out.insert(m.clone(), p).is_none(), "{m} is in two crates");
        }
    }
    out
}

/// The workspace's graph: a path used in a crate whose modules sit under a
/// prefix is placed under it when it names one of that crate's own
/// folders (`crate::app` in the TUI is `tui::app`); a folder of a lower
/// crate (`rascal_engine::store`, `rascal_core::model`) stays as it is.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let prefixed: Vec<(&str, BTreeSet<String>)> = CRATES
        .iter()
        .filter(|c| !c.2.is_empty())
        .map(|c| {
            let own = modules(&root.join(c.1))
                .into_keys()
                .map(|m| top(&m).to_string())
                .collect();
            (c.2, own)
        })
        .collect();
    // The modules of the crates whose error stands beside the layering:
    // their `crate::error::…` is that error, no module of the tree.
    let beside: BTreeSet<String> = CRATES
        .iter()
        .filter(|c| ERRORS_BESIDE.contains(&c.0))
        .flat_map(|c| modules(&root.join(c.1)).into_keys())
        .collect();
    graph_from(&workspace_modules(), |module, mut p| {
        if beside.contains(module) && p.first().is_some_and(|s| s == "error") {
            return vec!["<the crate's own error>".to_string()];
        }
        if let Some((prefix, own)) = prefixed.iter().find(|x| top(module) == x.0) {
            let first = p.first().map(String::as_str).unwrap_or("");
            let lower = LAYERS.contains(&first) && !own.contains(first);
            if first != *prefix && !CORE.contains(&first) && !lower {
                p.insert(0, prefix.to_string());
            }
        }
        p
    })
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
        "top-level modules missing from LAYERS in tests/it/architecture.rs: {unranked:?}"
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

/// The import cycles of a file graph (Tarjan's strongly connected
/// components), each as its files joined by ` ↔ `.
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
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
    let mut s = State {
        g,
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
    s.cycles.iter().map(|c| c.join(" ↔ ")).collect()
}

#[test]
fn no_file_depends_on_itself_through_others() {
    let cycles = cycles(&graph());
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
    // parser stay in config/ (rascal-core).
    let outside: Vec<String> = workspace_modules()
        .into_iter()
        .filter(|(m, _)| top(m) != "config")
        .filter(|(_, p)| std::fs::read_to_string(p).unwrap().contains("serde_yaml"))
        .map(|(m, _)| m)
        .collect();
    assert!(
        outside.is_empty(),
        "serde_yaml used outside config/ (rascal-core): {outside:?}"
    );
}

/// A planted two-file cycle under a temporary `src/`: `a/x.rs` uses
/// `a::y` plainly, and `a/y.rs` uses `a::x` in the form given.
fn planted(y_uses_x: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("a/mod.rs"), "pub mod x;\npub mod y;\n").unwrap();
    std::fs::write(src.join("a/x.rs"), "pub fn f() { crate::a::y::g() }\n").unwrap();
    std::fs::write(src.join("a/y.rs"), y_uses_x).unwrap();
    cycles(&graph_of(src))
}

#[test]
fn a_planted_cycle_is_found_in_every_import_form() {
    let forms = [
        ("a crate path in an expression", "pub fn g() { crate::a::x::f() }\n"),
        ("use super::x", "use super::x;\npub fn g() { x::f() }\n"),
        ("a super group", "use super::{x, y as _};\npub fn g() { x::f() }\n"),
        (
            "a nested crate group",
            "use crate::{a::{x::{self, f}}};\npub fn g() { f() }\n",
        ),
        ("a glob", "use super::x::*;\npub fn g() { f() }\n"),
        ("inside a macro call", "pub fn g() { let _ = format!(\"{:?}\", crate::a::x::f()); }\n"),
        ("an inline module's super::super", "mod inner { pub fn h() { super::super::x::f() } }\npub fn g() {}\n"),
        (
            // Text that reads `#[cfg(test)]` in a doc comment hides nothing:
            // the edge after it is still read.
            "after #[cfg(test)] in a doc comment",
            "/// Unit tests below are marked #[cfg(test)] as usual.\npub fn g() {}\npub fn h() { crate::a::x::f() }\n",
        ),
        (
            "after #[cfg(test)] in a string",
            "pub const S: &str = \"#[cfg(test)]\";\npub fn g() { super::x::f() }\n",
        ),
    ];
    for (form, code) in forms {
        let found = planted(code);
        assert_eq!(found, vec!["a::x ↔ a::y".to_string()], "{form}: {code}");
    }
}

#[test]
fn test_only_items_and_comments_add_no_edges() {
    let none = [
        "#[cfg(test)]\nmod tests { use super::x; }\npub fn g() {}\n",
        "#[cfg(test)]\nuse crate::a::x;\npub fn g() {}\n",
        "// crate::a::x::f()\n/* use super::x; */\npub fn g() {}\n",
        "/// Calls `crate::a::x::f`.\npub fn g() { let _ = \"crate::a::x\"; }\n",
    ];
    for code in none {
        assert!(planted(code).is_empty(), "{code}");
    }
}

/// The packages a crate's manifest depends on (any dependency section).
fn dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let doc: toml::Table = text.parse().unwrap();
    let mut out = Vec::new();
    for (key, value) in &doc {
        if key.ends_with("dependencies") {
            if let Some(t) = value.as_table() {
                out.extend(t.keys().cloned());
            }
        }
    }
    out
}

#[test]
fn crates_depend_only_on_crates_below_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rank = |name: &str| CRATES.iter().position(|c| c.0 == name);
    let mut wrong = Vec::new();
    for (i, (name, dir, _)) in CRATES.iter().enumerate() {
        let manifest = root.join(dir).parent().unwrap().join("Cargo.toml");
        let deps = dependencies(&manifest);
        for dep in deps.iter().filter(|d| d.starts_with("rascal")) {
            // Below it, and among the ones it may use: the scanners and
            // the system side are siblings, neither uses the other.
            let allowed = ALLOWED
                .iter()
                .find(|a| a.0 == *name)
                .map_or(&[][..], |a| a.1);
            match rank(dep) {
                Some(r) if r < i && allowed.contains(&dep.as_str()) => {}
                _ => wrong.push(format!("{name} depends on {dep}")),
            }
        }
        // The lower crates stay free of the runtimes above them.
        if matches!(*name, "rascal-core" | "rascal-scan") {
            for heavy in ["tokio", "git2", "bollard", "kube", "rusqlite", "ratatui"] {
                if deps.iter().any(|d| d == heavy) {
                    wrong.push(format!("{name} depends on {heavy}"));
                }
            }
        }
        // The TUI renders and asks the engine: git, the journal and the
        // container engines are the engine's business.
        if *name == "rascal-tui" {
            for engine_only in ["git2", "bollard", "kube", "rusqlite"] {
                if deps.iter().any(|d| d == engine_only) {
                    wrong.push(format!("{name} depends on {engine_only}"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "crate dependencies out of order: {wrong:?}"
    );
    // The reader sees the real manifests.
    assert!(dependencies(&root.join("Cargo.toml")).contains(&"rascal-core".to_string()));
}

#[test]
fn every_crate_of_the_workspace_is_read() {
    let members: BTreeSet<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("crates"))
            .unwrap()
            .map(|e| format!("crates/{}/src", e.unwrap().file_name().to_string_lossy()))
            .collect();
    let read: BTreeSet<String> = CRATES
        .iter()
        .filter(|c| c.1 != "src")
        .map(|c| c.1.to_string())
        .collect();
    assert_eq!(
        members, read,
        "CRATES in tests/it/architecture.rs must list every crate"
    );
}

/// The crates table of docs/architecture.md: each crate's row and the
/// crates its last column says it may use.
fn documented_crates() -> BTreeMap<String, BTreeSet<String>> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let mut out = BTreeMap::new();
    for line in doc.lines().filter(|l| l.starts_with("| `rascal")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let name = cells[0].trim_matches('`').to_string();
        let uses = cells
            .last()
            .unwrap()
            .split('`')
            .filter(|w| w.starts_with("rascal"))
            .map(str::to_string)
            .collect();
        out.insert(name, uses);
    }
    out
}

/// The crates each manifest depends on (normal dependencies only).
fn manifest_crates() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    CRATES
        .iter()
        .map(|(name, dir, _)| {
            let manifest = root.join(dir).parent().unwrap().join("Cargo.toml");
            let text = std::fs::read_to_string(manifest).unwrap();
            let doc: toml::Table = text.parse().unwrap();
            let deps = doc
                .get("dependencies")
                .and_then(|d| d.as_table())
                .map(|t| {
                    t.keys()
                        .filter(|k| k.starts_with("rascal"))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            (name.to_string(), deps)
        })
        .collect()
}

#[test]
fn the_documented_crate_graph_is_the_real_one() {
    let documented = documented_crates();
    let real = manifest_crates();
    assert_eq!(
        documented, real,
        "docs/architecture.md's crates table (left) differs from the manifests (right): add the crate's row or the edge there"
    );
    // The reader sees real rows and real edges.
    assert!(real["rascal-tui"].contains("rascal-engine"));
    assert_eq!(documented.len(), CRATES.len());
}

/// The paths a crate root's `use` items bring in that name a folder of a
/// workspace crate (`use rascal_core::model;`, `pub use rascal_exec::{git,
/// exec};`, `use rascal_tui as tui;`): with one, `crate::model` hides
/// which crate `model` is. `folders(crate)` are that crate's top modules.
fn re_aliased(code: &str, folders: &dyn Fn(&str) -> Option<BTreeSet<String>>) -> Vec<String> {
    fn paths(tree: &syn::UseTree, base: Vec<String>, out: &mut Vec<Vec<String>>) {
        let with = |s: &syn::Ident| {
            let mut p = base.clone();
            p.push(s.to_string());
            p
        };
        match tree {
            syn::UseTree::Path(p) => paths(&p.tree, with(&p.ident), out),
            syn::UseTree::Name(n) => out.push(with(&n.ident)),
            syn::UseTree::Rename(r) => out.push(with(&r.ident)),
            syn::UseTree::Glob(_) => out.push(base),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| paths(t, base.clone(), out)),
        }
    }
    let file = syn::parse_file(code).expect("a crate root parses");
    let mut found = Vec::new();
    for item in &file.items {
        let syn::Item::Use(u) = item else { continue };
        let mut all = Vec::new();
        paths(&u.tree, Vec::new(), &mut all);
        for p in all {
            let Some(own) = folders(&p[0]) else { continue };
            // The crate itself, a glob of its root, or one of its folders.
            if p.len() == 1 || (p.len() == 2 && own.contains(&p[1])) {
                found.push(p.join("::"));
            }
        }
    }
    found
}

/// The top modules of each workspace crate, by the name code uses for it.
fn crate_folders(name: &str) -> Option<BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = CRATES.iter().find(|c| c.0.replace('-', "_") == name)?.1;
    Some(
        modules(&root.join(dir))
            .into_keys()
            .map(|m| top(&m).to_string())
            .collect(),
    )
}

#[test]
fn no_crate_root_re_aliases_another_crates_folders() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for (package, dir, _) in CRATES {
        let code = std::fs::read_to_string(root.join(dir).join("lib.rs")).unwrap();
        for p in re_aliased(&code, &crate_folders) {
            found.push(format!("{package}: use {p}"));
        }
    }
    assert!(
        found.is_empty(),
        "a crate root names another crate's folder as its own; write the owning crate's path (rascal_exec::git::…) where it is used instead: {found:?}"
    );
}

#[test]
fn a_planted_re_alias_is_found_in_every_use_form() {
    for (form, code) in [
        ("a plain use", "use rascal_core::model;\n"),
        ("a pub group", "pub use rascal_exec::{git, exec};\n"),
        ("a renamed crate", "pub use rascal_tui as tui;\n"),
        ("a glob of a crate", "pub use rascal_engine::*;\n"),
        ("a renamed folder", "use rascal_core::{text as words};\n"),
    ] {
        assert!(
            !re_aliased(code, &crate_folders).is_empty(),
            "{form}: {code}"
        );
    }
    // Chosen items are a surface, not an alias.
    let items =
        "pub use rascal_exec::exec::runtime;\npub use rascal_core::model::verdict::Verdict;\n";
    assert_eq!(re_aliased(items, &crate_folders), Vec::<String>::new());
}
