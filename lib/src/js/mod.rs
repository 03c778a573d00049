//! JavaScript value semantics the gateway's code relies on.
//!
//! The gateway is JavaScript, and several of its rules hinge on how JavaScript itself treats
//! strings, values and dates, which differs from Rust's defaults: `trim()` strips the
//! ECMAScript white-space set (U+FEFF yes, U+0085 no), `.length` counts UTF-16 code units,
//! truthiness has its own table, and `Date.parse` accepts V8's leniencies and reads a
//! date-time without offset in local time. Every module that reproduces such a rule calls
//! in here.

pub mod byte_size;
pub mod clock;
pub mod duration;
pub mod jsjson;
pub mod node_path;

use chrono::{DateTime, Duration, NaiveDateTime, Offset, TimeZone};
use serde_json::Value;

// ---- strings ----------------------------------------------------------------------------

/// Whether `c` is ECMAScript white space or a line terminator (what `trim()` and regex `\s` strip).
pub fn is_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{d}'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// `s.trim()`.
pub fn trim(s: &str) -> &str {
    s.trim_matches(is_whitespace)
}

/// `s.trimStart()`.
pub fn trim_start(s: &str) -> &str {
    s.trim_start_matches(is_whitespace)
}

/// `s.trimEnd()`.
pub fn trim_end(s: &str) -> &str {
    s.trim_end_matches(is_whitespace)
}

/// `s.toLowerCase()` (the full Unicode mapping, which is Rust's `to_lowercase`).
pub fn to_lower_case(s: &str) -> String {
    s.to_lowercase()
}

/// `s.length`: the length in UTF-16 code units.
pub fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    s.chars().map(char::len_utf16).sum()
}

/// The first `n` UTF-16 code units of `s`, never splitting a surrogate pair (a pair that
/// straddles the cut is dropped, as the gateway's `truncateUtf16Safe` does).
pub fn utf16_prefix(s: &str, n: usize) -> &str {
    if s.is_ascii() {
        return &s[..n.min(s.len())];
    }
    let mut units = 0;
    for (i, c) in s.char_indices() {
        let w = c.len_utf16();
        if units + w > n {
            return &s[..i];
        }
        units += w;
    }
    s
}

// ---- values -----------------------------------------------------------------------------

