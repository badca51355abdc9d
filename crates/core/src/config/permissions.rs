//! Schema of `.rascal/permissions.yaml` (Layer 4; docs/configuration.md, "permissions.yaml"): which paths,
//! operations, sizes and imports a candidate's change may touch.
//!
//! Parsing is strict: unknown keys, unknown operation words and invalid
//! globs are serde errors (serde_yaml attaches `line:column`). A task's
//! permissions are combined with the repository's by
//! [`PermissionsConfig::narrow`], which can only narrow, never widen.
//!
//! Glob semantics (applied by the evaluator, `layers::permissions`) are
//! gitignore-like: `*` does not cross `/`, `**` does; a pattern without a
//! `/` (e.g. `*.sql`, `go.mod`) matches at any depth; a leading `/`
//! anchors a pattern at the repository root; a pattern that matches a
//! directory also matches everything under it, and `dir/**` also matches
//! `dir` itself.
//!
//! Every path rule (allowed/denied/executable globs, self-protection,
//! spec `no-touch-files` constraints) compares paths through one function,
//! [`fold_path`], applied to both the glob and the path: Unicode NFC (a
//! decomposed `é` equals a composed one) and, unless `case_sensitive: true`,
//! lower-casing (`.GITHUB/x` matches `.github/**`, `DB.SQL` matches
//! `*.sql`). Case-insensitive is the default because a checkout on a
//! case-insensitive filesystem (macOS, Windows) aliases such paths.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// The one normalisation every path rule applies to both sides (glob and
/// path) before comparing: NFC, then lower-case unless `case_sensitive`
/// (and NFC again, as lower-casing may decompose). Borrowed when nothing
/// changes (plain lower-case ASCII, the common case).
pub fn fold_path(s: &str, case_sensitive: bool) -> Cow<'_, str> {
    if s.is_ascii() {
        if case_sensitive || !s.bytes().any(|b| b.is_ascii_uppercase()) {
            return Cow::Borrowed(s);
        }
        return Cow::Owned(s.to_ascii_lowercase());
    }
    let nfc: Cow<'_, str> = if is_nfc_quick(s.chars()) == IsNormalized::Yes {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.nfc().collect())
    };
    if case_sensitive {
        return nfc;
    }
    let lower = nfc.to_lowercase();
    if is_nfc_quick(lower.chars()) == IsNormalized::Yes {
        Cow::Owned(lower)
    } else {
        Cow::Owned(lower.nfc().collect())
    }
}

/// Compile globs (each expanded as the module doc says, then folded with
/// [`fold_path`]) into one set; match it against `fold_path(path, …)`.
pub fn compile_globs(
    globs: &[GlobPattern],
    case_sensitive: bool,
) -> Result<globset::GlobSet, crate::Error> {
    let mut b = globset::GlobSetBuilder::new();
    for g in globs {
        for e in g.expanded() {
            let e = fold_path(&e, case_sensitive);
            b.add(build_glob(&e).map_err(|err| {
                crate::Error::Invalid(format!("invalid glob {:?}: {err}", g.as_str()))
            })?);
        }
    }
    b.build()
        .map_err(|e| crate::Error::Invalid(format!("cannot compile globs: {e}")))
}

/// Whether violations block (`strict`) or only warn (`advisory`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Strict,
    Advisory,
}

/// An operation word in `allowed_operations` / `denied_operations`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpName {
    Create,
    Modify,
    Delete,
    Rename,
    Mode,
}

impl OpName {
    pub const ALL: [OpName; 5] = [
        OpName::Create,
        OpName::Modify,
        OpName::Delete,
        OpName::Rename,
        OpName::Mode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OpName::Create => "create",
            OpName::Modify => "modify",
            OpName::Delete => "delete",
            OpName::Rename => "rename",
            OpName::Mode => "mode",
        }
    }

    /// Index into a `[_; 5]` table.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for OpName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A glob validated when it is deserialized (or built with `TryFrom`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct GlobPattern(String);

