//! JSON text exactly as JavaScript's `JSON.parse` reads it and `JSON.stringify` writes it.
//!
//! Parsing uses `serde_json` with insertion-ordered maps (duplicate keys keep the first
//! position and the last value, as `JSON.parse` does). Two inputs `JSON.parse` reads and
//! serde_json refuses are mapped first, losslessly, by [`to_serde_text`] (see
//! [`parse_value`]): a lone surrogate escape (`"\ud800"`, which `JSON.stringify` writes for
//! a string cut inside a surrogate pair) and a number beyond the double range (`1e999`,
//! which JavaScript reads as `Infinity` and writes back as `null`).
//!
//! Writing reproduces what serde_json does differently: ECMAScript number formatting
//! (`1e+21`, integers past 2^53 rounded like a double), JavaScript key order (array-index
//! keys first, ascending), JavaScript string escaping, and lone surrogates written back as
//! `\udXXX` escapes.
//!
//! # Lone surrogates
//!
//! A Rust string cannot hold a lone surrogate, so the parse functions here read the lone
//! surrogate U+D800+k as the code point U+10F800+k (the top of the plane-16 private-use
//! area), and the writers turn it back into the escape. So that the mapping stays
//! lossless, a code point of that reserved range that really is in the text (or
//! [`RESERVED_ESCAPE`] itself) is read as [`RESERVED_ESCAPE`] followed by it, and written
//! back as the code point alone. A value built by these parse functions therefore writes
//! back exactly; only a string that reaches a writer by another road and holds a raw
//! reserved code point is misread (as a lone surrogate).
//!
//! An out-of-range number is read as `null`, which is what the gateway's next write makes
//! of it. Only where the gateway uses the `Infinity` before writing does that differ
//! (e.g. `contextTokens: 1e999` lists as `null` there and as the default here).
//!
//! # Depth
//!
//! `JSON.parse` reads text nested to any depth, and what it reads the gateway keeps, so
//! the parse functions here do too (serde_json alone stops at 128 levels). A `Value`
//! nested thousands of levels deep cannot be used, though: dropping, cloning, comparing
//! or printing one recurses once per level (compiler-generated code, not ours to guard)
//! and overflows the stack. So a parsed value is built as `Value`s only [`VALUE_DEPTH`]
//! levels deep; each container nested deeper is kept whole as its `JSON.stringify` text
//! in a string marked by [`RESERVED_ESCAPE`] (which a parsed string never holds before
//! `[` or `{`, see [`deep_text`]), and the writers write that text back as the container.
//! Every `Value` these functions return is therefore shallow, whatever the text, and
//! writes back exactly; the deep text itself is read with a parser that grows the stack
//! as it goes (`serde_stacker`), and never held as a `Value`. Nothing the gateway or this
//! crate looks at is that deep (a store entry's fields, a transcript row's message and
//! content blocks); a walk over such a value sees the deep part as that one string.
//!
//! The pretty writers indent at most [`PRETTY_DEPTH`] levels: no store the gateway
//! writes nests deeper (`JSON.stringify` throws a RangeError first), and two-space
//! indentation of a 100k-level chain would be 20 GB. Deeper containers are written
//! compact.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Map, Number, Value};

/// Whether `key` is a canonical array index (`"0"` … `"4294967294"`, no leading zero),
/// which JavaScript objects enumerate first, in ascending numeric order.
pub fn is_array_index(key: &str) -> bool {
    let b = key.as_bytes();
    if b.is_empty() || b.len() > 10 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    if b.len() > 1 && b[0] == b'0' {
        return false;
    }
    key.parse::<u64>().is_ok_and(|n| n <= 4_294_967_294)
}

/// The keys of `map` in JavaScript enumeration order.
pub fn js_key_order(map: &Map<String, Value>) -> Vec<&String> {
    let mut keys: Vec<&String> = map.keys().collect();
    if keys.iter().any(|k| is_array_index(k)) {
        // Stable sort: indices first by value, the rest keep insertion order.
        keys.sort_by_key(|k| {
            if is_array_index(k) {
                (0, k.parse::<u64>().unwrap_or(0))
            } else {
                (1, 0)
            }
        });
    }
    keys
}

/// Reorders every object in `value` (recursively) into JavaScript enumeration order, so
/// that iteration order matches what the gateway sees.
pub fn apply_js_key_order(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.keys().any(|k| is_array_index(k)) {
                let old = std::mem::take(map);
                let order: Vec<String> = js_key_order(&old).into_iter().cloned().collect();
                let mut old = old;
                for k in order {
                    if let Some(v) = old.remove(&k) {
                        map.insert(k, v);
                    }
                }
            }
            for v in map.values_mut() {
                apply_js_key_order(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(apply_js_key_order),
        _ => {}
    }
}

/// `JSON.stringify(value, null, 2)`.
pub fn to_string_pretty(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_value(&mut out, value, Some(0));
    out
}

/// `JSON.stringify(value)`: compact, as one JSONL line (no newline added).
pub fn to_string_compact(value: &Value) -> String {
    let mut out = String::with_capacity(128);
    write_value(&mut out, value, None);
    out
}

/// Appends `JSON.stringify(value, null, 2)` to `out`, as if nested at `depth` levels.
pub fn write_pretty_at(out: &mut String, value: &Value, depth: usize) {
    write_value(out, value, Some(depth));
}

/// Appends `JSON.stringify(value)` to `out`.
pub fn write_compact(out: &mut String, value: &Value) {
    write_value(out, value, None);
}

fn newline_indent(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_value(out: &mut String, value: &Value, depth: Option<usize>) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => match deep_text(s) {
            Some(text) => write_deep_text(out, text, depth),
            None => write_string(out, s),
        },
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if let Some(d) = depth {
                    newline_indent(out, d + 1);
                }
                write_value(out, item, depth.map(|d| d + 1));
            }
            if let Some(d) = depth {
                newline_indent(out, d);
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map, depth),
    }
}

