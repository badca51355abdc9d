//! Rust imports: `use` trees expanded, `extern crate`, and fully
//! qualified paths used without a `use`.

use super::{re, Scan, MAX_DEPTH, MAX_STMT};
use regex::Regex;
use std::sync::OnceLock;

pub(super) fn rust(scan: &Scan<'_>, out: &mut Vec<(u32, String)>) {
    static START: OnceLock<Regex> = OnceLock::new();
    static EXTERN: OnceLock<Regex> = OnceLock::new();
    static QUALIFIED: OnceLock<Regex> = OnceLock::new();
    let start = re(
        &START,
        r"^(?:#\[[^\]]*\]\s*)*(?:pub(?:\s*\([^)]*\))?\s+)?use\s+(.*)$",
    );
    let extern_crate = re(
        &EXTERN,
        r"^(?:#\[[^\]]*\]\s*)*(?:pub(?:\s*\([^)]*\))?\s+)?extern\s+crate\s+([A-Za-z_][A-Za-z0-9_]*)",
    );
    // A path of two or more segments not preceded by another segment
    // (`my::std::process` is `my::…`, not `std::…`); its `::` may be
    // spaced out or split over lines.
    let qualified = re(
        &QUALIFIED,
        r"(?:^|[^\w:$#'])(?:::\s*)?((?:r#)?[\p{L}_][\p{L}\p{N}_]*(?:\s*::\s*(?:r#)?[\p{L}_][\p{L}\p{N}_]*)+)",
    );
    // `use` statements are read as trees; the rest of the code is
    // searched for qualified paths.
    // The bytes of each line (from the start) that a `use` or `extern
    // crate` statement covers: up to its `;`, or all of it.
    let mut in_use = vec![0usize; scan.lines.len()];
    let upto_semicolon = |code: &str| code.find(';').map_or(code.len(), |i| i + 1);
    let mut pending: Option<String> = None;
    for (k, m) in scan.masked.iter().enumerate() {
        let line = scan.lines[k].0;
        let t = m.code.trim();
        if let Some(acc) = pending.as_mut() {
            in_use[k] = upto_semicolon(&m.code);
            acc.push(' ');
            acc.push_str(t);
            if let Some(i) = acc.find(';') {
                let stmt = acc[..i].to_string();
                pending = None;
                use_tree(&stmt, line, out);
            } else if acc.len() > MAX_STMT {
                let stmt = std::mem::take(acc);
                pending = None;
                use_tree(&stmt, line, out);
            }
            continue;
        }
        if let Some(c) = extern_crate.captures(t) {
            out.push((line, c[1].to_string()));
            in_use[k] = upto_semicolon(&m.code);
            continue;
        }
        if let Some(c) = start.captures(t) {
            in_use[k] = upto_semicolon(&m.code);
            let rest = c.get(1).map_or("", |m| m.as_str());
            match rest.find(';') {
                Some(i) => use_tree(&rest[..i], line, out),
                None => pending = Some(rest.to_string()),
            }
        }
    }
    if let Some(stmt) = pending {
        let line = scan.lines.last().map_or(0, |l| l.0);
        use_tree(&stmt, line, out);
    }
    // What follows a `use …;` on its line is code like any other.
    let mut code = Vec::with_capacity(scan.code.len());
    for (k, m) in scan.masked.iter().enumerate() {
        if k > 0 {
            code.push(b'\n');
        }
        let covered = in_use[k];
        code.extend(std::iter::repeat_n(b' ', covered));
        code.extend_from_slice(&m.code.as_bytes()[covered..]);
    }
    // Only whole ASCII-delimited prefixes were blanked: still UTF-8.
    let code = String::from_utf8(code).unwrap_or_default();
    for c in qualified.captures_iter(&code) {
        let m = c.get(1).expect("group 1");
        let path = compact(m.as_str()).replace("r#", "");
        out.push((scan.line_at(m.start()), path));
    }
}

fn use_tree(tree: &str, line: u32, out: &mut Vec<(u32, String)>) {
    let mut mods = Vec::new();
    expand_tree(tree, "", 0, &mut mods);
    out.extend(mods.into_iter().map(|m| (line, m)));
}

fn join_path(prefix: &str, item: &str) -> String {
    match (prefix.is_empty(), item.is_empty()) {
        (true, _) => item.to_string(),
        (_, true) => prefix.to_string(),
        _ => format!("{prefix}::{item}"),
    }
}

fn expand_tree(tree: &str, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let t = tree.trim();
    let t = t.strip_prefix("::").unwrap_or(t).trim();
    if t.is_empty() {
        if !prefix.is_empty() {
            out.push(prefix.to_string());
        }
        return;
    }
    if depth > MAX_DEPTH {
        out.push(join_path(prefix, &compact(t)));
        return;
    }
    if let Some(open) = t.find('{') {
        let head = compact(&t[..open]);
        let head = head.trim_end_matches(':');
        let new_prefix = join_path(prefix, head);
        // Find the matching close brace (or take the rest if unbalanced).
        let inner_all = &t[open + 1..];
        let mut level = 0usize;
        let mut end = inner_all.len();
        for (i, ch) in inner_all.char_indices() {
            match ch {
                '{' => level += 1,
                '}' if level == 0 => {
                    end = i;
                    break;
                }
                '}' => level -= 1,
                _ => {}
            }
        }
        let inner = &inner_all[..end];
        let mut any = false;
        for part in split_top(inner) {
            let p = part.trim();
            if p.is_empty() {
                continue;
            }
            any = true;
            let item = strip_as(p);
            if item == "self" {
                out.push(new_prefix.clone());
            } else {
                expand_tree(p, &new_prefix, depth + 1, out);
            }
        }
        if !any {
            out.push(new_prefix);
        }
        return;
    }
    let item = compact(strip_as(t));
    let item = item.strip_suffix("::*").unwrap_or(&item);
    let item = if item == "*" || item == "self" {
        ""
    } else {
        item
    };
    let full = join_path(prefix, item);
    if !full.is_empty() {
        out.push(full);
    }
}

pub(super) fn strip_as(s: &str) -> &str {
    static AS: OnceLock<Regex> = OnceLock::new();
    let r = re(&AS, r"\s+as\s+");
    match r.find(s) {
        Some(m) => s[..m.start()].trim(),
        None => s.trim(),
    }
}

fn compact(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

fn split_top(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut level = 0usize;
    let mut start = 0;
    for (i, ch) in s.char_indices() {
        match ch {
            '{' => level += 1,
            '}' => level = level.saturating_sub(1),
            ',' if level == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}