impl GlobPattern {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The globs this pattern compiles to (see the module doc for the
    /// gitignore-like semantics). Every returned string is a valid glob
    /// for `globset::GlobBuilder` with `literal_separator(true)`.
    pub fn expanded(&self) -> Vec<String> {
        expand(&self.0)
    }
}

fn expand(raw: &str) -> Vec<String> {
    let mut p = raw.trim_start_matches("./");
    let anchored = p.starts_with('/');
    p = p.trim_start_matches('/');
    let p = p.trim_end_matches('/');
    if p.is_empty() {
        // "/" or "./": the whole repository.
        return vec!["**".to_string()];
    }
    let mut out = vec![p.to_string()];
    if !p.ends_with("/**") && p != "**" {
        out.push(format!("{p}/**"));
    }
    // `dir/**` also matches `dir` itself (a file or symlink replacing it).
    if let Some(stem) = p.strip_suffix("/**") {
        if !stem.is_empty() && !stem.ends_with("**") {
            out.push(stem.to_string());
        }
    }
    if !anchored && !p.contains('/') && !p.starts_with("**") {
        out.push(format!("**/{p}"));
        out.push(format!("**/{p}/**"));
    }
    out
}

/// Build the matcher for one glob as the evaluator does.
pub fn build_glob(glob: &str) -> Result<globset::Glob, globset::Error> {
    globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .empty_alternates(true)
        .build()
}

impl TryFrom<String> for GlobPattern {
    type Error = crate::Error;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        if s.trim().is_empty() {
            return Err(crate::Error::Invalid(format!(
                "invalid glob {s:?}: empty pattern"
            )));
        }
        if s.contains('\0') {
            return Err(crate::Error::Invalid(format!(
                "invalid glob {s:?}: contains a NUL byte"
            )));
        }
        // Matching folds the glob first (NFC, and lower case unless
        // `case_sensitive`), which can turn a valid class like `[B-a]` into
        // an invalid one (`[b-a]`): each form must build.
        for g in expand(&s) {
            for form in [
                Cow::Borrowed(g.as_str()),
                fold_path(&g, true),
                fold_path(&g, false),
            ] {
                build_glob(&form).map_err(|e| {
                    crate::Error::Invalid(if form == g {
                        format!("invalid glob {s:?}: {e}")
                    } else {
                        format!("invalid glob {s:?} once folded to {form:?} for matching: {e}")
                    })
                })?;
            }
        }
        Ok(GlobPattern(s))
    }
}

impl TryFrom<&str> for GlobPattern {
    type Error = crate::Error;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        GlobPattern::try_from(s.to_string())
    }
}

impl From<GlobPattern> for String {
    fn from(g: GlobPattern) -> String {
        g.0
    }
}

impl fmt::Display for GlobPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Extra allow-lists produced by [`PermissionsConfig::narrow`]: a path must
/// match every list (in addition to the top-level list). Never read from
/// YAML (a config file that sets `narrowed` is rejected as an unknown key),
/// but serialized so the effective config can be inspected.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Narrowing {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_paths: Vec<Vec<GlobPattern>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub executable_paths: Vec<Vec<GlobPattern>>,
}

impl Narrowing {
    pub fn is_empty(&self) -> bool {
        self.allowed_paths.is_empty() && self.executable_paths.is_empty()
    }
}

/// `permissions:` in `.rascal/permissions.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PermissionsConfig {
    /// strict (default) | advisory.
    pub mode: Mode,
    /// Empty = everything allowed (subject to `denied_paths`).
    pub allowed_paths: Vec<GlobPattern>,
    /// Denied wins over allowed.
    pub denied_paths: Vec<GlobPattern>,
    pub max_files_changed: Option<u64>,
    pub max_lines_changed: Option<u64>,
    /// Empty = all operations.
    pub allowed_operations: Vec<OpName>,
    pub denied_operations: Vec<OpName>,
    /// Module paths; an entry matches a module exactly or as a prefix on a
    /// path boundary (`/`, `.`, `::`).
    pub forbidden_imports: Vec<String>,
    /// Changes under `.rascal/` are allowed (honoured from the base config only).
    pub allow_self_edit: bool,
    pub allow_submodules: bool,
    /// Where making a file executable is fine. Empty = nowhere.
    pub executable_paths: Vec<GlobPattern>,
    /// Path rules compare exactly (after NFC) instead of ignoring case.
    /// Honoured from the repository's config only (see `narrow`).
    pub case_sensitive: bool,
    /// Set only by [`PermissionsConfig::narrow`].
    #[serde(skip_deserializing, skip_serializing_if = "Narrowing::is_empty")]
    pub narrowed: Narrowing,
}

/// The whole `.rascal/permissions.yaml` file: `permissions: {…}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PermissionsFile {
    pub permissions: PermissionsConfig,
}

impl PermissionsConfig {
    /// What an agent's change is judged by when the repository has no
    /// `permissions.yaml`: the layer is off but for what every agent run
    /// gets — self-protection of `.rascal/` and `.git/`, links out of the
    /// repository, submodules. Making a file executable is not judged (it
    /// is where a `permissions.yaml` sets `executable_paths`).
    pub fn built_in() -> PermissionsConfig {
        PermissionsConfig {
            executable_paths: vec![GlobPattern("**".into())],
            ..PermissionsConfig::default()
        }
    }

    /// Parse a whole `permissions.yaml` (with the top-level `permissions:` key).
    pub fn from_yaml_file(text: &str) -> Result<PermissionsConfig, super::ConfigError> {
        if text.trim().is_empty() {
            return Ok(PermissionsConfig::default());
        }
        super::yaml::from_str::<PermissionsFile>(super::PERMISSIONS_FILE, text)
            .map(|f| f.permissions)
    }

