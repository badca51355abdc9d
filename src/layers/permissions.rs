//! TEMPORARY stand-in until the permissions layer lands.
use crate::changeset::ChangeSet;
use crate::config::PermissionsConfig;
use crate::verdict::{Issue, Severity};
pub struct Permissions(Vec<String>);
impl Permissions {
    pub fn compile(cfg: &PermissionsConfig) -> Result<Self, String> {
        Ok(Permissions(cfg.denied_paths.clone()))
    }
    pub fn check(&self, changes: &ChangeSet) -> Vec<Issue> {
        let mut out = Vec::new();
        for f in &changes.files {
            for p in f.paths() {
                if p.starts_with(".rascal/")
                    || self
                        .0
                        .iter()
                        .any(|d| p.starts_with(d.trim_end_matches('*')))
                {
                    out.push(
                        Issue::new(
                            "permissions/denied-path",
                            Severity::Error,
                            format!("{p} is denied"),
                        )
                        .at(p, None),
                    );
                }
            }
        }
        out
    }
    pub fn advisory(&self) -> bool {
        false
    }
}
