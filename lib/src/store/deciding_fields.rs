//! The fields of a store entry that decide what the load and save passes and the
//! maintenance rules make of it, held by slot: a reader of a whole store fills one per
//! entry, and the normaliser's many lookups of absent or present fields cost a `match`
//! on the name instead of a hash of it.

use serde_json::{Map, Value};

use crate::session::entry_fields::EntryFields;
use crate::store::normalize::PENDING_FINAL_DELIVERY_FIELDS;

/// Every deciding field, by slot: the shape rules and the rules' facts, the legacy
/// migrations and model fields, delivery (with the pending final delivery's fields of
/// step 6c), plugins and skills.
const NAMES: [&str; SLOTS] = joined(&[
    &FIELDS_BEFORE_PENDING,
    &PENDING_FINAL_DELIVERY_FIELDS,
    &FIELDS_AFTER_PENDING,
]);

/// The deciding fields before the pending final delivery's.
const FIELDS_BEFORE_PENDING: [&str; 19] = [
    "sessionId",
    "sessionFile",
    "updatedAt",
    "chatType",
    "origin",
    "compactionCheckpoints",
    "provider",
    "channel",
    "lastProvider",
    "lastChannel",
    "room",
    "groupChannel",
    "model",
    "modelProvider",
    "route",
    "deliveryContext",
    "lastTo",
    "lastAccountId",
    "lastThreadId",
];

/// The deciding fields after the pending final delivery's.
const FIELDS_AFTER_PENDING: [&str; 3] = [
    "pluginExtensions",
    "pluginExtensionSlotKeys",
    "skillsSnapshot",
];

/// The names of `parts`, one after another; fails to compile unless there are `N`.
const fn joined<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut at, mut part) = (0, 0);
    while part < parts.len() {
        let mut i = 0;
        while i < parts[part].len() {
            out[at] = parts[part][i];
            at += 1;
            i += 1;
        }
        part += 1;
    }
    assert!(at == N, "the parts do not hold N names");
    out
}

/// How many deciding fields there are.
pub const SLOTS: usize = 32;

/// The slot of a deciding field's name (`NAMES[slot] == name`); `None` for any other name.
fn slot_of(name: &str) -> Option<usize> {
    // By length first: most lengths hold one name, none more than three.
    let slot = match name.len() {
        4 => match name {
            "room" => 10,
            _ => return None,
        },
        5 => match name {
            "model" => 12,
            "route" => 14,
            _ => return None,
        },
        6 => match name {
            "origin" => 4,
            "lastTo" => 16,
            _ => return None,
        },
        7 => match name {
            "channel" => 7,
            _ => return None,
        },
        8 => match name {
            "chatType" => 3,
            "provider" => 6,
            _ => return None,
        },
        9 => match name {
            "sessionId" => 0,
            "updatedAt" => 2,
            _ => return None,
        },
        11 => match name {
            "sessionFile" => 1,
            "lastChannel" => 9,
            _ => return None,
        },
        12 => match name {
            "lastProvider" => 8,
            "groupChannel" => 11,
            "lastThreadId" => 18,
            _ => return None,
        },
        13 => match name {
            "modelProvider" => 13,
            "lastAccountId" => 17,
            _ => return None,
        },
        14 => match name {
            "skillsSnapshot" => 31,
            _ => return None,
        },
        15 => match name {
            "deliveryContext" => 15,
            _ => return None,
        },
        16 => match name {
            "pluginExtensions" => 29,
            _ => return None,
        },
        20 => match name {
            "pendingFinalDelivery" => 19,
            _ => return None,
        },
        21 => match name {
            "compactionCheckpoints" => 5,
            _ => return None,
        },
        23 => match name {
            "pluginExtensionSlotKeys" => 30,
            _ => return None,
        },
        24 => match name {
            "pendingFinalDeliveryText" => 20,
            _ => return None,
        },
        27 => match name {
            "pendingFinalDeliveryContext" => 25,
            _ => return None,
        },
        28 => match name {
            "pendingFinalDeliveryIntentId" => 26,
            "restartRecoveryDeliveryRunId" => 28,
            _ => return None,
        },
        29 => match name {
            "pendingFinalDeliveryCreatedAt" => 21,
            "pendingFinalDeliveryLastError" => 24,
            _ => return None,
        },
        30 => match name {
            "restartRecoveryDeliveryContext" => 27,
            _ => return None,
        },
        32 => match name {
            "pendingFinalDeliveryAttemptCount" => 23,
            _ => return None,
        },
        33 => match name {
            "pendingFinalDeliveryLastAttemptAt" => 22,
            _ => return None,
        },
        _ => return None,
    };
    Some(slot)
}

