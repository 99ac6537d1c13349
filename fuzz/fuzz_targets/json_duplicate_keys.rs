//! Any bytes as a JSON body for the duplicate-key check
//! (`tollgate::api::json::duplicate_key`), against a reference parse that
//! keeps every member of every object in order:
//!
//! - the check never panics;
//! - it answers `Err` exactly when the reference cannot parse the bytes;
//! - it names a key exactly when some object holds a key twice, and the
//!   key it names is one of those;
//! - a body it accepts parses to a `serde_json::Value` equal to the
//!   reference, so no member was lost to "last one wins".
#![no_main]

use std::collections::HashSet;
use std::fmt;

use libfuzzer_sys::fuzz_target;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use tollgate::api::json::duplicate_key;

/// A JSON value whose objects keep every member, duplicates included.
#[derive(Debug)]
enum Tree {
    Leaf(Value),
    Array(Vec<Tree>),
    Object(Vec<(String, Tree)>),
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Tree, D::Error> {
        deserializer.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Tree, E> {
        Ok(Tree::Leaf(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Tree, E> {
        Ok(Tree::Leaf(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Tree, E> {
        Ok(Tree::Leaf(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Tree, E> {
        Ok(Tree::Leaf(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Tree, E> {
        Ok(Tree::Leaf(Value::String(v.to_owned())))
    }
    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree::Leaf(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut members = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Tree>()? {
            members.push((key, value));
        }
        Ok(Tree::Object(members))
    }
}

impl Tree {
    /// Every key some object of the tree holds twice.
    fn duplicates(&self, out: &mut HashSet<String>) {
        match self {
            Tree::Leaf(_) => {}
            Tree::Array(items) => items.iter().for_each(|i| i.duplicates(out)),
            Tree::Object(members) => {
                let mut seen = HashSet::new();
                for (key, value) in members {
                    if !seen.insert(key.as_str()) {
                        out.insert(key.clone());
                    }
                    value.duplicates(out);
                }
            }
        }
    }

    fn to_value(&self) -> Value {
        match self {
            Tree::Leaf(v) => v.clone(),
            Tree::Array(items) => Value::Array(items.iter().map(Tree::to_value).collect()),
            Tree::Object(members) => {
                let mut map = Map::new();
                for (key, value) in members {
                    map.insert(key.clone(), value.to_value());
                }
                Value::Object(map)
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let checked = duplicate_key(data);
    let reference = serde_json::from_slice::<Tree>(data);
    match (checked, reference) {
        (Err(_), Err(_)) => {}
        (Ok(found), Ok(tree)) => {
            let mut duplicates = HashSet::new();
            tree.duplicates(&mut duplicates);
            match found {
                Some(key) => assert!(
                    duplicates.contains(&key),
                    "named `{key}`, the duplicates are {duplicates:?}"
                ),
                None => {
                    assert!(duplicates.is_empty(), "missed {duplicates:?}");
                    let value: Value = serde_json::from_slice(data).expect("accepted bodies parse");
                    assert_eq!(value, tree.to_value(), "accepted bodies parse to the same value");
                }
            }
        }
        // A duplicate is named as soon as it is read, before a syntax
        // error further on; the reference reads to the end.
        (Ok(Some(_)), Err(_)) => {}
        (checked, reference) => panic!(
            "the check says {checked:?}, the reference {:?}",
            reference.map(|_| "parsed")
        ),
    }
});
