//! Whether JSON text is already exactly what the gateway writes: `JSON.stringify(value,
//! null, 2)` of what `JSON.parse` reads from it, nested at a given depth.
//!
//! A store the gateway wrote is in this form, entry by entry. For such text a reader can
//! take an entry's bytes as its serialisation instead of parsing and re-serialising it
//! (maintenance measures and rewrites 100k entries this way).
//!
//! The check is exact and conservative: text is canonical only if re-serialising its value
//! would give the same bytes. That means two-space indentation and `": "` after keys; no
//! other whitespace; no duplicate keys; array-index keys first, in ascending order (as
//! JavaScript enumerates them); strings escaped as `JSON.stringify` escapes them; numbers
//! as `Number.prototype.toString` prints them. Some text the gateway could write is refused
//! all the same: lone surrogate escapes and nesting deeper than [`MAX_DEPTH`]. Refused
//! text simply takes the slow road.

use std::ops::Range;

use crate::js::jsjson::{is_array_index, write_f64};

/// Nesting beyond this is not checked (the text is called not canonical).
pub const MAX_DEPTH: usize = 96;

/// One member of a canonical object: its key literal (quotes included) and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The key literal, `"…"`, as byte offsets into the checked text.
    pub key: Range<usize>,
    /// The value's text, as byte offsets into the checked text.
    pub value: Range<usize>,
}

/// The members of `text[range]` when that is one canonical object nested at `depth`
/// (appended to `out`, which is cleared first); `false` when it is not canonical.
pub fn object_members(
    text: &str,
    range: Range<usize>,
    depth: usize,
    out: &mut Vec<Member>,
) -> bool {
    out.clear();
    let mut c = Checker::new(text, range.end);
    c.pos = range.start;
    c.at(b'{') && c.object(depth, Some(out)) && c.pos == range.end
}

/// Whether `text` is one canonical value nested at `depth`.
pub fn is_canonical(text: &str, depth: usize) -> bool {
    let mut c = Checker::new(text, text.len());
    c.value(depth) && c.pos == text.len()
}

/// Splits the member list of a canonical top-level object (`{\n  "k": v,\n …\n}`) into at
/// most `parts` segments of whole members, for [`walk_segment`]. `None` when the text
/// does not have that shape; an empty list for `{}`. The split itself trusts the shape:
/// only walking every segment proves it.
pub fn segments(body: &str, parts: usize) -> Option<Vec<Range<usize>>> {
    let b = body.as_bytes();
    if body == "{}" {
        return Some(Vec::new());
    }
    if !body.starts_with("{\n  \"") || !body.ends_with("\n}") {
        return None;
    }
    let end = b.len() - 2;
    let mut starts = vec![1];
    let finder = memchr::memmem::Finder::new(b",\n  \"");
    for k in 1..parts.max(1) {
        let target = (end * k / parts).max(starts[starts.len() - 1] + 1);
        if target >= end {
            break;
        }
        match finder.find(&b[target..end]) {
            Some(i) => {
                let s = target + i + 1;
                if s > starts[starts.len() - 1] {
                    starts.push(s);
                }
            }
            None => break,
        }
    }
    let mut out = Vec::with_capacity(starts.len());
    for (i, &s) in starts.iter().enumerate() {
        out.push(s..starts.get(i + 1).copied().unwrap_or(end));
    }
    Some(out)
}

/// Walks the top-level members in `segment` (from [`segments`]) of a canonical store
/// `body`, checking each is canonical; `visit` gets each member and, when its value is an
/// object, that object's members. `false` (and the walk stops) at the first text that is
/// not canonical or when `visit` returns `false`.
pub fn walk_segment(
    body: &str,
    segment: Range<usize>,
    mut visit: impl FnMut(&Member, Option<&[Member]>) -> bool,
) -> bool {
    let mut c = Checker::new(body, body.len());
    c.pos = segment.start;
    let last = segment.end == body.len() - 2;
    let mut members = Vec::new();
    loop {
        if c.pos >= segment.end || !c.indent(1) {
            return false;
        }
        let key_start = c.pos;
        if !c.at(b'"') || !c.string() {
            return false;
        }
        let key = key_start..c.pos;
        if !c.lit(b": ") {
            return false;
        }
        let value_start = c.pos;
        let object = c.at(b'{');
        let ok = if object {
            members.clear();
            c.object(1, Some(&mut members))
        } else {
            c.value(1)
        };
        if !ok {
            return false;
        }
        let m = Member {
            key,
            value: value_start..c.pos,
        };
        if !visit(&m, object.then_some(members.as_slice())) {
            return false;
        }
        if c.pos == segment.end {
            return last;
        }
        if c.pos > segment.end || !c.lit(b",") {
            return false;
        }
        if c.pos == segment.end {
            return !last;
        }
    }
}

