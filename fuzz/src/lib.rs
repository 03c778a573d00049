//! Fuzz targets for clawstate, shared by the AFL++ binary (`afl-target`) and the stable
//! driver (`clawstate-fuzz`). See `fuzz/README.md`.

pub mod sandbox;
pub mod targets;
