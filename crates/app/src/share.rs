//! Sharing a dump safely: `redact` writes a copy without the program's data, `secrets` says
//! which credentials a dump still holds and what holds them.

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;

use heap::{BasicType, ObjIdx, Snapshot};
use redact::secrets::{self, Confidence};

use crate::{open_dump, Error, ReadSettings, Reporter, Result};

/// Writes a redacted copy of the dump at `input` to `output` (gzip-compressed with `gzip`),
/// through a temporary file beside it that is renamed only once the copy is complete.
pub fn redact_file(
    input: &Path,
    output: &Path,
    opts: &redact::Options,
    names_map: Option<&Path>,
    gzip: bool,
    settings: &ReadSettings,
    reporter: &dyn Reporter,
) -> Result<report::RedactReport> {
    if std::fs::canonicalize(input).ok().is_some_and(|i| std::fs::canonicalize(output).ok() == Some(i)) {
        return Err(Error::Usage(format!(
            "{} is the input: write the redacted copy to another file",
            output.display()
        )));
    }
    let dump = open_dump(input, settings)?;
    let io = |source| Error::Write { path: output.to_owned(), source };
    if crate::v8::is_snapshot_data(dump.data()) {
        return redact_snapshot(dump, input, output, opts, gzip, settings, reporter);
    }
    let partial = crate::partial::Partial::beside(output, "redact").map_err(io)?;
    let (summary, warnings) = {
        let result =
            write_copy(partial.as_file(), gzip, |out| redact::redact(&dump, out, opts, reporter), redact::Error::Write);
        result.map_err(|e| match e {
            redact::Error::Heap(source) => Error::Dump { path: input.to_owned(), source },
            redact::Error::Write(source) => io(source),
            e @ redact::Error::Collision(..) => Error::Usage(e.to_string()),
        })?
    };
    if let Some(path) = names_map {
        let map = serde_json::json!({ "pseudonyms": summary.pseudonyms, "thread_names": summary.thread_names });
        let text = serde_json::to_string_pretty(&map).expect("a map of strings");
        crate::partial::write_whole(path, (text + "\n").as_bytes())
            .map_err(|source| Error::Write { path: path.to_owned(), source })?;
    }
    partial.persist(output).map_err(io)?;
    reporter.warnings(&warnings);
    Ok(report::RedactReport {
        arrays: summary.arrays,
        array_bytes: summary.array_bytes,
        kept_arrays: summary.kept_arrays,
        string_hashes: summary.string_hashes,
        fields: summary.fields,
        symbols_dropped: summary.symbols_dropped,
        pseudonyms: summary.pseudonyms.len() as u64,
        names_map: names_map.map(|p| p.display().to_string()),
        bytes: summary.bytes,
        ..redact_report(input, output, opts, gzip)
    })
}

/// A redaction's report as far as its inputs tell: what was read and written, and how.
fn redact_report(input: &Path, output: &Path, opts: &redact::Options, gzip: bool) -> report::RedactReport {
    report::RedactReport {
        input: input.display().to_string(),
        output: output.display().to_string(),
        mode: match opts.mode {
            redact::Mode::Mask(_) => "mask".into(),
            redact::Mode::Zero => "zero".into(),
        },
        gzip,
        arrays: 0,
        array_bytes: 0,
        kept_arrays: 0,
        string_hashes: 0,
        fields: 0,
        symbols_dropped: 0,
        pseudonyms: 0,
        names_map: None,
        bytes: 0,
        v8: false,
    }
}

/// [`redact_file`] of a V8 snapshot: its value strings masked (see [`crate::v8::redact`]).
fn redact_snapshot(
    dump: heap::Dump,
    input: &Path,
    output: &Path,
    opts: &redact::Options,
    gzip: bool,
    settings: &ReadSettings,
    reporter: &dyn Reporter,
) -> Result<report::RedactReport> {
    if !opts.keep.is_empty() || !opts.fields.is_empty() || opts.names.is_some() {
        return Err(Error::Usage(format!(
            "{} is a V8 heap snapshot: --keep, --fields and --names are for JVM heap dumps (a snapshot's names stay, its strings' text is masked)",
            input.display()
        )));
    }
    let h = crate::v8::read_dump(dump, input, settings, reporter)?;
    let io = |source| Error::Write { path: output.to_owned(), source };
    let partial = crate::partial::Partial::beside(output, "redact").map_err(io)?;
    let done =
        write_copy(partial.as_file(), gzip, |out| crate::v8::redact::redact(&h, out, &opts.mode), |e| e).map_err(io)?;
    partial.persist(output).map_err(io)?;
    Ok(report::RedactReport {
        arrays: done.strings,
        array_bytes: done.bytes,
        bytes: done.written,
        v8: true,
        ..redact_report(input, output, opts, gzip)
    })
}

