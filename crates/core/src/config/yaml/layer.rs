//! The thin layer between serde_yaml and the schema type: it charges the
//! alias budget for every value and string handed on, refuses duplicate
//! keys, and finds a node again by its path (the locating pass, `Walk`).

use super::{path_text, Seg, MAX_EXPANDED_BYTES, MAX_VALUES};
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use serde::Deserialize;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::fmt;

/// What the locating pass looks for.
pub(super) enum Find {
    Value(Vec<Seg>),
    Key(Vec<Seg>, String),
}

pub(super) enum Problem {
    Budget { path: String },
    Duplicate { path: Vec<Seg>, key: String },
}

/// Shared by every layer of one pass: the budget spent, where the pass is
/// in the document, and what it found.
pub(super) struct Tracker {
    bytes: Cell<u64>,
    values: Cell<u64>,
    path: RefCell<Vec<Seg>>,
    find: Option<Find>,
    pub(super) found: Cell<bool>,
    pub(super) problem: RefCell<Option<Problem>>,
}

impl Tracker {
    pub(super) fn new(find: Option<Find>) -> Tracker {
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
pub(super) struct De<'a, D> {
    de: D,
    t: &'a Tracker,
    key: Option<KeyCtx<'a>>,
}

impl<'a, D> De<'a, D> {
    pub(super) fn new(de: D, t: &'a Tracker) -> Self {
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
pub(super) struct Walk;

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
