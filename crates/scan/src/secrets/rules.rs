//! The rule set the secret scan matches: rascal's built-in rules (the data
//! file `crates/scan/rules/secrets.toml`, compiled into the binary) merged with a
//! repository's own (`.rascal/secrets.toml`, `.gitleaks.toml`, read from
//! the base commit by `config::secrets`), compiled once: a regex per rule,
//! one Aho-Corasick automaton over every rule's keywords, the allowlists.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::Regex;

use crate::Error;
use rascal_core::config::secrets::{
    self as spec, AllowlistSpec, Certainty, Check, Dialect, Level, Note, RuleFile, RuleSpec,
    Target, ValueFilter,
};
use rascal_core::model::verdict::{Confidence, Severity};

/// Keywords are matched on their first this-many bytes.
const KEYWORD_BYTES: usize = 8;

/// Where the built-in rules come from (for messages).
pub const BUILTIN_FILE: &str = "crates/scan/rules/secrets.toml";
const BUILTIN: &str = include_str!("../../rules/secrets.toml");

/// The built-in rule file, parsed once. It is tested to parse, to compile
/// and to find every one of its examples.
pub fn builtin() -> &'static RuleFile {
    static FILE: OnceLock<RuleFile> = OnceLock::new();
    FILE.get_or_init(|| {
        spec::parse(BUILTIN_FILE, BUILTIN, Dialect::Rascal)
            .unwrap_or_else(|e| panic!("built-in secret rules: {e}"))
    })
}

/// The built-in rules, compiled once per process.
fn builtin_compiled() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        builtin()
            .rules
            .iter()
            .map(|r| Rule::compile(r, "built-in").unwrap_or_else(|e| panic!("{e}")))
            .collect()
    })
}

/// Which capture is the secret.
#[derive(Debug, Clone, Copy)]
enum SecretAt {
    /// A group (named `secret`, or gitleaks' `secretGroup`).
    Group(usize),
    /// The first group that took part in the match, else the whole match
    /// (gitleaks' default).
    FirstGroup,
}

/// One compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub id: String,
    pub description: String,
    regex: Option<Regex>,
    secret: SecretAt,
    /// The group with the random part (`body`), for entropy and placeholders.
    body: Option<usize>,
    /// The group with the name of an assignment (`key`).
    key: Option<usize>,
    /// The group with a URL's user (`user`) and host (`host`).
    user: Option<usize>,
    host: Option<usize>,
    pub keywords: Vec<String>,
    pub entropy: Option<f64>,
    path: Option<Regex>,
    allowlists: Vec<Allowlist>,
    pub severity: Severity,
    pub confidence: Confidence,
    pub check: Option<Check>,
    pub drop: Vec<ValueFilter>,
    /// sha256 (hex) of the published sample values of the rule, sorted.
    published: Vec<String>,
    /// Where the rule comes from: `built-in` or `FILE:LINE`.
    pub origin: String,
}

/// One compiled allowlist.
#[derive(Debug, Clone)]
struct Allowlist {
    all: bool,
    target: Target,
    regexes: Vec<Regex>,
    stopwords: Vec<String>,
    paths: Vec<Regex>,
    rules: Vec<String>,
}

/// What a match is, for allowlists: the secret, the whole match, the line
/// and the file.
pub struct Candidate<'a> {
    pub secret: &'a str,
    pub matched: &'a str,
    pub line: &'a str,
    pub path: &'a str,
}

fn compile(rx: &str, what: &str) -> Result<Regex, Error> {
    Regex::new(rx).map_err(|e| Error::Rules(format!("{what}: bad regex: {e}")))
}

impl Allowlist {
    fn compile(a: &AllowlistSpec, what: &str) -> Result<Allowlist, Error> {
        Ok(Allowlist {
            all: a.all,
            target: a.target,
            regexes: a
                .regexes
                .iter()
                .map(|r| compile(r, what))
                .collect::<Result<_, _>>()?,
            stopwords: a.stopwords.clone(),
            paths: a
                .paths
                .iter()
                .map(|r| compile(r, what))
                .collect::<Result<_, _>>()?,
            rules: a.rules.clone(),
        })
    }

