//! The ChangeSet: a candidate's change against its base commit, as plain
//! values. Layers read this, never raw git objects, so they are pure and
//! easy to test with hand-built (including hostile) change sets.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What happened to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Create,
    Modify,
    Delete,
    /// `old_path` → `path`; content may also have changed.
    Rename,
    /// Only the file mode changed (e.g. made executable).
    Mode,
}

impl Operation {
    pub fn name(self) -> &'static str {
        match self {
            Operation::Create => "create",
            Operation::Modify => "modify",
            Operation::Delete => "delete",
            Operation::Rename => "rename",
            Operation::Mode => "mode",
        }
    }
}

/// What kind of tree entry a side of a change is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    File,
    Executable,
    Symlink,
    /// A gitlink: a submodule commit pointer.
    Submodule,
}

impl EntryKind {
    pub fn from_mode(mode: u32) -> Option<EntryKind> {
        match mode {
            0o100644 | 0o100664 => Some(EntryKind::File),
            0o100755 => Some(EntryKind::Executable),
            0o120000 => Some(EntryKind::Symlink),
            0o160000 => Some(EntryKind::Submodule),
            _ => None,
        }
    }
}

/// One added line, with its 1-based line number in the new file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddedLine {
    pub line: u32,
    pub text: String,
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The path after the change (for a delete: the deleted path).
    pub path: String,
    /// The path before a rename.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub op: Operation,
    /// Entry kind before (None for a create).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_kind: Option<EntryKind>,
    /// Entry kind after (None for a delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_kind: Option<EntryKind>,
    /// For a symlink after the change: where it points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symlink_target: Option<String>,
    /// The new content is binary ([`crate::model::content::is_text`] says
    /// no): it has no added lines and no line counts, and only the secret
    /// scanner reads it, from `content`.
    pub binary: bool,
    /// True when the file is not tracked by git (the agent created it and
    /// did not `git add` it).
    pub untracked: bool,
    pub added: u32,
    pub removed: u32,
    /// Size in bytes of the new content (0 for a delete).
    pub size: u64,
    /// Added lines with their numbers, whole (empty for binary files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added_lines: Vec<AddedLine>,
    /// For a binary file: its new content (up to the ChangeSet's read limit:
    /// when shorter than `size`, the rest was not read), so that secret
    /// rules read every byte. Shared, not copied, when the ChangeSet is
    /// cloned; not serialised.
    #[serde(skip)]
    pub content: Option<Arc<[u8]>>,
}

impl FileChange {
    /// A bare change for building change sets by hand (tests, benches).
    pub fn new(path: impl Into<String>, op: Operation) -> Self {
        let (old_kind, new_kind) = match op {
            Operation::Create => (None, Some(EntryKind::File)),
            Operation::Delete => (Some(EntryKind::File), None),
            _ => (Some(EntryKind::File), Some(EntryKind::File)),
        };
        FileChange {
            path: path.into(),
            old_path: None,
            op,
            old_kind,
            new_kind,
            symlink_target: None,
            binary: false,
            untracked: false,
            added: 0,
            removed: 0,
            size: 0,
            added_lines: Vec::new(),
            content: None,
        }
    }

    /// Builder: set the added lines (numbered from 1) and the counts.
    pub fn with_lines<S: AsRef<str>>(mut self, lines: &[S]) -> Self {
        self.added_lines = lines
            .iter()
            .enumerate()
            .map(|(i, t)| AddedLine {
                line: i as u32 + 1,
                text: t.as_ref().to_string(),
            })
            .collect();
        self.added = self.added_lines.len() as u32;
        self.size = lines.iter().map(|l| l.as_ref().len() as u64 + 1).sum();
        self
    }

    /// Builder: make it a binary file with this new content.
    pub fn with_content(mut self, bytes: &[u8]) -> Self {
        self.binary = true;
        self.size = bytes.len() as u64;
        self.content = Some(Arc::from(bytes));
        self.added_lines.clear();
        self.added = 0;
        self
    }

    /// Every path this change touches: for a rename both old and new.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.path.as_str()).chain(self.old_path.as_deref())
    }

    pub fn mode_changed(&self) -> bool {
        matches!((self.old_kind, self.new_kind), (Some(a), Some(b)) if a != b)
    }
}

/// A candidate's whole change against its base commit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeSet {
    /// The base commit id (hex).
    pub base: String,
    pub files: Vec<FileChange>,
    /// The change as a git tree (the base tree with every changed file),
    /// once written: the candidate's fingerprint. Empty for `rascal check`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tree: String,
}

impl ChangeSet {
    pub fn lines_changed(&self) -> u64 {
        self.files
            .iter()
            .map(|f| f.added as u64 + f.removed as u64)
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// A stable text form of the change, for receipts and comparisons: its
    /// tree id once written, else a digest of the ChangeSet.
    pub fn fingerprint(&self) -> String {
        if !self.tree.is_empty() {
            return self.tree.clone();
        }
        crate::model::verdict::digest(serde_json::to_vec(self).unwrap_or_default())
    }
}
