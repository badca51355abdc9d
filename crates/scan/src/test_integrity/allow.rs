//! `allow_test_changes`: path globs and test names that downgrade a finding
//! to information.

use super::compare::Finding;
use super::short;
use rascal_core::config::permissions::build_glob;
use rascal_core::config::permissions::GlobPattern;
use rascal_core::model::verdict::Issue;
use rascal_core::model::verdict::Severity;

pub(super) struct Allow<'a> {
    pub(super) entries: &'a [String],
    pub(super) paths: Vec<(usize, globset::GlobMatcher)>,
    pub(super) names: Vec<(usize, globset::GlobMatcher)>,
}

impl<'a> Allow<'a> {
    pub(super) fn new(entries: &'a [String]) -> Self {
        let mut paths = Vec::new();
        let mut names = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if let Ok(p) = GlobPattern::try_from(e.as_str()) {
                for g in p.expanded() {
                    if let Ok(g) = build_glob(&g) {
                        paths.push((i, g.compile_matcher()));
                    }
                }
            }
            if let Ok(g) = globset::Glob::new(e) {
                names.push((i, g.compile_matcher()));
            }
        }
        Allow {
            entries,
            paths,
            names,
        }
    }

    /// The entry that allows a finding, if one does.
    pub(super) fn allows(&self, f: &Finding) -> Option<&'a str> {
        let path = f.paths.iter().find_map(|p| {
            let p = p.trim_start_matches("./");
            self.paths
                .iter()
                .find(|(_, g)| g.is_match(p))
                .map(|(i, _)| *i)
        });
        if let Some(i) = path {
            return Some(&self.entries[i]);
        }
        let mut entry = None;
        for (name, leaf) in &f.tests {
            let hit = self
                .entries
                .iter()
                .position(|e| e == name || e == leaf)
                .or_else(|| {
                    self.names
                        .iter()
                        .find(|(_, g)| g.is_match(name.as_str()))
                        .map(|(i, _)| *i)
                });
            match hit {
                Some(i) => entry = entry.or(Some(i)),
                None => return None,
            }
        }
        entry.map(|i| self.entries[i].as_str())
    }

    pub(super) fn apply(&self, f: Finding) -> Issue {
        let mut issue = f.issue.clone();
        if let Some(entry) = self.allows(&f) {
            issue.severity = Severity::Info;
            issue.message = format!(
                "{} (allowed by allow_test_changes `{}`)",
                issue.message,
                short(entry)
            );
        }
        issue
    }
}
