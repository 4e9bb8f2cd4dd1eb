//! Every object's place and references as the heap pass reads them, kept in a compact stream
//! that the snapshot builder reads instead of the dump: out of core, where the dump does not
//! fit the page cache, every pass over it reads it from the disk, and the stream of a 1.8 GB
//! Tomcat dump of 30 M objects takes 298 MB, a sixth of it (10 bytes an object).
//!
//! An instance's references can be found only with its class's layout, so the stream is
//! written when the class dumps come before the first object in the file, as HotSpot writes
//! them ([`Layouts::early`]); the builder uses it when the heap pass met no other class dump.
//!
//! Each segment of the dump writes its objects in file order, a piece of at most
//! [`PIECE_BYTES`] at a time; pieces land in the file in the order they fill (segments are read
//! in parallel) and are read back in the dump's order. A piece holds its objects' places, then
//! their bodies, so that the pass that sorts the places reads only those:
//!
//! ```text
//! place:  varint  offset - previous object's offset           (from Piece::first_offset)
//!         varint  zigzag(address - previous object's address) (from 0)
//! body:   varint  kind | flags << 2 | key << 4
//!                 kind: 0 instance, 1 object array, 2 primitive array
//!                 flags: 1 its first reference is a Reference's referent, 2 its field bytes
//!                        do not have its class's length
//!                 key: the class's index in the early table + 1, or 0 and a varint class id
//!                      (a class the dump does not define); the element type's code for
//!                      primitive arrays
//!         varint  length                                      (arrays)
//!         varint  count, then count × varint zigzag(id - address)  (object arrays and
//!                 instances of known classes; non-null references in edge order, a
//!                 referent first)
//! ```

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use graph::varint;
use hprof::{BasicType, SubRecord, SubRecords};

use crate::classes::for_each_field_ref;
use crate::classes::{ClassIdx, ClassTable};
use crate::index::DumpIndex;
use crate::raw::{Pair, RawKind};
use crate::source::Dump;
use crate::warnings::Warnings;

/// A segment's buffer is written out as a piece when it reaches this size.
const PIECE_BYTES: usize = 4 << 20;

/// How many times a segment's writer begins a new piece where its objects go down, before it
/// marks its piece as not ascending.
const MAX_SPLITS: u32 = 16;

/// Bytes of the pieces ahead that a reader asks the kernel for.
const AHEAD_BYTES: usize = 16 << 20;

const INSTANCE: u64 = 0;
const OBJ_ARRAY: u64 = 1;
const PRIM_ARRAY: u64 = 2;
const REFERENT_FIRST: u64 = 1 << 2;
const LENGTH_MISMATCH: u64 = 2 << 2;

/// The class layouts the heap pass finds references with: the class dumps that come before
/// the first object in the file.
pub(crate) struct Layouts {
    classes: ClassTable,
    /// Class dumps read (duplicates included), to tell whether the heap pass met others.
    pub(crate) dumps: usize,
    id_size: hprof::IdSize,
}

impl Layouts {
    /// The class dumps before the first object of `ix`'s segments, read in file order; `None`
    /// for Android's dumps (whose class records claim the array just before them) and when a
    /// record there cannot be read.
    pub(crate) fn early(dump: &Dump, ix: &DumpIndex<'_>) -> Option<Layouts> {
        if ix.header.version == hprof::Version::V103 {
            return None;
        }
        let data = dump.data();
        let mut found = Vec::new();
        'walk: for seg in &ix.segments {
            let body = data.get(seg.offset as usize..seg.offset as usize + seg.len)?;
            for item in SubRecords::new(body, seg.offset, ix.header.id_size) {
                match item.ok()? {
                    (off, SubRecord::Class(c)) => found.push((off, c)),
                    (_, SubRecord::Root(_) | SubRecord::HeapDumpInfo(_)) => {}
                    _ => break 'walk,
                }
            }
        }
        let dumps = found.len();
        // The warnings are the heap pass's to give, from all class dumps.
        let classes = ClassTable::build(ix, found, &mut Warnings::default());
        Some(Layouts { classes, dumps, id_size: ix.header.id_size })
    }
}

/// What one piece of the stream holds.
#[derive(Debug, Clone, Copy)]
struct Piece {
    segment: u32,
    seq: u32,
    entries: u64,
    first_offset: u64,
    /// The first and last object's addresses.
    first_addr: u64,
    last_addr: u64,
    /// Its objects' addresses ascend (or repeat).
    ascending: bool,
}

/// Where a piece's places and bodies are in the stream's file.
type Sections = [Range<usize>; 2];

