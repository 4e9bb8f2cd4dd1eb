//! The copy: records read in chunks, their values replaced in parallel, written in order.

use std::io::Write;

use hprof::{Record, Records, SubRecord, SubRecords};
use rayon::prelude::*;

use heap::{Dump, DumpIndex, Warnings};

use crate::mask::Masker;
use crate::options::{Mode, Options};
use crate::plan::Plan;
use crate::{mask, plan};

/// What a redaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Primitive arrays whose contents were replaced.
    pub arrays: u64,
    /// Bytes of array contents replaced.
    pub array_bytes: u64,
    /// Arrays left readable: thread names, what `--keep` classes reference, and every array
    /// equal to one of those.
    pub kept_arrays: u64,
    /// Strings whose cached hash was reset (it is a function of the text).
    pub string_hashes: u64,
    /// Primitive fields replaced (instance and static).
    pub fields: u64,
    /// Symbols (UTF8 records) left out: referenced by no record, such as the string
    /// literals of every loaded class, which HotSpot writes with its whole symbol table.
    pub symbols_dropped: u64,
    /// Pseudonym → the identifier it replaces (`--names`; empty otherwise).
    pub pseudonyms: std::collections::BTreeMap<String, String>,
    /// Masked thread name → the name (`--names`, when values are masked, not zeroed).
    pub thread_names: std::collections::BTreeMap<String, String>,
    /// Bytes read.
    pub bytes: u64,
}

