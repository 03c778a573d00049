//! Text from data made safe to print on a terminal.
//!
//! Keys, labels, models, ids, paths, summaries and message text come from files that
//! anyone who can write to the state directory (or talk to the gateway) controls. Printed
//! raw, an ESC starts a terminal command: `ESC ] 0 ; title BEL` sets the window title,
//! `ESC ] 52 ; c ; … BEL` writes the clipboard, CSI sequences move the cursor and erase
//! what was printed, and a CR or BS overwrites it; the 8-bit C1 controls (U+009B is CSI,
//! U+009D is OSC) do the same on terminals that accept them; and the Unicode bidi
//! controls reorder what is shown (U+202E makes `exe.txt` of `txt.exe`, "Trojan Source").
//! A newline or tab inside a key breaks a table and forges lines.
//!
//! # The rule
//!
//! * **Which characters** ([`is_unsafe`]): every C0 control U+0000–U+001F, DEL U+007F,
//!   every C1 control U+0080–U+009F, the bidi controls U+061C, U+200E, U+200F,
//!   U+202A–U+202E, U+2066–U+2069, and the line and paragraph separators U+2028, U+2029.
//!   Other invisible characters (zero-width joiners, soft hyphens) are kept: they neither
//!   drive the terminal nor reorder text, and emoji and several scripts need them.
//! * **How they look**: as in a JSON string, `\b \t \n \f \r` and otherwise `\u` with four
//!   lowercase hex digits (`\u001b`, `\u0007`, `\u009b`, `\u202e`): the same form that
//!   `--json` shows for C0 controls, and valid inside a JSON string, so escaping JSON
//!   output leaves it valid and equal in value. A backslash is not doubled: the escaped
//!   text is for reading; `--json` / `--ndjson` give the exact value.
//! * **Where**:
//!   1. Text output (no `--json` / `--ndjson`) escapes every field from data, on a
//!      terminal or not (ls and git escape on a terminal; a piped table is still read,
//!      later, in a pager or a cron mail, and must not be broken by data either):
//!      a field printed within one line ([`escape_line`]: keys, labels, models, ids,
//!      paths, table cells, one-line records) escapes all of them, newline and tab
//!      included; multi-line text ([`escape_text`]: message bodies, a pretty-printed
//!      entry) keeps newline and tab as its layout and escapes the rest.
//!   2. Whatever is written to stdout while it is a terminal, JSON included, passes
//!      through [`escape_text`] as a last guard ([`TerminalWriter`]): in JSON the
//!      characters can only stand inside strings, where the escape means the same. Piped
//!      JSON and NDJSON are unchanged, byte for byte.
//!   3. Every message on stderr (errors, warnings, progress) is one line escaped with
//!      [`escape_line`], on a terminal or not.

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;

/// Whether `c` must never reach a terminal raw (see the module's rule).
pub fn is_unsafe(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// A field printed within one line: every unsafe character escaped, newline and tab too.
pub fn escape_line(s: &str) -> Cow<'_, str> {
    escape(s, is_unsafe)
}

/// Multi-line text: newline and tab kept as its layout, every other unsafe character
/// escaped.
pub fn escape_text(s: &str) -> Cow<'_, str> {
    escape(s, |c| c != '\n' && c != '\t' && is_unsafe(c))
}

/// A path printed within one line, as [`escape_line`] of its (lossy) display form.
pub fn escape_path(p: &Path) -> Cow<'_, str> {
    match p.to_string_lossy() {
        Cow::Borrowed(s) => escape_line(s),
        Cow::Owned(s) => Cow::Owned(escape_line(&s).into_owned()),
    }
}

fn escape(s: &str, unsafe_here: impl Fn(char) -> bool) -> Cow<'_, str> {
    let Some(first) = s.find(&unsafe_here) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if unsafe_here(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Appends the escaped form of `c` (`\n`, `\u001b`, …).
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\u{8}' => out.push_str("\\b"),
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\u{c}' => out.push_str("\\f"),
        '\r' => out.push_str("\\r"),
        _ => {
            use std::fmt::Write as _;
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
    }
}

/// A writer for a terminal: what passes through is escaped as [`escape_text`], a UTF-8
/// sequence split between two writes included (held back until its end arrives; bytes
/// that are not UTF-8 are shown as U+FFFD).
pub struct TerminalWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> TerminalWriter<W> {
    /// Wraps `inner`, the terminal.
    pub fn new(inner: W) -> Self {
        TerminalWriter {
            inner,
            pending: Vec::new(),
        }
    }

