//! Reading one rule file's tables and values into rules and allowlists:
//! each value checked for its kind, with errors and warnings located at
//! `file:line:column`.

use super::{
    line_col, AllowlistSpec, Certainty, Check, Dialect, Level, Note, RuleSpec, Target, ValueFilter,
};
use crate::config::ConfigError;
use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

const RULE_KEYS: [&str; 2] = [
    "id, description, regex, secretGroup, entropy, keywords, path, tags, allowlists, severity, confidence, check, drop, published, examples, false_examples",
    "id, description, regex, secretGroup, entropy, keywords, path, tags, allowlist, allowlists",
];
const ALLOWLIST_KEYS: &str =
    "description, condition, regexTarget, regexes, stopwords, paths, targetRules";

type Value<'i> = Spanned<DeValue<'i>>;

pub(super) struct Reader<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    pub(super) dialect: Dialect,
    pub(super) warnings: Vec<Note>,
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
    pub(super) fn unknown(
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
    pub(super) fn unsupported(
        &mut self,
        span: Range<usize>,
        message: &str,
    ) -> Result<(), ConfigError> {
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

    pub(super) fn string(&self, v: &Value, what: &str) -> Result<String, ConfigError> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            _ => Err(self.wrong(v, what, "a string")),
        }
    }

    pub(super) fn boolean(&self, v: &Value, what: &str) -> Result<bool, ConfigError> {
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

    pub(super) fn strings(&self, v: &Value, what: &str) -> Result<Vec<String>, ConfigError> {
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

    pub(super) fn table<'v, 'i>(
        &self,
        v: &'v Value<'i>,
        what: &str,
    ) -> Result<&'v DeTable<'i>, ConfigError> {
        match v.get_ref() {
            DeValue::Table(t) => Ok(t),
            _ => Err(self.wrong(v, what, "a table")),
        }
    }

    /// An array of tables (`[[rules]]`), each with its span.
    pub(super) fn tables<'v, 'i>(
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

    pub(super) fn rule(
        &mut self,
        (t, span): (&DeTable, Range<usize>),
    ) -> Result<RuleSpec, ConfigError> {
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

    pub(super) fn allowlist(
        &mut self,
        t: &DeTable,
        global: bool,
    ) -> Result<AllowlistSpec, ConfigError> {
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