/// Whether a top-level entry field is one the load and save passes or the rules read or
/// write; every other field passes through both passes untouched.
pub fn is_deciding_field(name: &str) -> bool {
    slot_of(name).is_some()
}

/// Where a present field's value is: a deciding field's slot, or a place among the other
/// fields (which the passes never add; kept for exactness all the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Slot(u8),
    Other(usize),
}

/// The deciding fields of one entry, in key order ([`EntryFields`]).
#[derive(Debug, Clone)]
pub struct DecidingFields {
    /// Each deciding field's value, by slot.
    values: [Option<Value>; SLOTS],
    /// The fields present, in key order.
    order: Vec<Place>,
    /// Fields that are not deciding ones, with their names.
    others: Vec<(String, Value)>,
}

impl Default for DecidingFields {
    fn default() -> Self {
        DecidingFields {
            values: std::array::from_fn(|_| None),
            order: Vec::with_capacity(SLOTS),
            others: Vec::new(),
        }
    }
}

impl DecidingFields {
    /// Empties it for the next entry (its room stays).
    pub fn clear(&mut self) {
        for p in self.order.drain(..) {
            if let Place::Slot(s) = p {
                self.values[usize::from(s)] = None;
            }
        }
        self.others.clear();
    }

    /// Sets deciding field `name` as [`EntryFields::insert`] does, without taking its name
    /// as a `String`; `false` (nothing set) when `name` is not a deciding field.
    pub fn insert_deciding(&mut self, name: &str, value: Value) -> bool {
        let Some(s) = slot_of(name) else {
            return false;
        };
        if self.values[s].is_none() {
            self.order.push(Place::Slot(s as u8));
        }
        self.values[s] = Some(value);
        true
    }

    /// How many fields are present.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether no field is present.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The fields as a map, in order.
    pub fn to_map(&self) -> Map<String, Value> {
        let mut m = Map::with_capacity(self.order.len());
        for &p in &self.order {
            let (name, value) = self.member(p);
            m.insert(name.to_string(), value.clone());
        }
        m
    }

    /// Replaces the fields with those of `map`, in its order.
    pub fn set_from_map(&mut self, map: Map<String, Value>) {
        self.clear();
        for (k, v) in map {
            self.insert(k, v);
        }
    }

    fn member(&self, p: Place) -> (&str, &Value) {
        match p {
            Place::Slot(s) => {
                let s = usize::from(s);
                // A slot in the order always holds a value.
                (NAMES[s], self.values[s].as_ref().unwrap_or(&Value::Null))
            }
            Place::Other(i) => {
                let (k, v) = &self.others[i];
                (k, v)
            }
        }
    }

    /// Where `key` is, when present.
    fn place(&self, key: &str) -> Option<Place> {
        match slot_of(key) {
            Some(s) => self.values[s].is_some().then_some(Place::Slot(s as u8)),
            None => self
                .others
                .iter()
                .position(|(k, _)| k == key)
                .map(Place::Other),
        }
    }