/// What can stop a redaction.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input is not a dump this reader accepts.
    #[error(transparent)]
    Heap(#[from] heap::Error),
    /// Writing the copy failed.
    #[error("cannot write the redacted dump: {0}")]
    Write(#[from] std::io::Error),
    /// Two identifiers got one pseudonym (about 2^-50 per pair): a different key avoids it.
    #[error("the pseudonyms of `{0}` and `{1}` collide under this key; redact with another key")]
    Collision(String, String),
}

/// Bytes of heap records patched per parallel task.
const CHUNK: usize = 8 << 20;

/// Writes a redacted copy of `dump` to `out`, record by record, and says what it replaced.
pub fn redact(
    dump: &Dump,
    out: &mut dyn Write,
    opts: &Options,
    progress: &dyn graph::Progress,
) -> Result<(Summary, Warnings), Error> {
    let data = dump.data();
    let ix = DumpIndex::build(data, &|_, _| {})?;
    progress.start("deciding what to replace", 0);
    let plan = Plan::build(data, &ix, opts).map_err(|c| Error::Collision(c.0, c.1))?;
    progress.finish();
    let masker = match &opts.mode {
        Mode::Mask(key) => Some(Masker::new(key.clone())),
        Mode::Zero => None,
    };
    let patcher = Patcher { plan: &plan, masker: masker.as_ref(), id_size: ix.header.id_size };
    let mut summary = Summary::default();
    progress.start("writing the redacted dump", data.len() as u64);
    out.write_all(&data[..ix.header.len])?;
    let mut added = hprof::Writer::new(ix.header.id_size);
    plan.symbols.write_added(&mut added);
    out.write_all(&added.buf)?;
    let mut written = ix.header.len;
    // Records are gathered until enough heap bytes wait to keep every core busy (HotSpot
    // writes segments of 1 MiB: one at a time left one core patching), patched in parallel
    // and written in order.
    let mut pending: Vec<Piece<'_>> = Vec::new();
    let mut pending_heap = 0usize;
    let batch = rayon::current_num_threads().max(1) * 4 * CHUNK;
    for rec in Records::new(data, ix.header.len) {
        let Ok(rec) = rec else { break };
        let end = rec.body_offset() as usize + rec.body.len();
        match rec.parse(ix.header.id_size) {
            Ok(Record::HeapDump { body, offset }) => {
                pending.push(Piece::Copy(&data[rec.offset as usize..offset as usize]));
                for c in chunks(body, offset, ix.header.id_size) {
                    pending_heap += c.bytes.len();
                    pending.push(Piece::Heap(c));
                }
            }
            _ => match plan.symbols.record(&rec, ix.header.id_size) {
                None => summary.symbols_dropped += 1,
                Some(Some(bytes)) => pending.push(Piece::Owned(bytes)),
                Some(None) => pending.push(Piece::Copy(&data[rec.offset as usize..end])),
            },
        }
        if pending_heap >= batch {
            write_pieces(&mut pending, &patcher, out, &mut summary)?;
            pending_heap = 0;
        }
        progress.advance((end - written) as u64);
        written = end;
    }
    write_pieces(&mut pending, &patcher, out, &mut summary)?;
    // A truncated tail (a record head cut short) is copied as it is.
    out.write_all(&data[written..])?;
    out.flush()?;
    progress.finish();
    summary.bytes = data.len() as u64;
    summary.pseudonyms = plan.symbols.pseudonyms.clone();
    if let Some(m) = &masker {
        for (units, original) in &plan.thread_names {
            let mut image = original.clone();
            m.mask(*units, &mut image);
            summary.thread_names.insert(text(*units, &image), text(*units, original));
        }
    }
    let mut warnings = ix.warnings;
    warnings.merge(plan.warnings);
    Ok((summary, warnings))
}

/// An array's contents as text, read by how they are masked.
fn text(units: mask::Units, data: &[u8]) -> String {
    let encoding = match units {
        mask::Units::CharsBe => heap::TextEncoding::Utf16Be,
        mask::Units::CharsLe => heap::TextEncoding::Utf16Le,
        _ => heap::TextEncoding::Latin1,
    };
    heap::decode_text(encoding, data, usize::MAX)
}

impl Summary {
    fn add(&mut self, o: &Summary) {
        self.arrays += o.arrays;
        self.array_bytes += o.array_bytes;
        self.kept_arrays += o.kept_arrays;
        self.string_hashes += o.string_hashes;
        self.fields += o.fields;
    }
}

/// Part of the copy, in file order.
enum Piece<'a> {
    /// Bytes copied as they are.
    Copy(&'a [u8]),
    /// Bytes that replace a record.
    Owned(Vec<u8>),
    /// Heap sub-records to patch.
    Heap(Chunk<'a>),
}

/// Patches the pending heap chunks on every core and writes all pieces in order.
fn write_pieces(
    pending: &mut Vec<Piece<'_>>,
    patcher: &Patcher<'_>,
    out: &mut dyn Write,
    summary: &mut Summary,
) -> std::io::Result<()> {
    let patched: Vec<Option<(Vec<u8>, Summary)>> = pending
        .par_iter()
        .map(|p| match p {
            Piece::Heap(c) => Some(patcher.patch(c)),
            _ => None,
        })
        .collect();
    for (piece, done) in pending.drain(..).zip(patched) {
        match (piece, done) {
            (Piece::Copy(b), _) => out.write_all(b)?,
            (Piece::Owned(b), _) => out.write_all(&b)?,
            (Piece::Heap(_), Some((bytes, s))) => {
                out.write_all(&bytes)?;
                summary.add(&s);
            }
            (Piece::Heap(_), None) => unreachable!("every heap piece is patched"),
        }
    }
    Ok(())
}

/// A run of whole sub-records: its bytes and their absolute offset.
struct Chunk<'a> {
    bytes: &'a [u8],
    offset: u64,
}

/// Splits a heap dump body at sub-record boundaries into runs of about [`CHUNK`] bytes.
fn chunks(body: &[u8], offset: u64, id_size: hprof::IdSize) -> Vec<Chunk<'_>> {
    if body.len() <= CHUNK {
        return vec![Chunk { bytes: body, offset }];
    }
    let mut out = Vec::new();
    let (mut start, mut subs) = (0usize, SubRecords::new(body, offset, id_size));
    loop {
        let at = (subs.offset() - offset) as usize;
        if at - start >= CHUNK || subs.remaining() == 0 {
            if at > start {
                out.push(Chunk { bytes: &body[start..at], offset: offset + start as u64 });
            }
            start = at;
        }
        match subs.next() {
            Some(Ok(_)) => {}
            // An unreadable sub-record: the rest of the body is copied as it is.
            _ => break,
        }
    }
    if start < body.len() {
        out.push(Chunk { bytes: &body[start..], offset: offset + start as u64 });
    }
    out
}

