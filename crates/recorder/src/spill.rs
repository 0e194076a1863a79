//! Lines sorted by a key when there are more of them than memory should hold: runs of at most
//! [`RUN_BYTES`] are sorted in memory and written to a temporary folder, then read back merged k
//! ways (a heap holding each run's next line). `tracelab merge` puts shards' attempts in time
//! order this way and `tracelab export --format perfetto` its slices; memory is one run plus a
//! buffer per run, whatever the trace's size. A trace that fits in one run never touches disk.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The sort key: compared as an array, so ties fall to the later parts (a sequence number last
/// keeps the order lines came in, as a stable sort does).
pub type Key = [i64; 3];

/// How many bytes of lines one run holds (as allocated) before it is sorted and written out.
pub const RUN_BYTES: usize = 32 << 20;

/// [`RUN_BYTES`], or `TRACELAB_SORT_RUN_BYTES` when set (smaller runs for a machine short of
/// memory, and for the tests, which make many runs of a small trace).
pub fn run_bytes() -> usize {
    std::env::var("TRACELAB_SORT_RUN_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RUN_BYTES)
}

/// `f64::total_cmp`'s order as an integer, for a key part.
pub fn ordered(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

/// Lines to sort: [`Spill::push`] each, then [`Spill::sorted`] (as often as needed).
pub struct Spill {
    /// Where the runs go (made on the first spill, removed when this is dropped).
    dir: PathBuf,
    made_dir: bool,
    run: Vec<(Key, String)>,
    bytes: usize,
    limit: usize,
    runs: Vec<PathBuf>,
}

impl Spill {
    /// Runs are written to a new folder inside `near` (beside the output, so on its disk rather
    /// than in a memory-backed /tmp), of [`run_bytes`] each.
    pub fn new(near: &Path) -> Spill {
        Spill::with_limit(near, run_bytes())
    }

    /// [`Spill::new`] with runs of at most `limit` bytes (the tests use small ones).
    pub fn with_limit(near: &Path, limit: usize) -> Spill {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = near.join(format!(".tracelab-sort-{}-{n}", std::process::id()));
        Spill {
            dir,
            made_dir: false,
            run: Vec::new(),
            bytes: 0,
            limit: limit.max(1),
            runs: Vec::new(),
        }
    }

    /// How many runs went to disk so far.
    pub fn runs_on_disk(&self) -> usize {
        self.runs.len()
    }

    pub fn push(&mut self, key: Key, line: String) -> io::Result<()> {
        debug_assert!(!line.contains('\n'), "one line per record");
        // What the line holds, not its length: a line built by growing can hold twice its length
        // (the merge held 130 MB with runs of 64 MB counted by length).
        self.bytes += line.capacity() + std::mem::size_of::<(Key, String)>();
        self.run.push((key, line));
        if self.bytes >= self.limit {
            self.write_run()?;
        }
        Ok(())
    }

    fn write_run(&mut self) -> io::Result<()> {
        if self.run.is_empty() {
            return Ok(());
        }
        if !self.made_dir {
            std::fs::create_dir_all(&self.dir).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("cannot make the sort folder {}: {e}", self.dir.display()),
                )
            })?;
            self.made_dir = true;
        }
        self.run.sort_by_key(|a| a.0);
        let path = self.dir.join(format!("run-{}", self.runs.len()));
        let mut out = BufWriter::new(File::create(&path)?);
        for ([a, b, c], line) in self.run.drain(..) {
            writeln!(out, "{a} {b} {c}\t{line}")?;
        }
        out.flush()?;
        self.runs.push(path);
        self.bytes = 0;
        Ok(())
    }

    /// Every line pushed, in key order.
    pub fn sorted(&mut self) -> io::Result<Sorted<'_>> {
        if self.runs.is_empty() {
            self.run.sort_by_key(|a| a.0);
            return Ok(Sorted::Memory(self.run.iter()));
        }
        self.write_run()?;
        let mut readers = Vec::with_capacity(self.runs.len());
        let mut heap = BinaryHeap::new();
        for (i, path) in self.runs.iter().enumerate() {
            let mut reader = BufReader::with_capacity(64 << 10, File::open(path)?);
            if let Some(first) = read_record(&mut reader, path)? {
                heap.push(Reverse((first.0, i, first.1)));
            }
            readers.push((reader, path.clone()));
        }
        Ok(Sorted::Runs { readers, heap })
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        if self.made_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn read_record(reader: &mut BufReader<File>, path: &Path) -> io::Result<Option<(Key, String)>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "the sort run {} was changed while it was read",
                path.display()
            ),
        )
    };
    let (key, rest) = line
        .trim_end_matches('\n')
        .split_once('\t')
        .ok_or_else(bad)?;
    let mut parts = key.split(' ').map(str::parse::<i64>);
    let mut next = || parts.next().and_then(Result::ok).ok_or_else(bad);
    let key = [next()?, next()?, next()?];
    Ok(Some((key, rest.to_string())))
}