    /// Does this allowlist let `c` through? With `condition = "AND"` every
    /// kind it lists must match; else any one.
    fn allows(&self, c: &Candidate) -> bool {
        let text = match self.target {
            Target::Secret => c.secret,
            Target::Match => c.matched,
            Target::Line => c.line,
        };
        let mut checks = Vec::with_capacity(3);
        if !self.regexes.is_empty() {
            checks.push(self.regexes.iter().any(|r| r.is_match(text)));
        }
        if !self.stopwords.is_empty() {
            let lower = c.secret.to_lowercase();
            checks.push(self.stopwords.iter().any(|w| lower.contains(w.as_str())));
        }
        if !self.paths.is_empty() {
            checks.push(self.paths.iter().any(|r| r.is_match(c.path)));
        }
        if self.all {
            !checks.is_empty() && checks.iter().all(|&b| b)
        } else {
            checks.iter().any(|&b| b)
        }
    }

    /// Is this allowlist only about paths (so it can skip a file whole)?
    fn paths_only(&self) -> bool {
        self.regexes.is_empty() && self.stopwords.is_empty() && !self.paths.is_empty()
    }
}

impl Rule {
    fn compile(r: &RuleSpec, origin: &str) -> Result<Rule, Error> {
        let what = format!("secret rule `{}` ({origin})", r.id);
        let regex = r
            .regex
            .as_deref()
            .map(|rx| compile(rx, &what))
            .transpose()?;
        let group = |name: &str| {
            regex
                .as_ref()
                .and_then(|re| re.capture_names().position(|n| n == Some(name)))
        };
        let secret = match (group("secret"), r.secret_group) {
            (Some(i), _) => SecretAt::Group(i),
            (None, Some(g)) if g > 0 => SecretAt::Group(g),
            _ => SecretAt::FirstGroup,
        };
        Ok(Rule {
            id: r.id.clone(),
            description: if r.description.trim().is_empty() {
                format!("match of rule {}", r.id)
            } else {
                r.description.clone()
            },
            secret,
            body: group("body"),
            key: group("key"),
            user: group("user"),
            host: group("host"),
            regex,
            keywords: r.keywords.clone(),
            entropy: r.entropy,
            path: r.path.as_deref().map(|p| compile(p, &what)).transpose()?,
            allowlists: r
                .allowlists
                .iter()
                .map(|a| Allowlist::compile(a, &what))
                .collect::<Result<_, _>>()?,
            severity: match r.severity {
                Some(Level::Info) => Severity::Info,
                Some(Level::Warning) => Severity::Warning,
                Some(Level::Critical) => Severity::Critical,
                Some(Level::Error) | None => Severity::Error,
            },
            confidence: match r.confidence {
                Some(Certainty::Low) => Confidence::Low,
                Some(Certainty::Medium) => Confidence::Medium,
                Some(Certainty::High) | None => Confidence::High,
            },
            check: r.check,
            drop: r
                .drop
                .clone()
                .unwrap_or_else(|| vec![ValueFilter::Placeholder]),
            published: {
                let mut p = r.published.clone();
                p.sort_unstable();
                p
            },
            origin: origin.to_string(),
        })
    }

    pub fn regex(&self) -> Option<&Regex> {
        self.regex.as_ref()
    }

    /// Is `secret` one of the rule's published sample values? Exact: only
    /// the very value published is, so it cannot let another one through.
    pub fn published(&self, secret: &str) -> bool {
        !self.published.is_empty()
            && self
                .published
                .binary_search(&rascal_core::digest::digest(secret))
                .is_ok()
    }

    /// A rule with only a `path`: the file's name is the finding.
    pub fn path_only(&self) -> bool {
        self.regex.is_none()
    }

    /// Does the rule look at a file at `path`?
    pub fn applies_to(&self, path: &str) -> bool {
        self.path.as_ref().is_none_or(|p| p.is_match(path))
    }

    /// The secret, its random part, the assignment's name and the URL's
    /// user of a match, as byte ranges of the text.
    pub fn parts(&self, caps: &regex::Captures) -> Option<Parts> {
        let whole = caps.get(0)?;
        let secret = match self.secret {
            SecretAt::Group(i) => caps.get(i)?,
            SecretAt::FirstGroup => (1..caps.len()).find_map(|i| caps.get(i)).unwrap_or(whole),
        };
        let body = self.body.and_then(|i| caps.get(i)).unwrap_or(secret);
        Some(Parts {
            matched: whole.range(),
            secret: secret.range(),
            body: body.range(),
            key: self.key.and_then(|i| caps.get(i)).map(|m| m.range()),
            user: self.user.and_then(|i| caps.get(i)).map(|m| m.range()),
            host: self.host.and_then(|i| caps.get(i)).map(|m| m.range()),
        })
    }
}

/// The parts of one match, as byte ranges.
pub struct Parts {
    pub matched: std::ops::Range<usize>,
    pub secret: std::ops::Range<usize>,
    pub body: std::ops::Range<usize>,
    pub key: Option<std::ops::Range<usize>>,
    pub user: Option<std::ops::Range<usize>>,
    pub host: Option<std::ops::Range<usize>>,
}

