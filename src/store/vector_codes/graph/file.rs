//! The graph kept on disk beside the database, so that a restart reads it back in seconds
//! instead of building it again (minutes of one core at a million rows).
//!
//! The file is a cache, never a source of truth: it holds the links, levels and, per node, the
//! id and a hash of the row it was built over; the rows themselves are the table's. Reading it
//! back checks everything a search relies on (every link in range and on a layer its target
//! has, the entry on the top layer, the length, a checksum over every byte), then points each
//! node at the table's current row of that id only when the row still hashes the same: a row
//! changed, re-embedded or deleted since the file was written is a dead node, and a row with
//! no node is inserted afresh (`Graph::restore`). So a stale file costs inserts, and a corrupt,
//! truncated or foreign one is refused (the caller builds the graph again); neither can make a
//! search return a row the table does not hold, since a node only ever names a current slot.
//!
//! Layout, little-endian: the header (magic, version, `M`, `M0`, dim, the table's epoch and
//! seq, nodes, entry, top, the level generator's state), per node its id, row hash, level and
//! whether it was live, then every node's `M0` layer-0 links, then the upper layers' links of
//! each node above layer 0 (a count, then the links, per layer), then the checksum.

use super::{DEAD, Graph, M, M0, NONE, Rows};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

const MAGIC: &[u8; 8] = b"CHVGRAPH";
const VERSION: u32 = 1;
/// A node's level is drawn below this (`Graph::draw_level`).
const MAX_LEVEL: u8 = 15;