    /// Adds a field known absent at `index` in the order.
    fn add_at(&mut self, index: usize, key: String, value: Value) {
        let place = match slot_of(&key) {
            Some(s) => {
                self.values[s] = Some(value);
                Place::Slot(s as u8)
            }
            None => {
                self.others.push((key, value));
                Place::Other(self.others.len() - 1)
            }
        };
        self.order.insert(index.min(self.order.len()), place);
    }
}

impl EntryFields for DecidingFields {
    fn get(&self, key: &str) -> Option<&Value> {
        match slot_of(key) {
            Some(s) => self.values[s].as_ref(),
            None => self.others.iter().find(|(k, _)| k == key).map(|(_, v)| v),
        }
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        match slot_of(key) {
            Some(s) => self.values[s].as_mut(),
            None => self
                .others
                .iter_mut()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v),
        }
    }

    fn shift_remove(&mut self, key: &str) -> Option<Value> {
        let place = self.place(key)?;
        self.order.retain(|&p| p != place);
        match place {
            Place::Slot(s) => self.values[usize::from(s)].take(),
            Place::Other(i) => {
                let (_, v) = self.others.remove(i);
                // The others after it moved down one.
                for p in &mut self.order {
                    if let Place::Other(j) = p {
                        if *j > i {
                            *j -= 1;
                        }
                    }
                }
                Some(v)
            }
        }
    }

    fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        if let Some(slot) = self.get_mut(&key) {
            return Some(std::mem::replace(slot, value));
        }
        self.add_at(self.order.len(), key, value);
        None
    }

    fn shift_insert(&mut self, index: usize, key: String, value: Value) -> Option<Value> {
        let old = self.shift_remove(&key);
        self.add_at(index, key, value);
        old
    }

    fn field_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.order.iter().map(|&p| self.member(p).0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_has_its_own_slot() {
        for (i, name) in NAMES.iter().enumerate() {
            assert_eq!(slot_of(name), Some(i), "{name}");
        }
        for other in [
            "",
            "sessionid",
            "session",
            "thinkingLevel",
            "routes",
            "lastTo ",
        ] {
            assert_eq!(slot_of(other), None, "{other:?}");
        }
    }

    /// The same operations on a map and on deciding fields leave the same fields in the
    /// same order, deciding or not.
    #[test]
    fn behaves_as_the_map_does() {
        let mut m: Map<String, Value> = Map::new();
        let mut d = DecidingFields::default();
        fn apply(f: &mut impl EntryFields, step: usize) -> Option<Value> {
            match step {
                0 => f.insert("updatedAt".into(), Value::from(1)),
                1 => f.insert("zeta".into(), Value::from("z")),
                2 => f.insert("sessionId".into(), Value::from("a")),
                3 => f.insert("alpha".into(), Value::from("a")),
                4 => f.insert("updatedAt".into(), Value::from(2)),
                5 => f.shift_remove("zeta"),
                6 => f.shift_insert(1, "route".into(), Value::from("r")),
                7 => f.shift_insert(0, "beta".into(), Value::Null),
                8 => f.shift_remove("nothing"),
                9 => f.shift_insert(99, "sessionId".into(), Value::from("b")),
                _ => f.shift_remove("updatedAt"),
            }
        }
        for step in 0..=10 {
            assert_eq!(apply(&mut m, step), apply(&mut d, step), "step {step}");
            let names: Vec<&str> = m.field_names().collect();
            assert_eq!(d.field_names().collect::<Vec<_>>(), names, "step {step}");
            assert_eq!(d.to_map(), m, "step {step}");
            for name in [
                "updatedAt",
                "zeta",
                "alpha",
                "beta",
                "route",
                "sessionId",
                "x",
            ] {
                assert_eq!(d.get(name), m.get(name), "{name} at step {step}");
                assert_eq!(d.contains_key(name), m.contains_key(name));
            }
        }
        d.clear();
        assert!(d.is_empty() && d.get("route").is_none() && d.get("beta").is_none());
    }
}
