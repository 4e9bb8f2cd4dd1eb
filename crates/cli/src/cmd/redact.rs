//! `leakscope redact`: a copy of a heap dump that can leave production.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};

use render::Text;

use crate::dump_args;
use crate::exit::Exit;
use crate::progress::Bar;

/// Write a copy of a heap dump without the program's data, for someone who may not see it.
///
/// The copy has the same objects, ids, classes, sizes and references, so every analysis
/// (histogram, dominators, suspects, growth, paths) gives the same answer on it. What changes
/// are values: the contents of every primitive array (so the text of every String, char[] and
/// byte[]), and with --fields primitive fields too. Symbols that no record references are
/// left out: HotSpot writes its whole symbol table, with the string literals of all loaded
/// code (a password written in the source is one).
///
/// By default each value is replaced by its image under a secret key, of the same length and
/// type (text stays printable text): equal values stay equal and different values stay
/// different, so duplicate strings, `sql` grouping by value, and comparisons between dumps
/// redacted with the same --key-file still work. Without --key-file a random key is used and
/// forgotten. The frequency of values is not hidden: a value seen 1,000 times is still seen
/// 1,000 times. --zero writes zeros instead, as other tools do (then all text of one length is
/// the same text).
///
/// A V8 heap snapshot (Node.js, Chrome) is redacted too: the text of its string objects and
/// the keys of objects used as dictionaries are masked (or zeroed), equal texts to equal
/// masks, and the names of constructors, properties, variables, functions and scripts stay,
/// so histogram, dominators, paths and growth answer the same; --keep, --fields and --names
/// are for JVM dumps.
///
/// Left readable: class, field and method names (--names replaces the application's), and
/// thread names (analyses name threads by them; --mask-thread-names masks them too). A String's cached hash code is reset to "not
/// computed", because it is a function of the text. Reads gzip; writes gzip when OUT ends in
/// .gz or with --gzip. The copy is written beside OUT and renamed when complete.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  leakscope redact app.hprof -o app-redacted.hprof
  # the same key for every dump of a series, so that growth can be compared
  head -c 32 /dev/urandom > redact.key
  leakscope redact day1.hprof.gz -o day1-shared.hprof.gz --key-file redact.key
  # the strings of a package stay readable; numbers are masked too
  leakscope redact app.hprof -o out.hprof --keep com.acme --fields numbers
  # the application's names too, with the mapping kept back home
  leakscope redact app.hprof -o out.hprof --names --names-map names.json
  # check what is left
  leakscope secrets out.hprof")]
pub struct RedactArgs {
    /// The heap dump (.hprof) or V8 heap snapshot (.heapsnapshot) to read, or gzip of one.
    pub dump: PathBuf,
    /// Where to write the redacted copy.
    #[arg(long, short, value_name = "OUT")]
    pub output: PathBuf,
    /// Replace values with zeros instead of masking them (equal values no longer stay equal).
    #[arg(long)]
    pub zero: bool,
    /// A file whose contents (at least 16 bytes: random bytes or a long passphrase) are the
    /// key, so that dumps redacted with it can be compared [default: a random key, used once].
    /// With --zero it keys only the pseudonyms of --names.
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<PathBuf>,
    /// A class (its Java name) or package whose instances stay readable, with the strings and
    /// arrays their fields (and its static fields) reference; values equal to those stay
    /// readable wherever they are, so that equal values stay equal. Repeatable.
    #[arg(long, value_name = "CLASS_OR_PACKAGE")]
    pub keep: Vec<String>,
    /// Primitive fields (instance and static) to replace as well: numbers (byte, short, int,
    /// long, float, double), chars, booleans, or all. Repeatable.
    #[arg(long, value_enum, value_name = "KIND")]
    pub fields: Vec<FieldKind>,
    /// Mask thread names too (they stay readable by default).
    #[arg(long)]
    pub mask_thread_names: bool,
    /// Replace the application's class, field and method names (and source file names) by
    /// pseudonyms, the same identifier by the same pseudonym (`com.acme.Order` becomes
    /// `com.nq4…​.Cb7…`), under the key, so one --key-file gives the same pseudonyms in every
    /// dump. Names of the JDK and of known frameworks (Tomcat, Jetty, Spring, Netty…) stay, as
    /// do their packages. Masks thread names too (as values: the same length).
    #[arg(long)]
    pub names: bool,
    /// Write the mapping from pseudonyms (and masked thread names) to names to FILE (JSON),
    /// to read results of the copy. Keep it where the dump is: it undoes --names.
    #[arg(long, value_name = "FILE", requires = "names")]
    pub names_map: Option<PathBuf>,
    /// Compress the copy with gzip [default: when OUT ends in .gz].
    #[arg(long)]
    pub gzip: bool,
    /// Where a gzip-compressed input is unpacked while it is read [default: TMPDIR, else /tmp].
    #[arg(long, value_name = "DIR")]
    pub tmp_dir: Option<PathBuf>,
    /// No progress bar on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print one JSON document: {"input","output","mode","gzip","arrays","array_bytes","kept_arrays","string_hashes","fields","symbols_dropped","pseudonyms","names_map","bytes"}.
    #[arg(long)]
    pub json: bool,
}

