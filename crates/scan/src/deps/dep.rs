//! A dependency as a manifest declares it: the package's name and where its
//! code comes from. Two declarations are the same dependency only when both
//! agree, so moving a dependency to a path, a git repository, another
//! registry or another package makes it a new one. Also the small readers
//! every manifest format shares (TOML with located errors, paths, URLs).

use std::fmt;

/// Where a dependency's code comes from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// A package registry; `None` is the ecosystem's default one.
    Registry(Option<String>),
    /// A directory, as written in the manifest (normalised).
    Path(String),
    /// A package of the same workspace or lock, without a recorded path.
    Local,
    /// A git repository (normalised URL, without the revision).
    Git(String),
    /// An archive URL, or a protocol rascal does not model (compared as written).
    Url(String),
    /// The code of another package: Go's `replace a => b`.
    Package(String),
    /// Declared in another manifest (Cargo's `workspace = true`), which is
    /// checked on its own: only the name counts here.
    Inherited,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Registry(None) => write!(f, "the default registry"),
            Source::Registry(Some(r)) => write!(f, "registry `{}`", shown(r)),
            Source::Path(p) => write!(f, "path `{}`", shown(p)),
            Source::Local => write!(f, "a local package"),
            Source::Git(u) => write!(f, "git `{}`", shown(u)),
            Source::Url(u) => write!(f, "`{}`", shown(u)),
            Source::Package(p) => write!(f, "package `{}`", shown(p)),
            Source::Inherited => write!(f, "the workspace"),
        }
    }
}

/// What a declaration adds: a package, or a place packages are fetched
/// from (a registry, an index, a search path), which can swap the code of
/// every package at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Package,
    Index,
}

/// One declaration in a manifest.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dep {
    pub kind: Kind,
    /// The package's own name (after a rename or alias), or the setting
    /// that names an index.
    pub name: String,
    pub source: Source,
    /// Where in the manifest, for the message: `[dependencies]`, `replace`…
    pub section: String,
}

impl Dep {
    pub fn package(name: impl Into<String>, source: Source, section: impl Into<String>) -> Dep {
        Dep {
            kind: Kind::Package,
            name: name.into(),
            source,
            section: section.into(),
        }
    }

    pub fn index(setting: impl Into<String>, source: Source, section: impl Into<String>) -> Dep {
        Dep {
            kind: Kind::Index,
            name: setting.into(),
            source,
            section: section.into(),
        }
    }

    /// Whether `self` (after the change) is the dependency `old` was.
    pub fn same_as(&self, old: &Dep) -> bool {
        self.kind == old.kind
            && self.name == old.name
            && (self.source == old.source || self.source == Source::Inherited)
    }
}

/// A declaration after the change that none before it matches.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Added {
    pub dep: Dep,
    /// Where the same name came from before, when only the source changed.
    pub was: Option<Source>,
}

impl Added {
    /// One sentence for an issue about manifest `path`.
    pub fn message(&self, path: &str) -> String {
        let d = &self.dep;
        let name = shown(&d.name);
        let at = if d.section.is_empty() {
            path.to_string()
        } else {
            format!("{path} {}", shown(&d.section))
        };
        match (d.kind, &self.was) {
            (Kind::Package, None) => {
                format!("new dependency `{name}` from {} in {at}", d.source)
            }
            (Kind::Package, Some(was)) => format!(
                "dependency `{name}` in {at} now comes from {} (was {was}): a new source is a new dependency",
                d.source
            ),
            (Kind::Index, None) => {
                format!("new package source `{name}` = {} in {at}", d.source)
            }
            (Kind::Index, Some(was)) => format!(
                "package source `{name}` in {at} now points to {} (was {was})",
                d.source
            ),
        }
    }
}

/// Untrusted text cut to a length a report line can hold.
fn shown(s: &str) -> String {
    rascal_core::text::cut(s, 160)
}

/// Parse a TOML document; the error says at which line it broke.
pub fn parse_toml(text: &str) -> Result<toml::Table, crate::Error> {
    text.parse::<toml::Table>().map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        crate::Error::Manifest(match line {
            Some(l) => format!("not valid TOML at line {l}: {}", e.message()),
            None => format!("not valid TOML: {}", e.message()),
        })
    })
}