/// The rules in force, compiled, with the keyword prefilter.
#[derive(Debug)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
    global: Vec<Allowlist>,
    keywords: AhoCorasick,
    /// Keyword pattern → the rules it lets run.
    keyword_rules: Vec<Vec<u16>>,
    /// Rules without keywords: they run on every text.
    unkeyed: Vec<u16>,
    /// What the rule files hold but rascal does not apply, by file.
    pub notes: Vec<(String, Note)>,
    /// One line on where the rules come from.
    pub summary: String,
    /// A `.gitleaks.toml` is in use, so its inline `gitleaks:allow` marker
    /// counts like rascal's.
    pub gitleaks_marker: bool,
}

impl RuleSet {
    /// The rules in force given a repository's rule files (first wins for
    /// an id): `.rascal/secrets.toml`'s, then `.gitleaks.toml`'s, then the
    /// built-in ones — unless the gitleaks file does not extend the default
    /// (`[extend] useDefault = true`), which, as in gitleaks, replaces them.
    /// Rules named in `disable` / `disabledRules` are left out.
    pub fn new(files: &[RuleFile]) -> Result<RuleSet, Error> {
        let use_builtin = files
            .iter()
            .filter(|f| f.dialect == Dialect::Gitleaks)
            .all(|f| f.use_default);
        let disabled: Vec<&str> = files
            .iter()
            .flat_map(|f| f.disabled.iter().map(String::as_str))
            .collect();
        let mut rules: Vec<Rule> = Vec::new();
        let mut counts: Vec<(String, usize)> = Vec::new();
        for f in files {
            let mut n = 0;
            for r in &f.rules {
                if disabled.contains(&r.id.as_str()) || rules.iter().any(|x| x.id == r.id) {
                    continue;
                }
                rules.push(Rule::compile(r, &format!("{}:{}", f.file, r.line))?);
                n += 1;
            }
            counts.push((f.file.clone(), n));
        }
        let mut builtin_n = 0;
        if use_builtin {
            for r in builtin_compiled() {
                if disabled.contains(&r.id.as_str()) || rules.iter().any(|x| x.id == r.id) {
                    continue;
                }
                rules.push(r.clone());
                builtin_n += 1;
            }
        }
        let global = files
            .iter()
            .flat_map(|f| f.allowlists.iter().map(move |a| (f, a)))
            .map(|(f, a)| Allowlist::compile(a, &format!("allowlist in {}", f.file)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut patterns: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<u16>> = Vec::new();
        let mut unkeyed = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            let i = u16::try_from(i)
                .map_err(|_| Error::Rules("more than 65535 secret rules".to_string()))?;
            if r.keywords.is_empty() {
                unkeyed.push(i);
            }
            for kw in &r.keywords {
                // A keyword's first bytes occur wherever it does: keeping
                // at most KEYWORD_BYTES of each keeps the automaton small
                // enough to stay in cache (a few hundred keywords).
                let mut end = kw.len().min(KEYWORD_BYTES);
                while !kw.is_char_boundary(end) {
                    end -= 1;
                }
                let kw = &kw[..end];
                match patterns.iter().position(|p| p == kw) {
                    Some(p) => keyword_rules[p].push(i),
                    None => {
                        patterns.push(kw.to_string());
                        keyword_rules.push(vec![i]);
                    }
                }
            }
        }
        // A DFA: a few hundred keywords, searched on every line, where an
        // NFA's per-byte work would dominate the scan.
        let keywords = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&patterns)
            .map_err(|e| Error::Rules(format!("secret keywords: {e}")))?;
        let summary = summary(&rules, builtin_n, use_builtin, &counts, &disabled);
        Ok(RuleSet {
            rules,
            global,
            keywords,
            keyword_rules,
            unkeyed,
            notes: files
                .iter()
                .flat_map(|f| f.warnings.iter().map(|n| (f.file.clone(), n.clone())))
                .collect(),
            summary,
            gitleaks_marker: files.iter().any(|f| f.dialect == Dialect::Gitleaks),
        })
    }

    /// The rules whose keywords occur in `text` (and those without
    /// keywords), in rule order, into `out` (cleared first).
    pub fn candidates(&self, text: &str, out: &mut Vec<u16>) {
        out.clear();
        for m in self.keywords.find_overlapping_iter(text) {
            out.extend_from_slice(&self.keyword_rules[m.pattern().as_usize()]);
        }
        if out.is_empty() && self.unkeyed.is_empty() {
            return;
        }
        out.extend_from_slice(&self.unkeyed);
        out.sort_unstable();
        out.dedup();
    }

