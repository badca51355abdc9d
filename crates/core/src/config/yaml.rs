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
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};
use serde::Deserialize;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::fmt;

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
                    "too many `[` and `{{` for a file of this size ({opens} before this point): \
                     rascal bounds the time YAML parsing may take"
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

/// What the locating pass looks for.
enum Find {
    Value(Vec<Seg>),
    Key(Vec<Seg>, String),
}

enum Problem {
    Budget { path: String },
    Duplicate { path: Vec<Seg>, key: String },
}

/// Shared by every layer of one pass: the budget spent, where the pass is
/// in the document, and what it found.
struct Tracker {
    bytes: Cell<u64>,
    values: Cell<u64>,
    path: RefCell<Vec<Seg>>,
    find: Option<Find>,
    found: Cell<bool>,
    problem: RefCell<Option<Problem>>,
}

impl Tracker {
    fn new(find: Option<Find>) -> Tracker {
        Tracker {
            bytes: Cell::new(0),
            values: Cell::new(0),
            path: RefCell::new(Vec::new()),
            find,
            found: Cell::new(false),
            problem: RefCell::new(None),
        }
    }

    /// One more value of `len` bytes.
    fn charge<E: de::Error>(&self, len: usize) -> Result<(), E> {
        let bytes = self.bytes.get().saturating_add(len as u64);
        let values = self.values.get() + 1;
        self.bytes.set(bytes);
        self.values.set(values);
        if bytes > MAX_EXPANDED_BYTES || values > MAX_VALUES {
            let path = path_text(&self.path.borrow());
            *self.problem.borrow_mut() = Some(Problem::Budget { path });
            return Err(E::custom("YAML aliases expand past the cap"));
        }
        Ok(())
    }

    /// A value (not a key) is visited at the current path.
    fn at_value<E: de::Error>(&self) -> Result<(), E> {
        if let Some(Find::Value(p)) = &self.find {
            if *self.path.borrow() == *p {
                self.found.set(true);
                return Err(E::custom("found"));
            }
        }
        Ok(())
    }

    /// Key `k` of the mapping at the current path, whose keys so far are `seen`.
    fn at_key<E: de::Error>(&self, seen: &HashSet<String>, k: &str) -> Result<(), E> {
        if let Some(Find::Key(p, name)) = &self.find {
            if k == name && *self.path.borrow() == *p {
                self.found.set(true);
                return Err(E::custom("found"));
            }
        }
        if seen.contains(k) {
            let path = self.path.borrow().clone();
            *self.problem.borrow_mut() = Some(Problem::Duplicate {
                path,
                key: k.to_string(),
            });
            return Err(E::custom(format!("duplicate key `{k}`")));
        }
        Ok(())
    }
}

/// The key being read, when a node is a mapping key: the mapping's keys so
/// far, and where to leave this one.
#[derive(Clone, Copy)]
struct KeyCtx<'a> {
    seen: &'a HashSet<String>,
    got: &'a RefCell<Option<String>>,
}

/// A deserializer that charges the tracker for what it hands on.
struct De<'a, D> {
    de: D,
    t: &'a Tracker,
    key: Option<KeyCtx<'a>>,
}

impl<'a, D> De<'a, D> {
    fn new(de: D, t: &'a Tracker) -> Self {
        De { de, t, key: None }
    }
}

macro_rules! forward_de {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.de.$method($($arg,)* Vis { v: visitor, t: self.t, key: self.key })
        })*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for De<'_, D> {
    type Error = D::Error;

    forward_de! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
        deserialize_ignored_any();
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// A visitor that charges the tracker before the schema's visitor sees (and
/// allocates) a value.
struct Vis<'a, V> {
    v: V,
    t: &'a Tracker,
    key: Option<KeyCtx<'a>>,
}

impl<V> Vis<'_, V> {
    /// A scalar of `len` bytes; `text` is its key form when it is a key.
    fn scalar<E: de::Error>(&self, len: usize, text: impl FnOnce() -> String) -> Result<(), E> {
        self.t.charge(len)?;
        match self.key {
            Some(k) => {
                let s = text();
                self.t.at_key(k.seen, &s)?;
                *k.got.borrow_mut() = Some(s);
                Ok(())
            }
            None => self.t.at_value(),
        }
    }

    /// A list, mapping or tagged value (a key of that kind is not checked
    /// for duplicates).
    fn node<E: de::Error>(&self) -> Result<(), E> {
        self.t.charge(0)?;
        match self.key {
            Some(_) => Ok(()),
            None => self.t.at_value(),
        }
    }
}