/// A piece's two sections.
const PLACES: usize = 0;
const BODIES: usize = 1;

/// What readers ask the kernel for: a piece's places ([`PLACES`]), or the whole piece.
const WHOLE: usize = 1;

/// The stream the heap pass writes into, from the segments' threads: the pieces' sections
/// appended to one temporary file, at these ranges.
pub(crate) struct RefsOut<'l> {
    /// The early class table, for the bodies; none for a stream of places alone.
    layouts: Option<&'l Layouts>,
    sink: Mutex<(graph::BytesWriter, Vec<(Piece, Sections)>)>,
}

impl<'l> RefsOut<'l> {
    /// An empty stream in a temporary file in `dir` (its objects are read twice, in order: the
    /// file needs no more of the page cache than the part being read).
    pub(crate) fn new(layouts: &'l Layouts, dir: Option<&std::path::Path>) -> RefsOut<'l> {
        RefsOut { layouts: Some(layouts), sink: Mutex::new((graph::BytesWriter::in_file(dir), Vec::new())) }
    }

    /// An empty stream of the objects' places alone, in memory: what an in-memory build sorts
    /// (3 to 4 bytes an object where the pairs took 16; its object pass reads the records).
    pub(crate) fn places_only() -> RefsOut<'static> {
        RefsOut { layouts: None, sink: Mutex::new((graph::BytesWriter::in_memory(), Vec::new())) }
    }

    /// The writer of segment `segment`'s objects.
    pub(crate) fn segment(&self, segment: usize) -> SegmentRefs<'_, 'l> {
        SegmentRefs {
            out: self,
            segment: segment as u32,
            seq: 0,
            places: Vec::new(),
            bodies: Vec::new(),
            refs: Vec::new(),
            entries: 0,
            first_offset: 0,
            prev_offset: 0,
            prev_addr: 0,
            first_addr: 0,
            ascending: true,
            splits: 0,
        }
    }

    /// Appends a filled piece's sections.
    fn append(&self, piece: Piece, places: &[u8], bodies: &[u8]) {
        let mut sink = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        let (file, pieces) = &mut *sink;
        let at = file.len();
        file.push(places);
        file.push(bodies);
        pieces.push((piece, [at..at + places.len(), at + places.len()..file.len()]));
    }

    /// The stream written, its pieces in the dump's order.
    pub(crate) fn finish(self) -> Refs {
        let (file, mut pieces) = self.sink.into_inner().unwrap_or_else(|e| e.into_inner());
        pieces.sort_unstable_by_key(|(p, _)| (p.segment, p.seq));
        let (pieces, ranges): (Vec<Piece>, Vec<Sections>) = pieces.into_iter().unzip();
        let ends = pieces
            .iter()
            .scan(0, |total, p: &Piece| {
                *total += p.entries;
                Some(*total)
            })
            .collect();
        let class_ids = self
            .layouts
            .map(|l| (0..l.classes.len()).map(|c| l.classes.get(ClassIdx(c as u32)).id).collect())
            .unwrap_or_default();
        let bodies = self.layouts.is_some();
        let asked = [AtomicUsize::new(0), AtomicUsize::new(0)];
        let mut refs =
            Refs { bytes: file.finish(), ranges, pieces, ends, class_ids, bodies, before: Default::default(), asked };
        refs.before = [PLACES, WHOLE].map(|what| {
            let mut before = vec![0];
            for p in 0..refs.pieces.len() {
                before.push(before[p] + refs.span(p, what).len());
            }
            before
        });
        refs
    }
}

/// One segment's objects, buffered and appended to the stream a piece at a time.
pub(crate) struct SegmentRefs<'o, 'l> {
    out: &'o RefsOut<'l>,
    segment: u32,
    seq: u32,
    places: Vec<u8>,
    bodies: Vec<u8>,
    refs: Vec<u64>,
    entries: u64,
    first_offset: u64,
    prev_offset: u64,
    prev_addr: u64,
    first_addr: u64,
    ascending: bool,
    /// Pieces begun where the objects went down.
    splits: u32,
}

