//! Reading a YAML config file without trusting it: a cap on its size, a
//! budget on what its aliases expand to (a "billion laughs" file is refused
//! before it is allocated), duplicate keys refused naming both lines, and
//! nodes found again by path for errors noticed after parsing.
//!
//! The budget is charged by a thin layer between serde_yaml and the schema
//! type, for what the schema is actually handed: every value, and the bytes
//! of every string. So it is exact whatever the shape of the file, and it
//! uses serde_yaml's own parser (no second reading of YAML that could
//! disagree with the first).

use super::ConfigError;
use serde::de::DeserializeOwned;
use serde::Deserialize;

mod layer;

use layer::{De, Find, Problem, Tracker, Walk};

/// Config files larger than this are refused unread.
pub const MAX_FILE_BYTES: usize = 1 << 20;
/// What a file may expand to through aliases: bytes of string values…
pub const MAX_EXPANDED_BYTES: u64 = 10 << 20;
/// …and values (scalars, lists, mappings). A 1 MiB file without aliases
/// has at most about half a million.
pub const MAX_VALUES: u64 = 1 << 20;
/// libyaml's scanner can spend, per token, time in proportion to the flow
/// collections (`[`, `{`) open around it: `a: [[[[…` 500k deep takes
/// minutes. Bounded from above without parsing: the sum, over every byte,
/// of the `[` and `{` before it. Files of ordinary shape are far below
/// (a 10 KiB file with 100 brackets: 1M); a 1 MiB file may hold ~100.
pub const MAX_FLOW_WORK: u64 = 64 << 20;

/// One step of a path into a document: a mapping key or a list index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

impl Seg {
    pub fn key(k: &str) -> Seg {
        Seg::Key(k.to_string())
    }
}

/// `agents.a.args[3]`.
pub fn path_text(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    if s.is_empty() {
        s.push_str("(top)");
    }
    s
}

/// Parse one YAML document into `T`: the size cap, the alias budget and
/// duplicate keys first, then the schema's own errors, all located.
pub fn from_str<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, ConfigError> {
    check_size(file, text.len(), Some(text))?;
    check_flow_work(file, text)?;
    let t = Tracker::new(None);
    let de = serde_yaml::Deserializer::from_str(text);
    T::deserialize(De::new(de, &t)).map_err(|e| explain(file, text, &t, e))
}

/// The size cap, for a file of `len` bytes (`text` when it was read, to
/// point at where the cap falls).
pub fn check_size(file: &str, len: usize, text: Option<&str>) -> Result<(), ConfigError> {
    if len <= MAX_FILE_BYTES {
        return Ok(());
    }
    let at = text.map(|t| {
        let head = &t.as_bytes()[..MAX_FILE_BYTES];
        let line = head.iter().filter(|b| **b == b'\n').count() + 1;
        let col = head
            .iter()
            .rev()
            .take_while(|b| **b != b'\n')
            .filter(|b| **b & 0xC0 != 0x80)
            .count()
            + 1;
        (line, col)
    });
    Err(ConfigError {
        file: file.to_string(),
        line: at.map(|a| a.0),
        column: at.map(|a| a.1),
        message: format!(
            "the file is {} bytes; rascal reads config files of at most {MAX_FILE_BYTES} bytes (1 MiB){}",
            len,
            if at.is_some() { ", reached here" } else { "" }
        ),
        hint: "config files are small: move data out of .rascal/".into(),
    })
}

/// Refuse a file whose flow brackets could make the YAML scanner slow
/// (see [`MAX_FLOW_WORK`]), at the byte where the bound is crossed.
fn check_flow_work(file: &str, text: &str) -> Result<(), ConfigError> {
    let (mut opens, mut work) = (0u64, 0u64);
    let (mut line, mut col) = (1, 1);
    for b in text.bytes() {
        work += opens;
        if work > MAX_FLOW_WORK {
            return Err(ConfigError {
                file: file.to_string(),
                line: Some(line),
                column: Some(col),
                message: format!(
                    "too many `[` and `{{` for a file of this size ({opens} before this point): rascal bounds the time YAML parsing may take"
                ),
                hint: "write long lists and mappings in block style (`- item` on its own line) \
                       instead of `[…]` and `{…}`"
                    .into(),
            });
        }
        match b {
            b'[' | b'{' => opens += 1,
            b'\n' => {
                line += 1;
                col = 0;
            }
            _ => {}
        }
        // Columns count characters, not UTF-8 continuation bytes.
        if b & 0xC0 != 0x80 {
            col += 1;
        }
    }
    Ok(())
}

/// Where the node at `path` starts, as (line, column), 1-based.
pub fn locate(text: &str, path: &[Seg]) -> Option<(usize, usize)> {
    find(text, Find::Value(path.to_vec()))
}

/// Where the key `key` of the mapping at `path` is, as (line, column).
pub fn locate_key(text: &str, path: &[Seg], key: &str) -> Option<(usize, usize)> {
    find(text, Find::Key(path.to_vec(), key.to_string()))
}

fn find(text: &str, what: Find) -> Option<(usize, usize)> {
    let t = Tracker::new(Some(what));
    let de = serde_yaml::Deserializer::from_str(text);
    match Walk::deserialize(De::new(de, &t)) {
        Err(e) if t.found.get() => e.location().map(|l| (l.line(), l.column())),
        _ => None,
    }
}

