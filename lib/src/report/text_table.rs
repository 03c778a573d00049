//! A table for people: left-aligned columns two spaces apart, fitted to the terminal's
//! width and coloured where colour carries meaning (kinds, severities, ages, how full a
//! context window is).
//!
//! Every cell is data escaped as one line ([`crate::report::terminal_text::escape_line`]) when it
//! is made, so no key breaks the layout; the only controls in a rendered table are the
//! SGR colour sequences this module adds itself (which is why a caller may write it past
//! the last-guard escaping of terminal output). Too wide a table loses characters from its
//! widest column first, the cut marked with `…` (as `ls`, `ps` and `systemctl` do); the
//! rows stay whole and aligned.

use crate::report::terminal_text::escape_line;

/// What a cell's colour says (after the gateway's theme: `theme.muted`, `accent`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tone {
    /// No colour.
    #[default]
    Plain,
    /// Secondary detail (ages, ids, unknowns).
    Muted,
    /// A kind worth noticing (direct sessions).
    Accent,
    /// A kind that stands out (groups, agents).
    AccentBright,
    /// Neutral information (models, runtimes).
    Info,
    /// Fine (a context window under 80 %).
    Success,
    /// Needs a look (a warning, a window from 80 %).
    Warn,
    /// Wrong or about to be (an error, a window from 95 %).
    Error,
    /// The header line.
    Heading,
}

impl Tone {
    /// `text` (already escaped) in this tone when `color`, else as it is.
    pub fn paint(self, text: &str, color: bool) -> String {
        match self.sgr().filter(|_| color && !text.is_empty()) {
            Some(p) => format!("\u{1b}[{p}m{text}\u{1b}[0m"),
            None => text.to_string(),
        }
    }

    /// The SGR parameters of this tone (the 16 standard colours: they follow the user's
    /// terminal palette, light or dark).
    fn sgr(self) -> Option<&'static str> {
        match self {
            Tone::Plain => None,
            Tone::Muted => Some("2"),
            Tone::Accent => Some("36"),
            Tone::AccentBright => Some("96"),
            Tone::Info => Some("34"),
            Tone::Success => Some("32"),
            Tone::Warn => Some("33"),
            Tone::Error => Some("31"),
            Tone::Heading => Some("1"),
        }
    }
}

/// One cell: its text (escaped as one line) and its tone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    text: String,
    tone: Tone,
}

impl Cell {
    /// A cell showing `text` (data: escaped here) in `tone`.
    pub fn new(text: &str, tone: Tone) -> Self {
        Cell {
            text: escape_line(text).into_owned(),
            tone,
        }
    }

    /// A cell without colour.
    pub fn plain(text: &str) -> Self {
        Cell::new(text, Tone::Plain)
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Self {
        Cell::plain(s)
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Self {
        Cell::plain(&s)
    }
}

/// How a table is drawn: colour or not, and the width to fit (none: as wide as it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Layout {
    /// Colour the cells by their tone.
    pub color: bool,
    /// The terminal's width in columns.
    pub width: Option<usize>,
}

/// The narrowest a column is cut to (its header stays readable beside it).
const MIN_COLUMN: usize = 8;
/// Between two columns.
const GAP: usize = 2;

/// A header and rows of cells.
#[derive(Debug, Clone, Default)]
pub struct TextTable {
    header: Vec<Cell>,
    rows: Vec<Vec<Cell>>,
}

impl TextTable {
    /// A table with these column names.
    pub fn new(header: &[&str]) -> Self {
        TextTable {
            header: header.iter().map(|h| Cell::new(h, Tone::Heading)).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (missing cells are empty; extra cells are dropped).
    pub fn push(&mut self, mut row: Vec<Cell>) {
        row.resize(self.header.len(), Cell::plain(""));
        self.rows.push(row);
    }

    /// How many rows it has.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The widths of the columns, the widest cut first until the line fits `width`.
    fn widths(&self, width: Option<usize>) -> Vec<usize> {
        let mut w: Vec<usize> = self.header.iter().map(|c| chars(&c.text)).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(chars(&c.text));
            }
        }
        let Some(limit) = width else { return w };
        let total = |w: &[usize]| w.iter().sum::<usize>() + GAP * w.len().saturating_sub(1);
        while total(&w) > limit {
            // One character at a time from the widest column that can still give (the
            // first of equals), so the widest columns level down together.
            let floor = |i: usize| MIN_COLUMN.max(chars(&self.header[i].text));
            let Some((i, widest)) = w
                .iter()
                .enumerate()
                .filter(|&(i, &n)| n > floor(i))
                .max_by_key(|&(i, &n)| (n, usize::MAX - i))
                .map(|(i, &n)| (i, n))
            else {
                break;
            };
            w[i] = widest - 1;
        }
        w
    }

