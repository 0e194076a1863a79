//! A set of strings with one value each, packed for millions of entries: the bytes of every
//! string in one buffer, an end offset and a value per entry, and an open-addressing table of
//! `u32` slots. An entry costs its length + 8 bytes + `size_of::<V>()` + 8 to 16 bytes of slots
//! (the table is kept at most half full), against ~70 bytes for a `HashMap<String, V>` of short
//! ids. The JSON Lines reader keeps attempt ids here (duplicates are refused with the line of the
//! first use), and [`crate::index::IndexBuilder`] the business ids.

use std::hash::BuildHasher;

pub(crate) struct StrTable<V> {
    bytes: Vec<u8>,
    /// End offset of entry `i` in `bytes` (its start is the previous entry's end).
    ends: Vec<u64>,
    values: Vec<V>,
    /// `0` is empty, else entry index + 1.
    slots: Vec<u32>,
    hasher: std::collections::hash_map::RandomState,
}

/// More entries than the `u32` slots can name (over four billion distinct strings).
#[derive(Debug)]
pub(crate) struct TableFull;

impl<V> Default for StrTable<V> {
    fn default() -> Self {
        StrTable {
            bytes: Vec::new(),
            ends: Vec::new(),
            values: Vec::new(),
            slots: Vec::new(),
            hasher: Default::default(),
        }
    }
}

impl<V> StrTable<V> {
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    fn get_str(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    fn slot_of(&self, key: &[u8]) -> (usize, Option<usize>) {
        let mask = self.slots.len() - 1;
        let mut at = self.hasher.hash_one(key) as usize & mask;
        loop {
            match self.slots[at] {
                0 => return (at, None),
                s if self.get_str(s as usize - 1) == key => return (at, Some(s as usize - 1)),
                _ => at = (at + 1) & mask,
            }
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1024);
        self.slots = vec![0; size];
        let mask = size - 1;
        for i in 0..self.ends.len() {
            let mut at = self.hasher.hash_one(self.get_str(i)) as usize & mask;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = i as u32 + 1;
        }
    }

    /// The value of `key`, inserting `make()` when it is new.
    pub(crate) fn entry(
        &mut self,
        key: &str,
        make: impl FnOnce() -> V,
    ) -> Result<&mut V, TableFull> {
        if (self.ends.len() + 1) * 2 > self.slots.len() {
            if self.ends.len() >= u32::MAX as usize - 1 {
                return Err(TableFull);
            }
            self.grow();
        }
        let (at, found) = self.slot_of(key.as_bytes());
        let i = match found {
            Some(i) => i,
            None => {
                self.bytes.extend_from_slice(key.as_bytes());
                self.ends.push(self.bytes.len() as u64);
                self.values.push(make());
                let i = self.ends.len() - 1;
                self.slots[at] = i as u32 + 1;
                i
            }
        };
        Ok(&mut self.values[i])
    }

    pub(crate) fn values(&self) -> &[V] {
        &self.values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_one_value_per_string_through_growth() {
        let mut t: StrTable<usize> = StrTable::default();
        for i in 0..5000 {
            *t.entry(&format!("id{}", i % 3000), || 0).unwrap() += 1;
        }
        assert_eq!(t.len(), 3000);
        assert_eq!(t.values().iter().sum::<usize>(), 5000);
        assert_eq!(*t.entry("id0", || 99).unwrap(), 2);
        assert_eq!(
            *t.entry("", || 7).unwrap(),
            7,
            "the empty string is a key like any other"
        );
        assert_eq!(t.len(), 3001);
    }
}
