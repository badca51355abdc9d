//! Secret-detection rules as data: the schema of rascal's rule files (the
//! built-in `crates/scan/rules/secrets.toml` and a repository's `.rascal/secrets.toml`)
//! and of a repository's `.gitleaks.toml`, read into plain values. Text in,
//! types out: a broken file is an error naming `file:line:column`; a
//! gitleaks field rascal does not support is a located warning that the
//! secret scan reports, never silence. Matching is `layers::secrets`'.

use super::ConfigError;
use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// A repository's own rules, read from the base commit like the rest of
/// `.rascal/`.
pub const SECRETS_FILE: &str = ".rascal/secrets.toml";
/// A repository's gitleaks configuration, read from the base commit.
pub const GITLEAKS_FILE: &str = ".gitleaks.toml";

/// Which format a rule file is in: rascal's is gitleaks' plus `severity`,
/// `confidence`, `check`, `drop`, `published`, `examples`, `false_examples`, `disable`
/// and `gitleaks`, and any other key is an error; in gitleaks' an unknown
/// or unsupported key is a warning (gitleaks itself ignores them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    #[default]
    Rascal,
    Gitleaks,
}

/// One parsed rule file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuleFile {
    /// The file's name, as messages show it.
    pub file: String,
    pub dialect: Dialect,
    pub rules: Vec<RuleSpec>,
    /// Allowlists that apply to every rule (or to `rules`, when set).
    pub allowlists: Vec<AllowlistSpec>,
    /// gitleaks `[extend] useDefault`: keep the default rules (rascal's
    /// built-in ones) next to this file's. Always true for rascal's files.
    pub use_default: bool,
    /// Rule ids turned off (`disable`, gitleaks `[extend] disabledRules`).
    pub disabled: Vec<String>,
    /// `.rascal/secrets.toml` `gitleaks = false`: do not read `.gitleaks.toml`.
    pub read_gitleaks: bool,
    /// What is in the file but not applied, each at its place.
    pub warnings: Vec<Note>,
    /// sha256 of the file, for receipts.
    pub digest: String,
}

/// A located remark about a rule file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// How bad a finding of a rule is (`severity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
    Critical,
}

/// How sure a finding of a rule is (`confidence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Certainty {
    Low,
    Medium,
    High,
}

/// A built-in check a match must also pass (`check`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Key material follows a private key's header.
    PrivateKey,
    /// The password of a URL is not a local default.
    UrlPassword,
    /// The name says secret and the value is not code.
    Assignment,
    /// Header and payload decode to JSON objects.
    Jwt,
}

/// A kind of value a rule does not report (`drop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueFilter {
    Placeholder,
    Uuid,
    Identifier,
    Path,
    Digest,
    LettersOnly,
    OneCase,
    Version,
}

/// What an allowlist's regexes are matched against (`regexTarget`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    #[default]
    Secret,
    Match,
    Line,
}

/// One rule, as written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuleSpec {
    pub id: String,
    pub description: String,
    pub regex: Option<String>,
    /// gitleaks `secretGroup`: the capture group that is the secret.
    pub secret_group: Option<usize>,
    pub entropy: Option<f64>,
    /// Lower-cased.
    pub keywords: Vec<String>,
    /// A regex a file's path must match for the rule to apply (alone: the
    /// file's name is the finding).
    pub path: Option<String>,
    pub allowlists: Vec<AllowlistSpec>,
    pub severity: Option<Level>,
    pub confidence: Option<Certainty>,
    pub check: Option<Check>,
    /// None: the default (`placeholder`).
    pub drop: Option<Vec<ValueFilter>>,
    /// Values published as samples (in a provider's documentation or its
    /// SDKs' tests): a match equal to one is not a leak. Lower-case hex
    /// sha256 digests, so a rule file does not spread the values.
    pub published: Vec<String>,
    pub examples: Vec<String>,
    pub false_examples: Vec<String>,
    /// Where the rule is written (its `id`).
    pub line: usize,
}

