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
    /// Set when the ChangeSet was read as a stream: the file's content
    /// (added lines, binary bytes) was handed to the checks that read it as
    /// it was read, then let go, leaving only this digest of it
    /// ([`FileChange::content_digest`]). `added_lines` and `content` are
    /// then empty: a check that needs them must have read the stream, and
    /// says so when it did not — an empty list is never taken for "nothing
    /// added".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streamed: Option<ContentId>,
    /// What the comparator keeps of the content once it is let go
    /// (`model::likeness`): set when the stream was asked to keep
    /// it (a candidate's change). Not serialised.
    #[serde(skip)]
    pub likeness: Option<Likeness>,
    /// Set while a streamed file is handed to the checks in windows
    /// ([`Part`]): `added_lines` (or a binary file's `content`) then hold
    /// only this window of the file, never the whole of a large one. Not
    /// serialised; `None` once the file is read.
    #[serde(skip)]
    pub part: Option<Part>,
}

/// Which window of a streamed file a [`FileChange`] holds. A file is read
/// in windows of at most [`Part::WINDOW_LINES`] lines and
/// [`Part::WINDOW_BYTES`] bytes of text (a binary file in windows of
/// [`Part::BINARY_WINDOW`] bytes), handed to the checks one after the other,
/// in order: what is kept of a file while it is read is bounded whatever
/// its size or line count. A check that reads across lines keeps what it
/// needs of the window before (the secret scan its last lines; see
/// `layers::secrets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Part {
    /// 0 for the file's first window.
    pub index: u64,
    /// This is the file's last window.
    pub last: bool,
    /// For a binary file: the byte offset of the window's first byte. A
    /// binary window after the first starts with the last
    /// [`Part::BINARY_OVERLAP`] bytes of the one before, so that text across
    /// the boundary is seen whole in one of them.
    pub offset: u64,
}

impl Part {
    /// The most added lines one window holds.
    pub const WINDOW_LINES: usize = 8192;
    /// The most bytes of added text one window holds (a window closes at the
    /// first line that reaches it).
    pub const WINDOW_BYTES: usize = 1024 * 1024;
    /// A line longer than this is handed out in pieces of this many bytes,
    /// each an [`AddedLine`] with the line's number; each piece after the
    /// first starts with the last [`Part::PIECE_OVERLAP`] bytes of the piece
    /// before, so a token across the cut is whole in one of them.
    pub const LINE_PIECE: usize = 1024 * 1024;
    /// How many bytes of a long line's piece the next piece repeats.
    pub const PIECE_OVERLAP: usize = 16 * 1024;
    /// The bytes of a binary file one window holds.
    pub const BINARY_WINDOW: usize = 4 * 1024 * 1024;
    /// How many bytes of a binary window the next window repeats.
    pub const BINARY_OVERLAP: usize = 64 * 1024;

    pub fn first(&self) -> bool {
        self.index == 0
    }
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
            streamed: None,
            likeness: None,
            part: None,
        }
    }

    /// Is this the first (or only) window of the file handed to the checks?
    pub fn first_part(&self) -> bool {
        self.part.is_none_or(|p| p.first())
    }

    /// Is this the last (or only) window of the file handed to the checks?
    pub fn last_part(&self) -> bool {
        self.part.is_none_or(|p| p.last)
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

    /// A digest of the file's content as the layers see it: every added
    /// line with its number, and a binary file's bytes. For a streamed file,
    /// the digest taken when it was read.
    pub fn content_digest(&self) -> String {
        if let Some(d) = &self.streamed {
            return d.to_string();
        }
        let mut d = ContentDigest::default();
        for l in &self.added_lines {
            d.line(l.line, l.text.as_bytes());
        }
        d.finish(self.content.as_deref())
    }

    /// Let go of the content, keeping its digest: what a streamed ChangeSet
    /// holds of a file once the checks have read it. `digest`, when given,
    /// is the one taken as the content was read ([`ContentDigest`]).
    pub fn release_content(&mut self, digest: Option<String>) {
        if self.streamed.is_none() {
            self.streamed = Some(ContentId::of(
                &digest.unwrap_or_else(|| self.content_digest()),
            ));
        }
        self.added_lines = Vec::new();
        self.content = None;
    }

    /// Was the content let go after it was streamed to the checks?
    pub fn is_streamed(&self) -> bool {
        self.streamed.is_some()
    }

    /// The same change without its content (for digests): everything but
    /// `added_lines` and `content`, with the content's digest.
    fn summary(&self) -> FileChange {
        FileChange {
            path: self.path.clone(),
            old_path: self.old_path.clone(),
            op: self.op,
            old_kind: self.old_kind,
            new_kind: self.new_kind,
            symlink_target: self.symlink_target.clone(),
            binary: self.binary,
            untracked: self.untracked,
            added: self.added,
            removed: self.removed,
            size: self.size,
            added_lines: Vec::new(),
            content: None,
            streamed: Some(ContentId::of(&self.content_digest())),
            likeness: None,
            part: None,
        }
    }
}

