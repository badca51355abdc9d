//! Secret-detection rules as data: the schema of rascal's rule files (the
//! built-in `crates/scan/rules/secrets.toml` and a repository's `.rascal/secrets.toml`)
//! and of a repository's `.gitleaks.toml`, read into plain values. Text in,
//! types out: a broken file is an error naming `file:line:column`; a
//! gitleaks field rascal does not support is a located warning that the
//! secret scan reports, never silence. Matching is `layers::secrets`'.

use super::ConfigError;
use toml::de::DeTable;

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

mod reader;

use reader::Reader;

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
