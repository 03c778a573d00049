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

use std::borrow::Cow;

use serde::de::DeserializeOwned;
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
        Value::String(s) => write_string(out, s),
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
/// surrogates and out-of-range numbers). Text serde_json reads as it is, and that holds
/// no reserved code point, takes serde_json's path alone.
pub fn parse_value(text: &str) -> Result<Value, serde_json::Error> {
    parse_as(text)
}

/// [`parse_value`] into any owned type (the partial parses): the same text mapping, then
/// serde_json. An error is serde_json's, on the mapped text when there was something to
/// map (same lines, columns may differ).
pub fn parse_as<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    if !may_hold_reserved(text) {
        let err = match serde_json::from_str(text) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        return match to_serde_text(text) {
            Cow::Borrowed(_) => Err(err),
            Cow::Owned(mapped) => serde_json::from_str(&mapped),
        };
    }
    serde_json::from_str(&to_serde_text(text))
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
        let report = check::check_file(&crate::data_file::DataPath::given(&p)).unwrap();
        assert_eq!(report.rows, 5);
        let invalid: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.code == "invalid-json")
            .map(|f| f.line)
            .collect();
        assert_eq!(invalid, [Some(6)]);
    }
}