/// The string a canonical key or string literal holds.
pub fn literal_text(literal: &str) -> Option<std::borrow::Cow<'_, str>> {
    let inner = literal.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        return Some(std::borrow::Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(literal)
        .ok()
        .map(std::borrow::Cow::Owned)
}

/// A canonical value's text read as `JSON.parse` reads it (plain strings and small
/// integers without the parser).
pub fn read_value(raw: &str) -> Option<serde_json::Value> {
    let b = raw.as_bytes();
    match b.first()? {
        b'"' if !b.iter().any(|&c| c == b'\\' || c == 0xF4) => {
            Some(serde_json::Value::String(raw[1..raw.len() - 1].to_string()))
        }
        b'0'..=b'9' if b.len() <= 15 && b.iter().all(u8::is_ascii_digit) => {
            raw.parse::<u64>().ok().map(serde_json::Value::from)
        }
        b't' => Some(serde_json::Value::Bool(true)),
        b'f' => Some(serde_json::Value::Bool(false)),
        b'n' => Some(serde_json::Value::Null),
        _ => crate::js::jsjson::parse_value(raw).ok(),
    }
}

/// The eight bytes of `b` from `i` (which has eight left), as one little-endian word.
fn word_at(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

/// Whether a word holds a byte that ends a run of plain string bytes: below 0x20, `"` or
/// `\`. Exact as a yes/no: `x - 0x01…01` borrows into a byte's top bit, where `!x` keeps it,
/// only when some byte of `x` is zero (the same below 0x20 with `x - 0x20…20`).
fn has_special_byte(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_in = |x: u64| x.wrapping_sub(ONES) & !x & HIGH != 0;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGH != 0;
    below_space || zero_in(w ^ (ONES * u64::from(b'"'))) || zero_in(w ^ (ONES * u64::from(b'\\')))
}

/// A cursor over the text being checked.
struct Checker<'a> {
    b: &'a [u8],
    /// Where checking must stop (nothing at or past it is read).
    end: usize,
    pos: usize,
    /// The key literals of the objects being checked (a stack).
    keys: Vec<Range<usize>>,
}

impl<'a> Checker<'a> {
    fn new(text: &'a str, end: usize) -> Self {
        Checker {
            b: text.as_bytes(),
            end,
            pos: 0,
            keys: Vec::new(),
        }
    }

    fn peek(&self) -> Option<u8> {
        (self.pos < self.end).then(|| self.b[self.pos])
    }

    fn at(&self, c: u8) -> bool {
        self.peek() == Some(c)
    }

    fn lit(&mut self, s: &[u8]) -> bool {
        let ok = self.pos + s.len() <= self.end && &self.b[self.pos..self.pos + s.len()] == s;
        if ok {
            self.pos += s.len();
        }
        ok
    }

    /// A newline and `2 * depth` spaces.
    fn indent(&mut self, depth: usize) -> bool {
        let n = 1 + 2 * depth;
        if self.pos + n > self.end || self.b[self.pos] != b'\n' {
            return false;
        }
        if !self.b[self.pos + 1..self.pos + n]
            .iter()
            .all(|&c| c == b' ')
        {
            return false;
        }
        self.pos += n;
        true
    }