/// Why a graph file was not used.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("graph file: {0}")]
    Io(#[from] std::io::Error),
    #[error("graph file does not match: {0}")]
    Mismatch(&'static str),
}

/// What the file must belong to: the table's epoch, its current seq and the rows' width.
#[derive(Clone, Copy, Debug)]
pub struct Stamp {
    pub epoch: i64,
    pub seq: i64,
    pub dim: usize,
}

/// A graph read back from a file, before it is pointed at the table (`Graph::restore`).
pub struct Stored {
    graph: Graph,
    /// Per node: the row id and row hash it was built over; None for a node dead when saved.
    rows: Vec<Option<(i64, u64)>>,
}

/// A hash of one int8 row, to tell whether a row still holds the vector its node was built over.
pub fn row_hash(row: &[i8]) -> u64 {
    let mut h = Hasher::default();
    for chunk in row.chunks(8) {
        let mut word = [0u8; 8];
        for (w, &b) in word.iter_mut().zip(chunk) {
            *w = b as u8;
        }
        h.word(u64::from_le_bytes(word));
    }
    h.word(row.len() as u64);
    h.0
}

/// A fast mixing hash of the values written, in order (not cryptographic: it catches a torn or
/// damaged file, not a forged one).
#[derive(Default)]
struct Hasher(u64);

impl Hasher {
    fn word(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(23) ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

struct Writer {
    out: BufWriter<File>,
    hash: Hasher,
}

impl Writer {
    fn put(&mut self, v: u64, bytes: usize) -> std::io::Result<()> {
        self.hash.word(v);
        self.out.write_all(&v.to_le_bytes()[..bytes])
    }
    fn u8(&mut self, v: u8) -> std::io::Result<()> {
        self.put(u64::from(v), 1)
    }
    fn u32(&mut self, v: u32) -> std::io::Result<()> {
        self.put(u64::from(v), 4)
    }
    fn u64(&mut self, v: u64) -> std::io::Result<()> {
        self.put(v, 8)
    }
}

struct Reader {
    input: BufReader<File>,
    hash: Hasher,
}

impl Reader {
    fn take(&mut self, bytes: usize) -> std::io::Result<u64> {
        let mut b = [0u8; 8];
        self.input.read_exact(&mut b[..bytes])?;
        let v = u64::from_le_bytes(b);
        self.hash.word(v);
        Ok(v)
    }
    fn u8(&mut self) -> std::io::Result<u8> {
        Ok(self.take(1)? as u8)
    }
    fn u32(&mut self) -> std::io::Result<u32> {
        Ok(self.take(4)? as u32)
    }
    fn u64(&mut self) -> std::io::Result<u64> {
        self.take(8)
    }
}

/// Write `graph`, over the table rows `rows` whose ids by slot are `ids`, to `path` (through a
/// temporary file renamed over it, so a reader never sees half a file).
pub fn save(path: &Path, graph: &Graph, ids: &[i64], rows: Rows, stamp: Stamp) -> std::io::Result<()> {
    // Its own temporary name, should two processes (or two caches of one) write at once.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}-{n}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    // Private, like the database: it names the rows' ids.
    let written = crate::files::private_create(&tmp).and_then(|f| {
        let mut w = Writer { out: BufWriter::with_capacity(1 << 20, f), hash: Hasher::default() };
        write(&mut w, graph, ids, rows, stamp)?;
        w.out.into_inner().map_err(std::io::IntoInnerError::into_error)?.sync_all()
    });
    let done = written.and_then(|()| std::fs::rename(&tmp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

fn write(w: &mut Writer, graph: &Graph, ids: &[i64], rows: Rows, stamp: Stamp) -> std::io::Result<()> {
    w.out.write_all(MAGIC)?;
    w.u32(VERSION)?;
    w.u32(M as u32)?;
    w.u32(M0 as u32)?;
    w.u32(stamp.dim as u32)?;
    w.u64(stamp.epoch as u64)?;
    w.u64(stamp.seq as u64)?;
    w.u64(graph.nodes() as u64)?;
    w.u32(graph.entry)?;
    w.u8(graph.top)?;
    w.u64(graph.rng)?;
    for (node, &slot) in graph.node_slot.iter().enumerate() {
        let live = slot != DEAD;
        w.u64(if live { ids[slot as usize] as u64 } else { 0 })?;
        w.u64(if live { row_hash(rows.row(slot)) } else { 0 })?;
        w.u8(graph.level[node])?;
        w.u8(u8::from(live))?;
    }
    for &l in &graph.links0 {
        w.u32(l)?;
    }
    for (node, &level) in graph.level.iter().enumerate() {
        for layer in 1..=level {
            let links = graph.links(node as u32, layer);
            w.u8(links.len() as u8)?;
            for &l in links {
                w.u32(l)?;
            }
        }
    }
    let sum = w.hash.0;
    w.out.write_all(&sum.to_le_bytes())
}

/// Read the graph in `path`, refusing one that is not whole or does not belong to `stamp`.
pub fn load(path: &Path, stamp: Stamp) -> Result<Stored, FileError> {
    let mut r = Reader { input: BufReader::with_capacity(1 << 20, File::open(path)?), hash: Hasher::default() };
    let mut magic = [0u8; 8];
    r.input.read_exact(&mut magic)?;
    let bad = FileError::Mismatch;
    if &magic != MAGIC || r.u32()? != VERSION || r.u32()? != M as u32 || r.u32()? != M0 as u32 {
        return Err(bad("not a graph file of this version"));
    }
    if r.u32()? as usize != stamp.dim || r.u64()? as i64 != stamp.epoch {
        return Err(bad("another table"));
    }
    // A file from further on than the table (a database restored from an older copy) is not
    // this table's past.
    if r.u64()? as i64 > stamp.seq {
        return Err(bad("newer than the table"));
    }
    let nodes = r.u64()?;
    let file_len = std::fs::metadata(path)?.len();
    // Each node takes at least 18 bytes and its layer-0 links: a count past that is damage.
    if nodes == 0 || nodes >= u64::from(NONE) || nodes.saturating_mul(18 + 4 * M0 as u64) > file_len {
        return Err(bad("node count"));
    }
    let n = nodes as usize;
    let (entry, top, rng) = (r.u32()?, r.u8()?, r.u64()?);
    let mut stored = Vec::with_capacity(n);
    let mut level = Vec::with_capacity(n);
    for _ in 0..n {
        let (id, hash, lv, live) = (r.u64()? as i64, r.u64()?, r.u8()?, r.u8()?);
        if lv > MAX_LEVEL || live > 1 {
            return Err(bad("node record"));
        }
        stored.push((live == 1).then_some((id, hash)));
        level.push(lv);
    }
    if entry as usize >= n || level[entry as usize] != top {
        return Err(bad("entry"));
    }
    // Layer 0's links are read at random by every search, as the rows are.
    let mut links0 = Vec::new();
    super::super::huge::reserve(&mut links0, n * M0);
    for _ in 0..n * M0 {
        let l = r.u32()?;
        if l != NONE && l as usize >= n {
            return Err(bad("layer-0 link"));
        }
        links0.push(l);
    }
    let mut upper_at = vec![NONE; n];
    let mut upper = Vec::new();
    for node in 0..n {
        if level[node] == 0 {
            continue;
        }
        let mut layers = Vec::with_capacity(level[node] as usize);
        for layer in 1..=level[node] {
            let count = r.u8()? as usize;
            if count > M {
                return Err(bad("upper link count"));
            }
            let mut links = Vec::with_capacity(count);
            for _ in 0..count {
                let l = r.u32()?;
                // A walk on `layer` reads the links of every node it reaches there.
                if l as usize >= n || level[l as usize] < layer {
                    return Err(bad("upper link"));
                }
                links.push(l);
            }
            layers.push(links);
        }
        upper_at[node] = upper.len() as u32;
        upper.push(layers);
    }
    let sum = r.hash.0;
    let mut tail = [0u8; 8];
    r.input.read_exact(&mut tail)?;
    if u64::from_le_bytes(tail) != sum {
        return Err(bad("checksum"));
    }
    if r.input.read(&mut [0u8; 1])? != 0 {
        return Err(bad("trailing bytes"));
    }
    let graph = Graph {
        node_slot: vec![DEAD; n],
        slot_node: Vec::new(),
        links0,
        level,
        upper_at,
        upper,
        entry,
        top,
        dead: n,
        rng,
        seen: vec![0; n],
        stamp: 0,
    };
    Ok(Stored { graph, rows: stored })
}

impl Stored {
    /// Point the stored graph at the table's rows (`ids` by slot): a node whose row still
    /// hashes the same takes that row's slot, every other node is dead, and every row without
    /// a node is inserted. Also the ids by node (for `Graph::remap`) and how many nodes died
    /// or were added.
    pub fn restore(self, ids: &[i64], rows: Rows) -> (Graph, Vec<i64>, usize) {
        let Stored { mut graph, rows: stored } = self;
        let slot_of: HashMap<i64, u32> = ids.iter().enumerate().map(|(s, &id)| (id, s as u32)).collect();
        graph.slot_node = vec![NONE; ids.len()];
        let mut node_ids = vec![0i64; stored.len()];
        let mut changed = 0;
        for (node, row) in stored.iter().enumerate() {
            let Some((id, hash)) = *row else { continue };
            node_ids[node] = id;
            match slot_of.get(&id) {
                Some(&slot) if graph.slot_node[slot as usize] == NONE && row_hash(rows.row(slot)) == hash => {
                    graph.node_slot[node] = slot;
                    graph.slot_node[slot as usize] = node as u32;
                    graph.dead -= 1;
                }
                _ => changed += 1,
            }
        }
        for slot in 0..ids.len() as u32 {
            if graph.slot_node[slot as usize] == NONE {
                graph.insert(slot, rows);
                node_ids.push(ids[slot as usize]);
                changed += 1;
            }
        }
        (graph, node_ids, changed)
    }
}
