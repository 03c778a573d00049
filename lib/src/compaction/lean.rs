//! The scan's fast path: one `message` row (user, assistant or tool result) read straight
//! into the few fields compaction keeps, without building a `serde_json::Value` of it.
//!
//! The row is read by serde_json's own deserializer, so what it accepts is exactly what
//! `serde_json::from_str::<Value>` accepts (the same string, number and nesting checks, the
//! last of duplicate keys wins); the facts are computed by the rules of
//! [`super::scan::facts_of`] on the load-normalised row. Anything outside the common shapes
//! (other row types and roles, images, tool-result blocks, rows the repair pass would
//! change) returns `None` and takes the general path, which parses a `Value`.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::index::{AppendMode, Field, Kind, SlimRow, Symbols};
use super::missing_results::RepairView;
use super::row_facts::{meaningful_text, Facts, FileOp, FileOps, Role};

// `Skip`: any value, checked as `Value` parsing checks it, then dropped (shared with the
// transcript's partial parses).
use crate::js;
use crate::transcript::partial::{Skip, SkipVisitor};

/// A scalar field: absent, null, a string, a number, or anything else.
#[derive(Debug, Default, Clone, PartialEq)]
enum Val<'a> {
    #[default]
    Absent,
    Null,
    Str(Cow<'a, str>),
    Num(f64),
    Other,
}

