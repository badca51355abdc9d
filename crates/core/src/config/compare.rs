//! `compare:` in `.rascal/config.yaml`: how the comparator's cross-testing
//! runs — at most `cross_tests` test runs per run (default 200), and what a
//! candidate that fails a test most others pass gets (`on_disagreement`:
//! `fail`, the default, or `warn`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareConfig {
    /// At most this many cross-test runs per run (default 200); over it,
    /// cross-testing is skipped with the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_tests: Option<usize>,
    #[serde(default)]
    pub on_disagreement: OnDisagreement,
}

/// What `compare/disagrees` is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnDisagreement {
    #[default]
    Fail,
    Warn,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fail_and_unknown_keys_are_refused() {
        let c: CompareConfig = serde_yaml::from_str("{}").unwrap();
        assert_eq!(c.on_disagreement, OnDisagreement::Fail);
        assert_eq!(c.cross_tests, None);
        let c: CompareConfig =
            serde_yaml::from_str("{ cross_tests: 12, on_disagreement: warn }").unwrap();
        assert_eq!(
            (c.cross_tests, c.on_disagreement),
            (Some(12), OnDisagreement::Warn)
        );
        assert!(serde_yaml::from_str::<CompareConfig>("{ cross_test: 3 }").is_err());
    }
}