impl SegmentRefs<'_, '_> {
    /// Appends the object that `rec`, at file offset `off`, describes; other records add
    /// nothing.
    pub(crate) fn object(&mut self, off: u64, rec: &SubRecord<'_>) {
        let Some(layouts) = self.out.layouts else {
            match rec {
                SubRecord::Instance { head, .. } => self.place(off, head.object_id),
                SubRecord::ObjArray { head, .. } => self.place(off, head.object_id),
                SubRecord::PrimArray { head, .. } => self.place(off, head.object_id),
                SubRecord::Class(_) | SubRecord::Root(_) | SubRecord::HeapDumpInfo(_) => {}
            }
            return;
        };
        let classes = &layouts.classes;
        let key = |class: Option<ClassIdx>| class.map_or(0, |c| u64::from(c.0) + 1);
        self.refs.clear();
        let (addr, head, class_id, length) = match rec {
            SubRecord::Instance { head, values } => {
                let mut flags = 0;
                let c = classes.by_id(head.class_id);
                if let Some(c) = c {
                    let class = classes.get(c);
                    for_each_field_ref(class, values, layouts.id_size, |slot, id| {
                        if self.refs.is_empty() && Some(slot) == class.referent_slot {
                            flags |= REFERENT_FIRST;
                        }
                        self.refs.push(id);
                    });
                    if values.len() as u32 != class.values_bytes {
                        flags |= LENGTH_MISMATCH;
                    }
                }
                (head.object_id, INSTANCE | flags | key(c) << 4, head.class_id, None)
            }
            SubRecord::ObjArray { head, elements } => {
                self.refs.extend(elements.iter().filter(|&id| id != 0));
                (head.object_id, OBJ_ARRAY | key(classes.by_id(head.class_id)) << 4, head.class_id, Some(head.length))
            }
            SubRecord::PrimArray { head, elem, .. } => {
                (head.object_id, PRIM_ARRAY | u64::from(elem.code()) << 4, 0, Some(head.length))
            }
            SubRecord::Class(_) | SubRecord::Root(_) | SubRecord::HeapDumpInfo(_) => return,
        };
        self.place(off, addr);
        let buf = &mut self.bodies;
        varint::push(buf, head);
        let kind = head & 3;
        if kind != PRIM_ARRAY && head >> 4 == 0 {
            varint::push(buf, class_id);
        }
        if let Some(length) = length {
            varint::push(buf, u64::from(length));
        }
        if kind == OBJ_ARRAY || (kind == INSTANCE && head >> 4 != 0) {
            varint::push(buf, self.refs.len() as u64);
            for &id in &self.refs {
                varint::push(buf, varint::zigzag(id.wrapping_sub(addr) as i64));
            }
        }
        self.entries += 1;
        if self.places.len() + self.bodies.len() >= PIECE_BYTES {
            self.flush();
        }
    }

    /// Appends the place of the object at `addr`, whose record is at file offset `off`; the
    /// caller counts it among the entries.
    fn place(&mut self, off: u64, addr: u64) {
        // A piece's objects ascend: a segment whose objects go down starts a new piece there
        // (a parallel dump's threads each write ascending segments; a segment that holds two
        // threads' objects is split in two runs), a few times, then gives up.
        if self.entries > 0 && addr < self.prev_addr {
            if self.splits < MAX_SPLITS {
                self.splits += 1;
                self.flush();
            } else {
                self.ascending = false;
            }
        }
        if self.entries == 0 {
            (self.first_offset, self.prev_offset, self.prev_addr) = (off, off, 0);
            (self.first_addr, self.ascending) = (addr, true);
        }
        varint::push(&mut self.places, off - self.prev_offset);
        varint::push(&mut self.places, varint::zigzag(addr.wrapping_sub(self.prev_addr) as i64));
        (self.prev_offset, self.prev_addr) = (off, addr);
        if self.out.layouts.is_none() {
            self.entries += 1;
            if self.places.len() >= PIECE_BYTES {
                self.flush();
            }
        }
    }

    fn flush(&mut self) {
        if self.entries == 0 {
            return;
        }
        let piece = Piece {
            segment: self.segment,
            seq: self.seq,
            entries: self.entries,
            first_offset: self.first_offset,
            first_addr: self.first_addr,
            last_addr: self.prev_addr,
            ascending: self.ascending,
        };
        self.out.append(piece, &self.places, &self.bodies);
        self.places.clear();
        self.bodies.clear();
        (self.seq, self.entries) = (self.seq + 1, 0);
    }

    /// Appends what is still buffered.
    pub(crate) fn finish(mut self) {
        self.flush();
    }
}

