//! The bytes of a dump: memory-mapped from a file, or owned (tests, fuzzing). A gzip dump
//! (`jcmd PID GC.heap_dump -gz=1`, or a dump compressed to be moved) is unpacked into an
//! unlinked temporary file first, and that file is mapped: the rest of leakscope reads one
//! mapped HPROF file either way.

use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Error;

enum Bytes {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

/// A heap dump's bytes, cheap to clone and shared between the snapshot and its readers.
#[derive(Clone)]
pub struct Dump {
    bytes: Arc<Bytes>,
    path: Option<PathBuf>,
}

impl std::fmt::Debug for Dump {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dump").field("path", &self.path).field("len", &self.data().len()).finish()
    }
}

/// gzip's magic number.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Unpacks a gzip stream (all its members) into an unlinked temporary file in `tmp`. A stream
/// cut short keeps what was unpacked: the HPROF reader then reports the dump as truncated.
/// A failure to write the copy is [`Error::Unpack`], naming where, not the dump's.
#[allow(unsafe_code)] // maps the compressed file; see SAFETY below
fn unpack(file: std::fs::File, tmp: Option<&Path>, path: &Path) -> Result<std::fs::File, Error> {
    let dir = tmp.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let read = |source| Error::Io { path: path.to_owned(), source };
    let mut out = match tempfile::tempfile_in(&dir) {
        Ok(out) => out,
        Err(source) => return Err(Error::Unpack { dir, source }),
    };
    // SAFETY: as for the dump itself in `Dump::open_in`: read-only, and compressed dumps are
    // not modified while they are read.
    let packed = unsafe { memmap2::Mmap::map(&file) }.map_err(read)?;
    let mut copy = Copy { out: &mut out, failed: false };
    let result = unpack_members(&packed, &mut copy).and_then(|done| {
        let mut gz = flate2::read::MultiGzDecoder::new(&packed[done..]);
        match std::io::copy(&mut gz, &mut copy) {
            Err(e)
                if !copy.failed
                    && matches!(e.kind(), std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidInput) =>
            {
                Ok(0)
            }
            r => r,
        }
    });
    match result {
        Ok(_) => {}
        Err(source) if copy.failed => return Err(Error::Unpack { dir, source }),
        Err(e) => return Err(read(e)),
    }
    out.rewind().map_err(|source| Error::Unpack { dir, source })?;
    Ok(out)
}

/// The unpacked copy, remembering whether a write failed: the copy's errors and the packed
/// stream's come out of one `io::copy`.
struct Copy<'a> {
    out: &'a mut std::fs::File,
    failed: bool,
}

impl std::io::Write for Copy<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.write(buf).inspect_err(|_| self.failed = true)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush().inspect_err(|_| self.failed = true)
    }
}

/// Largest member [`unpack_members`] unpacks in memory; HotSpot's are 1 MiB.
const MEMBER_CAP: u64 = 16 << 20;

/// Unpacks the leading gzip members of `packed` into `out` in parallel, as far as they are
/// small (HotSpot's `-gz` writes one member per block of about 1 MiB), and returns how many
/// bytes of `packed` that consumed; the caller unpacks the rest in one stream (a single
/// member, as `gzip` writes, or a cut tail). Member boundaries are not indexed, so every
/// place a gzip header could start is unpacked speculatively, a batch at a time; the chain of
/// members that really follow one another from the current position is kept, the rest
/// (compressed bytes that happen to look like a header) is dropped.
fn unpack_members(packed: &[u8], out: &mut impl std::io::Write) -> std::io::Result<usize> {
    use rayon::prelude::*;
    let batch = 4 * rayon::current_num_threads().max(1);
    let mut pos = 0;
    while pos < packed.len() {
        let starts: Vec<usize> = member_starts(packed, pos).take(batch).collect();
        let members: Vec<Option<(usize, Vec<u8>)>> = starts.par_iter().map(|&s| member(&packed[s..])).collect();
        let before = pos;
        while let Some(i) = starts.iter().position(|&s| s == pos) {
            let Some((consumed, bytes)) = &members[i] else { break };
            out.write_all(bytes)?;
            pos += consumed;
        }
        if pos == before {
            break;
        }
    }
    Ok(pos)
}

/// Offsets from `from` on where a gzip member header could begin: magic, deflate, no
/// reserved flag bits.
fn member_starts(packed: &[u8], from: usize) -> impl Iterator<Item = usize> + '_ {
    (from..packed.len().saturating_sub(3))
        .filter(move |&i| packed[i] == 0x1f && packed[i + 1] == 0x8b && packed[i + 2] == 8 && packed[i + 3] & 0xe0 == 0)
}

/// The member at the start of `bytes`, unpacked, with the bytes it took; `None` when it is not
/// one, is cut short, or unpacks to more than [`MEMBER_CAP`].
fn member(bytes: &[u8]) -> Option<(usize, Vec<u8>)> {
    let mut gz = flate2::bufread::GzDecoder::new(bytes);
    let mut unpacked = Vec::new();
    (&mut gz).take(MEMBER_CAP + 1).read_to_end(&mut unpacked).ok()?;
    if unpacked.len() as u64 > MEMBER_CAP {
        return None;
    }
    Some((bytes.len() - gz.into_inner().len(), unpacked))
}