/// JavaScript truthiness of a JSON value (`!!v`).
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// `v ?? …`: `v` unless it is `null` or `undefined` (an absent key).
pub fn non_nullish(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

// ---- dates ------------------------------------------------------------------------------

/// The largest time value a JavaScript `Date` holds, in ms either side of the epoch (`TimeClip`).
pub const MAX_TIME_MS: i64 = 8_640_000_000_000_000;

const MS_PER_DAY: i64 = 86_400_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (month 1-12; day may overflow).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month, day) of a day count since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `new Date(ms).toISOString()`: `2026-11-29T21:55:15.244Z`, or `±YYYYYY-…` outside years
/// 0..=9999. (JavaScript throws beyond ±[`MAX_TIME_MS`]; this formats the proleptic date.)
pub fn to_iso_string(ms: i64) -> String {
    let days = ms.div_euclid(MS_PER_DAY);
    let rem = ms.rem_euclid(MS_PER_DAY);
    let (y, mo, d) = civil_from_days(days);
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("+{y:06}")
    };
    format!(
        "{year}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// The instant of a wall-clock time in `tz`, resolved as JavaScript `Date` does (`UTC(t)`):
/// a time skipped by a DST change takes the offset in force before it (so it lands one hour
/// later), a repeated time resolves to its first occurrence. `None` outside chrono's range.
///
/// Only UTC → local offsets are consulted (chrono's local → UTC lookup treats the end of a
/// repeated hour as ambiguous, V8 does not): every offset in force within ±36 h is tried,
/// the earliest consistent instant wins, and a skipped time takes the offset from before
/// the transition.
pub fn utc_from_local<Tz: TimeZone>(tz: &Tz, local: NaiveDateTime) -> Option<i64> {
    let offset_at =
        |utc: NaiveDateTime| i64::from(tz.offset_from_utc_datetime(&utc).fix().local_minus_utc());
    let span = Duration::hours(36);
    let before = offset_at(local.checked_sub_signed(span)?);
    let candidates = [
        before,
        offset_at(local),
        offset_at(local.checked_add_signed(span)?),
    ];
    let local_ms = local.and_utc().timestamp_millis();
    let ms = candidates
        .iter()
        .map(|off| local_ms - off * 1000)
        .filter(|&ms| {
            DateTime::from_timestamp_millis(ms)
                .is_some_and(|t| offset_at(t.naive_utc()) * 1000 == local_ms - ms)
        })
        .min()
        .unwrap_or(local_ms - before * 1000);
    Some(ms)
}

/// The wall-clock time in `tz` of an instant (`LocalTime(t)`); `None` outside chrono's range.
pub fn local_from_utc<Tz: TimeZone>(tz: &Tz, ms: i64) -> Option<NaiveDateTime> {
    let utc = DateTime::from_timestamp_millis(ms)?.naive_utc();
    Some(tz.from_utc_datetime(&utc).naive_local())
}

/// `Date.parse(s)` in the process's local time zone (see [`date_parse_in`]).
pub fn date_parse(s: &str) -> Option<i64> {
    date_parse_in(s, &chrono::Local)
}

/// `Date.parse(s)` with local-time forms resolved in `tz`; `None` where V8 gives `NaN`.
///
/// The ECMAScript date-time string format `[±YY]YYYY[-MM[-DD]][THH:mm[:ss[.sss]]][Z|±HH:mm]`
/// with V8's leniencies: `t`/`z`/space separators (after a space, years 0..=99 are two-digit
/// years: `0049` is 2049, `0050` is 1950), any number of fraction digits
/// (truncated to ms), `±HHMM` offsets, `24:00` as the next midnight, and any day 1..=31
/// (overflowing into the next month: `2026-02-30` is 2 March). Date-only forms are UTC; a
/// date-time without offset is local time in `tz`. Other legacy forms V8 accepts
/// (`Sun Nov 29 2026`) read as invalid here.
pub fn date_parse_in<Tz: TimeZone>(s: &str, tz: &Tz) -> Option<i64> {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize, n: usize| -> Option<i64> {
        let chunk = b.get(*i..*i + n)?;
        if !chunk.iter().all(u8::is_ascii_digit) {
            return None;
        }
        *i += n;
        Some(
            chunk
                .iter()
                .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')),
        )
    };
    let year = match b.first()? {
        sign @ (b'+' | b'-') => {
            i += 1;
            let y = digits(&mut i, 6)?;
            if *sign == b'-' {
                if y == 0 {
                    return None;
                }
                -y
            } else {
                y
            }
        }
        _ => digits(&mut i, 4)?,
    };
    let (mut month, mut day) = (1, 1);
    if b.get(i) == Some(&b'-') {
        i += 1;
        month = digits(&mut i, 2)?;
        if b.get(i) == Some(&b'-') {
            i += 1;
            day = digits(&mut i, 2)?;
        }
    }
    let (mut hour, mut minute, mut second, mut millis) = (0, 0, 0, 0);
    let mut has_time = false;
    let mut offset_ms: Option<i64> = None;
    let mut legacy = false;
    if matches!(b.get(i), Some(b'T' | b't' | b' ')) {
        legacy = b[i] == b' ';
        i += 1;
        has_time = true;
        hour = digits(&mut i, 2)?;
        if b.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        minute = digits(&mut i, 2)?;
        if b.get(i) == Some(&b':') {
            i += 1;
            second = digits(&mut i, 2)?;
            if b.get(i) == Some(&b'.') {
                i += 1;
                let start = i;
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                if i == start {
                    return None;
                }
                let frac = &b[start..i.min(start + 3)];
                let mut value = frac
                    .iter()
                    .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
                for _ in frac.len()..3 {
                    value *= 10;
                }
                millis = value;
            }
        }
        match b.get(i) {
            Some(b'Z' | b'z') => {
                i += 1;
                offset_ms = Some(0);
            }
            Some(sign @ (b'+' | b'-')) => {
                let negative = *sign == b'-';
                i += 1;
                let oh = digits(&mut i, 2)?;
                if b.get(i) == Some(&b':') {
                    i += 1;
                }
                let om = digits(&mut i, 2)?;
                if oh > 23 || om > 59 {
                    return None;
                }
                let off = (oh * 60 + om) * 60_000;
                offset_ms = Some(if negative { -off } else { off });
            }
            _ => {}
        }
    }
    if i != b.len() {
        return None;
    }
    let valid = (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && minute <= 59
        && second <= 59
        && (hour < 24 || (hour == 24 && minute == 0 && second == 0 && millis == 0));
    if !valid {
        return None;
    }
    // A space sends V8 to its legacy parser, which reads years 0..=99 as 2000..=2049 and
    // 1950..=1999.
    let year = match year {
        0..=49 if legacy => year + 2000,
        50..=99 if legacy => year + 1900,
        _ => year,
    };
    let local_ms = days_from_civil(year, month, 1) * MS_PER_DAY
        + (day - 1) * MS_PER_DAY
        + hour * 3_600_000
        + minute * 60_000
        + second * 1000
        + millis;
    let utc_ms = match offset_ms {
        Some(off) => local_ms - off,
        None if has_time => {
            utc_from_local(tz, DateTime::from_timestamp_millis(local_ms)?.naive_utc())?
        }
        None => local_ms,
    };
    (utc_ms.abs() <= MAX_TIME_MS).then_some(utc_ms)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use chrono::{Datelike, FixedOffset, LocalResult, NaiveDate, Utc};
    use serde_json::json;

    /// US Eastern time with the post-2007 rules, enough to exercise DST transitions.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct NewYork;

    impl NewYork {
        fn dst_bounds_utc(year: i32) -> (NaiveDateTime, NaiveDateTime) {
            let nth_sunday = |month: u32, n: u32| {
                let first = NaiveDate::from_ymd_opt(year, month, 1).unwrap();
                let offset = (7 - first.weekday().num_days_from_sunday()) % 7;
                first + Duration::days(i64::from(offset + 7 * (n - 1)))
            };
            // 02:00 EST = 07:00 UTC; 02:00 EDT = 06:00 UTC.
            let start = nth_sunday(3, 2).and_hms_opt(7, 0, 0).unwrap();
            let end = nth_sunday(11, 1).and_hms_opt(6, 0, 0).unwrap();
            (start, end)
        }
    }

    impl TimeZone for NewYork {
        type Offset = FixedOffset;
        fn from_offset(_: &FixedOffset) -> Self {
            NewYork
        }
        fn offset_from_local_date(&self, local: &NaiveDate) -> LocalResult<FixedOffset> {
            self.offset_from_local_datetime(&local.and_time(chrono::NaiveTime::MIN))
        }
        fn offset_from_local_datetime(&self, local: &NaiveDateTime) -> LocalResult<FixedOffset> {
            let est = FixedOffset::west_opt(5 * 3600).unwrap();
            let edt = FixedOffset::west_opt(4 * 3600).unwrap();
            let as_est = *local + Duration::hours(5);
            let as_edt = *local + Duration::hours(4);
            let est_ok = self.offset_from_utc_datetime(&as_est) == est;
            let edt_ok = self.offset_from_utc_datetime(&as_edt) == edt;
            match (edt_ok, est_ok) {
                (true, true) => LocalResult::Ambiguous(edt, est),
                (true, false) => LocalResult::Single(edt),
                (false, true) => LocalResult::Single(est),
                (false, false) => LocalResult::None,
            }
        }
        fn offset_from_utc_date(&self, utc: &NaiveDate) -> FixedOffset {
            self.offset_from_utc_datetime(&utc.and_time(chrono::NaiveTime::MIN))
        }
        fn offset_from_utc_datetime(&self, utc: &NaiveDateTime) -> FixedOffset {
            let (start, end) = Self::dst_bounds_utc(utc.year());
            let hours = if *utc >= start && *utc < end { 4 } else { 5 };
            FixedOffset::west_opt(hours * 3600).unwrap()
        }
    }

    fn ms(s: &str) -> i64 {
        DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis()
    }

    #[test]
    fn whitespace_and_trim() {
        // The ECMAScript set: U+FEFF is white space, U+0085 is not.
        assert_eq!(trim("\u{FEFF} a \u{A0}"), "a");
        assert_eq!(trim("\u{85}a"), "\u{85}a");
        assert_eq!(trim("\u{feff} x \u{a0}"), "x");
        assert_eq!(trim("\u{feff} a\u{3000}"), "a");
        assert_eq!(trim_start("\u{2028} a "), "a ");
        assert_eq!(trim_end(" a \u{205f}\u{d}"), " a");
        // Exactly Rust's White_Space property less U+0085, plus U+FEFF.
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let expected = c == '\u{FEFF}' || (c.is_whitespace() && c != '\u{85}');
            assert_eq!(is_whitespace(c), expected, "{c:?}");
        }
    }

    #[test]
    fn utf16_lengths() {
        assert_eq!(utf16_len("abc"), 3);
        assert_eq!(utf16_len("é😀"), 3);
        assert_eq!(utf16_prefix("a😀b", 2), "a");
        assert_eq!(utf16_prefix("a😀b", 3), "a😀");
        assert_eq!(utf16_prefix("abc", 9), "abc");
        assert_eq!(to_lower_case("İA"), "i\u{307}a");
    }

    #[test]
    fn truthiness() {
        for v in [json!(null), json!(false), json!(0), json!(-0.0), json!("")] {
            assert!(!truthy(&v), "{v}");
        }
        for v in [
            json!(true),
            json!(1),
            json!(0.5),
            json!(" "),
            json!([]),
            json!({}),
        ] {
            assert!(truthy(&v), "{v}");
        }
    }

    #[test]
    fn js_dates() {
        assert_eq!(
            date_parse("2026-11-29T21:55:15.244Z"),
            Some(1_795_989_315_244)
        );
        assert_eq!(
            date_parse("2026-11-29T21:55:15.2441234Z"),
            Some(1_795_989_315_244)
        );
        assert_eq!(date_parse("2026-11-29T21:55Z"), Some(1_795_989_300_000));
        assert_eq!(date_parse("2026-11-29"), Some(1_795_910_400_000));
        assert_eq!(date_parse("2026-11"), Some(1_793_491_200_000));
        assert_eq!(date_parse("2026"), Some(1_767_225_600_000));
        assert_eq!(
            date_parse("2026-11-29T21:55:15+01:00"),
            Some(1_795_985_715_000)
        );
        assert_eq!(date_parse("2026-11-29 21:55:15Z"), Some(1_795_989_315_000));
        assert_eq!(
            date_parse("+002026-11-29T21:55:15.244Z"),
            Some(1_795_989_315_244)
        );
        assert_eq!(date_parse("2026-11-29T24:00:00Z"), Some(1_795_996_800_000));
        assert_eq!(date_parse("2026-02-30T00:00:00Z"), Some(1_772_409_600_000));
        for bad in [
            "",
            "garbage",
            " 2026-11-29T21:55:15Z",
            "2026-11-29T21:55:15.Z",
            "2026-11-29T21:55:60Z",
            "-000000-01-01T00:00:00Z",
            "2026-13-01",
            "2026-11-29T",
        ] {
            assert_eq!(date_parse(bad), None, "{bad:?}");
        }
        assert_eq!(to_iso_string(1_795_989_315_244), "2026-11-29T21:55:15.244Z");
        assert_eq!(to_iso_string(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(to_iso_string(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn es_dates_in_a_zone() {
        let plus2 = FixedOffset::east_opt(7200).unwrap();
        assert_eq!(
            date_parse_in("2026-03-10", &plus2),
            Some(ms("2026-03-10T00:00:00Z"))
        );
        assert_eq!(
            date_parse_in("2026-03-10T10:00", &plus2),
            Some(ms("2026-03-10T08:00:00Z"))
        );
        assert_eq!(
            date_parse_in("2026-03-10T10:00:00.5+01:00", &Utc),
            Some(ms("2026-03-10T09:00:00.500Z"))
        );
        assert_eq!(
            date_parse_in("2026-03-10T24:00:00Z", &Utc),
            Some(ms("2026-03-11T00:00:00Z"))
        );
        // V8 checks the day against 1..=31 only and lets it overflow into the next month
        // (node: `Date.parse("2026-02-30")` is 1772409600000, 2 March).
        assert_eq!(
            date_parse_in("2026-02-30", &Utc),
            Some(ms("2026-03-02T00:00:00Z"))
        );
        assert_eq!(date_parse_in("yesterday", &Utc), None);
        assert_eq!(
            date_parse_in("2026-03-10T10:00", &Utc),
            Some(ms("2026-03-10T10:00:00Z"))
        );
    }

    #[test]
    fn v8_leniencies_and_range() {
        // Values node 20 gives (TZ=UTC where local time matters).
        assert_eq!(
            date_parse_in("2026-11-29t21:55:15z", &Utc),
            Some(1_795_989_315_000)
        );
        assert_eq!(
            date_parse_in("2026-11-29T21:55:15+0100", &Utc),
            Some(1_795_985_715_000)
        );
        assert_eq!(
            date_parse_in("2026-02-31T10:00", &Utc),
            Some(1_772_532_000_000)
        );
        assert_eq!(date_parse_in("2026-04-31", &Utc), Some(1_777_593_600_000));
        // A space separator reads years below 100 as two-digit years; `T` does not.
        assert_eq!(
            date_parse_in("0049-01-01 00:00Z", &Utc),
            Some(2_493_072_000_000)
        );
        assert_eq!(
            date_parse_in("+000049-01-01 00:00Z", &Utc),
            Some(2_493_072_000_000)
        );
        assert_eq!(
            date_parse_in("0050-01-01 00:00Z", &Utc),
            Some(-631_152_000_000)
        );
        assert_eq!(
            date_parse_in("0100-01-01 00:00Z", &Utc),
            Some(-59_011_459_200_000)
        );
        assert_eq!(
            date_parse_in("-000049-01-01 00:00Z", &Utc),
            Some(-63_713_520_000_000)
        );
        assert_eq!(
            date_parse_in("0049-01-01T00:00Z", &Utc),
            Some(-60_620_832_000_000)
        );
        assert_eq!(
            date_parse_in("+275760-09-13T00:00:00Z", &Utc),
            Some(MAX_TIME_MS)
        );
        assert_eq!(
            date_parse_in("+270000-01-01", &Utc),
            Some(8_458_209_820_800_000)
        );
        assert_eq!(date_parse_in("+275760-09-13T00:00:00.001Z", &Utc), None);
        assert_eq!(
            date_parse_in("-271821-04-20T00:00:00Z", &Utc),
            Some(-MAX_TIME_MS)
        );
    }

    #[test]
    fn local_time_follows_v8_across_dst() {
        // node with TZ=America/New_York.
        let cases = [
            ("2026-03-08T02:30", "2026-03-08T07:30:00Z"),
            ("2026-03-08T01:59", "2026-03-08T06:59:00Z"),
            ("2026-03-08T03:00", "2026-03-08T07:00:00Z"),
            ("2026-11-01T01:30", "2026-11-01T05:30:00Z"),
            ("2026-11-01T01:59:59.999", "2026-11-01T05:59:59.999Z"),
            ("2026-11-01T02:00", "2026-11-01T07:00:00Z"),
            ("2026-07-04T12:00", "2026-07-04T16:00:00Z"),
        ];
        for (input, utc) in cases {
            assert_eq!(date_parse_in(input, &NewYork), Some(ms(utc)), "{input}");
        }
        let local = NaiveDate::from_ymd_opt(2026, 3, 8)
            .unwrap()
            .and_hms_opt(2, 0, 0)
            .unwrap();
        assert_eq!(
            utc_from_local(&NewYork, local),
            Some(ms("2026-03-08T07:00:00Z"))
        );
        assert_eq!(
            local_from_utc(&NewYork, ms("2026-03-08T07:00:00Z")),
            NaiveDate::from_ymd_opt(2026, 3, 8)
                .unwrap()
                .and_hms_opt(3, 0, 0)
        );
        assert_eq!(utc_from_local(&Utc, NaiveDateTime::MAX), None);
    }

    #[test]
    fn iso_strings() {
        assert_eq!(to_iso_string(1_764_451_200_123), "2025-11-29T21:20:00.123Z");
        assert_eq!(to_iso_string(-1), "1969-12-31T23:59:59.999Z");
        // node: new Date(8.64e15).toISOString(), new Date(-8.64e15).toISOString(), …
        assert_eq!(to_iso_string(MAX_TIME_MS), "+275760-09-13T00:00:00.000Z");
        assert_eq!(to_iso_string(-MAX_TIME_MS), "-271821-04-20T00:00:00.000Z");
        assert_eq!(
            to_iso_string(253_402_300_800_000),
            "+010000-01-01T00:00:00.000Z"
        );
        assert_eq!(
            to_iso_string(-62_167_219_200_001),
            "-000001-12-31T23:59:59.999Z"
        );
        assert_eq!(
            to_iso_string(-62_167_219_200_000),
            "0000-01-01T00:00:00.000Z"
        );
    }
}