    fn value(&mut self, depth: usize) -> bool {
        match self.peek() {
            Some(b'"') => self.string(),
            Some(b'{') => self.object(depth, None),
            Some(b'[') => self.array(depth),
            Some(b't') => self.lit(b"true"),
            Some(b'f') => self.lit(b"false"),
            Some(b'n') => self.lit(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => false,
        }
    }

    /// A string literal escaped as `JSON.stringify` escapes (cursor on the opening quote).
    fn string(&mut self) -> bool {
        let b = self.b;
        let mut i = self.pos + 1;
        loop {
            // Plain bytes: everything from 0x20 up but `"` and `\` (the text is UTF-8);
            // eight at a time while a whole word holds nothing else.
            while i + 8 <= self.end && !has_special_byte(word_at(b, i)) {
                i += 8;
            }
            while i < self.end && b[i] >= 0x20 && b[i] != b'"' && b[i] != b'\\' {
                i += 1;
            }
            if i >= self.end {
                return false;
            }
            match b[i] {
                b'"' => {
                    self.pos = i + 1;
                    return true;
                }
                b'\\' => {
                    let Some(&e) = b.get(i + 1).filter(|_| i + 1 < self.end) else {
                        return false;
                    };
                    match e {
                        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                        b'u' => {
                            // Only control characters without a short escape, lower-case hex.
                            if i + 6 > self.end || &b[i + 2..i + 4] != b"00" {
                                return false;
                            }
                            let hex = |c: u8| match c {
                                b'0'..=b'9' => Some(c - b'0'),
                                b'a'..=b'f' => Some(c - b'a' + 10),
                                _ => None,
                            };
                            let (Some(h), Some(l)) = (hex(b[i + 4]), hex(b[i + 5])) else {
                                return false;
                            };
                            let unit = h * 16 + l;
                            if unit >= 0x20 || matches!(unit, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                                return false;
                            }
                            i += 6;
                        }
                        _ => return false,
                    }
                }
                // A raw control character: not JSON.
                _ => return false,
            }
        }
    }

    /// A number as `Number.prototype.toString` prints it.
    fn number(&mut self) -> bool {
        let b = self.b;
        let start = self.pos;
        let mut i = start;
        if b[i] == b'-' {
            i += 1;
        }
        let int_start = i;
        while i < self.end && b[i].is_ascii_digit() {
            i += 1;
        }
        let int_len = i - int_start;
        if int_len == 0 || (int_len > 1 && b[int_start] == b'0') {
            return false;
        }
        let mut plain = true;
        if i < self.end && b[i] == b'.' {
            plain = false;
            i += 1;
            let f = i;
            while i < self.end && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == f {
                return false;
            }
        }
        if i < self.end && matches!(b[i], b'e' | b'E') {
            plain = false;
            i += 1;
            if i < self.end && matches!(b[i], b'+' | b'-') {
                i += 1;
            }
            let e = i;
            while i < self.end && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == e {
                return false;
            }
        }
        self.pos = i;
        let text = &b[start..i];
        if plain && int_len <= 15 {
            // Exact in a double and printed as written, but for negative zero.
            return text != b"-0";
        }
        // Anything else: print the double it reads as and compare.
        let Ok(s) = std::str::from_utf8(text) else {
            return false;
        };
        let Ok(f) = s.parse::<f64>() else {
            return false;
        };
        if !f.is_finite() {
            return false;
        }
        let mut printed = String::with_capacity(24);
        write_f64(&mut printed, f);
        printed.as_bytes() == text
    }

    /// An object (cursor on `{`); its members go to `members` when given.
    fn object(&mut self, depth: usize, mut members: Option<&mut Vec<Member>>) -> bool {
        if depth >= MAX_DEPTH {
            return false;
        }
        self.pos += 1;
        if self.at(b'}') {
            self.pos += 1;
            return true;
        }
        let base = self.keys.len();
        let mut ok = false;
        // Whether a key that is not an array index has been seen; the last index seen.
        let mut named = false;
        let mut last_index: Option<u64> = None;
        let mut seen = 0u64;
        loop {
            if !self.indent(depth + 1) || !self.at(b'"') {
                break;
            }
            let key_start = self.pos;
            if !self.string() {
                break;
            }
            let key = key_start..self.pos;
            let inner = &self.b[key.start + 1..key.end - 1];
            if inner.first().is_some_and(u8::is_ascii_digit)
                && std::str::from_utf8(inner).is_ok_and(is_array_index)
            {
                let n = std::str::from_utf8(inner)
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok())
                    .unwrap_or(0);
                if named || last_index.is_some_and(|l| l >= n) {
                    break;
                }
                last_index = Some(n);
            } else {
                named = true;
            }
            // Equal strings have equal canonical literals: compare the bytes, only when a
            // cheap signature (length and last character) was seen before in this object.
            let bit = 1u64 << ((key.len() * 7 + inner.last().copied().unwrap_or(0) as usize) & 63);
            if seen & bit != 0
                && self.keys[base..]
                    .iter()
                    .any(|k| self.b[k.clone()] == self.b[key.clone()])
            {
                break;
            }
            seen |= bit;
            self.keys.push(key.clone());
            if !self.lit(b": ") {
                break;
            }
            let value_start = self.pos;
            if !self.value(depth + 1) {
                break;
            }
            if let Some(m) = members.as_deref_mut() {
                m.push(Member {
                    key,
                    value: value_start..self.pos,
                });
            }
            if self.at(b',') {
                self.pos += 1;
                continue;
            }
            ok = self.indent(depth) && self.lit(b"}");
            break;
        }
        self.keys.truncate(base);
        ok
    }