/// Appends one object in JavaScript key order.
pub fn write_object(out: &mut String, map: &Map<String, Value>, depth: Option<usize>) {
    if map.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push('{');
    let mut first = true;
    let mut member = |out: &mut String, k: &str, v: &Value| {
        if !first {
            out.push(',');
        }
        first = false;
        if let Some(d) = depth {
            newline_indent(out, d + 1);
        }
        write_string(out, k);
        out.push(':');
        if depth.is_some() {
            out.push(' ');
        }
        write_value(out, v, depth.map(|d| d + 1));
    };
    if map.keys().any(|k| is_array_index(k)) {
        for k in js_key_order(map) {
            member(out, k, &map[k.as_str()]);
        }
    } else {
        for (k, v) in map {
            member(out, k, v);
        }
    }
    if let Some(d) = depth {
        newline_indent(out, d);
    }
    out.push('}');
}

const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_992; // 2^53

/// Appends a number as `Number.prototype.toString` formats it.
pub fn write_number(out: &mut String, n: &Number) {
    if let Some(u) = n.as_u64() {
        if u <= MAX_SAFE_INTEGER {
            out.push_str(itoa_u64(u).as_str());
            return;
        }
    } else if let Some(i) = n.as_i64() {
        if i.unsigned_abs() <= MAX_SAFE_INTEGER {
            out.push_str(&i.to_string());
            return;
        }
    }
    let f = n.as_f64().unwrap_or(0.0);
    write_f64(out, f);
}

/// Appends a double as `Number.prototype.toString` formats it (`null` for non-finite).
pub fn write_f64(out: &mut String, f: f64) {
    if !f.is_finite() {
        out.push_str("null");
        return;
    }
    let mut buf = ryu_js::Buffer::new();
    out.push_str(buf.format(f));
}

fn itoa_u64(u: u64) -> String {
    u.to_string()
}

/// Appends a JSON string literal with JavaScript's escaping (only `"`, `\` and control
/// characters are escaped; everything else is raw UTF-8), a lone surrogate read by
/// [`parse_value`] written back as its `\udXXX` escape.
pub fn write_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            // The lead byte of U+100000..U+10FFFF: maybe a reserved code point.
            0xF4 => {
                let mut chars = s[i..].chars();
                let c = chars.next().unwrap_or_default();
                if (c as u32) < RESERVED_ESCAPE as u32 {
                    i += 1;
                    continue;
                }
                out.push_str(&s[start..i]);
                let next = chars.next().filter(|n| *n as u32 >= RESERVED_ESCAPE as u32);
                match (c == RESERVED_ESCAPE, next) {
                    // An escaped reserved code point: the code point alone.
                    (true, Some(n)) => {
                        out.push(n);
                        i += 8;
                    }
                    (true, None) => {
                        out.push(c);
                        i += 4;
                    }
                    (false, _) => {
                        let unit = (c as u32 - LONE_SURROGATE_BASE + 0xD800) as usize;
                        out.push_str("\\u");
                        for shift in [12, 8, 4, 0] {
                            out.push(HEX[(unit >> shift) & 0xf] as char);
                        }
                        i += 4;
                    }
                }
                start = i;
                continue;
            }
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xf) as usize] as char);
        } else {
            out.push_str(esc);
        }
        i += 1;
        start = i;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

// ---- reading what JSON.parse reads -------------------------------------------------------

/// Where the code points standing for lone surrogates start: U+D800+k is read as
/// U+10F800+k (up to U+10FFFF).
const LONE_SURROGATE_BASE: u32 = 0x10F800;

/// The code point that marks a reserved code point (U+10F7FF … U+10FFFF) really present
/// in the text, so that it is not taken for a lone surrogate.
pub const RESERVED_ESCAPE: char = '\u{10F7FF}';

/// The lone surrogate (0xD800 … 0xDFFF) that `c` stands for in a string read by
/// [`parse_value`], if it stands for one.
pub fn lone_surrogate(c: char) -> Option<u16> {
    let c = c as u32;
    (c >= LONE_SURROGATE_BASE).then(|| (c - LONE_SURROGATE_BASE + 0xD800) as u16)
}

/// Parses JSON text as `JSON.parse` does (see the module documentation for lone
/// surrogates, out-of-range numbers and depth). Text serde_json reads as it is, and that
/// holds no reserved code point, takes serde_json's path alone.
pub fn parse_value(text: &str) -> Result<Value, serde_json::Error> {
    parse_value_at(text, 0)
}