/// One allowlist: what makes a match not a finding.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AllowlistSpec {
    pub description: String,
    /// `condition = "AND"`: every kind given must match (default: any).
    pub all: bool,
    pub target: Target,
    pub regexes: Vec<String>,
    /// Lower-cased; a secret containing one is allowed.
    pub stopwords: Vec<String>,
    /// Regexes on the file's path.
    pub paths: Vec<String>,
    /// gitleaks `targetRules`: the rules a global allowlist is for.
    pub rules: Vec<String>,
}

/// Parse a rule file. `file` names it in messages.
pub fn parse(file: &str, text: &str, dialect: Dialect) -> Result<RuleFile, ConfigError> {
    super::yaml::check_size(file, text.len(), None)?;
    let root = DeTable::parse(text).map_err(|e| {
        let (line, column) = e.span().map_or((1, 1), |s| line_col(text, s.start));
        ConfigError {
            file: file.to_string(),
            line: Some(line),
            column: Some(column),
            message: format!(
                "not valid TOML: {}",
                e.message().lines().next().unwrap_or("syntax error")
            ),
            hint: "fix the TOML syntax (https://toml.io)".into(),
        }
    })?;
    let mut r = Reader {
        file,
        text,
        dialect,
        warnings: Vec::new(),
    };
    let mut out = RuleFile {
        file: file.to_string(),
        dialect,
        use_default: dialect == Dialect::Rascal,
        read_gitleaks: true,
        digest: crate::digest::digest(text),
        ..Default::default()
    };
    for (key, value) in root.get_ref().iter() {
        let span = key.span();
        match (key.get_ref().as_ref(), dialect) {
            ("rules", _) => {
                for t in r.tables(value, "rules")? {
                    out.rules.push(r.rule(t)?);
                }
            }
            ("allowlists", _) => {
                for t in r.tables(value, "allowlists")? {
                    out.allowlists.push(r.allowlist(t.0, true)?);
                }
            }
            ("allowlist", Dialect::Gitleaks) => {
                let t = r.table(value, "allowlist")?;
                out.allowlists.push(r.allowlist(t, true)?);
            }
            ("title" | "description" | "minVersion", Dialect::Gitleaks) => {
                r.string(value, key.get_ref())?;
            }
            ("extend", Dialect::Gitleaks) => {
                for (k, v) in r.table(value, "extend")?.iter() {
                    match k.get_ref().as_ref() {
                        "useDefault" => out.use_default = r.boolean(v, "useDefault")?,
                        "disabledRules" => out.disabled = r.strings(v, "disabledRules")?,
                        other => r.unsupported(
                            k.span(),
                            &format!(
                                "[extend] {other} is not supported: rascal extends only its built-in rules (useDefault)"
                            ),
                        )?,
                    }
                }
            }
            ("disable", Dialect::Rascal) => out.disabled = r.strings(value, "disable")?,
            ("gitleaks", Dialect::Rascal) => out.read_gitleaks = r.boolean(value, "gitleaks")?,
            (other, _) => r.unknown(span, other, "the top level", TOP_KEYS[dialect as usize])?,
        }
    }
    // Two rules with one id would shadow each other silently.
    for (i, a) in out.rules.iter().enumerate() {
        if let Some(b) = out.rules[..i].iter().find(|b| b.id == a.id) {
            return Err(ConfigError {
                file: file.to_string(),
                line: Some(a.line),
                column: None,
                message: format!(
                    "rule id `{}` is used twice (lines {} and {})",
                    a.id, b.line, a.line
                ),
                hint: "give each rule its own id: findings are known by it".into(),
            });
        }
    }
    out.warnings = r.warnings;
    out.warnings.sort_by_key(|n| (n.line, n.column));
    Ok(out)
}

const TOP_KEYS: [&str; 2] = [
    "rules, allowlists, disable, gitleaks",
    "title, minVersion, extend, rules, allowlist, allowlists",
];
const RULE_KEYS: [&str; 2] = [
    "id, description, regex, secretGroup, entropy, keywords, path, tags, allowlists, severity, confidence, check, drop, published, examples, false_examples",
    "id, description, regex, secretGroup, entropy, keywords, path, tags, allowlist, allowlists",
];
const ALLOWLIST_KEYS: &str =
    "description, condition, regexTarget, regexes, stopwords, paths, targetRules";

