//! The TUI's one error type: what stops a screen, or refuses an edit on
//! it, by the kind a caller acts on. Its exit code is the engine's one
//! table (`rascal_engine::error::exit_code`): a theme or a terminal that
//! cannot be used is a usage error; what the engine reported keeps its
//! own kind.

/// An error of rascal-tui.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A theme that is not shipped, or a theme file that is not valid:
    /// which style, and what is allowed.
    #[error("{0}")]
    Theme(String),
    /// An edit of the plan that cannot be taken (two criteria of one
    /// name, a criterion without its check): shown on the plan screen.
    #[error("{0}")]
    Plan(String),
    /// The editor or shell a jump into a workspace opens could not be
    /// started.
    #[error("{0}")]
    Jump(String),
    /// The terminal could not be entered, drawn on or restored.
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
    /// What the engine reported: the run, its record, a decision.
    #[error(transparent)]
    Engine(#[from] rascal_engine::Error),
}

/// The CLI speaks the engine's error: the TUI's own kinds are usage
/// errors, the engine's keep their kind (and so their exit code).
impl From<Error> for rascal_engine::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Engine(e) => e,
            other => rascal_engine::Error::Usage(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tuis_own_kinds_are_usage_errors_and_the_engines_keep_theirs() {
        let theme: rascal_engine::Error = Error::Theme("unknown theme `x`".into()).into();
        assert!(matches!(theme, rascal_engine::Error::Usage(ref m) if m == "unknown theme `x`"));
        let term: rascal_engine::Error = Error::Terminal(std::io::Error::other("gone")).into();
        assert!(matches!(term, rascal_engine::Error::Usage(ref m) if m == "terminal: gone"));
        let gone: rascal_engine::Error =
            Error::Engine(rascal_engine::Error::Gone("removed".into())).into();
        assert!(matches!(gone, rascal_engine::Error::Gone(_)));
    }
}
