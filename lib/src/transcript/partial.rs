//! Partial parses of transcript lines: only the fields a reader needs are kept, everything
//! else is parsed and dropped, so a line costs no allocation for the parts nobody reads.
//!
//! A partial parse accepts exactly the lines `jsjson::parse_value` accepts and
//! sees the same field values: every value goes through the same text mapping (lone
//! surrogates, out-of-range numbers) and the same `deserialize_any` of the same parser
//! (same number, string, escape and nesting-depth rules, same trailing-character check), duplicate keys keep the last value as `Value`'s map does, and the one input
//! `Value` treats specially (a map whose first key is serde_json's private raw-value token)
//! makes the partial parse fail, so that the caller takes its full-`Value` path instead.
//! The visitors also run over an already parsed `&Value`, which is how those slow paths
//! extract the same facts.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// The key `Value` reads as "the rest is a raw value" when it comes first in a map.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

fn raw_token<E: de::Error>() -> E {
    E::custom("raw-value token (parsed as a full value instead)")
}

/// Any JSON value, validated and dropped.
pub struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Skip, D::Error> {
        d.deserialize_any(SkipVisitor)
    }
}

/// The visitor behind [`Skip`], for deserialisers that validate a nested value in place.
pub(crate) struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Skip, A::Error> {
        while a.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Skip, A::Error> {
        visit_object(a, &[], |_, _| Ok(()))?;
        Ok(Skip)
    }
}

/// Which of `names` a key is (`None`: none of them).
struct KeySeed<'k> {
    names: &'k [&'k str],
    first: bool,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Option<usize>, E> {
        if self.first && s == RAW_VALUE_TOKEN {
            return Err(raw_token());
        }
        Ok(self.names.iter().position(|n| *n == s))
    }
}

/// Walks an object: `field(i, map)` is called for every key equal to `names[i]` and must
/// read its value (`map.next_value…`) exactly once; other values are skipped. Later
/// duplicates call `field` again, so a field that overwrites keeps the last value.
pub fn visit_object<'de, A: MapAccess<'de>>(
    mut map: A,
    names: &[&str],
    mut field: impl FnMut(usize, &mut A) -> Result<(), A::Error>,
) -> Result<(), A::Error> {
    let mut first = true;
    while let Some(k) = map.next_key_seed(KeySeed { names, first })? {
        first = false;
        match k {
            Some(i) => field(i, &mut map)?,
            None => {
                map.next_value::<Skip>()?;
            }
        }
    }
    Ok(())
}

/// A value kept only as far as a reader looks at it: its kind, and its number or string.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Scalar<'a> {
    /// The key was not there.
    #[default]
    Absent,
    /// `null` (also what `Value` makes of a non-finite number).
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as `Value::as_f64` reads it.
    Num(f64),
    /// A string.
    Str(Cow<'a, str>),
    /// An array (contents validated and dropped).
    Array,
    /// An object (contents validated and dropped).
    Object,
}

impl<'a> Scalar<'a> {
    /// The string, when it is one (`Value::as_str`).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Scalar::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The string, when it is one, kept.
    pub fn into_str(self) -> Option<Cow<'a, str>> {
        match self {
            Scalar::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Whether the key was present (`Value::get(..).is_some()`).
    pub fn is_present(&self) -> bool {
        !matches!(self, Scalar::Absent)
    }

    /// JavaScript truthiness of the value (`js::truthy`); an absent key is falsy too.
    pub fn truthy(&self) -> bool {
        match self {
            Scalar::Absent | Scalar::Null => false,
            Scalar::Bool(b) => *b,
            Scalar::Num(f) => *f != 0.0 && !f.is_nan(),
            Scalar::Str(s) => !s.is_empty(),
            Scalar::Array | Scalar::Object => true,
        }
    }

    /// An owned copy.
    pub fn into_owned(self) -> Scalar<'static> {
        match self {
            Scalar::Str(s) => Scalar::Str(Cow::Owned(s.into_owned())),
            Scalar::Absent => Scalar::Absent,
            Scalar::Null => Scalar::Null,
            Scalar::Bool(b) => Scalar::Bool(b),
            Scalar::Num(f) => Scalar::Num(f),
            Scalar::Array => Scalar::Array,
            Scalar::Object => Scalar::Object,
        }
    }
}

impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scalar<'de>, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