/// Kinds of primitive fields `--fields` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FieldKind {
    /// byte, short, int, long, float and double fields.
    Numbers,
    /// char fields.
    Chars,
    /// boolean fields.
    Booleans,
    /// Every primitive field.
    All,
}

impl FieldKind {
    fn types(self) -> &'static [heap::BasicType] {
        use heap::BasicType as T;
        match self {
            FieldKind::Numbers => &[T::Byte, T::Short, T::Int, T::Long, T::Float, T::Double],
            FieldKind::Chars => &[T::Char],
            FieldKind::Booleans => &[T::Boolean],
            FieldKind::All => &[T::Byte, T::Short, T::Int, T::Long, T::Float, T::Double, T::Char, T::Boolean],
        }
    }
}

/// Runs the command.
pub fn run(args: &RedactArgs) -> anyhow::Result<Exit> {
    if args.zero && !args.names && args.key_file.is_some() {
        bail!("--key-file keys the masks and the pseudonyms: with --zero and without --names there is nothing to key");
    }
    let key = || -> anyhow::Result<redact::Key> {
        Ok(match &args.key_file {
            Some(path) => {
                let secret = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
                match redact::Key::from_secret(&secret) {
                    Some(key) => key,
                    None => bail!(
                        "{} holds {} bytes: a key file needs at least {} (head -c 32 /dev/urandom > FILE makes one)",
                        path.display(),
                        secret.len(),
                        redact::MIN_KEY_BYTES
                    ),
                }
            }
            None => redact::Key::random().context("cannot get a random key from the system")?,
        })
    };
    let mode = if args.zero { redact::Mode::Zero } else { redact::Mode::Mask(key()?) };
    let names = match (&mode, args.names) {
        (_, false) => None,
        (redact::Mode::Mask(k), true) => Some(k.clone()),
        (redact::Mode::Zero, true) => Some(key()?),
    };
    let mut fields: Vec<heap::BasicType> = args.fields.iter().flat_map(|k| k.types().iter().copied()).collect();
    fields.sort_by_key(|t| t.code());
    fields.dedup();
    let opts = redact::Options {
        mode,
        keep: args.keep.clone(),
        fields,
        mask_thread_names: args.mask_thread_names || args.names,
        names,
    };
    let gzip = args.gzip || args.output.extension().is_some_and(|e| e == "gz");
    let settings = app::ReadSettings { tmp_dir: args.tmp_dir.clone(), ..Default::default() };
    let bar = Bar::new(args.quiet);
    let report =
        app::share::redact_file(&args.dump, &args.output, &opts, args.names_map.as_deref(), gzip, &settings, &bar)?;
    let read = bar.read_warnings();
    drop(bar);
    dump_args::emit(args.json, &report, read, |r| r.to_text())
}