/// The digest of a file's content ([`FileChange::content_digest`]), fed
/// line by line as the lines are read — or, for a new file's lines
/// numbered from 1, with its whole text at once ([`ContentDigest::text`]):
/// both give the same digest. The text of the lines (each followed by a
/// line break) and where the runs of consecutive lines start are hashed
/// apart, so a change of either changes the digest.
pub struct ContentDigest {
    text: sha2::Sha256,
    runs: sha2::Sha256,
    /// (index, number) of the last line fed.
    last: Option<(u64, u32)>,
}

impl Default for ContentDigest {
    fn default() -> Self {
        use sha2::Digest;
        ContentDigest {
            text: sha2::Sha256::new(),
            runs: sha2::Sha256::new(),
            last: None,
        }
    }
}

impl ContentDigest {
    /// One added line (without its line break), numbered `line`.
    pub fn line(&mut self, line: u32, text: &[u8]) {
        use sha2::Digest;
        let index = self.last.map_or(0, |(i, _)| i + 1);
        if self.last.is_none_or(|(_, n)| n.wrapping_add(1) != line) {
            self.runs.update(index.to_le_bytes());
            self.runs.update(line.to_le_bytes());
        }
        self.last = Some((index, line));
        self.text.update(text);
        self.text.update(b"\n");
    }

    /// The start of one added line numbered `line` whose text is then fed
    /// in pieces ([`Self::more`]) and closed by [`Self::end_line`]: the same
    /// digest as [`Self::line`] with the pieces joined.
    pub fn begin_line(&mut self, line: u32) {
        use sha2::Digest;
        let index = self.last.map_or(0, |(i, _)| i + 1);
        if self.last.is_none_or(|(_, n)| n.wrapping_add(1) != line) {
            self.runs.update(index.to_le_bytes());
            self.runs.update(line.to_le_bytes());
        }
        self.last = Some((index, line));
    }

    /// More text of the line begun last.
    pub fn more(&mut self, text: &[u8]) {
        use sha2::Digest;
        self.text.update(text);
    }

    /// The end of the line begun last.
    pub fn end_line(&mut self) {
        use sha2::Digest;
        self.text.update(b"\n");
    }

    /// `count` lines numbered from 1 whose texts, each followed by a line
    /// break, are exactly the `joined` parts one after the other: the same
    /// digest as feeding them one by one, in one pass over the bytes.
    pub fn text(&mut self, joined: &[&[u8]], count: u64) {
        use sha2::Digest;
        if count == 0 {
            return;
        }
        debug_assert!(self.last.is_none());
        self.runs.update(0u64.to_le_bytes());
        self.runs.update(1u32.to_le_bytes());
        self.last = Some((count - 1, count as u32));
        for part in joined {
            self.text.update(part);
        }
    }