    /// An array (cursor on `[`).
    fn array(&mut self, depth: usize) -> bool {
        if depth >= MAX_DEPTH {
            return false;
        }
        self.pos += 1;
        if self.at(b']') {
            self.pos += 1;
            return true;
        }
        loop {
            if !self.indent(depth + 1) || !self.value(depth + 1) {
                return false;
            }
            if self.at(b',') {
                self.pos += 1;
                continue;
            }
            return self.indent(depth) && self.lit(b"]");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::js::jsjson;

    /// The word test agrees with the byte test on every word of a seeded sample, and on
    /// each single special byte at each position among plain ones (high bytes included).
    #[test]
    fn the_word_test_is_the_byte_test() {
        let special = |c: u8| c < 0x20 || c == b'"' || c == b'\\';
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bytes = x.to_le_bytes();
            assert_eq!(
                has_special_byte(x),
                bytes.iter().any(|&c| special(c)),
                "{x:#x}"
            );
        }
        for base in [b'a', 0x20, 0x7f, 0x80, 0xff, b'#', b'['] {
            for at in 0..8 {
                for c in 0..=255u8 {
                    let mut bytes = [base; 8];
                    bytes[at] = c;
                    let w = u64::from_le_bytes(bytes);
                    assert_eq!(
                        has_special_byte(w),
                        special(c) || special(base),
                        "{bytes:?}"
                    );
                }
            }
        }
    }

    /// Whether the writer gives back exactly `text` (the definition being implemented).
    fn round_trips(text: &str, depth: usize) -> bool {
        let Ok(mut v) = jsjson::parse_value(text) else {
            return false;
        };
        jsjson::apply_js_key_order(&mut v);
        let mut out = String::new();
        jsjson::write_pretty_at(&mut out, &v, depth);
        out == text
    }

    #[test]
    fn agrees_with_the_writer() {
        let cases = [
            "{}",
            "[]",
            "{\n  \"a\": 1\n}",
            "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}",
            "{\"a\": 1}",
            "{\n  \"a\":1\n}",
            "{\n   \"a\": 1\n}",
            "{\n  \"a\": 1\n }",
            "{\n  \"a\": 1,\n  \"a\": 2\n}",
            "{\n  \"1\": 1,\n  \"a\": 2\n}",
            "{\n  \"a\": 1,\n  \"1\": 2\n}",
            "{\n  \"2\": 1,\n  \"1\": 2\n}",
            "{\n  \"01\": 1,\n  \"a\": 2\n}",
            "{\n  \"a\": 01\n}",
            "\"a\\u0001b\"",
            "\"a\\u001Fb\"",
            "\"a\\u000ab\"",
            "\"a\\nb\\t\\\"\\\\\"",
            "\"a\\/b\"",
            "\"\\u00e9\"",
            "\"\\ud800\"",
            "\"é\u{2028}\u{7f}\"",
            "1.5",
            "1.50",
            "1e21",
            "1e+21",
            "100000000000000000000",
            "1000000000000000000000",
            "-0",
            "0",
            "-1",
            "0.000001",
            "1e-7",
            "1.2e-7",
            "9007199254740993",
            "123456789012345",
            "1234567890123456",
            "12345678901234567",
            "1e999",
            "1E5",
            "true",
            "nul",
            "[\n  1,\n  [],\n  {}\n]",
            "[\n  1\n,]",
        ];
        for text in cases {
            for depth in [0, 1] {
                let indented = if depth == 0 {
                    text.to_string()
                } else {
                    text.replace('\n', "\n  ")
                };
                // Refused on purpose: lone surrogate escapes.
                let refused = indented.contains("\\ud8");
                assert_eq!(
                    is_canonical(&indented, depth),
                    round_trips(&indented, depth) && !refused,
                    "{indented:?} at depth {depth}"
                );
            }
        }
    }

    #[test]
    fn members_and_segments() {
        let body =
            "{\n  \"a\": {\n    \"x\": 1,\n    \"y\": \"z\"\n  },\n  \"b\": 5,\n  \"c\": {}\n}";
        let mut m = Vec::new();
        assert!(object_members(body, 0..body.len(), 0, &mut m));
        assert_eq!(m.len(), 3);
        assert_eq!(&body[m[0].key.clone()], "\"a\"");
        assert_eq!(&body[m[1].value.clone()], "5");
        for parts in 1..5 {
            let segs = segments(body, parts).unwrap();
            let mut seen = Vec::new();
            for s in segs {
                assert!(walk_segment(body, s, |mem, members| {
                    seen.push((body[mem.key.clone()].to_string(), members.map(|m| m.len())));
                    true
                }));
            }
            assert_eq!(
                seen,
                [
                    ("\"a\"".to_string(), Some(2)),
                    ("\"b\"".to_string(), None),
                    ("\"c\"".to_string(), Some(0))
                ],
                "{parts} parts"
            );
        }
        assert_eq!(segments("{}", 2), Some(Vec::new()));
        assert_eq!(segments("{\"a\": 1}", 2), None);
        // A non-canonical member makes its segment fail.
        let bad = "{\n  \"a\": 1,\n  \"b\": 1.0\n}";
        let segs = segments(bad, 1).unwrap();
        assert!(!walk_segment(bad, segs[0].clone(), |_, _| true));
    }

    #[test]
    fn literal_texts() {
        assert_eq!(literal_text("\"abc\"").as_deref(), Some("abc"));
        assert_eq!(literal_text("\"a\\nb\"").as_deref(), Some("a\nb"));
    }
}