impl Dump {
    /// Maps the file at `path` read-only (unpacked into the temporary directory first when it
    /// is gzip-compressed).
    pub fn open(path: &Path) -> Result<Dump, Error> {
        Self::open_in(path, None)
    }

    /// The first `n` bytes of the file at `path` (or fewer), unpacked when it is gzip: enough to
    /// tell what it holds without unpacking the rest.
    pub fn head(path: &Path, n: usize) -> std::io::Result<Vec<u8>> {
        let mut file = std::fs::File::open(path)?;
        let mut head = Vec::with_capacity(n);
        (&mut file).take(n as u64).read_to_end(&mut head)?;
        if Self::is_gzip(&head) {
            file.rewind()?;
            head.clear();
            let gz = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file));
            // A corrupt stream unpacks to nothing recognisable, which callers report.
            let _ = gz.take(n as u64).read_to_end(&mut head);
        }
        Ok(head)
    }

    /// Whether the first bytes of a file are gzip's magic number.
    pub fn is_gzip(head: &[u8]) -> bool {
        head.starts_with(&GZIP_MAGIC)
    }

    /// Maps the file at `path` read-only. A gzip-compressed file (told by its magic number,
    /// not its name; multi-member, as HotSpot writes it) is first unpacked into an unlinked
    /// temporary file in `tmp` (default: `TMPDIR`, else `/tmp`), which costs the unpacked size
    /// there while the dump is open and nothing once it is closed.
    #[allow(unsafe_code)] // the one mmap of the project; see SAFETY below
    pub fn open_in(path: &Path, tmp: Option<&Path>) -> Result<Dump, Error> {
        let io = |source| Error::Io { path: path.to_owned(), source };
        let mut file = std::fs::File::open(path).map_err(io)?;
        let mut head = [0u8; 2];
        let n = file.read(&mut head).map_err(io)?;
        file.rewind().map_err(io)?;
        if Self::is_gzip(&head[..n]) {
            file = unpack(file, tmp, path)?;
        }
        let len = file.metadata().map_err(io)?.len();
        let bytes = if len == 0 {
            Bytes::Owned(Vec::new())
        } else {
            // SAFETY: the map is read-only and private to this process. Another process
            // truncating the file while we read it would fault (SIGBUS); heap dumps are written
            // once and not modified afterwards, which is the documented assumption here.
            let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
            #[cfg(unix)]
            let _ = map.advise(memmap2::Advice::Sequential);
            Bytes::Mapped(map)
        };
        Ok(Dump { bytes: Arc::new(bytes), path: Some(path.to_owned()) })
    }

    /// Wraps bytes already in memory.
    pub fn from_vec(v: Vec<u8>) -> Dump {
        Dump { bytes: Arc::new(Bytes::Owned(v)), path: None }
    }

    /// The whole file.
    pub fn data(&self) -> &[u8] {
        match &*self.bytes {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }

    /// Runs `walk`, which reads record heads far apart (each segment's), with the kernel told
    /// to read only the pages it touches, not the megabyte-long segment bodies after each
    /// head; then the default for a dump, read in sequence, is back.
    pub fn walking_heads<T>(&self, walk: impl FnOnce() -> T) -> T {
        let Bytes::Mapped(map) = &*self.bytes else {
            return walk();
        };
        let _ = map.advise(memmap2::Advice::Random);
        let out = walk();
        let _ = map.advise(memmap2::Advice::Sequential);
        out
    }

    /// Asks the kernel to start reading `offset..offset+len` of a file-backed dump now, without
    /// waiting: a pass that will read it in sequence then finds it read, or arriving, where
    /// the default read-ahead of a page fault fetches a few pages at a time.
    pub fn prefetch(&self, offset: u64, len: usize) {
        let Bytes::Mapped(map) = &*self.bytes else {
            return;
        };
        let start = (offset.min(map.len() as u64) / 4096 * 4096) as usize;
        let len = len.min(map.len() - start);
        // Advice on pages already in the page cache only makes the kernel look each one up
        // (a tenth of a cached 1.7 GB dump's histogram): a window whose ends and middle are
        // cached is taken as cached.
        if len > 0 && ![start, start + len / 2, start + len - 1].iter().all(|&at| resident(map, at)) {
            // Advice only: a kernel that refuses it reads on demand as before.
            let _ = map.advise_range(memmap2::Advice::WillNeed, start, len);
        }
    }

    /// Tells the kernel this process is done with the whole pages inside `offset..offset+len`,
    /// so that they leave its resident set (they stay in the page cache). Reading them again
    /// later is still correct: it faults them back in from the file.
    #[allow(unsafe_code)] // the mmap wrapper; see SAFETY below
    pub fn release(&self, offset: u64, len: usize) {
        const PAGE: u64 = 4096;
        let Bytes::Mapped(map) = &*self.bytes else {
            return;
        };
        let start = offset.div_ceil(PAGE) * PAGE;
        let end = ((offset + len as u64) / PAGE * PAGE).min(map.len() as u64);
        if end > start {
            // SAFETY: MADV_DONTNEED on a read-only file mapping only drops this process's page
            // table entries; later reads repopulate them from the file, whose contents do not
            // change (see `open`), so no borrow can observe different bytes.
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start as usize, (end - start) as usize)
            };
        }
    }

    /// Where the bytes came from, if a file.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

