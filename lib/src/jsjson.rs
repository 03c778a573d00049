//! JSON text exactly as JavaScript's `JSON.stringify` writes it.
//!
//! Parsing uses `serde_json` with insertion-ordered maps (duplicate keys keep the first
//! position and the last value, as `JSON.parse` does). Writing reproduces three things
//! serde_json does differently: ECMAScript number formatting (`1e+21`, integers past 2^53
//! rounded like a double), JavaScript key order (array-index keys first, ascending) and
//! JavaScript string escaping.

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
/// characters are escaped; everything else is raw UTF-8).
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xf) as usize] as char);
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
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
}
