//! JavaScript/TypeScript imports: `import` / `export … from`, `import()`,
//! `require`, and the literal code given to `eval` / `Function`.

use super::mask::Class;
use super::{eval_literal, literal_at, re, Lang, Scan, MAX_EVAL_DEPTH};
use regex::Regex;
use std::sync::OnceLock;

pub(super) fn js(scan: &Scan<'_>, depth: usize, out: &mut Vec<(u32, String)>) {
    static FROM: OnceLock<Regex> = OnceLock::new();
    static BARE: OnceLock<Regex> = OnceLock::new();
    static CALL: OnceLock<Regex> = OnceLock::new();
    static EVAL: OnceLock<Regex> = OnceLock::new();
    // `import … from 'x'`, `export … from 'x'`: `from` followed by a
    // string is only ever the source of an import or export.
    let from = re(&FROM, r#"\bfrom\s*(['"`])"#);
    let bare = re(&BARE, r#"\bimport\s*(['"`])"#);
    let call = re(
        &CALL,
        r#"(?:\bimport|\brequire(?:\s*\.\s*resolve)?)\s*(?:\?\.\s*)?\(\s*(['"`])"#,
    );
    for r in [from, bare, call] {
        for c in r.captures_iter(&scan.scan) {
            let kw = c.get(0).expect("match").start();
            let quote = c.get(1).expect("group 1").start();
            // The keyword must be code, the module a string.
            if scan.class_at(kw) != Class::Code || scan.class_at(quote) != Class::Str {
                continue;
            }
            let Some(m) = literal_at(scan, quote) else {
                continue;
            };
            let m = m.trim();
            let m = m.strip_prefix("node:").unwrap_or(m);
            out.push((scan.line_at(kw), m.to_string()));
        }
    }
    // Literal code given to eval / Function is code.
    let eval = re(&EVAL, r#"\b(?:eval|Function)\s*\(\s*(['"`])"#);
    if depth < MAX_EVAL_DEPTH {
        for c in eval.captures_iter(&scan.scan) {
            let kw = c.get(0).expect("match").start();
            let quote = c.get(1).expect("group 1").start();
            if scan.class_at(kw) != Class::Code || scan.class_at(quote) != Class::Str {
                continue;
            }
            if let Some(src) = literal_at(scan, quote) {
                eval_literal(&src, scan.line_at(kw), Lang::JavaScript, depth, out);
            }
        }
    }
}
