//! TEMPORARY stand-in until the permissions schema lands.
use serde::{Deserialize, Serialize};
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PermissionsConfig {
    pub mode: Option<String>,
    pub denied_paths: Vec<String>,
    pub max_files_changed: Option<u64>,
    pub max_lines_changed: Option<u64>,
}