/// The stream as written: the objects of the dump in file order.
pub(crate) struct Refs {
    bytes: graph::Bytes,
    /// Where each piece's sections are in `bytes`, in the dump's order.
    ranges: Vec<Sections>,
    pieces: Vec<Piece>,
    /// Entries up to the end of each piece.
    ends: Vec<u64>,
    /// The early table's class ids, by index.
    class_ids: Vec<u64>,
    /// Whether the pieces have bodies (the objects' kinds and references) after their places.
    bodies: bool,
    /// What readers ask the kernel for ([`PLACES`] or [`WHOLE`]): its bytes in the pieces
    /// before each piece (one more entry than pieces), and the first piece not asked for yet.
    before: [Vec<usize>; 2],
    asked: [AtomicUsize; 2],
}

/// One object as the stream has it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Its class as the record names it (an instance's or array's class id, or an element type).
    pub(crate) kind: RawKind,
    /// The class's index in the early table, when the dump defines it.
    pub(crate) class: Option<ClassIdx>,
    /// An array's length (0 for instances).
    pub(crate) len: u32,
    /// Its first reference is a Reference's referent.
    pub(crate) referent_first: bool,
    /// An instance whose field bytes do not have its class's length.
    pub(crate) length_mismatch: bool,
    /// The non-null references, in edge order.
    pub(crate) refs: Vec<u64>,
}

impl Default for Entry {
    fn default() -> Entry {
        Entry {
            kind: RawKind::Instance(0),
            class: None,
            len: 0,
            referent_first: false,
            length_mismatch: false,
            refs: Vec::new(),
        }
    }
}

impl Refs {
    /// Objects in the stream.
    pub(crate) fn len(&self) -> u64 {
        self.ends.last().copied().unwrap_or(0)
    }

    /// Whether the stream has the objects' kinds and references, not their places alone.
    pub(crate) fn has_bodies(&self) -> bool {
        self.bodies
    }

    /// The greatest address in the stream, where its pieces ascend ([`Self::runs`]): the
    /// greatest of their last.
    pub(crate) fn max_addr(&self) -> u64 {
        self.pieces.iter().map(|p| p.last_addr).max().unwrap_or(0)
    }

    /// Section `which` of piece `piece`.
    fn section(&self, piece: usize, which: usize) -> &[u8] {
        &self.bytes[self.ranges[piece][which].clone()]
    }

    /// Asks the kernel for the pieces after `piece` that no reader asked for yet, up to
    /// [`AHEAD_BYTES`] of them: their places, or with [`WHOLE`] both sections. Pieces land in
    /// the file in the order segments fill them, not the order they are read in, so its own
    /// read-ahead does not know them; the object pass's readers of neighbouring chunks share
    /// what was asked, so each piece is asked for once.
    fn ask_ahead(&self, piece: usize, what: usize) {
        let before = &self.before[what];
        let limit = before[piece + 1] + AHEAD_BYTES;
        let mut q = self.asked[what].load(Ordering::Relaxed).max(piece + 1);
        let first = q;
        while q < self.pieces.len() && before[q] < limit {
            self.bytes.prefetch(self.span(q, what));
            q += 1;
        }
        if q > first {
            self.asked[what].fetch_max(q, Ordering::Relaxed);
        }
    }

    /// Gives back the pages of piece `piece` read for the last time: its places, or with
    /// [`WHOLE`] both sections.
    fn release(&self, piece: usize, what: usize) {
        self.bytes.release(self.span(piece, what));
    }

    /// Where piece `piece`'s places are in the file, or with [`WHOLE`] both its sections.
    fn span(&self, piece: usize, what: usize) -> Range<usize> {
        let [places, bodies] = &self.ranges[piece];
        places.start..if what == WHOLE { bodies.end } else { places.end }
    }

    /// The stream's ascending runs, as ranges of pieces: where the objects ascend across
    /// pieces and inside each; `None` when one piece's do not. HotSpot writes one run, or one
    /// per thread of a parallel dump (JDK 21 and later: each thread writes the heap regions it
    /// claims in order, and the threads' files are joined).
    pub(crate) fn runs(&self) -> Option<Vec<Range<usize>>> {
        let mut runs: Vec<Range<usize>> = Vec::new();
        for (i, p) in self.pieces.iter().enumerate() {
            if !p.ascending {
                return None;
            }
            match runs.last_mut() {
                Some(run) if self.pieces[i - 1].last_addr <= p.first_addr => run.end = i + 1,
                _ => runs.push(i..i + 1),
            }
        }
        Some(runs)
    }

    /// Every piece.
    pub(crate) fn all(&self) -> Range<usize> {
        0..self.pieces.len()
    }

    /// The index of the first object of piece `piece`.
    pub(crate) fn first_entry(&self, piece: usize) -> u64 {
        piece.checked_sub(1).map_or(0, |p| self.ends[p])
    }