    /// Is `c`, a match of `rule`, let through by the rule's allowlists or
    /// by a global one?
    pub fn allowed(&self, rule: &Rule, c: &Candidate) -> bool {
        rule.allowlists.iter().any(|a| a.allows(c))
            || self
                .global
                .iter()
                .filter(|a| a.rules.is_empty() || a.rules.contains(&rule.id))
                .any(|a| a.allows(c))
    }

    /// Is the file at `path` skipped for every rule by a global allowlist
    /// that lists only paths?
    pub fn path_allowed(&self, path: &str) -> bool {
        self.global.iter().any(|a| {
            a.rules.is_empty() && a.paths_only() && a.paths.iter().any(|r| r.is_match(path))
        })
    }
}

fn summary(
    rules: &[Rule],
    builtin: usize,
    use_builtin: bool,
    counts: &[(String, usize)],
    disabled: &[&str],
) -> String {
    let mut parts = Vec::new();
    if use_builtin {
        parts.push(format!("{builtin} built-in"));
    }
    for (file, n) in counts {
        parts.push(format!("{n} from {file}"));
    }
    let mut s = format!(
        "{}: {}",
        rascal_core::text::plural(rules.len() as u64, "secret rule"),
        parts.join(", ")
    );
    if !use_builtin {
        s.push_str(&format!(
            "; rascal's built-in rules are off: {} does not say [extend] useDefault = true",
            spec::GITLEAKS_FILE
        ));
    }
    if !disabled.is_empty() {
        s.push_str(&format!("; disabled: {}", disabled.join(", ")));
    }
    s
}

/// Characters of each class an example template may ask for.
fn class(name: &str) -> Option<&'static str> {
    Some(match name {
        "alnum" => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        "hex" => "0123456789abcdef",
        "HEX" => "0123456789ABCDEF",
        "upnum" => "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        "lownum" => "abcdefghijklmnopqrstuvwxyz0123456789",
        "lower" => "abcdefghijklmnopqrstuvwxyz",
        "upper" => "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "letters" => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        "digit" => "0123456789",
        "b64" => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        "b64url" => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
        "base32" => "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
        "lbase32" => "abcdefghijklmnopqrstuvwxyz234567",
        "bech32" => "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
        _ => return None,
    })
}

/// An example line with its `{class:n}`, `{class:lo-hi}` and `{uuid}`
/// placeholders filled with pseudo-random characters from `seed` (the same
/// seed gives the same line). Braces that are not such a placeholder stay.
pub fn expand_example(template: &str, seed: u64) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let spec = &after[..close];
        let filled = if spec == "uuid" {
            let hex = class("hex").unwrap_or_default().as_bytes();
            let mut s = String::new();
            for (k, n) in [8, 4, 4, 4, 12].into_iter().enumerate() {
                if k > 0 {
                    s.push('-');
                }
                for _ in 0..n {
                    s.push(hex[(next() % 16) as usize] as char);
                }
            }
            Some(s)
        } else {
            spec.split_once(':').and_then(|(name, count)| {
                let chars = class(name)?.as_bytes();
                let (lo, hi) = match count.split_once('-') {
                    Some((a, b)) => (a.parse::<u64>().ok()?, b.parse::<u64>().ok()?),
                    None => {
                        let n = count.parse::<u64>().ok()?;
                        (n, n)
                    }
                };
                let n = lo + next() % (hi.saturating_sub(lo) + 1);
                Some(
                    (0..n)
                        .map(|_| chars[(next() % chars.len() as u64) as usize] as char)
                        .collect(),
                )
            })
        };
        match filled {
            Some(s) => {
                out.push_str(&s);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_file_parses_and_compiles() {
        let set = RuleSet::new(&[]).unwrap();
        assert_eq!(set.rules.len(), builtin().rules.len());
        assert!(set.rules.len() >= 100, "{}", set.rules.len());
        assert!(builtin().warnings.is_empty());
        assert_eq!(
            set.rules.last().map(|r| r.id.as_str()),
            Some("generic-secret")
        );
    }

    #[test]
    fn examples_expand_deterministically() {
        let a = expand_example("t = \"ghp_{alnum:36}\" {uuid} {x} {hex:2-4}", 7);
        assert_eq!(
            a,
            expand_example("t = \"ghp_{alnum:36}\" {uuid} {x} {hex:2-4}", 7)
        );
        assert!(a.starts_with("t = \"ghp_"));
        assert!(a.contains(" {x} "));
        assert_eq!(a.split('"').nth(1).unwrap().len(), 40);
    }
}
