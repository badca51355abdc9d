//! TEMPORARY stand-in until the secret scanner lands.
use crate::changeset::ChangeSet;
use crate::verdict::{Issue, Severity};
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
pub struct SecretsOptions {
    pub allow_paths: Vec<String>,
    pub max_file_bytes: Option<u64>,
}
pub struct SecretScanner;
impl SecretScanner {
    pub fn new(_opts: &SecretsOptions) -> Result<Self, String> {
        Ok(SecretScanner)
    }
    pub fn scan(&self, changes: &ChangeSet) -> Vec<Issue> {
        let mut out = Vec::new();
        for f in &changes.files {
            for l in &f.added_lines {
                if l.text.contains("AKIA") {
                    out.push(
                        Issue::new("secrets/aws", Severity::Error, "aws key")
                            .at(&f.path, Some(l.line)),
                    );
                }
            }
        }
        out
    }
}
