//! One store entry read field by field from canonical text (the listing's fast path).
//!
//! The load normalisation reads and changes only the deciding fields
//! ([`super::deciding_fields`]); every other field comes out of the load as it went in. So
//! for an entry whose text is canonical ([`super::canonical`]), the deciding fields are
//! parsed and normalised alone, and any other field is parsed from its text the first time
//! it is asked for: a listing row that reads a dozen fields of a forty-field entry never
//! builds the other thirty. The values are those of [`super::scan::StoreScan::entry`]
//! field for field (a differential test in `session_list` checks whole listings).

use std::cell::OnceCell;
use std::ops::Range;

use serde_json::Value;

use super::canonical::{self, Member};
use super::deciding_fields::{is_deciding_field, DecidingFields};
use super::normalize::{normalize_entry_with_holes_memo, DeliveryMemo, EntryVerdict, Holes};
use crate::session::entry_fields::EntryView;

/// What a reader of many entries keeps from one to the next (one per thread).
#[derive(Debug, Default)]
pub struct LeanReader {
    delivery: DeliveryMemo,
    members: Vec<Member>,
}

/// An entry after the load pass, its non-deciding fields parsed on first use.
#[derive(Debug)]
pub struct LeanEntry<'t> {
    text: &'t str,
    deciding: DecidingFields,
    /// The other fields: name, value text, value once parsed.
    others: Vec<(
        std::borrow::Cow<'t, str>,
        Range<usize>,
        OnceCell<Option<Value>>,
    )>,
}

/// What [`LeanReader::read`] made of an entry.
#[derive(Debug)]
// Returned by value once per entry and consumed at once: boxing the common variant would
// cost an allocation per entry on the listing's hot path.
#[allow(clippy::large_enum_variant)]
pub enum Lean<'t> {
    /// The entry as the load leaves it.
    Kept(LeanEntry<'t>),
    /// The load drops it (invalid sessionId, …).
    Dropped,
    /// The text is not canonical (or a field could not be read): take the full parse.
    Full,
}

impl LeanReader {
    /// Reads the entry at `text[range]` (an object nested one level deep in a store).
    pub fn read<'t>(&mut self, text: &'t str, range: Range<usize>) -> Lean<'t> {
        if !canonical::object_members(text, range, 1, &mut self.members) {
            return Lean::Full;
        }
        let mut deciding = DecidingFields::default();
        let mut others = Vec::new();
        for m in &self.members {
            let Some(name) = canonical::literal_text(&text[m.key.clone()]) else {
                return Lean::Full;
            };
            if is_deciding_field(&name) {
                let Some(v) = canonical::read_value(&text[m.value.clone()]) else {
                    return Lean::Full;
                };
                deciding.insert_deciding(&name, v);
            } else {
                others.push((name, m.value.clone(), OnceCell::new()));
            }
        }
        match normalize_entry_with_holes_memo(
            &mut deciding,
            &mut Holes::default(),
            &mut self.delivery,
        ) {
            EntryVerdict::Drop => Lean::Dropped,
            EntryVerdict::Keep { .. } => Lean::Kept(LeanEntry {
                text,
                deciding,
                others,
            }),
        }
    }
}

/// A field of a [`LeanEntry`] as a writer takes it: parsed (a deciding field, as the load
/// left it) or its canonical text in the store (nested two levels deep).
#[derive(Debug, Clone, Copy)]
pub enum FieldText<'a> {
    /// The value after the load pass.
    Parsed(&'a Value),
    /// The value's text as read: `JSON.stringify` of its value at depth 2.
    Raw(&'a str),
}

impl<'t> LeanEntry<'t> {
    /// Field `key` without parsing its text: the value [`EntryView::get`] gives, or the
    /// text it is read from.
    pub fn field_text(&self, key: &str) -> Option<FieldText<'_>> {
        if is_deciding_field(key) {
            return crate::session::entry_fields::EntryFields::get(&self.deciding, key)
                .map(FieldText::Parsed);
        }
        let (_, range, _) = self.others.iter().find(|(n, _, _)| n == key)?;
        Some(FieldText::Raw(&self.text[range.clone()]))
    }
}

impl EntryView for LeanEntry<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        if is_deciding_field(key) {
            return crate::session::entry_fields::EntryFields::get(&self.deciding, key);
        }
        // Canonical text holds no duplicate names.
        let (_, range, cell) = self.others.iter().find(|(n, _, _)| n == key)?;
        cell.get_or_init(|| canonical::read_value(&self.text[range.clone()]))
            .as_ref()
    }
}