    /// Writes out what is pending; an incomplete sequence at the end waits unless `at_end`.
    fn drain(&mut self, at_end: bool) -> io::Result<()> {
        let mut start = 0;
        while start < self.pending.len() {
            let rest = &self.pending[start..];
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    self.inner.write_all(escape_text(s).as_bytes())?;
                    start = self.pending.len();
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // from_utf8 said this prefix is valid.
                    let s = std::str::from_utf8(&rest[..valid]).unwrap_or_default();
                    self.inner.write_all(escape_text(s).as_bytes())?;
                    match e.error_len() {
                        None if !at_end => {
                            start += valid;
                            break;
                        }
                        None => {
                            self.inner.write_all("\u{fffd}".as_bytes())?;
                            start = self.pending.len();
                        }
                        Some(n) => {
                            self.inner.write_all("\u{fffd}".as_bytes())?;
                            start += valid + n;
                        }
                    }
                }
            }
        }
        self.pending.drain(..start);
        Ok(())
    }
}

impl<W: Write> Write for TerminalWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        self.drain(false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain(true)?;
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NASTY: &str =
        "a\u{1b}]0;pwned\u{7}b\u{1b}]52;c;ZXZpbA==\u{7}c\u{1b}[2Jd\u{9b}31me\u{202e}f\u{7f}g";

    #[test]
    fn line_escapes_every_unsafe_character_in_the_json_form() {
        assert_eq!(
            escape_line(NASTY),
            "a\\u001b]0;pwned\\u0007b\\u001b]52;c;ZXZpbA==\\u0007c\\u001b[2Jd\\u009b31me\\u202ef\\u007fg"
        );
        assert_eq!(
            escape_line("x\ny\tz\r\u{8}\u{c}\u{0}"),
            "x\\ny\\tz\\r\\b\\f\\u0000"
        );
        assert_eq!(
            escape_line("\u{61c}\u{200e}\u{200f}\u{2028}\u{2029}\u{202a}\u{2066}\u{2069}\u{80}"),
            "\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a\\u2066\\u2069\\u0080"
        );
    }

    #[test]
    fn safe_text_is_borrowed_unchanged() {
        for s in [
            "agent:main:telegram:group:1",
            "émoji 👨\u{200d}👩\u{200d}👧 中文 \\e \\u001b",
            "",
            "\u{a0}\u{ad}\u{200b}\u{200d}\u{feff}",
        ] {
            assert!(
                matches!(escape_line(s), Cow::Borrowed(b) if b == s),
                "{s:?}"
            );
            assert!(
                matches!(escape_text(s), Cow::Borrowed(b) if b == s),
                "{s:?}"
            );
        }
    }

    #[test]
    fn text_keeps_newline_and_tab_only() {
        assert_eq!(
            escape_text("one\n\ttwo\r\n\u{1b}[1A"),
            "one\n\ttwo\\r\n\\u001b[1A"
        );
    }

    #[test]
    fn the_escaped_form_is_json_for_the_same_string() {
        let s: String = (0u32..0x2070)
            .filter_map(char::from_u32)
            .filter(|&c| c != '"' && c != '\\')
            .collect();
        let escaped = escape_line(&s);
        assert!(!escaped.chars().any(is_unsafe));
        let back: String = serde_json::from_str(&format!("\"{escaped}\"")).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn paths_are_escaped_like_lines() {
        assert_eq!(
            escape_path(Path::new("/s/a\nb\u{1b}.jsonl")),
            "/s/a\\nb\\u001b.jsonl"
        );
        use std::os::unix::ffi::OsStrExt;
        let p = std::ffi::OsStr::from_bytes(b"/s/\x9b\x1b");
        assert_eq!(escape_path(Path::new(p)), "/s/\u{fffd}\\u001b");
    }

    #[test]
    fn the_writer_escapes_across_any_split() {
        let text = format!("{{\"k\":\"{NASTY}\"}}\n\u{9b}\u{2066}é\n");
        let want = escape_text(&text).into_owned();
        let bytes = text.as_bytes();
        for size in 1..=bytes.len() {
            let mut w = TerminalWriter::new(Vec::new());
            for chunk in bytes.chunks(size) {
                w.write_all(chunk).unwrap();
            }
            w.flush().unwrap();
            assert_eq!(
                String::from_utf8(w.inner).unwrap(),
                want,
                "chunks of {size}"
            );
        }
    }

    #[test]
    fn the_writer_shows_bytes_that_are_not_utf8_as_replacement() {
        let mut w = TerminalWriter::new(Vec::new());
        w.write_all(b"a\x9bb\xe2\x80").unwrap();
        w.flush().unwrap();
        assert_eq!(String::from_utf8(w.inner).unwrap(), "a\u{fffd}b\u{fffd}");
    }
}