type Value<'i> = Spanned<DeValue<'i>>;

struct Reader<'a> {
    file: &'a str,
    text: &'a str,
    dialect: Dialect,
    warnings: Vec<Note>,
}

impl Reader<'_> {
    fn err(&self, span: Range<usize>, message: String, hint: &str) -> ConfigError {
        let (line, column) = line_col(self.text, span.start);
        ConfigError {
            file: self.file.to_string(),
            line: Some(line),
            column: Some(column),
            message,
            hint: hint.to_string(),
        }
    }

    fn note(&mut self, span: Range<usize>, message: String) {
        let (line, column) = line_col(self.text, span.start);
        self.warnings.push(Note {
            line,
            column,
            message,
        });
    }

    /// A key rascal does not know: an error in its own files, a warning in
    /// gitleaks'.
    fn unknown(
        &mut self,
        span: Range<usize>,
        key: &str,
        place: &str,
        known: &str,
    ) -> Result<(), ConfigError> {
        match self.dialect {
            Dialect::Rascal => Err(self.err(
                span,
                format!("unknown key `{key}` in {place}"),
                &format!("known keys: {known}"),
            )),
            Dialect::Gitleaks => {
                self.note(
                    span,
                    format!("`{key}` (in {place}) is not supported by rascal and is ignored"),
                );
                Ok(())
            }
        }
    }

    /// A gitleaks feature rascal leaves out: always a warning.
    fn unsupported(&mut self, span: Range<usize>, message: &str) -> Result<(), ConfigError> {
        if self.dialect == Dialect::Rascal {
            return Err(self.err(span, message.to_string(), ""));
        }
        self.note(span, format!("{message}; it is ignored"));
        Ok(())
    }

    fn wrong(&self, v: &Value, what: &str, want: &str) -> ConfigError {
        self.err(
            v.span(),
            format!("`{what}` must be {want}"),
            "see docs/configuration.md § Secrets",
        )
    }

    fn string(&self, v: &Value, what: &str) -> Result<String, ConfigError> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            _ => Err(self.wrong(v, what, "a string")),
        }
    }

    fn boolean(&self, v: &Value, what: &str) -> Result<bool, ConfigError> {
        match v.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            _ => Err(self.wrong(v, what, "true or false")),
        }
    }

    fn number(&self, v: &Value, what: &str) -> Result<f64, ConfigError> {
        let n = match v.get_ref() {
            DeValue::Integer(i) => i.as_str().parse::<f64>().ok(),
            DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
            _ => None,
        };
        n.filter(|n| n.is_finite() && *n >= 0.0)
            .ok_or_else(|| self.wrong(v, what, "a number, 0 or more"))
    }

    fn strings(&self, v: &Value, what: &str) -> Result<Vec<String>, ConfigError> {
        match v.get_ref() {
            DeValue::Array(a) => a.iter().map(|s| self.string(s, what)).collect(),
            _ => Err(self.wrong(v, what, "a list of strings")),
        }
    }

    /// A list of `sha256:<64 hex digits>`, as lower-case hex.
    fn digests(&self, v: &Value, what: &str) -> Result<Vec<String>, ConfigError> {
        let DeValue::Array(a) = v.get_ref() else {
            return Err(self.wrong(v, what, "a list of \"sha256:<hex>\" digests"));
        };
        a.iter()
            .map(|d| {
                let s = self.string(d, what)?;
                match s.strip_prefix("sha256:") {
                    Some(h) if h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
                        Ok(h.to_ascii_lowercase())
                    }
                    _ => Err(self.err(
                        d.span(),
                        format!("`{what}` entry `{s}` is not `sha256:` and 64 hex digits"),
                        "list a published value by its digest: printf %s 'VALUE' | sha256sum",
                    )),
                }
            })
            .collect()
    }

    fn table<'v, 'i>(&self, v: &'v Value<'i>, what: &str) -> Result<&'v DeTable<'i>, ConfigError> {
        match v.get_ref() {
            DeValue::Table(t) => Ok(t),
            _ => Err(self.wrong(v, what, "a table")),
        }
    }

    /// An array of tables (`[[rules]]`), each with its span.
    fn tables<'v, 'i>(
        &self,
        v: &'v Value<'i>,
        what: &str,
    ) -> Result<Vec<(&'v DeTable<'i>, Range<usize>)>, ConfigError> {
        match v.get_ref() {
            DeValue::Array(a) => a
                .iter()
                .map(|t| self.table(t, what).map(|tab| (tab, t.span())))
                .collect(),
            _ => Err(self.wrong(v, what, &format!("an array of tables ([[{what}]])"))),
        }
    }

    fn regex(&self, v: &Value, what: &str) -> Result<String, ConfigError> {
        let s = self.string(v, what)?;
        regex::Regex::new(&s).map_err(|e| {
            self.err(
                v.span(),
                format!(
                    "`{what}` is not a valid regex: {}",
                    e.to_string().lines().last().unwrap_or("syntax error").trim()
                ),
                "rascal uses Rust's regex syntax, which is RE2's (gitleaks' Go regexes) without backreferences or look-around",
            )
        })?;
        Ok(s)
    }

    fn rule(&mut self, (t, span): (&DeTable, Range<usize>)) -> Result<RuleSpec, ConfigError> {
        let mut rule = RuleSpec {
            line: line_col(self.text, span.start).0,
            ..Default::default()
        };
        let mut id_span = span.clone();
        let mut regex_span = None;
        for (key, v) in t.iter() {
            let k = key.get_ref().as_ref();
            match (k, self.dialect) {
                ("id", _) => {
                    rule.id = self.string(v, "id")?;
                    id_span = v.span();
                    rule.line = line_col(self.text, v.span().start).0;
                }
                ("description", _) => rule.description = self.string(v, "description")?,
                ("regex", _) => {
                    rule.regex = Some(self.regex(v, "regex")?);
                    regex_span = Some(v.span());
                }
                ("secretGroup", _) => {
                    rule.secret_group = Some(self.number(v, "secretGroup")? as usize)
                }
                ("entropy", _) => rule.entropy = Some(self.number(v, "entropy")?),
                ("keywords", _) => {
                    rule.keywords = self
                        .strings(v, "keywords")?
                        .into_iter()
                        .map(|k| k.to_lowercase())
                        .filter(|k| !k.is_empty())
                        .collect()
                }
                ("path", _) => rule.path = Some(self.regex(v, "path")?),
                ("tags", _) => {
                    self.strings(v, "tags")?;
                }
                ("allowlists", _) => {
                    for a in self.tables(v, "allowlists")? {
                        rule.allowlists.push(self.allowlist(a.0, false)?);
                    }
                }
                ("allowlist", Dialect::Gitleaks) => {
                    let a = self.table(v, "allowlist")?;
                    rule.allowlists.push(self.allowlist(a, false)?);
                }
                ("severity", Dialect::Rascal) => rule.severity = Some(self.severity(v, k)?),
                ("confidence", Dialect::Rascal) => rule.confidence = Some(self.confidence(v, k)?),
                ("check", Dialect::Rascal) => rule.check = Some(self.check(v, k)?),
                ("drop", Dialect::Rascal) => rule.drop = Some(self.drop_filters(v, k)?),
                ("published", Dialect::Rascal) => rule.published = self.digests(v, k)?,
                ("examples", Dialect::Rascal) => rule.examples = self.strings(v, k)?,
                ("false_examples", Dialect::Rascal) => rule.false_examples = self.strings(v, k)?,
                ("required" | "skipReport" | "report", Dialect::Gitleaks) => self.unsupported(
                    key.span(),
                    &format!(
                        "`{k}` (composite rules) is not supported: the rule reports on its own"
                    ),
                )?,
                (other, _) => {
                    let place = format!("rule `{}`", rule.id);
                    self.unknown(key.span(), other, &place, RULE_KEYS[self.dialect as usize])?
                }
            }
        }
        self.complete(&rule, id_span, regex_span)?;
        Ok(rule)
    }

    /// A rule is whole: it has an id, a `regex` or a `path`, and its
    /// `secretGroup` is one of its regex's groups.
    fn complete(
        &self,
        rule: &RuleSpec,
        id_span: Range<usize>,
        regex_span: Option<Range<usize>>,
    ) -> Result<(), ConfigError> {
        if rule.id.trim().is_empty() {
            return Err(self.err(
                id_span,
                "a rule needs an `id`".into(),
                "add `id = \"my-rule\"`",
            ));
        }
        if rule.regex.is_none() && rule.path.is_none() {
            return Err(self.err(
                id_span,
                format!("rule `{}` has neither `regex` nor `path`", rule.id),
                "give it a `regex` (what to find) or a `path` (files that are secrets by name)",
            ));
        }
        if let (Some(g), Some(rx), Some(at)) = (rule.secret_group, &rule.regex, regex_span) {
            let groups = regex::Regex::new(rx).map_or(0, |r| r.captures_len() - 1);
            if g > groups {
                return Err(self.err(
                    at,
                    format!(
                        "rule `{}`: secretGroup {g} but the regex has {groups} capture groups",
                        rule.id
                    ),
                    "secretGroup counts the regex's `(…)` groups from 1",
                ));
            }
        }
        Ok(())
    }

    /// A rule's `severity`: info, warning, error or critical.
    fn severity(&self, v: &Value, k: &str) -> Result<Level, ConfigError> {
        Ok(match self.string(v, k)?.as_str() {
            "info" => Level::Info,
            "warning" => Level::Warning,
            "error" => Level::Error,
            "critical" => Level::Critical,
            _ => return Err(self.wrong(v, k, "info, warning, error or critical")),
        })
    }

    /// A rule's `confidence`: low, medium or high.
    fn confidence(&self, v: &Value, k: &str) -> Result<Certainty, ConfigError> {
        Ok(match self.string(v, k)?.as_str() {
            "low" => Certainty::Low,
            "medium" => Certainty::Medium,
            "high" => Certainty::High,
            _ => return Err(self.wrong(v, k, "low, medium or high")),
        })
    }

    /// A rule's built-in `check`.
    fn check(&self, v: &Value, k: &str) -> Result<Check, ConfigError> {
        Ok(match self.string(v, k)?.as_str() {
            "private-key" => Check::PrivateKey,
            "url-password" => Check::UrlPassword,
            "assignment" => Check::Assignment,
            "jwt" => Check::Jwt,
            _ => return Err(self.wrong(v, k, "private-key, url-password, assignment or jwt")),
        })
    }

    /// A rule's `drop`: the value filters that drop a match.
    fn drop_filters(&self, v: &Value, k: &str) -> Result<Vec<ValueFilter>, ConfigError> {
        let mut filters = Vec::new();
        let DeValue::Array(a) = v.get_ref() else {
            return Err(self.wrong(v, k, "a list of value filters"));
        };
        for f in a.iter() {
            filters.push(match self.string(f, k)?.as_str() {
                "placeholder" => ValueFilter::Placeholder,
                "uuid" => ValueFilter::Uuid,
                "identifier" => ValueFilter::Identifier,
                "path" => ValueFilter::Path,
                "digest" => ValueFilter::Digest,
                "letters-only" => ValueFilter::LettersOnly,
                "one-case" => ValueFilter::OneCase,
                "version" => ValueFilter::Version,
                _ => return Err(self.wrong(
                    f,
                    k,
                    "one of placeholder, uuid, identifier, path, digest, letters-only, one-case, version",
                )),
            });
        }
        Ok(filters)
    }

    fn allowlist(&mut self, t: &DeTable, global: bool) -> Result<AllowlistSpec, ConfigError> {
        let mut a = AllowlistSpec::default();
        for (key, v) in t.iter() {
            let k = key.get_ref().as_ref();
            match k {
                "description" => a.description = self.string(v, k)?,
                "condition" => {
                    a.all = match self.string(v, k)?.to_ascii_uppercase().as_str() {
                        "OR" => false,
                        "AND" => true,
                        _ => return Err(self.wrong(v, k, "\"OR\" or \"AND\"")),
                    }
                }
                "regexTarget" => {
                    a.target = match self.string(v, k)?.as_str() {
                        "secret" => Target::Secret,
                        "match" => Target::Match,
                        "line" => Target::Line,
                        _ => return Err(self.wrong(v, k, "\"secret\", \"match\" or \"line\"")),
                    }
                }
                "regexes" => {
                    let DeValue::Array(list) = v.get_ref() else {
                        return Err(self.wrong(v, k, "a list of regexes"));
                    };
                    for r in list.iter() {
                        a.regexes.push(self.regex(r, k)?);
                    }
                }
                "paths" => {
                    let DeValue::Array(list) = v.get_ref() else {
                        return Err(self.wrong(v, k, "a list of regexes"));
                    };
                    for r in list.iter() {
                        a.paths.push(self.regex(r, k)?);
                    }
                }
                "stopwords" => {
                    a.stopwords = self
                        .strings(v, k)?
                        .into_iter()
                        .map(|s| s.to_lowercase())
                        .collect()
                }
                "targetRules" if global => a.rules = self.strings(v, k)?,
                "commits" => self.unsupported(
                    key.span(),
                    "allowlist `commits` does not apply: rascal checks a change, not commits",
                )?,
                other => self.unknown(key.span(), other, "an allowlist", ALLOWLIST_KEYS)?,
            }
        }
        Ok(a)
    }
}

