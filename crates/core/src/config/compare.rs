//! `compare:` in `.rascal/config.yaml`: how the comparator's cross-testing
//! runs — at most `cross_tests` test runs per run (default 200), and what a
//! disagreement among candidates that pass everything does to the pick
//! (`on_disagreement`: `contest`, the default — any disagreement leaves the
//! run CONTESTED for a human — or `warn`, where the side whose tests weigh
//! more may be picked). A disagreement never FAILs a candidate: the tests
//! are the candidates' own.

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

/// What a disagreement does to the pick.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnDisagreement {
    /// Any candidate that disagrees with the pick contests it: no pick, the
    /// run ends CONTESTED. `fail`, its old name, means the same.
    #[default]
    #[serde(alias = "fail")]
    Contest,
    /// The side whose tests weigh more (by authors, never by heads) may be
    /// picked; a tie is still contested.
    Warn,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fail_and_unknown_keys_are_refused() {
        let c: CompareConfig = serde_yaml::from_str("{}").unwrap();
        assert_eq!(c.on_disagreement, OnDisagreement::Contest);
        let old: CompareConfig = serde_yaml::from_str("{ on_disagreement: fail }").unwrap();
        assert_eq!(old.on_disagreement, OnDisagreement::Contest);
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