/// Writes a copy into `file` with `write`, gzip-compressed when `gzip`, buffered and flushed
/// whole; `io` turns a failed write of the buffer or of the compressed members into `write`'s
/// error.
fn write_copy<T, E>(
    file: &std::fs::File,
    gzip: bool,
    write: impl FnOnce(&mut dyn Write) -> std::result::Result<T, E>,
    io: impl Fn(std::io::Error) -> E,
) -> std::result::Result<T, E> {
    let mut file = std::io::BufWriter::with_capacity(1 << 20, file);
    if gzip {
        let mut gz = ParallelGzip::new(file);
        let done = write(&mut gz)?;
        gz.finish().map_err(io)?;
        Ok(done)
    } else {
        let done = write(&mut file)?;
        file.flush().map_err(io)?;
        Ok(done)
    }
}

/// Bytes per gzip member: HotSpot's `-gz` writes members of 1 MiB too, and leakscope's reader
/// unpacks such members in parallel.
const MEMBER: usize = 1 << 20;

/// A gzip writer that compresses members of [`MEMBER`] bytes on every core (level 1, as
/// `jcmd GC.heap_dump -gz=1`), written in order: one stream of members is valid gzip.
struct ParallelGzip<W: Write> {
    out: W,
    pending: Vec<Vec<u8>>,
    current: Vec<u8>,
}

impl<W: Write> ParallelGzip<W> {
    fn new(out: W) -> Self {
        ParallelGzip { out, pending: Vec::new(), current: Vec::with_capacity(MEMBER) }
    }

    fn flush_members(&mut self) -> std::io::Result<()> {
        let members: Vec<std::io::Result<Vec<u8>>> = std::mem::take(&mut self.pending)
            .into_par_iter()
            .map(|block| {
                let mut gz =
                    flate2::write::GzEncoder::new(Vec::with_capacity(block.len() / 3), flate2::Compression::fast());
                gz.write_all(&block)?;
                gz.finish()
            })
            .collect();
        for m in members {
            self.out.write_all(&m?)?;
        }
        Ok(())
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if !self.current.is_empty() {
            self.pending.push(std::mem::take(&mut self.current));
        }
        self.flush_members()?;
        self.out.flush()
    }
}