/// [`parse_value`] of text nested `depth` levels deep in its document (a store entry: 1),
/// so that the value is built exactly as a parse of the whole document builds that part
/// (containers past [`VALUE_DEPTH`] of the document kept as text). `depth` must be at most
/// `VALUE_DEPTH - 127`: serde_json's own path builds up to 127 levels.
pub fn parse_value_at(text: &str, depth: usize) -> Result<Value, serde_json::Error> {
    parse_with(
        text,
        |t| serde_json::from_str(t),
        |t| parse_deep(t, ValueSeed::at(depth)),
    )
}

/// [`parse_value_at`] of text already mapped by [`to_serde_text`] (which must not be
/// mapped twice).
pub fn parse_mapped_value_at(mapped: &str, depth: usize) -> Result<Value, serde_json::Error> {
    serde_json::from_str(mapped).or_else(|_| parse_deep(mapped, ValueSeed::at(depth)))
}

/// [`parse_value`] into any owned type (the partial parses): the same text mapping, then
/// serde_json. An error is serde_json's, on the mapped text when there was something to
/// map (same lines, columns may differ). Text nested deeper than serde_json's limit is
/// read too; a type that keeps `Value`s must read them with [`ValueSeed`] to keep them
/// shallow.
pub fn parse_as<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    parse_with(
        text,
        |t| serde_json::from_str(t),
        |t| parse_deep(t, PhantomData::<T>),
    )
}

/// `fast` (serde_json as it is) on the text, or on the mapped text when there was
/// something to map; `deep` where that fails (too deep for serde_json, or not JSON: then
/// `deep` gives the same error).
fn parse_with<T>(
    text: &str,
    fast: impl Fn(&str) -> Result<T, serde_json::Error>,
    deep: impl Fn(&str) -> Result<T, serde_json::Error>,
) -> Result<T, serde_json::Error> {
    let direct = !may_hold_reserved(text);
    if direct {
        if let Ok(v) = fast(text) {
            return Ok(v);
        }
    }
    let mapped = to_serde_text(text);
    if !direct || matches!(mapped, Cow::Owned(_)) {
        if let Ok(v) = fast(&mapped) {
            return Ok(v);
        }
    }
    deep(&mapped)
}

/// Whether `text` may hold a reserved code point (U+10F7FF … U+10FFFF), raw or as an
/// escape, which [`parse_value`] must mark even where serde_json would read it. A fast
/// check with false positives (`\\udbff` in a string counts too).
pub fn may_hold_reserved(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr2_iter(b'\\', 0xF4, b).any(|i| {
        if b[i] == 0xF4 {
            // U+10F7FF is F4 8F 9F BF.
            b.get(i + 1) == Some(&0x8F)
                && match b.get(i + 2) {
                    Some(0x9F) => b.get(i + 3) == Some(&0xBF),
                    Some(&x) => x > 0x9F,
                    None => false,
                }
        } else {
            // U+10F7FF is \uDBFD\uDFFF: \uDBF[D-F]…
            b.len() >= i + 6
                && b[i + 1] == b'u'
                && b[i + 2] | 0x20 == b'd'
                && b[i + 3] | 0x20 == b'b'
                && b[i + 4] | 0x20 == b'f'
                && matches!(b[i + 5] | 0x20, b'd' | b'e' | b'f')
        }
    })
}

/// `text` with what `JSON.parse` reads and serde_json refuses mapped to what serde_json
/// reads as the same value: a lone surrogate escape becomes its stand-in code point, a
/// reserved code point gets [`RESERVED_ESCAPE`] before it, and a number beyond the double
/// range becomes `null` (padded with spaces, so columns stay). Line breaks never move;
/// borrowed when nothing changed. The text need not be valid JSON: whatever is malformed
/// stays malformed.
pub fn to_serde_text(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut changed = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() {
                    match b[i] {
                        b'"' => {
                            i += 1;
                            break;
                        }
                        b'\\' if b.get(i + 1) == Some(&b'u') => {
                            let Some(unit) = hex4(b, i + 2) else {
                                i += 2;
                                continue;
                            };
                            let pair = (0xD800..0xDC00)
                                .contains(&unit)
                                .then(|| {
                                    (b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u'))
                                        .then(|| hex4(b, i + 8))
                                        .flatten()
                                })
                                .flatten()
                                .filter(|lo| (0xDC00..0xE000).contains(lo));
                            let (len, stand_in) = match pair {
                                Some(lo) => {
                                    let cp = 0x10000 + ((unit - 0xD800) << 10) + (lo - 0xDC00);
                                    (12, (cp >= RESERVED_ESCAPE as u32).then_some(cp))
                                }
                                None if (0xD800..0xE000).contains(&unit) => {
                                    (6, Some(LONE_SURROGATE_BASE + unit - 0xD800))
                                }
                                None => (6, None),
                            };
                            if let Some(cp) = stand_in {
                                out.push_str(&text[copied..i]);
                                if pair.is_some() {
                                    out.push(RESERVED_ESCAPE);
                                }
                                out.push(char::from_u32(cp).unwrap_or(RESERVED_ESCAPE));
                                copied = i + len;
                                changed = true;
                            }
                            i += len;
                        }
                        b'\\' => i += 2,
                        0xF4 => {
                            let c = text[i..].chars().next().unwrap_or_default();
                            if c as u32 >= RESERVED_ESCAPE as u32 {
                                out.push_str(&text[copied..i]);
                                out.push(RESERVED_ESCAPE);
                                copied = i;
                                changed = true;
                            }
                            i += c.len_utf8();
                        }
                        _ => i += 1,
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                let number = &text[start..i];
                if is_json_number(number) && number.parse::<f64>().is_ok_and(f64::is_infinite) {
                    out.push_str(&text[copied..start]);
                    out.push_str("null");
                    out.extend(std::iter::repeat_n(' ', number.len() - 4));
                    copied = i;
                    changed = true;
                }
            }
            _ => i += 1,
        }
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The four hex digits at `at` as a code unit.
fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let digits = b.get(at..at + 4)?;
    digits
        .iter()
        .try_fold(0u32, |n, &d| Some(n << 4 | (d as char).to_digit(16)?))
}

/// Whether `s` is a JSON number (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let from = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - from
    };
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