macro_rules! visit_number {
    ($($method:ident($ty:ty);)*) => {
        $(fn $method<E: de::Error>(self, x: $ty) -> Result<V::Value, E> {
            self.scalar(std::mem::size_of::<$ty>(), || x.to_string())?;
            self.v.$method(x)
        })*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Vis<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.v.expecting(f)
    }

    visit_number! {
        visit_bool(bool);
        visit_i8(i8);
        visit_i16(i16);
        visit_i32(i32);
        visit_i64(i64);
        visit_i128(i128);
        visit_u8(u8);
        visit_u16(u16);
        visit_u32(u32);
        visit_u64(u64);
        visit_u128(u128);
        visit_f32(f32);
        visit_f64(f64);
        visit_char(char);
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<V::Value, E> {
        self.scalar(s.len(), || s.to_string())?;
        self.v.visit_str(s)
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<V::Value, E> {
        self.scalar(s.len(), || s.to_string())?;
        self.v.visit_borrowed_str(s)
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<V::Value, E> {
        self.scalar(s.len(), || s.clone())?;
        self.v.visit_string(s)
    }

    fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<V::Value, E> {
        self.scalar(b.len(), || String::from_utf8_lossy(b).into_owned())?;
        self.v.visit_bytes(b)
    }

    fn visit_borrowed_bytes<E: de::Error>(self, b: &'de [u8]) -> Result<V::Value, E> {
        self.scalar(b.len(), || String::from_utf8_lossy(b).into_owned())?;
        self.v.visit_borrowed_bytes(b)
    }

    fn visit_byte_buf<E: de::Error>(self, b: Vec<u8>) -> Result<V::Value, E> {
        self.scalar(b.len(), || String::from_utf8_lossy(&b).into_owned())?;
        self.v.visit_byte_buf(b)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.scalar(0, || "~".into())?;
        self.v.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.scalar(0, || "~".into())?;
        self.v.visit_unit()
    }

    // `Some` and newtypes wrap the same node: it is charged when it is read.
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.v.visit_some(De {
            de: d,
            t: self.t,
            key: self.key,
        })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.v.visit_newtype_struct(De {
            de: d,
            t: self.t,
            key: self.key,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.node()?;
        self.v.visit_seq(Seq {
            a: seq,
            t: self.t,
            i: 0,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.node()?;
        self.v.visit_map(Map {
            a: map,
            t: self.t,
            seen: HashSet::new(),
            pending: None,
        })
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.node()?;
        self.v.visit_enum(Enum { a: data, t: self.t })
    }
}

/// A seed that reads its node through a [`De`].
struct Seed<'a, S> {
    s: S,
    t: &'a Tracker,
    key: Option<KeyCtx<'a>>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.s.deserialize(De {
            de: d,
            t: self.t,
            key: self.key,
        })
    }
}

struct Seq<'a, A> {
    a: A,
    t: &'a Tracker,
    i: usize,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Seq<'_, A> {
    type Error = A::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        self.t.path.borrow_mut().push(Seg::Index(self.i));
        let r = self.a.next_element_seed(Seed {
            s: seed,
            t: self.t,
            key: None,
        });
        self.t.path.borrow_mut().pop();
        self.i += 1;
        r
    }

    fn size_hint(&self) -> Option<usize> {
        self.a.size_hint()
    }
}

struct Map<'a, A> {
    a: A,
    t: &'a Tracker,
    seen: HashSet<String>,
    /// The key just read, for the path of its value.
    pending: Option<String>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Map<'_, A> {
    type Error = A::Error;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, A::Error> {
        let got = RefCell::new(None);
        let r = self.a.next_key_seed(Seed {
            s: seed,
            t: self.t,
            key: Some(KeyCtx {
                seen: &self.seen,
                got: &got,
            }),
        })?;
        let key = got.into_inner();
        if let Some(k) = &key {
            self.seen.insert(k.clone());
        }
        self.pending = Some(key.unwrap_or_else(|| "?".into()));
        Ok(r)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let key = self.pending.take().unwrap_or_else(|| "?".into());
        self.t.path.borrow_mut().push(Seg::Key(key));
        let r = self.a.next_value_seed(Seed {
            s: seed,
            t: self.t,
            key: None,
        });
        self.t.path.borrow_mut().pop();
        r
    }

    fn size_hint(&self) -> Option<usize> {
        self.a.size_hint()
    }
}

struct Enum<'a, A> {
    a: A,
    t: &'a Tracker,
}

impl<'a, 'de, A: EnumAccess<'de>> EnumAccess<'de> for Enum<'a, A> {
    type Error = A::Error;
    type Variant = Variant<'a, A::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), A::Error> {
        let (v, a) = self.a.variant_seed(Seed {
            s: seed,
            t: self.t,
            key: None,
        })?;
        Ok((v, Variant { a, t: self.t }))
    }
}

struct Variant<'a, A> {
    a: A,
    t: &'a Tracker,
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Variant<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.a.unit_variant()
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        self.a.newtype_variant_seed(Seed {
            s: seed,
            t: self.t,
            key: None,
        })
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, A::Error> {
        self.a.tuple_variant(
            len,
            Vis {
                v,
                t: self.t,
                key: None,
            },
        )
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, A::Error> {
        self.a.struct_variant(
            fields,
            Vis {
                v,
                t: self.t,
                key: None,
            },
        )
    }
}

/// Reads every node of a document and keeps nothing: the locating pass.
struct Walk;