/// 1-based line and column of byte `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.chars().count(), |i| before[i + 1..].chars().count())
        + 1;
    (line, column)
}

/// The repository's rule files read from where `.rascal/` is read (`read`
/// gives a file's text, None when absent): `.rascal/secrets.toml`, then
/// `.gitleaks.toml` unless the former says `gitleaks = false`.
pub fn load(
    read: &dyn Fn(&str) -> Result<Option<String>, ConfigError>,
) -> Result<Vec<RuleFile>, ConfigError> {
    let mut files = Vec::new();
    let mut gitleaks = true;
    if let Some(text) = read(SECRETS_FILE)? {
        let f = parse(SECRETS_FILE, &text, Dialect::Rascal)?;
        gitleaks = f.read_gitleaks;
        files.push(f);
    }
    if gitleaks {
        if let Some(text) = read(GITLEAKS_FILE)? {
            files.push(parse(GITLEAKS_FILE, &text, Dialect::Gitleaks)?);
        }
    }
    Ok(files)
}

/// Give every `builtin: secrets` guardrail of `cfg` the repository's rule
/// files (read with `read`, see [`load`]) and record their digests. Files
/// are read only when such a guardrail exists.
pub fn attach(
    mut cfg: super::Config,
    read: &dyn Fn(&str) -> Result<Option<String>, ConfigError>,
) -> Result<super::Config, ConfigError> {
    let wanted = cfg
        .guardrails
        .iter()
        .flatten()
        .any(|g| matches!(g.kind, super::GuardrailKind::Secrets(_)));
    if !wanted {
        return Ok(cfg);
    }
    let files = load(read)?;
    for f in &files {
        cfg.digests.insert(f.file.clone(), f.digest.clone());
    }
    for g in cfg.guardrails.iter_mut().flatten() {
        if let super::GuardrailKind::Secrets(opts) = &mut g.kind {
            opts.rule_files = files.clone();
        }
    }
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }

    #[test]
    fn rascal_files_are_strict_gitleaks_files_warn() {
        let text = "[[rules]]\nid = \"x\"\nregex = 'a'\ncolour = 'red'\n";
        let e = parse("f.toml", text, Dialect::Rascal).unwrap_err();
        assert_eq!((e.line, e.column), (Some(4), Some(1)));
        assert!(e.message.contains("colour"), "{e}");
        let f = parse("f.toml", text, Dialect::Gitleaks).unwrap();
        assert_eq!(f.rules.len(), 1);
        assert_eq!(f.warnings.len(), 1);
        assert_eq!(f.warnings[0].line, 4);
    }
}