// ---- depth ----------------------------------------------------------------------------

/// How many levels of containers a parsed value is built as `Value`s; deeper containers are
/// kept as text (see the module documentation). More than the 127 levels serde_json's own
/// path builds, so that every parse of the same document, whole or one entry at a time
/// ([`parse_value_at`]), builds the same value.
pub const VALUE_DEPTH: usize = 160;

/// How many levels the pretty writers indent; deeper containers are written compact. Above
/// every depth the gateway can write: `JSON.stringify(v, null, 2)` throws "Maximum call
/// stack size exceeded" past 4,455 levels (Node 24.22, top of a script) and the gateway's
/// `sessions cleanup --enforce` fails, changing nothing, past about 4,390 levels below an
/// entry (openclaw@2026.7.1).
pub const PRETTY_DEPTH: usize = 5000;

/// What the deep-capable parse leaves on the stack before growing it: enough for dropping a
/// partly built value of [`VALUE_DEPTH`] levels on a parse error, even unoptimised.
const RED_ZONE: usize = 256 * 1024;

/// The key serde_json's `Value` reads as "the value is JSON text" when it comes first.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// How much stack the deep-capable parse adds each time it runs short.
const STACK_SEGMENT: usize = 4 * 1024 * 1024;

/// The `JSON.stringify` text of a container kept as text (nested deeper than
/// [`VALUE_DEPTH`]), when `s` is one: [`RESERVED_ESCAPE`] then the text. A parsed string
/// never has `[` or `{` after that code point (the mapping puts it only before reserved
/// code points).
pub fn deep_text(s: &str) -> Option<&str> {
    // The lead byte of RESERVED_ESCAPE first: the writers ask this of every string.
    if s.as_bytes().first() != Some(&0xF4) {
        return None;
    }
    let text = s.strip_prefix(RESERVED_ESCAPE)?;
    matches!(text.as_bytes().first(), Some(b'[' | b'{')).then_some(text)
}

/// Appends a container kept as text: as it is (compact), or indented as
/// `JSON.stringify(value, null, 2)` indents it at `depth`, at most [`PRETTY_DEPTH`] levels.
fn write_deep_text(out: &mut String, text: &str, depth: Option<usize>) {
    let Some(mut level) = depth else {
        out.push_str(text);
        return;
    };
    let b = text.as_bytes();
    let mut from = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i = string_end(b, i);
                continue;
            }
            b'[' | b'{' if matches!(b.get(i + 1), Some(b']' | b'}')) => i += 1,
            b'[' | b'{' if level >= PRETTY_DEPTH => {
                i = container_end(b, i);
                continue;
            }
            b'[' | b'{' => {
                level += 1;
                out.push_str(&text[from..=i]);
                newline_indent(out, level);
                from = i + 1;
            }
            b',' => {
                out.push_str(&text[from..=i]);
                newline_indent(out, level);
                from = i + 1;
            }
            b':' => {
                out.push_str(&text[from..=i]);
                out.push(' ');
                from = i + 1;
            }
            b']' | b'}' => {
                out.push_str(&text[from..i]);
                level -= 1;
                newline_indent(out, level);
                from = i;
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&text[from..]);
}

/// The end of the string literal starting at `b[at]` (one past its closing quote).
fn string_end(b: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            b'"' => return i + 1,
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    b.len()
}

/// The end of the container starting at `b[at]` (one past its closing bracket).
fn container_end(b: &[u8], at: usize) -> usize {
    let mut open = 0usize;
    let mut i = at;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i = string_end(b, i);
                continue;
            }
            b'[' | b'{' => open += 1,
            b']' | b'}' => {
                open -= 1;
                if open == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// Parses `text` (already mapped) with serde_json at any depth, the stack grown as needed.
fn parse_deep<'de, S: DeserializeSeed<'de>>(
    text: &'de str,
    seed: S,
) -> Result<S::Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let mut stacked = serde_stacker::Deserializer::new(&mut de);
    stacked.red_zone = RED_ZONE;
    stacked.stack_size = STACK_SEGMENT;
    let value = seed.deserialize(stacked)?;
    de.end()?;
    Ok(value)
}

/// Reads one value as [`parse_value`] builds it: `Value`s down to [`VALUE_DEPTH`], deeper
/// containers as their text (see [`deep_text`]). For partial parses that keep some fields
/// as `Value`s (`next_value_seed(ValueSeed::at(1))` for a field of a top-level object).
#[derive(Debug, Clone, Copy)]
pub struct ValueSeed {
    depth: usize,
}

