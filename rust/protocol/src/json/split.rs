//! Objects taken apart as they are parsed: the members a reader knows by name go straight
//! where it wants them (a slot, or a seed of its own for a nested object), so no map is built
//! for the object and no key of theirs is copied or hashed; the other members go into a map.
//!
//! Every strict rule holds exactly as for [`super::parse_strict_within`], with the same errors
//! at the same positions: a key repeated (named or not), the nesting cap, the decode budget
//! (each member is charged as it would be in the object's map). A value that is not an object
//! where a reader expected one is read as [`StrictValue`] reads it.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::{RootSeed, StrictValue};
use crate::budget::ENTRY_BYTES;

/// A value read by an [`ObjectReader`]: its parts when it was an object, else the value.
#[derive(Debug, PartialEq)]
pub enum Split<P> {
    /// The value was an object: what the reader made of it.
    Object(P),
    /// The value was not an object.
    Other(Value),
}

/// Takes an object apart; [`StrictValue::split`] makes the seed that calls it.
pub trait ObjectReader {
    /// What the object becomes.
    type Parts;

    /// Reads the object's members from `map`, normally with [`StrictValue::read_members`] on
    /// `object` (the seed the object itself was read with).
    fn read_object<'de, A: MapAccess<'de>>(
        self,
        object: StrictValue<'_>,
        map: A,
    ) -> Result<Self::Parts, A::Error>;
}

/// A reader that puts an object's named members in slots, in the order of the names, and
/// the others in a map.
#[derive(Debug)]
pub struct Named<const N: usize>(pub [&'static str; N]);

/// What [`Named`] makes of an object.
pub type NamedMembers<const N: usize> = ([Option<Value>; N], Map<String, Value>);

impl<const N: usize> ObjectReader for Named<N> {
    type Parts = NamedMembers<N>;

    fn read_object<'de, A: MapAccess<'de>>(
        self,
        object: StrictValue<'_>,
        mut map: A,
    ) -> Result<NamedMembers<N>, A::Error> {
        let mut named = [const { None }; N];
        let rest = object.read_members(&mut map, self.0, |index, member, map| {
            named[index] = Some(map.next_value_seed(member)?);
            Ok(())
        })?;
        Ok((named, rest))
    }
}

/// The document's root read by `R`: a [`RootSeed`] for [`super::parse_strict_with`].
#[derive(Debug)]
pub struct SplitRoot<R>(pub R);

impl<R: ObjectReader> RootSeed for SplitRoot<R> {
    type Output = Split<R::Parts>;

    fn read<'de, D: de::Deserializer<'de>>(
        self,
        root: StrictValue<'_>,
        deserializer: D,
    ) -> Result<Self::Output, D::Error> {
        root.split(self.0).deserialize(deserializer)
    }
}

impl<'a> StrictValue<'a> {
    /// A seed that reads this value with `reader` when it is an object.
    pub fn split<R: ObjectReader>(self, reader: R) -> SplitSeed<'a, R> {
        SplitSeed {
            strict: self,
            reader,
        }
    }

    /// Reads the members of the object this seed is reading: each member named in `names` is
    /// handed to `read_named` with its index and the seed for its value (which it must read
    /// with `map.next_value_seed`, once); the others are returned, in a map.
    pub fn read_members<'de, A: MapAccess<'de>, const N: usize>(
        self,
        map: &mut A,
        names: [&'static str; N],
        mut read_named: impl FnMut(usize, StrictValue<'a>, &mut A) -> Result<(), A::Error>,
    ) -> Result<Map<String, Value>, A::Error> {
        let member = self.nested()?;
        let mut seen = [false; N];
        let mut rest = Map::new();
        while let Some(key) = map.next_key_seed(KeyAmong(names))? {
            match key {
                Key::Named(index) => {
                    let name = names[index];
                    self.charge(ENTRY_BYTES + name.len())?;
                    if std::mem::replace(&mut seen[index], true) {
                        return Err(self.duplicate_key(name));
                    }
                    read_named(index, member, map)?;
                }
                // Other members are rare where objects are taken apart; a map finds a repeat
                // among many of them with one lookup each.
                Key::Other(key) => {
                    self.charge(ENTRY_BYTES + key.len())?;
                    match rest.entry(key) {
                        Entry::Occupied(taken) => return Err(self.duplicate_key(taken.key())),
                        Entry::Vacant(place) => {
                            place.insert(map.next_value_seed(member)?);
                        }
                    }
                }
            }
        }
        Ok(rest)
    }
}

/// The seed of [`StrictValue::split`].
#[derive(Debug)]
pub struct SplitSeed<'a, R> {
    strict: StrictValue<'a>,
    reader: R,
}

impl<'de, R: ObjectReader> DeserializeSeed<'de> for SplitSeed<'_, R> {
    type Value = Split<R::Parts>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, R: ObjectReader> Visitor<'de> for SplitSeed<'_, R> {
    type Value = Split<R::Parts>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.strict.visit_unit().map(Split::Other)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.strict.visit_bool(v).map(Split::Other)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.strict.visit_i64(v).map(Split::Other)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.strict.visit_u64(v).map(Split::Other)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.strict.visit_f64(v).map(Split::Other)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.strict.visit_str(v).map(Split::Other)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        self.strict.visit_string(v).map(Split::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.strict.visit_seq(seq).map(Split::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.reader.read_object(self.strict, map).map(Split::Object)
    }
}

/// A member's key: the index of one of the names, or any other key, copied.
enum Key {
    Named(usize),
    Other(String),
}

/// Reads a key and matches it against the names before anything is copied: a key read
/// straight from the text (no escapes) is compared where it lies.
struct KeyAmong<const N: usize>([&'static str; N]);

impl<'de, const N: usize> DeserializeSeed<'de> for KeyAmong<N> {
    type Value = Key;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<const N: usize> Visitor<'_> for KeyAmong<N> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
        Ok(match self.0.iter().position(|name| *name == key) {
            Some(index) => Key::Named(index),
            None => Key::Other(key.to_owned()),
        })
    }

    fn visit_string<E: de::Error>(self, key: String) -> Result<Key, E> {
        Ok(match self.0.iter().position(|name| *name == key) {
            Some(index) => Key::Named(index),
            None => Key::Other(key),
        })
    }
}
