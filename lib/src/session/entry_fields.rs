//! The top-level fields of one store entry, as the load normalisation reads and writes
//! them: a whole entry (`serde_json::Map`), or only the fields that decide it
//! (`store::deciding_fields`), which a reader of 100k entries fills without hashing
//! every name.

use serde_json::{Map, Value};

/// An entry's top-level fields in JavaScript key order.
///
/// `insert` keeps an existing key where it is and puts a new one last; `shift_remove` and
/// `shift_insert` keep the others in order (what `{...entry, key: value}` and `delete` do
/// to a JavaScript object's keys).
pub trait EntryFields {
    /// The value of `key`.
    fn get(&self, key: &str) -> Option<&Value>;

    /// The value of `key`, to change in place.
    fn get_mut(&mut self, key: &str) -> Option<&mut Value>;

    /// Whether `key` is present.
    fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Removes `key`, the others keeping their order; returns its value.
    fn shift_remove(&mut self, key: &str) -> Option<Value>;

    /// Sets `key` (in place if present, else last); returns the value it replaced.
    fn insert(&mut self, key: String, value: Value) -> Option<Value>;

    /// Puts `key` at position `index` (at most the number of other keys), moving it there
    /// if present; returns the value it replaced.
    fn shift_insert(&mut self, index: usize, key: String, value: Value) -> Option<Value>;

    /// The keys, in order.
    fn field_names(&self) -> impl Iterator<Item = &str> + '_;
}

impl EntryFields for Map<String, Value> {
    fn get(&self, key: &str) -> Option<&Value> {
        Map::get(self, key)
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        Map::get_mut(self, key)
    }

    fn contains_key(&self, key: &str) -> bool {
        Map::contains_key(self, key)
    }

    fn shift_remove(&mut self, key: &str) -> Option<Value> {
        Map::shift_remove(self, key)
    }

    fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        Map::insert(self, key, value)
    }

    fn shift_insert(&mut self, index: usize, key: String, value: Value) -> Option<Value> {
        let old = Map::shift_remove(self, &key);
        let index = index.min(self.len());
        Map::shift_insert(self, index, key, value);
        old
    }

    fn field_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.keys().map(String::as_str)
    }
}

/// Read access to an entry's top-level fields: what the listing's row builders need, from
/// a whole entry or from an [`super::entry_view::LeanEntry`] that parses a field only when
/// it is asked for.
pub trait EntryView {
    /// The value of `key`.
    fn get(&self, key: &str) -> Option<&Value>;
}

impl<T: EntryFields + ?Sized> EntryView for T {
    fn get(&self, key: &str) -> Option<&Value> {
        EntryFields::get(self, key)
    }
}