/// Applies the plan to runs of sub-records.
struct Patcher<'p> {
    plan: &'p Plan,
    masker: Option<&'p Masker>,
    id_size: hprof::IdSize,
}

impl Patcher<'_> {
    fn patch(&self, chunk: &Chunk<'_>) -> (Vec<u8>, Summary) {
        let mut out = chunk.bytes.to_vec();
        let mut s = Summary::default();
        for item in SubRecords::new(chunk.bytes, chunk.offset, self.id_size) {
            let Ok((at, sub)) = item else { break };
            let rel = (at - chunk.offset) as usize;
            match sub {
                SubRecord::PrimArray { head, elem, data } if !data.is_empty() => {
                    let units = plan::units(elem, self.plan.utf16.contains(&head.object_id));
                    if self.plan.kept_shapes.contains(&(elem.code(), data.len()))
                        && self.plan.kept_values.contains(&plan::value_key(units, data))
                    {
                        s.kept_arrays += 1;
                        continue;
                    }
                    let start = rel + 1 + self.head_bytes(PRIM_HEAD);
                    let bytes = &mut out[start..start + data.len()];
                    match self.masker {
                        Some(m) => m.mask(units, bytes),
                        None => bytes.fill(0),
                    }
                    s.arrays += 1;
                    s.array_bytes += data.len() as u64;
                }
                SubRecord::Instance { head, values } => {
                    let Some(class) = self.plan.classes.by_id(head.class_id) else { continue };
                    let plan = &self.plan.per_class[class.index()];
                    let start = rel + 1 + self.head_bytes(INSTANCE_HEAD);
                    let fields = &mut out[start..start + values.len()];
                    if let Some(slots) = plan.string {
                        if reset_hash(fields, slots) {
                            s.string_hashes += 1;
                        }
                    }
                    for &(off, ty) in &plan.fields {
                        let width = ty.primitive_bytes() as usize;
                        let Some(b) = fields.get_mut(off as usize..off as usize + width) else { continue };
                        let raw = b.iter().fold(0u64, |acc, &x| acc << 8 | u64::from(x));
                        let new = self.masker.map_or(0, |m| m.mask_field(ty, raw));
                        b.copy_from_slice(&new.to_be_bytes()[8 - width..]);
                        s.fields += 1;
                    }
                }
                SubRecord::Class(mut c) => {
                    let plan = self.plan.classes.by_id(c.head.class_id).map(|i| &self.plan.per_class[i.index()]);
                    if plan.is_some_and(|p| p.kept) {
                        continue;
                    }
                    let renamed = self.plan.symbols.rename_fields(&mut c);
                    let mut changed = 0;
                    for st in &mut c.statics {
                        if let hprof::Value::Primitive(ty, raw) = st.value {
                            if self.plan.field_types.contains(&ty) {
                                st.value =
                                    hprof::Value::Primitive(ty, self.masker.map_or(0, |m| m.mask_field(ty, raw)));
                                changed += 1;
                            }
                        }
                    }
                    if changed > 0 || renamed {
                        let mut w = hprof::Writer::new(self.id_size);
                        SubRecord::Class(c).write(&mut w);
                        out[rel..rel + w.buf.len()].copy_from_slice(&w.buf);
                        s.fields += changed;
                    }
                }
                _ => {}
            }
        }
        (out, s)
    }

    fn head_bytes(&self, fixed: (usize, usize)) -> usize {
        fixed.0 + fixed.1 * self.id_size.bytes()
    }
}

/// Fixed heads after the tag: (bytes of plain integers, number of ids).
const PRIM_HEAD: (usize, usize) = (4 + 4 + 1, 1);
const INSTANCE_HEAD: (usize, usize) = (4 + 4, 2);

/// Resets a string's cached hash (0 means "not computed yet" to the JVM); true when it held one.
fn reset_hash(fields: &mut [u8], slots: plan::StringSlots) -> bool {
    let mut had = false;
    if let Some(b) = slots.hash.and_then(|h| fields.get_mut(h as usize..h as usize + 4)) {
        had = b.iter().any(|&x| x != 0);
        b.fill(0);
    }
    if let Some(b) = slots.hash_is_zero.and_then(|h| fields.get_mut(h as usize)) {
        had |= *b != 0;
        *b = 0;
    }
    had
}