/// The first name given twice in the list at `list` (each element's
/// `field`, or the element itself), as an error at the second naming both
/// lines. `what` names the elements in the plural ("guardrails").
pub fn unique_names<'n>(
    file: &str,
    text: &str,
    list: &[Seg],
    field: Option<&str>,
    names: impl IntoIterator<Item = &'n str>,
    what: &str,
    hint: &str,
) -> Result<(), ConfigError> {
    let names: Vec<&str> = names.into_iter().collect();
    let mut seen = std::collections::HashMap::new();
    for (j, name) in names.iter().enumerate() {
        let Some(&i) = seen.get(name) else {
            seen.insert(*name, j);
            continue;
        };
        let at = |k: usize| {
            let mut p = list.to_vec();
            p.push(Seg::Index(k));
            if let Some(f) = field {
                p.push(Seg::key(f));
            }
            locate(text, &p)
        };
        let (first, second) = (at(i), at(j));
        let line = |a: Option<(usize, usize)>, k: usize| match a {
            Some((l, _)) => format!("line {l}"),
            None => format!("entry {}", k + 1),
        };
        return Err(ConfigError {
            file: file.to_string(),
            line: second.map(|a| a.0),
            column: second.map(|a| a.1),
            message: format!(
                "two {what} are named `{name}`: at {} and at {}",
                line(first, i),
                line(second, j)
            ),
            hint: hint.to_string(),
        });
    }
    Ok(())
}

/// Turn a serde_yaml error into a located config error, saying what the
/// tracker saw (budget, duplicate key) when that was the cause.
fn explain(file: &str, text: &str, t: &Tracker, e: serde_yaml::Error) -> ConfigError {
    let loc = e.location().map(|l| (l.line(), l.column()));
    let mut err = ConfigError {
        file: file.to_string(),
        line: loc.map(|l| l.0),
        column: loc.map(|l| l.1),
        // A value quoted in the message may be as long as the file.
        message: crate::text::cut(&clean_message(&e.to_string()), 1000)
            + &loc
                .and_then(|(l, c)| snippet(text, l, c))
                .unwrap_or_default(),
        hint: format!(
            "fix {file}; the keys and values allowed are listed in docs/configuration.md"
        ),
    };
    match t.problem.borrow_mut().take() {
        Some(Problem::Budget { path }) => {
            err.message = format!(
                "YAML aliases expand this file past {} MiB of text or {} values (at `{path}`; the value at this location is repeated through `*alias` references)",
                MAX_EXPANDED_BYTES >> 20,
                MAX_VALUES
            );
            err.hint =
                "write the values out, or use fewer aliases: a config file may not expand much past its size".into();
        }
        Some(Problem::Duplicate { path, key }) => {
            let first = locate_key(text, &path, &key);
            let in_map = if path.is_empty() {
                String::new()
            } else {
                format!(" in `{}`", path_text(&path))
            };
            err.message = match (first, loc) {
                (Some((l1, _)), Some((l2, _))) => {
                    format!("duplicate key `{key}`{in_map}: at line {l1} and at line {l2}")
                }
                _ => format!("duplicate key `{key}`{in_map}"),
            };
            err.hint = "keep one of them: YAML would otherwise silently use the last".into();
        }
        None if err.message.contains("repetition limit exceeded") => {
            err.message = "YAML aliases are repeated too often (repetition limit exceeded)".into();
            err.hint = "write the values out, or use fewer aliases".into();
        }
        None if err.message.contains("recursion limit exceeded") => {
            err.hint = "the file nests too deeply (at most 128 levels)".into();
        }
        None => {}
    }
    err
}

/// serde_yaml appends " at line X column Y"; the location is printed in
/// front already.
fn clean_message(msg: &str) -> String {
    let msg = match msg.find(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    };
    user_words(msg)
}

/// serde's names for what it found or expected, in the words of a config
/// file's reader: a list, a mapping, text, nothing.
fn user_words(msg: &str) -> String {
    const WORDS: [(&str, &str); 8] = [
        ("invalid type: sequence", "invalid type: a list"),
        (
            "invalid type: map",
            "invalid type: a mapping (`key: value` lines)",
        ),
        (
            "invalid type: unit value",
            "invalid type: nothing (an empty value)",
        ),
        ("invalid type: string ", "invalid type: text "),
        ("expected a sequence", "expected a list"),
        ("expected a map", "expected a mapping (`key: value` lines)"),
        ("expected struct ", "expected the settings of "),
        ("invalid type: boolean ", "invalid type: "),
    ];
    let mut out = msg.to_string();
    for (serde, user) in WORDS {
        out = out.replace(serde, user);
    }
    out
}

/// Line `line` of `text` and a caret under column `column`, for an error
/// that points into the file.
fn snippet(text: &str, line: usize, column: usize) -> Option<String> {
    let shown = text.lines().nth(line.checked_sub(1)?)?;
    let shown = crate::text::cut(&crate::text::inert::sanitize(shown), 200);
    let gutter = line.to_string();
    Some(format!(
        "\n  {gutter} | {shown}\n  {} | {}^",
        " ".repeat(gutter.len()),
        " ".repeat(column.saturating_sub(1))
    ))
}

#[cfg(test)]
mod tests;