    /// The table as lines of text, each ending in a newline, trailing blanks trimmed.
    pub fn render(&self, layout: &Layout) -> String {
        let widths = self.widths(layout.width);
        let mut s = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            let mut pending = 0;
            let last_filled = row.iter().rposition(|c| !c.text.is_empty()).unwrap_or(0);
            for (i, c) in row.iter().enumerate().take(last_filled + 1) {
                let text = fit(&c.text, widths[i]);
                line.push_str(&" ".repeat(pending));
                line.push_str(&c.tone.paint(&text, layout.color));
                pending = widths[i] - chars(&text) + GAP;
            }
            s.push_str(line.trim_end_matches(' '));
            s.push('\n');
        }
        s
    }
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// `s` cut to `width` characters, the cut marked with `…`.
fn fit(s: &str, width: usize) -> std::borrow::Cow<'_, str> {
    if chars(s) <= width {
        return s.into();
    }
    let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
    t.push('…');
    t.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> TextTable {
        let mut t = TextTable::new(&["Kind", "Key", "Age"]);
        t.push(vec![
            Cell::new("direct", Tone::Accent),
            Cell::plain("agent:main:a-rather-long-key-of-forty-chars"),
            Cell::new("5m ago", Tone::Muted),
        ]);
        t.push(vec![
            Cell::plain("group"),
            Cell::plain("k"),
            Cell::plain(""),
        ]);
        t
    }

    #[test]
    fn plain_and_aligned_without_a_width() {
        let s = table().render(&Layout::default());
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[0],
            "Kind    Key                                          Age"
        );
        assert_eq!(
            lines[1],
            "direct  agent:main:a-rather-long-key-of-forty-chars  5m ago"
        );
        assert_eq!(lines[2], "group   k");
    }

    #[test]
    fn the_widest_column_is_cut_to_fit() {
        let s = table().render(&Layout {
            color: false,
            width: Some(30),
        });
        for l in s.lines() {
            assert!(l.chars().count() <= 30, "{l:?}");
        }
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[1], "direct  agent:main:a-…  5m ago");
        let col = |l: &str, w: &str| l[..l.find(w).unwrap()].chars().count();
        assert_eq!(col(lines[0], "Age"), col(lines[1], "5m ago"));
    }

    #[test]
    fn colour_wraps_the_cells_and_never_the_padding() {
        let s = table().render(&Layout {
            color: true,
            width: None,
        });
        let line = s.lines().nth(1).unwrap();
        assert!(
            line.starts_with("\u{1b}[36mdirect\u{1b}[0m  agent"),
            "{line:?}"
        );
        assert!(line.ends_with("\u{1b}[2m5m ago\u{1b}[0m"), "{line:?}");
    }

    #[test]
    fn data_cannot_break_the_layout() {
        let mut t = TextTable::new(&["Key"]);
        t.push(vec![Cell::plain("a\nb\u{1b}[2J")]);
        assert_eq!(t.render(&Layout::default()), "Key\na\\nb\\u001b[2J\n");
    }
}
