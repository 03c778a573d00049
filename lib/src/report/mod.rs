//! What commands print for people: tables, ages and token counts, findings,
//! and data made safe for a terminal.

pub mod finding;
pub mod finding_report;
pub mod human_format;
pub mod terminal_text;
pub mod text_table;