/// The table under `key` of `t`, if it is one.
pub fn table<'a>(t: &'a toml::Table, key: &str) -> Option<&'a toml::Table> {
    t.get(key).and_then(toml::Value::as_table)
}

/// The string under `key` of `t`, if it is one.
pub fn string<'a>(t: &'a toml::Table, key: &str) -> Option<&'a str> {
    t.get(key).and_then(toml::Value::as_str)
}

/// A TOML value as text for a message or an identity: a string as is,
/// anything else in its debug form (it is not what the tool expects, but
/// a change to it must still show).
pub fn value_text(v: &toml::Value) -> String {
    match v.as_str() {
        Some(s) => s.to_string(),
        None => format!("{v:?}"),
    }
}

/// A relative path in one spelling: `/` separators, no `.` or empty
/// segments, `x/..` folded (a leading `..` stays).
pub fn norm_path(p: &str) -> String {
    let p = p.trim().replace('\\', "/");
    let absolute = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// A git URL without what only picks a revision: a `git+` prefix, the
/// `?query` and `#fragment`, an `@ref` after the last `/`, a trailing
/// `.git` or `/`. The host and the repository path stay as written.
pub fn norm_git(url: &str) -> String {
    let u = url.trim();
    let u = u.strip_prefix("git+").unwrap_or(u);
    let u = u.split('#').next().unwrap_or(u);
    let u = u.split('?').next().unwrap_or(u);
    let u = u.trim_end_matches('/');
    let (head, last) = match u.rfind('/') {
        Some(i) => u.split_at(i + 1),
        None => ("", u),
    };
    let last = match last.find('@') {
        // `git@host:org/repo` has its `@` before the last `/`; an `@` in
        // the last segment (`repo.git@v1`) picks a revision.
        Some(i) if !head.is_empty() => &last[..i],
        _ => last,
    };
    let last = last.strip_suffix(".git").unwrap_or(last);
    format!("{head}{last}").trim_end_matches('/').to_string()
}

/// A Python distribution name in PEP 503 form: lower case, runs of `-`,
/// `_` and `.` as one `-`.
pub fn norm_python(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.trim().chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
            continue;
        }
        if sep && !out.is_empty() {
            out.push('-');
        }
        sep = false;
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_urls_have_one_spelling() {
        assert_eq!(norm_path("./helper/"), "helper");
        assert_eq!(norm_path("a\\b/../c"), "a/c");
        assert_eq!(norm_path("../x/./y"), "../x/y");
        assert_eq!(norm_path("."), ".");
        assert_eq!(norm_path("/abs//p"), "/abs/p");
        for u in [
            "https://github.com/o/r",
            "https://github.com/o/r.git",
            "https://github.com/o/r/",
            "git+https://github.com/o/r.git@v1.2#egg=r",
            "https://github.com/o/r?branch=main#0123abcd",
        ] {
            assert_eq!(norm_git(u), "https://github.com/o/r", "{u}");
        }
        assert_eq!(norm_git("git@github.com:o/r.git"), "git@github.com:o/r");
        assert_ne!(
            norm_git("https://github.com/o/r"),
            norm_git("https://github.com/evil/r")
        );
        assert_eq!(norm_python("Flask_Login"), "flask-login");
        assert_eq!(norm_python("a.-_b"), "a-b");
    }

    #[test]
    fn the_same_dependency_needs_the_same_source() {
        let reg = Dep::package("a", Source::Registry(None), "[dependencies]");
        let path = Dep::package("a", Source::Path("a".into()), "[dev-dependencies]");
        let inherited = Dep::package("a", Source::Inherited, "[dependencies]");
        assert!(reg.same_as(&reg));
        assert!(!path.same_as(&reg), "a new source is a new dependency");
        assert!(inherited.same_as(&reg), "inherited: the name is enough");
        let index = Dep::index("a", Source::Registry(None), "");
        assert!(!index.same_as(&reg));
    }
}