    /// The address and file offset of every object of `pieces`, in file order, read from the
    /// places alone.
    pub(crate) fn places(&self, pieces: Range<usize>) -> impl Iterator<Item = Pair> + '_ {
        let mut places = Section::default();
        let mut piece = pieces.start;
        std::iter::from_fn(move || {
            while places.done() {
                if piece > pieces.start {
                    self.release(piece - 1, PLACES);
                }
                if piece >= pieces.end {
                    return None;
                }
                self.ask_ahead(piece, PLACES);
                places = Section::new(self.section(piece, PLACES), self.pieces[piece].first_offset);
                piece += 1;
            }
            Some(places.place())
        })
    }

    /// A reader of the objects from the `entry`th on.
    pub(crate) fn reader(&self, entry: u64) -> Reader<'_> {
        let piece = self.ends.partition_point(|&end| end <= entry);
        let mut r = Reader { refs: self, piece, places: Section::default(), bodies: Section::default() };
        r.enter(piece);
        let skip = entry - self.first_entry(piece);
        let mut e = Entry::default();
        for _ in 0..skip {
            r.next(&mut e, false);
        }
        r
    }
}

/// Where a reader is in one section of a piece, and the place of the object before.
#[derive(Debug, Default)]
struct Section<'r> {
    bytes: &'r [u8],
    at: usize,
    prev_offset: u64,
    prev_addr: u64,
}

impl<'r> Section<'r> {
    fn new(bytes: &'r [u8], first_offset: u64) -> Section<'r> {
        Section { bytes, at: 0, prev_offset: first_offset, prev_addr: 0 }
    }

    fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    #[inline]
    fn varint(&mut self) -> u64 {
        let (v, used) = varint::read(&self.bytes[self.at..]);
        self.at += used;
        v
    }

    /// The next object's address and offset.
    #[inline]
    fn place(&mut self) -> Pair {
        self.prev_offset += self.varint();
        self.prev_addr = self.prev_addr.wrapping_add(varint::unzigzag(self.varint()) as u64);
        [self.prev_addr, self.prev_offset]
    }
}

/// Reads the stream's objects in order, whole, asking the kernel for the pieces ahead and
/// giving back the pages of those it has passed.
pub(crate) struct Reader<'r> {
    refs: &'r Refs,
    piece: usize,
    places: Section<'r>,
    bodies: Section<'r>,
}

impl Reader<'_> {
    fn enter(&mut self, piece: usize) {
        self.piece = piece;
        if piece >= self.refs.pieces.len() {
            (self.places, self.bodies) = (Section::default(), Section::default());
            return;
        }
        self.places = Section::new(self.refs.section(piece, PLACES), self.refs.pieces[piece].first_offset);
        self.bodies = Section::new(self.refs.section(piece, BODIES), 0);
        self.refs.ask_ahead(piece, WHOLE);
    }

    /// Decodes the next object into `e` (its references only `with_refs`); false at the end.
    pub(crate) fn next(&mut self, e: &mut Entry, with_refs: bool) -> bool {
        while self.places.done() {
            if self.piece >= self.refs.pieces.len() {
                return false;
            }
            self.refs.release(self.piece, WHOLE);
            self.enter(self.piece + 1);
        }
        let [addr, _] = self.places.place();
        let head = self.bodies.varint();
        let (kind, key) = (head & 3, head >> 4);
        e.referent_first = head & REFERENT_FIRST != 0;
        e.length_mismatch = head & LENGTH_MISMATCH != 0;
        e.class = None;
        let class_id = match (kind, key) {
            (PRIM_ARRAY, _) => 0,
            (_, 0) => self.bodies.varint(),
            (_, k) => {
                e.class = Some(ClassIdx(k as u32 - 1));
                self.refs.class_ids.get(k as usize - 1).copied().unwrap_or(0)
            }
        };
        e.len = if kind == INSTANCE { 0 } else { self.bodies.varint() as u32 };
        e.kind = match kind {
            INSTANCE => RawKind::Instance(class_id),
            OBJ_ARRAY => RawKind::ObjArray(class_id),
            _ => RawKind::PrimArray(BasicType::from_code(key as u8).unwrap_or(BasicType::Byte)),
        };
        e.refs.clear();
        if kind == OBJ_ARRAY || (kind == INSTANCE && key != 0) {
            let count = self.bodies.varint();
            for _ in 0..count {
                let d = self.bodies.varint();
                if with_refs {
                    e.refs.push(addr.wrapping_add(varint::unzigzag(d) as u64));
                }
            }
        }
        true
    }
}
