//! `export` of the migration between the legacy files and the agent database (not built yet).
