//! Making a heap dump safe to share.
//!
//! [`redact`] copies an HPROF file record by record and replaces what the program's users
//! put in it (the contents of primitive arrays, so the text of every `String`, `char[]` and
//! `byte[]`; on request primitive fields) while every record, id, class, size and reference
//! stays as it was, so every analysis of the copy gives what it gives on the original. By
//! default values are masked under a key ([`mask`]): equal values stay equal and different
//! ones different, so duplicate strings and comparisons between dumps still work. [`secrets`]
//! finds the credentials a dump still holds.

mod copy;
pub mod mask;
mod names;
mod options;
mod plan;
pub mod secrets;

pub use copy::{redact, Error, Summary};
pub use mask::{Key, Masker, Units, MIN_KEY_BYTES};
pub use options::{Mode, Options};