impl ValueSeed {
    /// A seed for a value nested `depth` levels deep in its document.
    pub fn at(depth: usize) -> Self {
        ValueSeed { depth }
    }

    fn child(self) -> Self {
        ValueSeed::at(self.depth + 1)
    }

    /// Whether a container read here is kept as text.
    fn as_text(self) -> bool {
        self.depth >= VALUE_DEPTH
    }
}

/// A container kept as text: what `visit` writes after [`RESERVED_ESCAPE`].
fn kept_as_text<E>(visit: impl FnOnce(CanonicalText<'_>) -> Result<(), E>) -> Result<Value, E> {
    let mut s = String::new();
    s.push(RESERVED_ESCAPE);
    visit(CanonicalText(&mut s))?;
    Ok(Value::String(s))
}

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self.as_text() {
            return kept_as_text(|text| text.visit_seq(seq));
        }
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(self.child())? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if self.as_text() {
            return kept_as_text(|text| text.visit_map(map));
        }
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.is_empty() && key == RAW_VALUE_TOKEN {
                // serde_json's `Value` reads such a map as the JSON text its value holds (and
                // the rest of the map as trailing characters); so does this, so that no text
                // reads differently here than on serde_json's own path.
                let inner: String = map.next_value()?;
                return parse_mapped_value_at(&inner, self.depth).map_err(de::Error::custom);
            }
            // As `JSON.parse`: a repeated key keeps its first position and its last value.
            let value = map.next_value_seed(self.child())?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// Writes the value it reads as `JSON.stringify` writes it (JavaScript key order, a
/// repeated key's last value at its first position, numbers and strings as
/// [`write_number`] and [`write_string`] write them), never building it.
struct CanonicalText<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for CanonicalText<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CanonicalText<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<(), E> {
        self.0.push_str(if b { "true" } else { "false" });
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        write_number(self.0, &v.into());
        Ok(())
    }
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        write_number(self.0, &v.into());
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        write_f64(self.0, v);
        Ok(())
    }
    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        write_string(self.0, s);
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.push_str("null");
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        self.0.push_str("null");
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let out = self.0;
        out.push('[');
        let mut first = true;
        loop {
            let mark = out.len();
            if !first {
                out.push(',');
            }
            if seq.next_element_seed(CanonicalText(&mut *out))?.is_none() {
                out.truncate(mark);
                break;
            }
            first = false;
        }
        out.push(']');
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let out = self.0;
        out.push('{');
        let body = out.len();
        // Each distinct key in first-position order, with the text of its last member.
        let mut members: Vec<(String, Range<usize>)> = Vec::new();
        let mut index: std::collections::HashMap<String, usize> = Default::default();
        let mut reorder = false;
        while let Some(key) = map.next_key::<String>()? {
            if !members.is_empty() {
                out.push(',');
            }
            let start = out.len();
            write_string(out, &key);
            out.push(':');
            map.next_value_seed(CanonicalText(&mut *out))?;
            let member = start..out.len();
            match index.get(&key) {
                Some(&i) => {
                    members[i].1 = member;
                    reorder = true;
                }
                None => {
                    reorder |= is_array_index(&key);
                    index.insert(key.clone(), members.len());
                    members.push((key, member));
                }
            }
        }
        if reorder {
            members.sort_by_key(|(k, _)| match is_array_index(k) {
                true => (0, k.parse::<u64>().unwrap_or(0)),
                false => (1, 0),
            });
            let written = out.split_off(body);
            for (i, (_, member)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&written[member.start - body..member.end - body]);
            }
        }
        out.push('}');
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn pretty_matches_json_stringify() {
        let v = parse(r#"{"a":[1,{"b":[]},{}],"c":"x\u0001\"\\\n","d":null,"e":true}"#);
        assert_eq!(
            to_string_pretty(&v),
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    },\n    {}\n  ],\n  \"c\": \"x\\u0001\\\"\\\\\\n\",\n  \"d\": null,\n  \"e\": true\n}"
        );
        assert_eq!(
            to_string_compact(&v),
            r#"{"a":[1,{"b":[]},{}],"c":"x\u0001\"\\\n","d":null,"e":true}"#
        );
    }

    #[test]
    fn numbers_format_like_ecmascript() {
        let cases = [
            ("2.50", "2.5"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("1.5e-7", "1.5e-7"),
            ("0.000001", "0.000001"),
            ("-0", "0"),
            ("9007199254740993", "9007199254740992"),
            ("12345678901234567890", "12345678901234567000"),
            ("-12", "-12"),
            ("100.0", "100"),
        ];
        for (input, want) in cases {
            assert_eq!(to_string_compact(&parse(input)), want, "{input}");
        }
    }

    #[test]
    fn integer_keys_come_first_at_every_level() {
        let v = parse(r#"{"b":1,"42":2,"a":{"9":0,"z":1,"1":2},"7":3,"01":4,"4294967295":5}"#);
        assert_eq!(
            to_string_compact(&v),
            r#"{"7":3,"42":2,"b":1,"a":{"1":2,"9":0,"z":1},"01":4,"4294967295":5}"#
        );
    }

    #[test]
    fn duplicate_keys_keep_first_position_last_value() {
        let v = parse(r#"{"a":1,"b":2,"a":3}"#);
        assert_eq!(to_string_compact(&v), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn non_ascii_stays_raw() {
        assert_eq!(
            to_string_compact(&json!("é\u{2028}😀\u{7f}")),
            "\"é\u{2028}😀\u{7f}\""
        );
    }

    #[test]
    fn apply_order_reorders_in_place() {
        let mut v = parse(r#"{"b":1,"3":2}"#);
        apply_js_key_order(&mut v);
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["3", "b"]);
    }

    /// `JSON.stringify(JSON.parse(input))` as Node 24 computes it (the peer's runtime).
    const JSON_PARSE_STRINGIFY: &[(&str, &str)] = &[
        (r#""\ud800""#, r#""\ud800""#),
        (r#""\uDBFF""#, r#""\udbff""#),
        (r#""\udc00\ud800""#, r#""\udc00\ud800""#),
        (r#"{"\ud800":1,"a":"x\udfffy"}"#, r#"{"\ud800":1,"a":"x\udfffy"}"#),
        (r#""\ud83d\ude00""#, "\"\u{1f600}\""),
        (r#""\ud83d\u0041""#, r#""\ud83dA""#),
        (r#""\ud83d\\u0041""#, r#""\ud83d\\u0041""#),
        (r#""\\ud800""#, r#""\\ud800""#),
        (r#""a\ud83d\ud83d\ude00""#, "\"a\\ud83d\u{1f600}\""),
        (r#""\udbfe\udc00""#, "\"\u{10f800}\""),
        (r#""\udbfd\udfff\ud800""#, "\"\u{10f7ff}\\ud800\""),
        (
            "\"\u{10f800}\u{10f7ff}\u{10ffff}\\udfff\"",
            "\"\u{10f800}\u{10f7ff}\u{10ffff}\\udfff\"",
        ),
        (
            "[1e999,-1e999,1e-999,-1e-999,1E+400,-0,1.7976931348623157e308,1.7976931348623159e308,4.9e-324,2e-324]",
            "[null,null,0,0,null,0,1.7976931348623157e+308,null,5e-324,0]",
        ),
        (r#"{"a":1e999,"b":[2e308]}"#, r#"{"a":null,"b":[null]}"#),
    ];

    #[test]
    fn reads_and_writes_back_what_json_parse_and_stringify_do() {
        for (input, want) in JSON_PARSE_STRINGIFY {
            let v = parse_value(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(to_string_compact(&v), *want, "{input}");
            // What we write reads back and writes the same.
            assert_eq!(to_string_compact(&parse_value(want).unwrap()), *want);
        }
        let big = format!("[1{}]", "0".repeat(400));
        assert_eq!(to_string_compact(&parse_value(&big).unwrap()), "[null]");
    }

    #[test]
    fn what_json_parse_refuses_stays_refused() {
        for bad in [
            "[1.e999]",
            "[01e999]",
            r#""\ud800"#,
            "[1e999,]",
            r#""\u12""#,
            "[-1e999x]",
            "[+1e999]",
            "{\"a\":\"\u{10f800}\u{1}\"}",
        ] {
            assert!(parse_value(bad).is_err(), "{bad}");
        }
        // Line numbers survive the mapping.
        let e = parse_value("{\"a\": \"\\ud800\",\n \"b\": 1e999,\n \"c\": tru}").unwrap_err();
        assert_eq!((e.line(), e.column()), (3, 10));
    }

    #[test]
    fn the_stand_ins_are_lossless() {
        // A lone surrogate and the reserved code point it stands for stay apart.
        let v = parse_value(r#"["\ud800", "\udbfe\udc00", "\udbfd\udfff"]"#).unwrap();
        let s: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(s[0], "\u{10f800}");
        assert_eq!(s[1], "\u{10f7ff}\u{10f800}");
        assert_eq!(s[2], "\u{10f7ff}\u{10f7ff}");
        assert_eq!(lone_surrogate('\u{10f800}'), Some(0xd800));
        assert_eq!(lone_surrogate('\u{10ffff}'), Some(0xdfff));
        assert_eq!(lone_surrogate('\u{10f7ff}'), None);
        // Text serde_json reads and that holds no reserved code point is not touched.
        for plain in [
            r#"{"a":"\ud83d\ude00 \\ud800 \u00e9","b":1e308}"#,
            "\"\u{10f7fe}\"",
        ] {
            assert!(!may_hold_reserved(plain), "{plain}");
            assert!(matches!(to_serde_text(plain), Cow::Borrowed(_)));
        }
        assert!(may_hold_reserved("\"\u{10f7ff}\""));
        assert!(may_hold_reserved(r#""\uDbFe\udc00""#));
    }

    #[test]
    fn partial_types_read_through_the_same_mapping() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Two {
            a: Option<String>,
            b: Option<f64>,
        }
        let t: Two = parse_as(r#"{"a":"x\ud800","b":-1e999}"#).unwrap();
        assert_eq!(
            t,
            Two {
                a: Some("x\u{10f800}".into()),
                b: None
            }
        );
    }

    /// Found by fuzzing: the transcript reader skipped a line with a lone surrogate or an
    /// out-of-range number as "not JSON" (its row and descendants left the tree), and
    /// `repair` dropped it. The expected bytes are what the gateway's repair wrote for this
    /// file (Node 24, openclaw@2026.7.1): only the line that is really not JSON goes.
    #[test]
    fn transcripts_keep_lines_json_parse_reads() {
        use crate::transcript::{check, partial, reader, repair, tree};
        let lines = [
            r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi \ud83d","timestamp":1}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input":1e999,"output":-1e999,"totalTokens":1e-999},"timestamp":2}}"#,
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"x\udc00y","timestamp":3}}"#,
            r#"{"type":"message","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"x","timestamp":1e999}}"#,
            r#"{"bad json"#,
        ];
        let content = lines.join("\n") + "\n";
        let gateway_repaired = [
            lines[0],
            lines[1],
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input":null,"output":null,"totalTokens":0},"timestamp":2}}"#,
            lines[3],
            r#"{"type":"message","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"x","timestamp":null}}"#,
        ]
        .join("\n")
            + "\n";

        let t = reader::parse_bytes(content.as_bytes());
        assert_eq!((t.rows.len(), t.skipped.len()), (5, 1));
        let records: Vec<&Value> = t.rows.iter().map(|r| &r.value).collect();
        let scan = tree::scan_tree(&records);
        assert_eq!(scan.leaf_id.as_deref(), Some("d"));
        for line in &lines[..5] {
            assert!(matches!(partial::tree_fields(line), Ok(Some(_))), "{line}");
        }
        assert!(matches!(partial::tree_fields(lines[5]), Ok(None)));

        let mut n = 0;
        let out = repair::repair_content(content.as_bytes(), 0, &mut || {
            n += 1;
            format!("u{n}")
        });
        assert_eq!(out.report.dropped_lines, 1);
        assert_eq!(
            String::from_utf8(out.bytes.unwrap()).unwrap(),
            gateway_repaired
        );

        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        std::fs::write(&p, &content).unwrap();
        let report = check::check_file(&crate::fs::data_file::DataPath::given(&p)).unwrap();
        assert_eq!(report.rows, 5);
        let invalid: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.code == "invalid-json")
            .map(|f| f.line)
            .collect();
        assert_eq!(invalid, [Some(6)]);
    }

    /// `n` containers around `inner`: objects `{"x":…}` and arrays `[…]` in turn.
    fn nest(n: usize, inner: &str) -> String {
        let mut s = String::new();
        for i in 0..n {
            s.push_str(if i % 2 == 0 { "{\"x\":" } else { "[" });
        }
        s.push_str(inner);
        for i in (0..n).rev() {
            s.push(if i % 2 == 0 { '}' } else { ']' });
        }
        s
    }

    /// Runs `f` on a thread with a small stack (half a test thread's): nothing here may
    /// depend on the stack it is given.
    fn on_small_stack(f: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap();
    }

    /// Issue 22 items 4 and 5: serde_json refused text nested 128 levels or more, so a
    /// store entry or transcript line that deep was dropped. Any depth is read, written
    /// back byte for byte, cloned, compared and dropped, on a small stack.
    #[test]
    fn a_value_nested_100k_levels_deep_reads_writes_and_drops() {
        on_small_stack(|| {
            for text in [
                nest(100_000, "1"),
                "[".repeat(100_000) + &"]".repeat(100_000),
                format!(
                    "{{\"a\":{},\"b\":[{},2]}}",
                    nest(100_000, "\"x\""),
                    nest(3, "1")
                ),
            ] {
                let v = parse_value(&text).unwrap();
                assert!(to_string_compact(&v) == text);
                let copy = v.clone();
                assert_eq!(copy, v);
                assert_eq!(parse_value(&text).unwrap(), v);
                drop(copy);
                drop(v);
            }
            // Not JSON stays an error, however deep (a complete deep value dropped on the
            // way out included).
            for bad in [
                "[".repeat(100_000),
                format!("[{},]", nest(100_000, "1")),
                format!("{}tru{}", "[".repeat(100_000), "]".repeat(100_000)),
            ] {
                assert!(parse_value(&bad).is_err());
            }
        });
    }

    /// Every `Value` a parse returns is at most `VALUE_DEPTH` containers deep; below, the
    /// containers are one string of their text.
    #[test]
    fn deep_containers_are_kept_as_their_text() {
        fn depth(v: &Value) -> usize {
            match v {
                Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
                Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
                _ => 0,
            }
        }
        let v = parse_value(&nest(VALUE_DEPTH + 10, "1")).unwrap();
        assert_eq!(depth(&v), VALUE_DEPTH);
        let mut leaf = &v;
        while let Some(next) = leaf.get("x").or_else(|| leaf.get(0)) {
            leaf = next;
        }
        assert_eq!(deep_text(leaf.as_str().unwrap()), Some(&*nest(10, "1")));
        // What serde_json's path builds (up to 127 levels) is built the same way.
        for n in [
            126,
            127,
            128,
            129,
            VALUE_DEPTH - 1,
            VALUE_DEPTH,
            VALUE_DEPTH + 1,
        ] {
            let text = nest(n, "[1,{\"a\":2}]");
            let v = parse_value(&text).unwrap();
            assert!(to_string_compact(&v) == text, "{n}");
            assert_eq!(depth(&v), (n + 2).min(VALUE_DEPTH), "{n}");
            if n + 2 < 128 {
                assert_eq!(v, serde_json::from_str::<Value>(&text).unwrap());
            }
        }
        // A string that only looks like kept text is a string.
        for (text, want) in [
            (r#""\udbfd\udfff[1]""#, "\"\u{10f7ff}[1]\""),
            ("\"\u{10f7ff}{}\"", "\"\u{10f7ff}{}\""),
        ] {
            let v = parse_value(text).unwrap();
            assert_eq!(deep_text(v.as_str().unwrap()), None, "{text}");
            assert_eq!(to_string_compact(&v), want);
        }
    }

    /// An entry parsed alone (`parse_value_at(entry, 1)`) is the value a parse of its
    /// whole store builds, at every depth.
    #[test]
    fn a_part_parsed_alone_is_built_as_in_the_whole() {
        for n in [
            120,
            126,
            127,
            128,
            VALUE_DEPTH - 2,
            VALUE_DEPTH - 1,
            VALUE_DEPTH,
            1000,
        ] {
            let entry = format!("{{\"sessionId\":\"s\",\"extra\":{}}}", nest(n, "1"));
            let store = parse_value(&format!("{{\"k\":{entry}}}")).unwrap();
            assert_eq!(parse_value_at(&entry, 1).unwrap(), store["k"], "{n}");
            let mapped = to_serde_text(&entry);
            assert_eq!(
                parse_mapped_value_at(&mapped, 1).unwrap(),
                store["k"],
                "{n}"
            );
        }
    }

    /// The text of a deep container is what `JSON.stringify` writes: key order, repeated
    /// keys, numbers, escapes, lone surrogates and out-of-range numbers, whitespace, as the
    /// shallow path (checked against Node above) writes them.
    #[test]
    fn deep_text_is_what_json_stringify_writes() {
        let inners = [
            r#"{"b":1,"42":2,"a":{"9":0,"z":1,"1":2},"7":3,"01":4,"4294967295":5}"#,
            r#"{"a":1,"b":2,"a":3,"5":0,"5":[1]}"#,
            r#"[2.50, 1e21, -0, 9007199254740993, 1.5e-7, 1e999, -1e999, 1e-999, 12345678901234567890]"#,
            r#" { "s" : "\u0041\n\"\\\/\u00e9\u2028 \ud800 x\udfff \ud83d\ude00 \udbfe\udc00" , "t" : [ true , false , null , { } , [ ] ] } "#,
            "[\"\u{10f7ff}\u{10ffff}\", {\"\\u0001\": \"\\u001f\"}]",
        ];
        for inner in inners {
            let want = to_string_compact(&parse_value(inner).unwrap());
            for n in [VALUE_DEPTH + 5, 10_000] {
                let v = parse_value(&nest(n, inner)).unwrap();
                assert!(to_string_compact(&v) == nest(n, &want), "{inner}");
            }
        }
    }

    /// `JSON.stringify(v, null, 2)` of deep text: indented as the writer indents `Value`s,
    /// down to `PRETTY_DEPTH` levels, compact below.
    #[test]
    fn deep_text_is_indented_down_to_pretty_depth() {
        let shallow = r#"{"a":[1,{"b":[],"c":{}},"x,y:[{"],"d":{"e":null}}"#;
        let built = parse_value(shallow).unwrap();
        let deep = parse_value(&format!(
            "{}{shallow}{}",
            "[".repeat(VALUE_DEPTH),
            "]".repeat(VALUE_DEPTH)
        ))
        .unwrap();
        let mut inner = &deep;
        for _ in 0..VALUE_DEPTH {
            inner = &inner[0];
        }
        assert!(deep_text(inner.as_str().unwrap()).is_some());
        for at in [0, 3, PRETTY_DEPTH - 3, PRETTY_DEPTH - 1, PRETTY_DEPTH] {
            let (mut want, mut got) = (String::new(), String::new());
            if at + 3 <= PRETTY_DEPTH {
                write_pretty_at(&mut want, &built, at);
            } else {
                // Past the limit: compact from the level that would be indented too deep.
                let ind = |k: usize| "  ".repeat(k);
                want = match at + 1 == PRETTY_DEPTH {
                    true => format!(
                        "{{\n{}\"a\": [1,{{\"b\":[],\"c\":{{}}}},\"x,y:[{{\"],\n{}\"d\": {{\"e\":null}}\n{}}}",
                        ind(at + 1),
                        ind(at + 1),
                        ind(at)
                    ),
                    false => to_string_compact(&built),
                };
            }
            write_pretty_at(&mut got, inner, at);
            assert_eq!(got, want, "at {at}");
        }
        // A 100k-level chain stays small: PRETTY_DEPTH levels indented, the rest compact.
        on_small_stack(|| {
            let n = 100_000;
            let v = parse_value(
                &"[".repeat(n)
                    .chars()
                    .chain("]".repeat(n).chars())
                    .collect::<String>(),
            )
            .unwrap();
            let pretty = to_string_pretty(&v);
            let indented = PRETTY_DEPTH;
            let mut want = String::new();
            for k in 0..indented {
                want.push_str("[\n");
                want.push_str(&"  ".repeat(k + 1));
            }
            want.push_str(&"[".repeat(n - indented));
            want.push_str(&"]".repeat(n - indented));
            for k in (0..indented).rev() {
                want.push('\n');
                want.push_str(&"  ".repeat(k));
                want.push(']');
            }
            assert!(
                pretty == want,
                "{} bytes, want {}",
                pretty.len(),
                want.len()
            );
        });
    }
}