/// The lines of a [`Spill`] in key order.
pub enum Sorted<'a> {
    Memory(std::slice::Iter<'a, (Key, String)>),
    Runs {
        readers: Vec<(BufReader<File>, PathBuf)>,
        heap: BinaryHeap<Reverse<(Key, usize, String)>>,
    },
}

impl Iterator for Sorted<'_> {
    type Item = io::Result<(Key, String)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Sorted::Memory(lines) => lines.next().map(|(k, l)| Ok((*k, l.clone()))),
            Sorted::Runs { readers, heap } => {
                let Reverse((key, i, line)) = heap.pop()?;
                let (reader, path) = &mut readers[i];
                match read_record(reader, path) {
                    Ok(Some(next)) => heap.push(Reverse((next.0, i, next.1))),
                    Ok(None) => {}
                    Err(e) => return Some(Err(e)),
                }
                Some(Ok((key, line)))
            }
        }
    }
}

/// Attempt ids checked for repeats in memory that does not grow with the trace: each id goes to
/// a [`Spill`] keyed by its hash, so equal ids meet when the sorted runs are merged.
pub struct Duplicates {
    spill: Spill,
}

/// An id used twice: where first and where again, as (source, line) (a source is a file: a
/// shard's position, 0 for one trace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    pub id: String,
    pub first: (usize, usize),
    pub again: (usize, usize),
}

impl Duplicates {
    pub fn new(near: &Path) -> Duplicates {
        Duplicates {
            spill: Spill::new(near),
        }
    }

    /// [`Duplicates::new`] with runs of at most `limit` bytes.
    pub fn with_limit(near: &Path, limit: usize) -> Duplicates {
        Duplicates {
            spill: Spill::with_limit(near, limit),
        }
    }

    pub fn push(&mut self, id: &str, source: usize, line: usize) -> io::Result<()> {
        use std::hash::{Hash, Hasher};
        // Fixed keys: the same id hashes alike in every run of the sort.
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        id.hash(&mut hasher);
        self.spill.push(
            [hasher.finish() as i64, source as i64, line as i64],
            id.to_string(),
        )
    }