/// `Number::from_f64(f).map_or(Value::Null, Value::Number)`.
fn num(f: f64) -> Scalar<'static> {
    if f.is_finite() {
        Scalar::Num(f)
    } else {
        Scalar::Null
    }
}

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Bool(b))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Scalar<'de>, E> {
        Ok(num(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Scalar<'de>, E> {
        Ok(num(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Scalar<'de>, E> {
        Ok(num(v))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Str(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Str(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Str(Cow::Owned(s)))
    }
    fn visit_unit<E>(self) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Scalar<'de>, A::Error> {
        SkipVisitor.visit_seq(a)?;
        Ok(Scalar::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Scalar<'de>, A::Error> {
        SkipVisitor.visit_map(a)?;
        Ok(Scalar::Object)
    }
}

/// Implements `Deserialize` for a type whose every JSON kind maps to some value of it:
/// `$obj` handles objects (through [`visit_object`]), `$seq` arrays, `$other` every other
/// kind (given as a [`Scalar`]).
macro_rules! partial_deserialize {
    ($ty:ty, $expecting:literal,
     obj: |$oa:ident| $obj:block,
     seq: |$sa:ident| $seq:block,
     other: |$s:ident| $other:expr) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use $crate::transcript::partial::Scalar;
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_bool<E>(self, b: bool) -> Result<$ty, E> {
                        let $s = Scalar::Bool(b);
                        Ok($other)
                    }
                    fn visit_i64<E>(self, v: i64) -> Result<$ty, E> {
                        let $s = Scalar::Num(v as f64);
                        Ok($other)
                    }
                    fn visit_u64<E>(self, v: u64) -> Result<$ty, E> {
                        let $s = Scalar::Num(v as f64);
                        Ok($other)
                    }
                    fn visit_f64<E>(self, v: f64) -> Result<$ty, E> {
                        let $s = if v.is_finite() {
                            Scalar::Num(v)
                        } else {
                            Scalar::Null
                        };
                        Ok($other)
                    }
                    fn visit_str<E>(self, v: &str) -> Result<$ty, E> {
                        let $s = Scalar::Str(std::borrow::Cow::Borrowed(v));
                        Ok($other)
                    }
                    fn visit_unit<E>(self) -> Result<$ty, E> {
                        let $s = Scalar::Null;
                        Ok($other)
                    }
                    #[allow(unused_mut)]
                    fn visit_seq<A: serde::de::SeqAccess<'de>>(
                        self,
                        mut $sa: A,
                    ) -> Result<$ty, A::Error> {
                        $seq
                    }
                    #[allow(unused_mut)]
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut $oa: A,
                    ) -> Result<$ty, A::Error> {
                        $obj
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

#[allow(unused_imports)]
pub(crate) use partial_deserialize;

/// The fields the tail readers' tree needs of a record, and whether it is visible.
#[derive(Debug, Clone, Default)]
pub struct TreeFields {
    /// Whether the line is a JSON object.
    pub is_object: bool,
    /// `type`, `id`, `parentId`, `targetId`, `appendParentId`, `appendMode`, when present
    /// (the last of duplicates), as full values.
    pub fields: [Option<serde_json::Value>; 6],
    /// Whether `message` is truthy.
    pub message_truthy: bool,
}

/// The keys of [`TreeFields::fields`].
pub const TREE_KEYS: [&str; 6] = [
    "type",
    "id",
    "parentId",
    "targetId",
    "appendParentId",
    "appendMode",
];

impl TreeFields {
    /// The light record `{type, id, parentId, targetId, appendParentId, appendMode}` (the
    /// keys present, in that order) the tree scan reads.
    pub fn light_record(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for (k, v) in TREE_KEYS.iter().zip(&self.fields) {
            if let Some(v) = v {
                m.insert((*k).into(), v.clone());
            }
        }
        serde_json::Value::Object(m)
    }

    /// The tree fields of a record already parsed whole.
    pub fn of_record(v: &serde_json::Value) -> TreeFields {
        let mut t = TreeFields {
            is_object: v.is_object(),
            message_truthy: v.get("message").is_some_and(crate::js::truthy),
            ..TreeFields::default()
        };
        for (k, f) in TREE_KEYS.iter().zip(&mut t.fields) {
            *f = v.get(*k).cloned();
        }
        t
    }

    /// `is_visible_record`: a truthy `message`, or a compaction.
    pub fn is_visible(&self) -> bool {
        self.message_truthy
            || matches!(&self.fields[0], Some(serde_json::Value::String(t)) if t == "compaction")
    }
}

/// JavaScript truthiness of a value, without building it.
struct Truthy(bool);

partial_deserialize!(Truthy, "any JSON value",
    obj: |a| { SkipVisitor.visit_map(a)?; Ok(Truthy(true)) },
    seq: |a| { SkipVisitor.visit_seq(a)?; Ok(Truthy(true)) },
    other: |s| Truthy(s.truthy()));

partial_deserialize!(TreeFields, "a transcript record",
    obj: |a| {
        let mut t = TreeFields { is_object: true, ..TreeFields::default() };
        let mut names = [""; 7];
        names[..6].copy_from_slice(&TREE_KEYS);
        names[6] = "message";
        visit_object(a, &names, |i, a| {
            if i < 6 {
                t.fields[i] = Some(a.next_value_seed(crate::js::jsjson::ValueSeed::at(1))?);
            } else {
                t.message_truthy = a.next_value::<Truthy>()?.0;
            }
            Ok(())
        })?;
        Ok(t)
    },
    seq: |a| { SkipVisitor.visit_seq(a)?; Ok(TreeFields::default()) },
    other: |_s| TreeFields::default());

/// A line only a whole-`Value` parse can read (it holds the raw-value token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeedsFullParse;

/// [`TreeFields`] of one line, when the line is JSON (`None`: not JSON).
pub fn tree_fields(line: &str) -> Result<Option<TreeFields>, NeedsFullParse> {
    match crate::js::jsjson::parse_as::<TreeFields>(line) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.is_data() => Err(NeedsFullParse),
        Err(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines that stress the parser's edges: both parses must agree on acceptance.
    pub(crate) fn tricky_lines() -> Vec<String> {
        let mut v: Vec<String> = [
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi"}}"#,
            r#"{"type":"message","type":"leaf","id":"a","id":7}"#,
            r#"{"a":1e400}"#,
            r#"{"a":-1e400}"#,
            r#"{"a":1e-400}"#,
            r#"{"a":18446744073709551616}"#,
            r#"{"a":-9223372036854775809}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"a":"\udc00\ud800"}"#,
            r#"{"\ud800":1}"#,
            r#"{"a":"\u00e9\n\t\"\\"}"#,
            r#"{"a":"bad \x escape"}"#,
            "{\"a\":\"ctrl \u{1} char\"}",
            r#"{"a":[1,2,]}"#,
            r#"{"a":1,}"#,
            r#"{"a":1} x"#,
            r#"{"a":1}   "#,
            r#"  {"a":1}"#,
            r#"{"a":01}"#,
            r#"{"a":-}"#,
            r#"{"a":1.}"#,
            r#"{"a":.5}"#,
            r#"{"a":tru}"#,
            r#"{"a":NaN}"#,
            r#"{"message":0}"#,
            r#"{"message":-0.0}"#,
            r#"{"message":""}"#,
            r#"{"message":[]}"#,
            r#"{"message":{}}"#,
            r#"{"message":false}"#,
            r#"{"message":null,"type":"compaction"}"#,
            r#"{"$serde_json::private::RawValue":"{\"message\":1}"}"#,
            r#"{"$serde_json::private::RawValue":"5"}"#,
            r#"{"$serde_json::private::RawValue":"[1"}"#,
            r#"{"a":{"$serde_json::private::RawValue":"{\"b\":2}"}}"#,
            r#"{"a":1,"$serde_json::private::RawValue":"x"}"#,
            r#"[1,2,3]"#,
            r#""a string""#,
            r#"42"#,
            r#"null"#,
            r#"{"type":"#,
            r#"{"#,
            "",
            r#"{"id":"\u0000"}"#,
            "{\"id\":\"caf\u{e9}\"}",
            "{\"id\":\"\u{fffd}\"}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.push(format!("{}1{}", "[".repeat(126), "]".repeat(126)));
        v.push(format!("{}1{}", "[".repeat(127), "]".repeat(127)));
        v.push(format!("{}1{}", "[".repeat(128), "]".repeat(128)));
        v.push(format!(
            "{{\"message\":{}1{}}}",
            "[".repeat(127),
            "]".repeat(127)
        ));
        v.push(format!(
            "{{\"type\":{}1{}}}",
            "[".repeat(127),
            "]".repeat(127)
        ));
        v.push(format!(
            "{{\"x\":{}1{}}}",
            "{\"a\":".repeat(127),
            "}".repeat(127)
        ));
        v.push(format!(
            "{{\"x\":{}1{}}}",
            "{\"a\":".repeat(128),
            "}".repeat(128)
        ));
        v
    }

    #[test]
    fn tree_fields_accept_exactly_what_value_accepts() {
        for line in tricky_lines() {
            let full = crate::js::jsjson::parse_value(&line);
            match tree_fields(&line) {
                Err(NeedsFullParse) => assert!(line.contains(RAW_VALUE_TOKEN), "{line}"),
                Ok(None) => assert!(full.is_err(), "{line}: partial rejects, full accepts"),
                Ok(Some(t)) => {
                    let v = full.unwrap_or_else(|e| panic!("{line}: full rejects: {e}"));
                    assert_eq!(t.is_object, v.is_object(), "{line}");
                    if v.is_object() {
                        for (k, f) in TREE_KEYS.iter().zip(&t.fields) {
                            assert_eq!(f.as_ref(), v.get(*k), "{line}: {k}");
                        }
                        assert_eq!(
                            t.is_visible(),
                            crate::transcript::history::is_visible_record(&v),
                            "{line}"
                        );
                    }
                }
            }
        }
    }
}
