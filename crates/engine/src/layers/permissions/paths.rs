//! Path names as permissions read them: normalisation, symlink chains
//! resolved lexically, suspicious characters and Unicode look-alikes.

use super::*;

/// A path after normalisation.
pub(super) enum Norm<'a> {
    Ok(Cow<'a, str>),
    /// Absolute, empty, or escaping the repository root.
    Escape(&'static str),
}

/// Normalise a repository-relative path: strip `./`, collapse `//`,
/// resolve `.` and `..`. Absolute paths, the empty path and paths whose
/// `..` climb past the root are escapes.
pub(super) fn normalize(path: &str) -> Norm<'_> {
    if path.starts_with('/') {
        return Norm::Escape("is absolute");
    }
    if path.is_empty() {
        return Norm::Escape("is empty");
    }
    let needs_work = path
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..");
    if !needs_work {
        return Norm::Ok(Cow::Borrowed(path));
    }
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Norm::Escape("climbs out of the repository with `..`");
                }
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        return Norm::Escape("resolves to the repository root");
    }
    Norm::Ok(Cow::Owned(parts.join("/")))
}

/// The symlinks of a change: normalised path → target.
pub(super) type Links = std::collections::BTreeMap<String, String>;

/// Links a chain may pass through: more is a loop (the kernel's own limit).
const MAX_LINKS: usize = 40;

pub(super) fn links_of(changes: &ChangeSet) -> Links {
    changes
        .files
        .iter()
        .filter(|f| f.new_kind == Some(EntryKind::Symlink) && f.op != Operation::Delete)
        .filter_map(|f| match (normalize(&f.path), f.symlink_target.as_ref()) {
            (Norm::Ok(p), Some(t)) => Some((p.into_owned(), t.clone())),
            _ => None,
        })
        .collect()
}

/// Where the link at `link` (normalised) pointing at `target` ends, after
/// every link of the change on the way (links to links, `..` after a
/// link, relative and absolute targets), as the file system would resolve
/// it: a repository-relative path (empty: the root), or why it leaves the
/// repository or never ends.
pub(super) fn resolve_chain(link: &str, target: &str, links: &Links) -> Result<String, String> {
    let mut at: Vec<String> = link.split('/').map(String::from).collect();
    at.pop();
    let mut pending: std::collections::VecDeque<String> =
        target.split('/').map(String::from).collect();
    let mut hops = 1;
    while let Some(part) = pending.pop_front() {
        match part.as_str() {
            "" | "." => continue,
            ".." => {
                if at.pop().is_none() {
                    return Err(if hops > 1 {
                        format!("which leaves the repository through a chain of {hops} links")
                    } else {
                        "outside the repository".to_string()
                    });
                }
                continue;
            }
            _ => at.push(part),
        }
        if let Some(next) = links.get(&at.join("/")) {
            hops += 1;
            if hops > MAX_LINKS {
                return Err(format!(
                    "a chain of more than {MAX_LINKS} links (or a loop), which never resolves"
                ));
            }
            if next.starts_with('/') || next.starts_with('\\') || next.starts_with('~') {
                return Err(format!(
                    "which leads through `{}` to {next:?}, outside the repository",
                    at.join("/")
                ));
            }
            at.pop();
            for p in next.split('/').rev() {
                pending.push_front(p.to_string());
            }
        }
    }
    Ok(at.join("/"))
}

/// Zero-width, joiner, direction and other invisible format characters.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}'
        | '\u{17B5}' | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{E0000}'..='\u{E0FFF}')
}

pub(super) fn suspicious(path: &str) -> Option<&'static str> {
    if path.contains('\0') {
        Some("contains a NUL byte")
    } else if path.contains('\\') {
        Some("contains a backslash")
    } else if path.chars().any(|c| c.is_control()) {
        Some("contains a control character")
    } else if path.chars().any(is_invisible) {
        Some("contains an invisible (zero-width or format) character")
    } else {
        None
    }
}

pub(super) fn first_segment(path: &str) -> &str {
    path.split('/').next().unwrap_or(path)
}

/// Self-protection and `.git/` ignore case whatever `case_sensitive` says:
/// on a case-insensitive checkout `.RASCAL/` is the real config.
pub(super) fn is_protected(norm: &str) -> bool {
    let first = fold_path(first_segment(norm), false);
    PROTECTED.contains(&first.as_ref())
}

pub(super) fn is_git_dir(norm: &str) -> bool {
    fold_path(first_segment(norm), false) == ".git"
}

/// The UTS #39 confusable skeleton of a path component, after NFKC
/// (fullwidth forms) and case folding: equal skeletons look alike.
pub(super) fn skeleton(name: &str) -> String {
    let nfkc: String = name.nfkc().collect();
    let folded = fold_path(&nfkc, false);
    let skel: String = unicode_security::confusable_detection::skeleton(&folded).collect();
    // The prototypes may be upper-case (e.g. `I`): fold once more.
    fold_path(&skel, false).into_owned()
}

/// The literal first component of a glob (`secrets/**` → `secrets`,
/// `/.github/` → `.github`); None when it has glob syntax.
pub(super) fn literal_first(glob: &str) -> Option<&str> {
    let g = glob.trim_start_matches("./").trim_start_matches('/');
    let first = first_segment(g);
    let meta = first.contains(['*', '?', '[', ']', '{', '}', '\\', '!']);
    (!first.is_empty() && first != "." && first != ".." && !meta).then_some(first)
}