impl<'de> serde::Deserialize<'de> for Walk {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Walk, D::Error> {
        d.deserialize_any(WalkVisitor)
    }
}

struct WalkVisitor;

impl<'de> Visitor<'de> for WalkVisitor {
    type Value = Walk;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_i128<E>(self, _: i128) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_u128<E>(self, _: u128) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_str<E>(self, _: &str) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_bytes<E>(self, _: &[u8]) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_unit<E>(self) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_none<E>(self) -> Result<Walk, E> {
        Ok(Walk)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Walk, D::Error> {
        Walk::deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Walk, D::Error> {
        Walk::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Walk, A::Error> {
        while seq.next_element::<Walk>()?.is_some() {}
        Ok(Walk)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Walk, A::Error> {
        while map.next_entry::<Walk, Walk>()?.is_some() {}
        Ok(Walk)
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Walk, A::Error> {
        let (Walk, v) = data.variant::<Walk>()?;
        v.newtype_variant::<Walk>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Doc {
        #[serde(default)]
        agents: BTreeMap<String, Vec<String>>,
        #[serde(default)]
        list: Vec<String>,
    }

    #[test]
    fn a_plain_file_parses() {
        let d: Doc = from_str("f", "agents:\n  a: [x, y]\nlist: [1, '2']\n").unwrap();
        assert_eq!(d.agents["a"], ["x", "y"]);
        assert_eq!(d.list, ["1", "2"]);
    }

    #[test]
    fn a_repeated_big_anchor_is_refused_with_its_location() {
        let big = "x".repeat(600 * 1024);
        let refs = vec!["*a"; 40].join(", ");
        let text = format!("agents:\n  a: [&a {big}]\nlist: [{refs}]\n");
        let e = from_str::<Doc>("f.yaml", &text).unwrap_err();
        assert!(e.message.contains("aliases"), "{e}");
        assert!(e.message.contains("list["), "names the path: {e}");
        assert_eq!(e.line, Some(2), "points at the anchored value: {e}");
    }

    #[test]
    fn a_billion_laughs_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let e = from_str::<BTreeMap<String, serde_yaml::Value>>("f", &text).unwrap_err();
        assert!(
            e.message.contains("aliases") || e.message.contains("repetition"),
            "{e}"
        );
    }

    #[test]
    fn an_oversized_file_is_refused_unread() {
        let text = format!("list:\n{}", "  - xxxxxxx\n".repeat(100_000));
        let e = from_str::<Doc>("f", &text).unwrap_err();
        assert!(e.message.contains("at most 1048576 bytes"), "{e}");
        assert!(e.line.is_some());
    }

    #[test]
    fn duplicate_keys_name_both_lines() {
        let e = from_str::<Doc>("f", "agents:\n  a: [x]\n  b: [y]\n  a: [z]\n").unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(
            e.message
                .contains("duplicate key `a` in `agents`: at line 2 and at line 4"),
            "{e}"
        );
        let e = from_str::<Doc>("f", "list: []\nagents: {}\nlist: []\n").unwrap_err();
        assert!(e.message.contains("at line 1 and at line 3"), "{e}");
        // Flow style: the columns differ, the line is the same.
        let e = from_str::<Doc>("f", "agents: {a: [], a: []}\n").unwrap_err();
        assert!(e.message.contains("at line 1 and at line 1"), "{e}");
        assert_eq!(e.column, Some(17), "{e}");
        // The same key in two mappings is no duplicate.
        from_str::<Doc>("f", "agents:\n  a: [x]\n  b: [x]\n").unwrap();
    }

    #[test]
    fn nodes_are_located_by_path() {
        let text = "list:\n  - one\n  - two\nagents:\n  a:\n    - x\n";
        assert_eq!(
            locate(text, &[Seg::key("list"), Seg::Index(1)]),
            Some((3, 5))
        );
        assert_eq!(
            locate(text, &[Seg::key("agents"), Seg::key("a"), Seg::Index(0)]),
            Some((6, 7))
        );
        assert_eq!(locate_key(text, &[Seg::key("agents")], "a"), Some((5, 3)));
        assert_eq!(locate(text, &[Seg::key("nope")]), None);
    }

    #[test]
    fn deep_nesting_is_refused_quickly() {
        // libyaml takes minutes over this one (quadratic in the depth).
        let text = format!("list: {}{}\n", "[".repeat(300_000), "]".repeat(300_000));
        let start = std::time::Instant::now();
        let e = from_str::<Doc>("f", &text).unwrap_err();
        assert!(e.message.contains("too many `[`"), "{e}");
        assert_eq!(e.line, Some(1));
        assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
        let e = from_str::<serde_yaml::Value>("f", &format!("list: {}\n", "[".repeat(3000)))
            .unwrap_err();
        assert!(e.message.contains("recursion limit"), "{e}");
        let ok = format!("{}x{}", "[".repeat(120), "]".repeat(120));
        from_str::<serde_yaml::Value>("f", &ok).unwrap();
    }
}