    /// The digest of a binary file read in windows: its length and the
    /// sha256 of its bytes (a file of one window is digested with
    /// [`Self::finish`] and its bytes).
    pub fn finish_streamed_binary(self, len: u64, bytes_sha: &[u8]) -> String {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        h.update(b"rascal content 1\0");
        h.update(self.text.finalize());
        h.update(self.runs.finalize());
        h.update(b"binary streamed\0");
        h.update(len.to_le_bytes());
        h.update(bytes_sha);
        hex::encode(h.finalize())
    }

    /// The digest, with a binary file's bytes when it has them.
    pub fn finish(self, binary: Option<&[u8]>) -> String {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        h.update(b"rascal content 1\0");
        h.update(self.text.finalize());
        h.update(self.runs.finalize());
        if let Some(bytes) = binary {
            h.update(b"binary\0");
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        }
        hex::encode(h.finalize())
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
    /// tree id once written, else a digest of the ChangeSet (every file's
    /// metadata and the digest of its content: the same whether the
    /// ChangeSet was held whole or streamed).
    pub fn fingerprint(&self) -> String {
        if !self.tree.is_empty() {
            return self.tree.clone();
        }
        // The digest of the summary's JSON (`{"base":…,"files":[…]}`),
        // written file by file into the hash: no copy of the whole change
        // and no text of it held at once (100,000 files are a lot of JSON).
        use sha2::Digest;
        struct Hashing(sha2::Sha256);
        impl std::io::Write for Hashing {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.update(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut h = Hashing(sha2::Sha256::new());
        h.0.update(b"{\"base\":");
        let _ = serde_json::to_writer(&mut h, &self.base);
        h.0.update(b",\"files\":[");
        for (i, f) in self.files.iter().enumerate() {
            if i > 0 {
                h.0.update(b",");
            }
            let _ = serde_json::to_writer(&mut h, &f.summary());
        }
        h.0.update(b"]}");
        hex::encode(h.0.finalize())
    }

    /// Was the content of some file streamed to the checks and let go?
    pub fn is_streamed(&self) -> bool {
        self.files.iter().any(FileChange::is_streamed)
    }
}

/// A content digest ([`FileChange::content_digest`], a sha256 in hex) kept
/// as its 32 bytes: a streamed change of 100,000 files holds one per file,
/// and 64 characters on the heap each (plus the allocator's share) were a
/// tenth of rascal's peak. Written and read as the same hex text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentId([u8; 32]);

impl ContentId {
    /// The id of a digest in hex; anything else (never made by rascal) is
    /// kept as the sha256 of its text, so it still tells contents apart.
    pub fn of(hex_digest: &str) -> ContentId {
        let mut out = [0u8; 32];
        if hex::decode_to_slice(hex_digest, &mut out).is_err() {
            use sha2::Digest;
            out.copy_from_slice(&sha2::Sha256::digest(hex_digest.as_bytes()));
        }
        ContentId(out)
    }
}

impl std::fmt::Display for ContentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl Serialize for ContentId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for ContentId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Ok(ContentId::of(&text))
    }
}

/// A changed file as the comparator sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Likeness {
    /// The normalised text, whole: compared line by line, in order.
    Text(Arc<str>),
    /// The normalised text's length in bytes and the smallest
    /// `likeness::SKETCH_SIZE` distinct hashes of its lines, ascending.
    Sketch { len: u64, mins: Arc<[u64]> },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_the_digest_of_the_summarys_json() {
        let cs = ChangeSet {
            base: "abc".into(),
            files: vec![
                FileChange::new("a.rs", Operation::Create).with_lines(&["x", "y"]),
                FileChange::new("b.bin", Operation::Modify).with_content(b"\0\x01"),
            ],
            tree: String::new(),
        };
        let summary = ChangeSet {
            base: cs.base.clone(),
            files: cs.files.iter().map(FileChange::summary).collect(),
            tree: String::new(),
        };
        let expected = crate::model::verdict::digest(serde_json::to_vec(&summary).unwrap());
        assert_eq!(cs.fingerprint(), expected);
    }
}