impl<'a> Val<'a> {
    fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }
    fn present(&self) -> bool {
        !matches!(self, Val::Absent)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Val<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Val<'a>, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Val<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Val<'a>, E> {
                Ok(Val::Other)
            }
            // `Value::as_f64` of the number `Value` would hold.
            fn visit_i64<E>(self, n: i64) -> Result<Val<'a>, E> {
                Ok(Val::Num(n as f64))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Val<'a>, E> {
                Ok(Val::Num(n as f64))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Val<'a>, E> {
                Ok(Val::Num(n))
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Val<'a>, E> {
                Ok(Val::Str(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Val<'a>, E> {
                Ok(Val::Str(Cow::Owned(s.to_string())))
            }
            fn visit_string<E>(self, s: String) -> Result<Val<'a>, E> {
                Ok(Val::Str(Cow::Owned(s)))
            }
            fn visit_unit<E>(self) -> Result<Val<'a>, E> {
                Ok(Val::Null)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Val<'a>, A::Error> {
                SkipVisitor.visit_seq(a).map(|_| Val::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Val<'a>, A::Error> {
                SkipVisitor.visit_map(a).map(|_| Val::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// What the facts need of a text string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TextInfo {
    /// UTF-16 length.
    len: usize,
    /// `trim()` is empty.
    blank: bool,
    /// [`meaningful_text`].
    meaningful: bool,
}

impl TextInfo {
    fn of(s: &str) -> TextInfo {
        TextInfo {
            len: js::utf16_len(s),
            blank: js::trim(s).is_empty(),
            meaningful: meaningful_text(s),
        }
    }
}

/// A text field: absent or not a string, or a string's [`TextInfo`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Text {
    #[default]
    NotStr,
    Str(TextInfo),
}

impl Text {
    fn len(self) -> usize {
        match self {
            Text::Str(t) => t.len,
            Text::NotStr => 0,
        }
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Text, E> {
                Ok(Text::NotStr)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Text, E> {
                Ok(Text::NotStr)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Text, E> {
                Ok(Text::NotStr)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Text, E> {
                Ok(Text::NotStr)
            }
            fn visit_str<E>(self, s: &str) -> Result<Text, E> {
                Ok(Text::Str(TextInfo::of(s)))
            }
            fn visit_unit<E>(self) -> Result<Text, E> {
                Ok(Text::NotStr)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Text, A::Error> {
                SkipVisitor.visit_seq(a).map(|_| Text::NotStr)
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Text, A::Error> {
                SkipVisitor.visit_map(a).map(|_| Text::NotStr)
            }
        }
        d.deserialize_any(V)
    }
}

/// One content block (`None` keys mean absent).
#[derive(Debug, Default)]
struct Block<'a> {
    object: bool,
    ty: Val<'a>,
    text: Text,
    thinking: Text,
    name: Val<'a>,
    id: Val<'a>,
    arguments: Option<Value>,
}

impl<'a> Block<'a> {
    fn ty(&self) -> Option<&str> {
        self.ty.as_str()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Block<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Block<'a>, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Block<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Block<'a>, E> {
                Ok(Block::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Block<'a>, E> {
                Ok(Block::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Block<'a>, E> {
                Ok(Block::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Block<'a>, E> {
                Ok(Block::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Block<'a>, E> {
                Ok(Block::default())
            }
            fn visit_unit<E>(self) -> Result<Block<'a>, E> {
                Ok(Block::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Block<'a>, A::Error> {
                SkipVisitor.visit_seq(a).map(|_| Block::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Block<'a>, A::Error> {
                let mut b = Block {
                    object: true,
                    ..Block::default()
                };
                while let Some(k) = a.next_key::<Key>()? {
                    match k {
                        Key::Type => b.ty = a.next_value()?,
                        Key::Text => b.text = a.next_value()?,
                        Key::Thinking => b.thinking = a.next_value()?,
                        Key::Name => b.name = a.next_value()?,
                        Key::Id => b.id = a.next_value()?,
                        Key::Arguments => b.arguments = Some(a.next_value()?),
                        _ => {
                            a.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(b)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `message.content`.
#[derive(Debug, Default)]
enum Content<'a> {
    #[default]
    Absent,
    Str(TextInfo),
    Blocks(Vec<Block<'a>>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Content<'a>, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Content<'a>, E> {
                Ok(Content::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Content<'a>, E> {
                Ok(Content::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Content<'a>, E> {
                Ok(Content::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Content<'a>, E> {
                Ok(Content::Other)
            }
            fn visit_str<E>(self, s: &str) -> Result<Content<'a>, E> {
                Ok(Content::Str(TextInfo::of(s)))
            }
            fn visit_unit<E>(self) -> Result<Content<'a>, E> {
                Ok(Content::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Content<'a>, A::Error> {
                let mut blocks = Vec::new();
                while let Some(b) = a.next_element::<Block<'a>>()? {
                    blocks.push(b);
                }
                Ok(Content::Blocks(blocks))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Content<'a>, A::Error> {
                SkipVisitor.visit_map(a).map(|_| Content::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `contextUsage` of a usage object: an object's `state` and `totalTokens`, or nothing.
#[derive(Debug, Default)]
struct ContextUsage<'a> {
    state: Val<'a>,
    total: Val<'a>,
}

/// `message.usage`, reduced to what `calculateContextTokens` and the truthiness test read.
#[derive(Debug, Default)]
enum Usage<'a> {
    /// Missing.
    #[default]
    Absent,
    /// A value that is not an object, with its JavaScript truthiness.
    Scalar(bool),
    /// An object.
    Obj {
        context: Option<ContextUsage<'a>>,
        total: Val<'a>,
        parts: [Val<'a>; 4],
    },
}

impl Usage<'_> {
    fn truthy(&self) -> bool {
        match self {
            Usage::Absent => false,
            Usage::Scalar(t) => *t,
            Usage::Obj { .. } => true,
        }
    }

    /// `contextUsage.state === "unavailable"`.
    fn unavailable(&self) -> bool {
        matches!(self, Usage::Obj { context: Some(c), .. } if c.state.as_str() == Some("unavailable"))
    }

    /// [`calculate_context_tokens`] of the value.
    fn context_tokens(&self) -> f64 {
        let num = |v: &Val<'_>| match v {
            Val::Num(n) => *n,
            _ => 0.0,
        };
        let Usage::Obj {
            context,
            total,
            parts,
        } = self
        else {
            return 0.0;
        };
        if let Some(c) = context {
            if c.state.as_str() == Some("available") {
                return num(&c.total);
            }
        }
        let total = num(total);
        if total != 0.0 && !total.is_nan() {
            return total;
        }
        num(&parts[0]) + num(&parts[1]) + num(&parts[2]) + num(&parts[3])
    }
}

/// `contextUsage`: an object, or anything else (which `get` sees through as missing).
struct MaybeContext<'a>(Option<ContextUsage<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeContext<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MaybeContext<'a>, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = MaybeContext<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<MaybeContext<'a>, E> {
                Ok(MaybeContext(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<MaybeContext<'a>, E> {
                Ok(MaybeContext(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<MaybeContext<'a>, E> {
                Ok(MaybeContext(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<MaybeContext<'a>, E> {
                Ok(MaybeContext(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<MaybeContext<'a>, E> {
                Ok(MaybeContext(None))
            }
            fn visit_unit<E>(self) -> Result<MaybeContext<'a>, E> {
                Ok(MaybeContext(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<MaybeContext<'a>, A::Error> {
                SkipVisitor.visit_seq(a).map(|_| MaybeContext(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<MaybeContext<'a>, A::Error> {
                let mut c = ContextUsage::default();
                while let Some(k) = a.next_key::<Key>()? {
                    match k {
                        Key::State => c.state = a.next_value()?,
                        Key::TotalTokens => c.total = a.next_value()?,
                        _ => {
                            a.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(MaybeContext(Some(c)))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Usage<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Usage<'a>, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Usage<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, b: bool) -> Result<Usage<'a>, E> {
                Ok(Usage::Scalar(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Usage<'a>, E> {
                Ok(Usage::Scalar(n != 0))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Usage<'a>, E> {
                Ok(Usage::Scalar(n != 0))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Usage<'a>, E> {
                Ok(Usage::Scalar(n != 0.0 && !n.is_nan()))
            }
            fn visit_str<E>(self, s: &str) -> Result<Usage<'a>, E> {
                Ok(Usage::Scalar(!s.is_empty()))
            }
            fn visit_unit<E>(self) -> Result<Usage<'a>, E> {
                Ok(Usage::Scalar(false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Usage<'a>, A::Error> {
                // An array is truthy and has none of the keys.
                SkipVisitor.visit_seq(a).map(|_| Usage::Obj {
                    context: None,
                    total: Val::Absent,
                    parts: Default::default(),
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Usage<'a>, A::Error> {
                let mut context = None;
                let mut total = Val::Absent;
                let mut parts: [Val<'a>; 4] = Default::default();
                while let Some(k) = a.next_key::<Key>()? {
                    match k {
                        Key::ContextUsage => context = a.next_value::<MaybeContext<'a>>()?.0,
                        Key::TotalTokens => total = a.next_value()?,
                        Key::Input => parts[0] = a.next_value()?,
                        Key::Output => parts[1] = a.next_value()?,
                        Key::CacheRead => parts[2] = a.next_value()?,
                        Key::CacheWrite => parts[3] = a.next_value()?,
                        _ => {
                            a.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(Usage::Obj {
                    context,
                    total,
                    parts,
                })
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// The keys the fast path reads.
enum Key {
    Type,
    Id,
    ParentId,
    TargetId,
    AppendParentId,
    AppendMode,
    FirstKeptEntryId,
    Message,
    Role,
    Content,
    Timestamp,
    StopReason,
    Usage,
    Api,
    Provider,
    Model,
    ResultId(usize),
    Text,
    Thinking,
    Name,
    Arguments,
    ContextUsage,
    State,
    TotalTokens,
    Input,
    Output,
    CacheRead,
    CacheWrite,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                Ok(match s {
                    "type" => Key::Type,
                    "id" => Key::Id,
                    "parentId" => Key::ParentId,
                    "targetId" => Key::TargetId,
                    "appendParentId" => Key::AppendParentId,
                    "appendMode" => Key::AppendMode,
                    "firstKeptEntryId" => Key::FirstKeptEntryId,
                    "message" => Key::Message,
                    "role" => Key::Role,
                    "content" => Key::Content,
                    "timestamp" => Key::Timestamp,
                    "stopReason" => Key::StopReason,
                    "usage" => Key::Usage,
                    "api" => Key::Api,
                    "provider" => Key::Provider,
                    "model" => Key::Model,
                    "toolCallId" => Key::ResultId(0),
                    "toolUseId" => Key::ResultId(1),
                    "tool_call_id" => Key::ResultId(2),
                    "tool_use_id" => Key::ResultId(3),
                    "callId" => Key::ResultId(4),
                    "call_id" => Key::ResultId(5),
                    "text" => Key::Text,
                    "thinking" => Key::Thinking,
                    "name" => Key::Name,
                    "arguments" => Key::Arguments,
                    "contextUsage" => Key::ContextUsage,
                    "state" => Key::State,
                    "totalTokens" => Key::TotalTokens,
                    "input" => Key::Input,
                    "output" => Key::Output,
                    "cacheRead" => Key::CacheRead,
                    "cacheWrite" => Key::CacheWrite,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// The agent message of a row, when it is an object.
#[derive(Debug, Default)]
struct Msg<'a> {
    role: Val<'a>,
    content: Content<'a>,
    timestamp: Val<'a>,
    stop: Val<'a>,
    usage: Usage<'a>,
    api: Val<'a>,
    provider: Val<'a>,
    model: Val<'a>,
    result_ids: [Val<'a>; 6],
}

/// `message`: an object, or something else (which the fast path leaves alone).
#[derive(Debug, Default)]
enum MsgVal<'a> {
    #[default]
    Absent,
    Obj(Box<Msg<'a>>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for MsgVal<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MsgVal<'a>, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = MsgVal<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<MsgVal<'a>, E> {
                Ok(MsgVal::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<MsgVal<'a>, E> {
                Ok(MsgVal::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<MsgVal<'a>, E> {
                Ok(MsgVal::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<MsgVal<'a>, E> {
                Ok(MsgVal::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<MsgVal<'a>, E> {
                Ok(MsgVal::Other)
            }
            fn visit_unit<E>(self) -> Result<MsgVal<'a>, E> {
                Ok(MsgVal::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<MsgVal<'a>, A::Error> {
                SkipVisitor.visit_seq(a).map(|_| MsgVal::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<MsgVal<'a>, A::Error> {
                let mut m = Msg::default();
                while let Some(k) = a.next_key::<Key>()? {
                    match k {
                        Key::Role => m.role = a.next_value()?,
                        Key::Content => m.content = a.next_value()?,
                        Key::Timestamp => m.timestamp = a.next_value()?,
                        Key::StopReason => m.stop = a.next_value()?,
                        Key::Usage => m.usage = a.next_value()?,
                        Key::Api => m.api = a.next_value()?,
                        Key::Provider => m.provider = a.next_value()?,
                        Key::Model => m.model = a.next_value()?,
                        Key::ResultId(i) => m.result_ids[i] = a.next_value()?,
                        _ => {
                            a.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(MsgVal::Obj(Box::new(m)))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A row as the fast path reads it.
#[derive(Debug, Default)]
struct Row<'a> {
    ty: Val<'a>,
    id: Val<'a>,
    parent: Val<'a>,
    target: Val<'a>,
    append_parent: Val<'a>,
    append_mode: Val<'a>,
    first_kept: Val<'a>,
    message: MsgVal<'a>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Row<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Row<'a>, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Row<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Row<'a>, A::Error> {
                let mut r = Row::default();
                while let Some(k) = a.next_key::<Key>()? {
                    match k {
                        Key::Type => r.ty = a.next_value()?,
                        Key::Id => r.id = a.next_value()?,
                        Key::ParentId => r.parent = a.next_value()?,
                        Key::TargetId => r.target = a.next_value()?,
                        Key::AppendParentId => r.append_parent = a.next_value()?,
                        Key::AppendMode => r.append_mode = a.next_value()?,
                        Key::FirstKeptEntryId => r.first_kept = a.next_value()?,
                        Key::Message => r.message = a.next_value()?,
                        _ => {
                            a.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(r)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// What the scan keeps of a row read by the fast path.
pub struct Lean<'a> {
    /// The facts.
    pub facts: Facts,
    /// The file operations.
    pub ops: FileOps,
    /// What the repair pass's step 7 reads.
    pub repair: RepairView<'a>,
    row: Row<'a>,
}

impl Lean<'_> {
    /// The slim row (ids interned into `syms`).
    pub fn slim(&self, syms: &mut Symbols) -> SlimRow {
        let mut field = |v: &Val<'_>| match v {
            Val::Absent => Field::Absent,
            Val::Null => Field::Null,
            Val::Str(s) => Field::Str(syms.intern(s)),
            Val::Num(_) | Val::Other => Field::Other,
        };
        let r = &self.row;
        SlimRow {
            kind: Kind::Message,
            id: field(&r.id),
            parent: field(&r.parent),
            target: field(&r.target),
            append_parent: field(&r.append_parent),
            first_kept: field(&r.first_kept),
            append_mode: match &r.append_mode {
                Val::Absent => AppendMode::Absent,
                Val::Str(s) if s == "side" => AppendMode::Side,
                _ => AppendMode::Other,
            },
        }
    }
}

fn ceil4(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// Reads one non-header row (trimmed line text). `None`: not a common shape (or not
/// parseable); use the general path.
pub fn read(text: &str) -> Option<Lean<'_>> {
    if !text.starts_with('{') {
        return None;
    }
    let row: Row<'_> = serde_json::from_str(text).ok()?;
    if row.ty.as_str() != Some("message") {
        return None;
    }
    let MsgVal::Obj(m) = &row.message else {
        return None;
    };
    let role = m.role.as_str()?;
    if js::trim(role).is_empty() {
        return None;
    }
    let assistant = match role {
        "assistant" => true,
        "user" | "toolResult" => false,
        _ => return None,
    };
    // Shapes left to the general path: images (the repair pass checks them), tool-result
    // blocks (counted by another rule), object content (normalised into an array).
    match &m.content {
        Content::Absent | Content::Str(_) => {}
        Content::Blocks(blocks) => {
            if blocks
                .iter()
                .any(|b| matches!(b.ty(), Some("image" | "toolResult" | "tool_result")))
            {
                return None;
            }
        }
        Content::Other => return None,
    }
    // The repair pass's per-row checks (steps 2-5), on the row as written.
    if assistant
        && matches!(&m.content, Content::Blocks(b) if b.is_empty())
        && m.stop.as_str() == Some("error")
    {
        return None;
    }
    if role == "user" {
        let needs = match &m.content {
            Content::Str(t) => t.blank,
            Content::Blocks(blocks) => {
                blocks.is_empty()
                    || blocks.iter().any(|b| {
                        b.object
                            && b.ty() == Some("text")
                            && matches!(b.text, Text::Str(t) if t.blank)
                    })
            }
            _ => false,
        };
        if needs {
            return None;
        }
    }
    let mut f = Facts::default();
    f.role = Role::of(role);
    f.set_message_ts(match m.timestamp {
        Val::Num(n) => Some(n),
        _ => None,
    });
    let mut ops = FileOps::new();
    // estimateTokens and hasMeaningfulMessageContent on the load-normalised content (an
    // assistant's string content reads as one text block).
    match &m.content {
        Content::Str(t) => {
            f.tokens = ceil4(t.len);
            f.set_meaningful(role != "toolResult" && t.meaningful);
        }
        Content::Blocks(blocks) => {
            let mut chars = 0usize;
            for b in blocks.iter().filter(|b| b.object) {
                match b.ty() {
                    Some("text") => chars += b.text.len(),
                    Some("thinking") if assistant => chars += b.thinking.len(),
                    Some("toolCall") if assistant => {
                        chars += match &b.name {
                            Val::Str(s) => js::utf16_len(s),
                            _ => 0,
                        };
                        chars += match &b.arguments {
                            None => 9,
                            Some(a) => js::utf16_len(&crate::js::jsjson::to_string_compact(a)),
                        };
                    }
                    _ => {}
                }
            }
            f.tokens = ceil4(chars);
            if role != "toolResult" {
                let mut non_text = false;
                let mut meaningful = false;
                for b in blocks.iter().filter(|b| b.object) {
                    match b.ty() {
                        Some("text") => {
                            if matches!(b.text, Text::Str(t) if t.meaningful) {
                                meaningful = true;
                                break;
                            }
                        }
                        Some(
                            "toolCall" | "toolUse" | "functionCall" | "thinking" | "reasoning",
                        ) => {}
                        _ => non_text = true,
                    }
                }
                f.set_meaningful(meaningful || non_text);
            }
        }
        _ => {}
    }
    if assistant {
        let stop = m.stop.as_str();
        f.set_stopped(matches!(stop, Some("aborted") | Some("error")));
        if !f.stopped() && m.usage.truthy() && !m.usage.unavailable() {
            f.set_usage_tokens(m.usage.context_tokens());
        }
        if let Content::Blocks(blocks) = &m.content {
            for b in blocks
                .iter()
                .filter(|b| b.object && b.ty() == Some("toolCall"))
            {
                let (Some(args), true) = (&b.arguments, b.name.present()) else {
                    continue;
                };
                if !js::truthy(args) {
                    continue;
                }
                let Some(p) = args
                    .get("path")
                    .and_then(Value::as_str)
                    .filter(|p| !p.is_empty())
                else {
                    continue;
                };
                let op = match b.name.as_str() {
                    Some("read") => FileOp::Read,
                    Some("write") => FileOp::Write,
                    Some("edit") => FileOp::Edit,
                    _ => continue,
                };
                ops.push((op, Box::from(p)));
            }
        }
    }
    let result_id = (role == "toolResult")
        .then(|| {
            m.result_ids.iter().find_map(|v| {
                match v {
                    Val::Str(Cow::Borrowed(s)) => Some(Cow::Borrowed(js::trim(s))),
                    Val::Str(Cow::Owned(s)) => Some(Cow::Owned(js::trim(s).to_string())),
                    _ => None,
                }
                .filter(|s| !s.is_empty())
            })
        })
        .flatten();
    let repair = RepairView::new(
        role,
        m.api.as_str(),
        m.provider.as_str(),
        m.model.as_str(),
        m.stop.as_str(),
        result_id,
        || match &m.content {
            Content::Blocks(blocks) => blocks
                .iter()
                .filter(|b| b.object)
                .filter_map(|b| {
                    let id = b.id.as_str().filter(|s| !s.is_empty())?;
                    matches!(b.ty()?, "toolCall" | "toolUse" | "functionCall")
                        .then(|| (id.to_string(), b.name.as_str().map(String::from)))
                })
                .collect(),
            _ => Vec::new(),
        },
    );
    Some(Lean {
        facts: f,
        ops,
        repair,
        row,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::scan::facts_of;
    use crate::transcript::migrate::normalize_loaded;
    use crate::transcript::repair::row_needs_repair;

    /// The fast path agrees with the general one (facts, slim row, repair view) wherever it
    /// answers, and never answers where the general path fails or the repair pass would
    /// change the row.
    fn check(text: &str) -> bool {
        let fast = read(text);
        let slow: Result<Value, _> = serde_json::from_str(text);
        let Some(fast) = fast else {
            return false;
        };
        let mut v =
            slow.unwrap_or_else(|e| panic!("fast path took a row Value rejects ({e}): {text}"));
        assert!(
            !row_needs_repair(&v),
            "fast path took a row to repair: {text}"
        );
        normalize_loaded(&mut v);
        let mut syms = Symbols::default();
        assert_eq!(fast.slim(&mut syms), SlimRow::of(&v, &mut syms), "{text}");
        assert_eq!((fast.facts, fast.ops), facts_of(&v), "{text}");
        let m = v["message"].as_object().unwrap();
        assert_eq!(fast.repair, RepairView::of(m), "{text}");
        true
    }

    /// Rows from the files named in `CLAWSTATE_LEAN_CHECK` (colon-separated), when set.
    fn env_rows() -> Vec<String> {
        let Ok(files) = std::env::var("CLAWSTATE_LEAN_CHECK") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for f in files.split(':').filter(|f| !f.is_empty()) {
            let bytes = std::fs::read(f).unwrap();
            for l in String::from_utf8_lossy(&bytes).split('\n').skip(1) {
                let t = js::trim(l.strip_suffix('\r').unwrap_or(l));
                if !t.is_empty() {
                    out.push(t.to_string());
                }
            }
        }
        out
    }

    #[test]
    fn lean_rows_match_the_general_path() {
        let head =
            r#""type":"message","id":"a1","parentId":"p","timestamp":"2026-01-01T00:00:00.000Z""#;
        let msgs = [
            r#"{"role":"user","content":"hello there","timestamp":1}"#,
            r#"{"role":"user","content":"line\none \u00e9 \ud83d\ude00 \"q\"","timestamp":1.5}"#,
            r#"{"role":"user","content":"   ","timestamp":1}"#,
            r#"{"role":"user","content":"NO_REPLY","timestamp":1}"#,
            r#"{"role":"user","content":" heartbeat_ok  HEARTBEAT_OK ","timestamp":-3}"#,
            r#"{"role":"user","content":[],"timestamp":1}"#,
            r#"{"role":"user","content":[{"type":"text","text":" "}],"timestamp":1}"#,
            r#"{"role":"user","content":[{"type":"text","text":"x"},{"type":"text","text":5},"str",7,[1],null],"timestamp":1}"#,
            r#"{"role":"user","content":[{"type":"mystery"}],"timestamp":"1"}"#,
            r#"{"role":"user","content":[{"text":"no type"}]}"#,
            r#"{"role":"user","content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}"#,
            r#"{"role":"user","content":{"type":"text","text":"obj"}}"#,
            r#"{"role":"user"}"#,
            r#"{"role":"user","content":"a","content":"  "}"#,
            r#"{"role":"user","content":"  ","content":"b"}"#,
            r#"{"role":" ","content":"x"}"#,
            r#"{"role":null,"content":"x"}"#,
            r#"{"role":"custom","content":"x"}"#,
            r#"{"role":"assistant","content":"plain string reply","stopReason":"stop","usage":{"totalTokens":12}}"#,
            r#"{"role":"assistant","content":[],"stopReason":"error"}"#,
            r#"{"role":"assistant","content":[],"stopReason":"stop"}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"},{"type":"text","text":"ok"}],"usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4},"stopReason":"stop","timestamp":9}"#,
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"/etc/hosts"}}],"stopReason":"toolUse","usage":{"totalTokens":900,"contextUsage":{"state":"available","totalTokens":70}}}"#,
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"edit","arguments":{"path":"","b":1}},{"type":"toolCall","id":"c2","name":"write","arguments":{"2":1,"path":"/a\u00e9","1":[1.50,2e3]}},{"type":"toolCall","name":"read"},{"type":"toolCall","id":"c4","name":null,"arguments":{"path":"/x"}},{"type":"toolCall","id":"c5","arguments":{"path":"/y"}},{"type":"toolCall","id":"c6","name":"read","arguments":null},{"type":"toolCall","id":"c7","name":"read","arguments":0}],"stopReason":"toolUse"}"#,
            r#"{"role":"assistant","content":[{"type":"toolUse","id":"u1","name":"message"},{"type":"functionCall","id":"","name":"x"},{"type":"reasoning"}],"usage":{"contextUsage":{"state":"unavailable"},"totalTokens":5},"stopReason":"aborted"}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":null,"stopReason":"stop"}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":0}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{}}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":5}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":-0.0}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":"x"}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":""}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":true}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":[1]}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"contextUsage":5,"totalTokens":0,"input":1,"cacheWrite":2.5}}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"contextUsage":{"state":"available"},"totalTokens":4}}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"contextUsage":{"state":"available","totalTokens":"7"}}}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"totalTokens":"5","input":"1","output":2}}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"contextUsage":[1],"totalTokens":3}}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"totalTokens":3,"totalTokens":0,"output":8,"contextUsage":{"state":"unavailable"},"contextUsage":{"state":"x"}}}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"contextUsage":{"state":"unavailable","state":"available","totalTokens":11}}}"#,
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"m1","name":" Message "}],"api":" openai-responses ","provider":"openai","stopReason":"toolUse"}"#,
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"m1","name":"message"}],"api":"openai-chatgpt-responses","provider":"openai","stopReason":"toolUse"}"#,
            r#"{"role":"assistant","content":[],"provider":" openclaw","model":"delivery-mirror ","stopReason":"stop"}"#,
            r#"{"role":"toolResult","toolCallId":" c1 ","toolName":"read","content":[{"type":"text","text":"result"}],"isError":false}"#,
            r#"{"role":"toolResult","toolCallId":"  ","call_id":"c9","content":"string result"}"#,
            r#"{"role":"toolResult","toolUseId":5,"tool_use_id":"t\u0031","content":[]}"#,
            r#"{"role":"toolResult","toolCallId":"c1","content":[{"type":"toolResult","text":"x"}]}"#,
            r#"{"role":"toolResult","toolCallId":"c1","content":{"type":"text","text":"x"}}"#,
            r#"{"role":"user","content":"x","extra":{"deep":[1,{"a":[true,false,null]}],"n":-0.0,"big":18446744073709551615}}"#,
            r#"{"role":"user","content":"x","extra":1e400}"#,
            r#"{"role":"user","content":"x","extra":"\ud800"}"#,
            r#"{"role":"user","content":"x","extra":"tab	in string"}"#,
        ];
        let mut rows: Vec<String> = msgs
            .iter()
            .map(|m| format!("{{{head},\"message\":{m}}}"))
            .collect();
        let deep = format!("{}1{}", "[".repeat(130), "]".repeat(130));
        rows.extend([
            format!(r#"{{{head},"message":{{"role":"user","content":"x"}},"deep":{deep}}}"#),
            r#"{"type":"message","id":"a","parentId":null,"appendMode":"side","message":{"role":"user","content":"x"}}"#.into(),
            r#"{"type":"message","id":"a","parentId":5,"appendMode":"other","targetId":"t","appendParentId":null,"firstKeptEntryId":"f","message":{"role":"user","content":"x"}}"#.into(),
            r#"{"type":"message","id":"a","id":"b","parentId":"x","parentId":"y","message":{"role":"user","content":"x"},"message":{"role":"assistant","content":"y"}}"#.into(),
            r#"{"type":"mess\u0061ge","id":"\u0061","message":{"r\u006fle":"user","content":"x"}}"#.into(),
            r#"{"type":"message","message":"not an object"}"#.into(),
            r#"{"type":"message","message":["role","user"]}"#.into(),
            r#"{"type":"custom_message","id":"c","content":"x"}"#.into(),
            r#"["message"]"#.into(),
        ]);
        rows.extend(env_rows());
        let taken = rows.iter().filter(|r| check(r)).count();
        assert!(taken >= 42, "only {taken} rows took the fast path");
    }
}