/// Whether the page of `map` holding byte `at` is in the page cache (`mincore`).
#[allow(unsafe_code)] // one system call on memory the map owns; see SAFETY below
fn resident(map: &memmap2::Mmap, at: usize) -> bool {
    let page = at / 4096 * 4096;
    let mut vec = [0u8; 1];
    // SAFETY: the page lies inside the live mapping (`at < map.len()`), whose start is page
    // aligned; mincore writes one byte for one page into `vec`.
    let r = unsafe { libc::mincore(map.as_ptr().add(page) as *mut libc::c_void, 1, vec.as_mut_ptr()) };
    r == 0 && vec[0] & 1 == 1
}

/// For a walk of record heads under [`Dump::walking_heads`]: asks for runs of small records
/// (names, classes, frames) a few MiB at a time, as the read-ahead would have read them,
/// where a page fault now reads one page.
pub(crate) struct Ahead<'a> {
    dump: &'a Dump,
    asked: u64,
}

impl<'a> Ahead<'a> {
    /// Bytes asked for at a time.
    const DENSE: u64 = 4 << 20;
    /// A record shorter than this is small: not a heap segment.
    const SMALL: usize = 64 << 10;

    /// Nothing asked for yet.
    pub(crate) fn new(dump: &'a Dump) -> Ahead<'a> {
        Ahead { dump, asked: 0 }
    }

    /// The walk is at a record at `offset` whose body is `len` bytes.
    #[inline]
    pub(crate) fn at(&mut self, offset: u64, len: usize) {
        if len < Self::SMALL && offset >= self.asked {
            self.dump.prefetch(offset, Self::DENSE as usize);
            self.asked = offset + Self::DENSE;
        }
    }
}

/// A walk through a dump that hands back the bytes it has passed every `step` bytes, to give
/// their pages back ([`Dump::release`]): reading record heads maps the pages around each, and
/// a walk that kept them would make the whole file resident.
pub(crate) struct Passing<'a> {
    give_back: &'a dyn Fn(u64, u64),
    done: u64,
    step: u64,
}

impl<'a> Passing<'a> {
    /// A walk from offset `from`; `give_back(from, to)` gets each passed range.
    pub(crate) fn new(from: u64, step: u64, give_back: &'a dyn Fn(u64, u64)) -> Passing<'a> {
        Passing { give_back, done: from, step }
    }

    /// The walk has reached `offset`.
    #[inline]
    pub(crate) fn at(&mut self, offset: u64) {
        if offset - self.done >= self.step {
            (self.give_back)(self.done, offset);
            self.done = offset;
        }
    }

    /// The walk ended at `end`: the rest is handed back.
    pub(crate) fn end(&mut self, end: u64) {
        if end > self.done {
            (self.give_back)(self.done, end);
            self.done = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Unpacks as `unpack` does: the members in parallel, the rest in one stream.
    fn unpacked(packed: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let done = unpack_members(packed, &mut out).unwrap();
        let _ = flate2::read::MultiGzDecoder::new(&packed[done..]).read_to_end(&mut out);
        out
    }

    #[test]
    fn many_members_unpack_in_order_past_bytes_that_look_like_members() {
        // Stored (level 0) members whose data holds a whole gzip member: the compressed
        // stream then has headers, even valid members, that are not members of it.
        let inner = gzip(b"not part of the stream's own chain", 6);
        let blocks: Vec<Vec<u8>> = (0..40u8)
            .map(|i| [vec![i; 3000], inner.clone(), (0..2000).map(|k| (k % 251) as u8 ^ i).collect()].concat())
            .collect();
        let packed: Vec<u8> = blocks.iter().enumerate().flat_map(|(i, b)| gzip(b, (i % 2) as u32 * 6)).collect();
        assert_eq!(unpacked(&packed), blocks.concat());
        // Cut inside the last member: everything before it, and what the stream gives of it.
        let cut = &packed[..packed.len() - 100];
        let got = unpacked(cut);
        let whole_members: usize = blocks[..39].iter().map(Vec::len).sum();
        assert!(got.len() >= whole_members && blocks.concat().starts_with(&got), "{}", got.len());
        // One member bigger than the cap goes to the stream whole.
        let big: Vec<u8> = (0..(MEMBER_CAP as usize + 10)).map(|k| (k * 7 % 256) as u8).collect();
        let mut out = Vec::new();
        assert_eq!(unpack_members(&gzip(&big, 1), &mut out).unwrap(), 0);
        assert_eq!(unpacked(&gzip(&big, 1)), big);
    }
}
