//! What finalizing a candidate would write, shown before anything is: the
//! branch, the commit message and the PR body (`finalize::preview` makes
//! it; the TUI's finalize dialog shows it).

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    pub candidate: String,
    pub branch: String,
    /// The commit message (its first line is the title).
    pub message: String,
    pub pr_body: String,
}

impl Preview {
    pub fn title(&self) -> &str {
        self.message.lines().next().unwrap_or("")
    }
}
