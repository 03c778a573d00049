//! A fast non-cryptographic hasher (FxHash) for the maps and sets of names, keys and
//! paths that maintenance builds per entry and per file. Their contents come from the
//! local store and directory; SipHash dominated building the path sets on 100k-entry
//! stores. Not collision-resistant: a store crafted to collide makes a run slower, never
//! wrong.

/// FxHash: a multiply and a rotate per word.
#[derive(Debug, Default, Clone, Copy)]
pub struct FxHasher(u64);

impl FxHasher {
    /// The state before the final mixing of [`std::hash::Hasher::finish`].
    pub fn state(&self) -> u64 {
        self.0
    }

    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        // The multiply leaves the entropy in the high bits; tables index by the low ones.
        self.0.rotate_left(26)
    }
}

/// Builds [`FxHasher`]s.
pub type FxBuild = std::hash::BuildHasherDefault<FxHasher>;

/// A hash set with [`FxHasher`].
pub type FxHashSet<T> = std::collections::HashSet<T, FxBuild>;

/// A hash map with [`FxHasher`].
pub type FxHashMap<K, V> = std::collections::HashMap<K, V, FxBuild>;