    /// Dynamic scoping: combine the repository's permissions (`self`) with a
    /// task's. The result is never wider than either side.
    pub fn narrow(&self, task: &PermissionsConfig) -> PermissionsConfig {
        let mode = if self.mode == Mode::Advisory && task.mode == Mode::Advisory {
            Mode::Advisory
        } else {
            Mode::Strict
        };

        // Allowed paths: all non-empty lists must match.
        let mut lists: Vec<Vec<GlobPattern>> = Vec::new();
        for side in [self, task] {
            if !side.allowed_paths.is_empty() {
                lists.push(side.allowed_paths.clone());
            }
            lists.extend(side.narrowed.allowed_paths.iter().cloned());
        }
        let (allowed_paths, extra_allowed) = split_first(lists);

        // Executable paths: empty means nowhere, so an empty side wins.
        let exec_empty = self.executable_paths.is_empty() || task.executable_paths.is_empty();
        let (executable_paths, extra_exec) = if exec_empty {
            (Vec::new(), Vec::new())
        } else {
            let mut lists = vec![self.executable_paths.clone()];
            lists.extend(self.narrowed.executable_paths.iter().cloned());
            lists.push(task.executable_paths.clone());
            lists.extend(task.narrowed.executable_paths.iter().cloned());
            split_first(lists)
        };

        let mut denied_paths = self.denied_paths.clone();
        for g in &task.denied_paths {
            if !denied_paths.contains(g) {
                denied_paths.push(g.clone());
            }
        }

        let min = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, None) => x,
            (None, y) => y,
        };

        // Operations: intersection of allowed (empty = all), union of denied.
        let allow = |c: &PermissionsConfig, op: OpName| {
            c.allowed_operations.is_empty() || c.allowed_operations.contains(&op)
        };
        let both_all = self.allowed_operations.is_empty() && task.allowed_operations.is_empty();
        let allowed_ops: Vec<OpName> = if both_all {
            Vec::new()
        } else {
            OpName::ALL
                .into_iter()
                .filter(|&op| allow(self, op) && allow(task, op))
                .collect()
        };
        let mut denied_operations: Vec<OpName> = OpName::ALL
            .into_iter()
            .filter(|op| self.denied_operations.contains(op) || task.denied_operations.contains(op))
            .collect();
        if !both_all && allowed_ops.is_empty() {
            // The intersection is empty: nothing is allowed. An empty
            // allow-list would mean "all", so deny everything instead.
            denied_operations = OpName::ALL.to_vec();
        }

        let mut forbidden_imports = self.forbidden_imports.clone();
        for f in &task.forbidden_imports {
            if !forbidden_imports.contains(f) {
                forbidden_imports.push(f.clone());
            }
        }

        PermissionsConfig {
            mode,
            allowed_paths,
            denied_paths,
            max_files_changed: min(self.max_files_changed, task.max_files_changed),
            max_lines_changed: min(self.max_lines_changed, task.max_lines_changed),
            allowed_operations: allowed_ops,
            denied_operations,
            forbidden_imports,
            allow_self_edit: self.allow_self_edit && task.allow_self_edit,
            allow_submodules: self.allow_submodules && task.allow_submodules,
            executable_paths,
            // A task may not switch case sensitivity: `true` would let
            // `.GITHUB/` past the repository's `.github/**`, `false` would
            // widen its allowed_paths.
            case_sensitive: self.case_sensitive,
            narrowed: Narrowing {
                allowed_paths: extra_allowed,
                executable_paths: extra_exec,
            },
        }
    }
}

fn split_first(mut lists: Vec<Vec<GlobPattern>>) -> (Vec<GlobPattern>, Vec<Vec<GlobPattern>>) {
    if lists.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        let first = lists.remove(0);
        (first, lists)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_is_gitignore_like() {
        let g = GlobPattern::try_from("*.sql").unwrap();
        assert!(g.expanded().contains(&"**/*.sql".to_string()));
        let g = GlobPattern::try_from("/go.mod").unwrap();
        assert!(!g.expanded().iter().any(|e| e.starts_with("**/")));
    }

    #[test]
    fn bad_glob_is_rejected() {
        assert!(GlobPattern::try_from("a/[b").is_err());
        assert!(GlobPattern::try_from("").is_err());
    }

    #[test]
    fn folding() {
        assert_eq!(fold_path("src/a.rs", false), "src/a.rs");
        assert_eq!(fold_path(".GitHub/X", false), ".github/x");
        assert_eq!(fold_path(".GitHub/X", true), ".GitHub/X");
        assert_eq!(fold_path("cafe\u{301}", true), "caf\u{e9}");
        assert_eq!(fold_path("CAFE\u{301}", false), "caf\u{e9}");
        assert_eq!(fold_path("\u{c9}T\u{c9}", false), "\u{e9}t\u{e9}");
    }
}