impl<W: Write> Write for ParallelGzip<W> {
    fn write(&mut self, mut buf: &[u8]) -> std::io::Result<usize> {
        let n = buf.len();
        while !buf.is_empty() {
            let take = (MEMBER - self.current.len()).min(buf.len());
            self.current.extend_from_slice(&buf[..take]);
            buf = &buf[take..];
            if self.current.len() == MEMBER {
                self.pending.push(std::mem::replace(&mut self.current, Vec::with_capacity(MEMBER)));
                if self.pending.len() >= 4 * rayon::current_num_threads().max(1) {
                    self.flush_members()?;
                }
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The credentials in the dump at `path`, at or above `min`, with what holds each.
pub fn find_secrets(
    path: &Path,
    min: Confidence,
    settings: &ReadSettings,
    reporter: &dyn Reporter,
) -> Result<report::SecretsReport> {
    let dump = open_dump(path, settings)?;
    if crate::v8::is_snapshot_data(dump.data()) {
        let h = crate::v8::read_dump(dump, path, settings, reporter)?;
        return Ok(crate::v8::secrets::secrets(&h, min, reporter));
    }
    drop(dump);
    let snap = crate::load_snapshot(path, settings, reporter)?;
    Ok(secrets_in(&snap, min, reporter))
}

/// The credentials in a snapshot, at or above `min`.
pub fn secrets_in(s: &Snapshot, min: Confidence, reporter: &dyn Reporter) -> report::SecretsReport {
    let strings: Vec<heap::ClassIdx> = s.classes().find_all("java.lang.String").collect();
    let is_string = |o: ObjIdx| strings.contains(&s.class_of(o)) && s.mirror_class(o).is_none();
    // A string's array is searched as the string's text, not again on its own.
    let mut string_arrays: Vec<ObjIdx> =
        s.objects().par_bridge().filter(|&o| is_string(o)).filter_map(|o| s.field_object(o, "value")).collect();
    string_arrays.par_sort_unstable();
    let n = s.object_count();
    let searched = std::sync::atomic::AtomicU64::new(0);
    let count = || searched.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    reporter.start("searching strings and arrays for credentials", n);
    let found: Vec<(ObjIdx, &'static str, String, secrets::Hit)> = (0..n)
        .into_par_iter()
        .flat_map_iter(|i| {
            if i % 65536 == 0 {
                reporter.advance(65536.min(n - i));
            }
            let o = ObjIdx(i);
            let text = if is_string(o) {
                count();
                s.string_value(o, secrets::MAX_TEXT)
                    .map(|t| (if t.chars().all(|c| (c as u32) < 256) { "latin-1" } else { "utf-16" }, t))
            } else if string_arrays.binary_search(&o).is_err() {
                match s.primitive_array(o) {
                    Some((elem, data)) if is_text_array(elem) => {
                        count();
                        array_text(elem, data)
                    }
                    _ => None,
                }
            } else {
                None
            };
            let hits = text.map(|(enc, t)| (enc, secrets::find(&t), t));
            hits.into_iter().flat_map(move |(enc, hits, t)| hits.into_iter().map(move |h| (o, enc, t.clone(), h)))
        })
        .collect();
    reporter.finish();
    let searched = searched.into_inner();
    let below = found.iter().filter(|f| f.3.confidence < min).count() as u64;
    let mut listed: Vec<_> = found.into_iter().filter(|f| f.3.confidence >= min).collect();
    listed.sort_by(|a, b| b.3.confidence.cmp(&a.3.confidence).then(a.3.kind.cmp(&b.3.kind)).then(a.0.cmp(&b.0)));
    let paths = (!listed.is_empty()).then(|| analysis::PathFinder::new(s, reporter));
    let findings: Vec<report::SecretFinding> = listed
        .iter()
        .map(|(o, enc, text, hit)| {
            let path = paths.as_ref().and_then(|p| p.path(*o));
            let owner = path.as_ref().and_then(|p| {
                let n = p.steps.len();
                (n >= 2).then(|| report::SecretOwner {
                    id: report::ObjectId(s.address(p.steps[n - 2].object)),
                    class: s.type_label(p.steps[n - 2].object),
                    field: p.steps[n - 1].field.clone().unwrap_or_default(),
                })
            });
            report::SecretFinding {
                kind: hit.kind.name().into(),
                confidence: hit.confidence.name().into(),
                object: report::ObjectId(s.address(*o)),
                class: s.type_label(*o),
                encoding: (*enc).into(),
                owner,
                path: path.map(|p| report::PathEntry::new(p.root.to_report(), analysis::report_steps(s, &p.steps), 1)),
                excerpt: hit.excerpt(text),
            }
        })
        .collect();
    report::SecretsReport::new(findings, min.name(), below, searched)
}

fn is_text_array(elem: BasicType) -> bool {
    matches!(elem, BasicType::Char | BasicType::Byte)
}

/// A `char[]` as UTF-16, a `byte[]` as UTF-8 when it is valid UTF-8, else as Latin-1.
fn array_text(elem: BasicType, data: &[u8]) -> Option<(&'static str, String)> {
    if data.len() < secrets::MIN_TEXT {
        return None;
    }
    match elem {
        BasicType::Char => {
            let data = &data[..data.len().min(2 * secrets::MAX_TEXT)];
            Some(("utf-16", heap::decode_text(heap::TextEncoding::Utf16Be, data, usize::MAX)))
        }
        BasicType::Byte => {
            let data = &data[..data.len().min(secrets::MAX_TEXT)];
            match std::str::from_utf8(data) {
                Ok(t) => Some(("utf-8", t.to_string())),
                Err(_) => Some(("latin-1", heap::decode_text(heap::TextEncoding::Latin1, data, usize::MAX))),
            }
        }
        _ => None,
    }
}