    /// The repeat a reader going through the sources and their lines in order meets first (the
    /// smallest `again`); `within_a_source`: only an id used twice in one source counts.
    pub fn first_repeat(&mut self, within_a_source: bool) -> io::Result<Option<Duplicate>> {
        let mut best: Option<Duplicate> = None;
        let mut group: Vec<(i64, usize, usize, String)> = Vec::new();
        let consider = |group: &mut Vec<(i64, usize, usize, String)>,
                        best: &mut Option<Duplicate>| {
            // Same hash: usually one id; a collision keeps ids apart by comparing them.
            for (i, (_, source, line, id)) in group.iter().enumerate() {
                let earlier = group[..i]
                    .iter()
                    .find(|(_, s, _, other)| other == id && (!within_a_source || s == source));
                if let Some((_, first_source, first_line, _)) = earlier {
                    let found = Duplicate {
                        id: id.clone(),
                        first: (*first_source, *first_line),
                        again: (*source, *line),
                    };
                    if best.as_ref().is_none_or(|b| found.again < b.again) {
                        *best = Some(found);
                    }
                    break;
                }
            }
            group.clear();
        };
        for item in self.spill.sorted()? {
            let ([hash, source, line], id) = item?;
            if group.last().is_some_and(|g| g.0 != hash) {
                consider(&mut group, &mut best);
            }
            group.push((hash, source as usize, line as usize, id));
        }
        consider(&mut group, &mut best);
        Ok(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many runs on disk give the order one sort in memory gives, ties in the order pushed.
    #[test]
    fn runs_merge_to_one_stable_order() {
        let dir = std::env::temp_dir().join(format!("tracelab-spill-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let keys: Vec<f64> = (0..500u32)
            .map(|i| f64::from((i * 7919) % 97) - 40.5)
            .collect();
        let lines = |spill: &mut Spill| {
            for (seq, k) in keys.iter().enumerate() {
                spill
                    .push([ordered(*k), 0, seq as i64], format!("line {seq} at {k}"))
                    .unwrap();
            }
        };
        let mut small = Spill::with_limit(&dir, 600);
        lines(&mut small);
        let mut big = Spill::new(&dir);
        lines(&mut big);
        let a: Vec<_> = small.sorted().unwrap().map(Result::unwrap).collect();
        assert!(small.runs_on_disk() > 10, "{} runs", small.runs_on_disk());
        assert_eq!(big.runs_on_disk(), 0);
        let b: Vec<_> = big.sorted().unwrap().map(Result::unwrap).collect();
        assert_eq!(a, b);
        let mut want: Vec<(usize, f64)> = keys.iter().copied().enumerate().collect();
        want.sort_by(|x, y| x.1.total_cmp(&y.1));
        let got: Vec<String> = a.into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            got,
            want.iter()
                .map(|(seq, k)| format!("line {seq} at {k}"))
                .collect::<Vec<_>>()
        );
        // Read twice, the same.
        assert_eq!(small.sorted().unwrap().count(), keys.len());
        drop(small);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "the runs are removed"
        );
        assert!([-0.0, 0.0, -1.0, 1.0, f64::INFINITY]
            .windows(2)
            .all(|w| (ordered(w[0]) < ordered(w[1])) == (w[0].total_cmp(&w[1]).is_lt())));
    }

    /// Repeated ids are found however the runs fall, the first one a reader would meet.
    #[test]
    fn duplicates_meet_across_runs() {
        let dir = std::env::temp_dir().join(format!("tracelab-dups-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut ids = Duplicates::with_limit(&dir, 300);
        for line in 1..=400 {
            ids.push(&format!("a{line}"), 0, line).unwrap();
        }
        assert_eq!(ids.first_repeat(false).unwrap(), None);
        ids.push("a7", 1, 3).unwrap();
        ids.push("a300", 0, 401).unwrap();
        ids.push("a5", 0, 402).unwrap();
        assert!(ids.spill.runs_on_disk() > 10);
        let in_one = ids.first_repeat(true).unwrap().unwrap();
        assert_eq!(
            (in_one.id.as_str(), in_one.first, in_one.again),
            ("a300", (0, 300), (0, 401))
        );
        let any = ids.first_repeat(false).unwrap().unwrap();
        assert_eq!(
            (any.id.as_str(), any.first, any.again),
            ("a300", (0, 300), (0, 401)),
            "source 0's line 401 comes before source 1's line 3"
        );
        let mut across = Duplicates::new(&dir);
        across.push("x", 0, 9).unwrap();
        across.push("x", 2, 1).unwrap();
        assert_eq!(across.first_repeat(true).unwrap(), None);
        assert_eq!(
            across
                .first_repeat(false)
                .unwrap()
                .map(|d| (d.first, d.again)),
            Some(((0, 9), (2, 1)))
        );
    }
}
