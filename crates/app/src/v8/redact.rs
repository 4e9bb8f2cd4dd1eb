//! `redact` on a V8 snapshot: a copy whose strings that are only values (the text of string
//! objects) are masked, equal texts to equal masks, and everything an analysis shows (names of
//! constructors, properties, variables, functions and scripts) is kept, so that every command
//! answers the same on the copy.

use heapsnapshot::V8Heap;
use rustc_hash::FxHashSet;

/// Masks applied to one text at most while they fall on a kept text.
const MAX_WALK: usize = 10_000;

/// What the copy replaced.
#[derive(Debug, Default)]
pub struct Redacted {
    /// Strings whose text was replaced.
    pub strings: u64,
    /// Bytes of their text, as UTF-8.
    pub bytes: u64,
    /// Bytes written.
    pub written: u64,
}

/// Writes `h`'s file to `out` with its value strings replaced as `mode` says: masked under
/// the key (as UTF-16 units, printable text staying printable text), or zeros (the
/// character `0`, as many units as the text has).
pub fn redact(h: &V8Heap, out: &mut dyn std::io::Write, mode: &redact::Mode) -> std::io::Result<Redacted> {
    let values = h.value_strings();
    let masker = match mode {
        redact::Mode::Mask(key) => Some(redact::Masker::new(key.clone())),
        redact::Mode::Zero => None,
    };
    // The texts that stay: a mask is never one of them (the mask is applied again until it is
    // not, which keeps masks of different texts different), or a value would read as a name.
    let kept: FxHashSet<Vec<u16>> =
        (0..values.len()).filter(|&i| !values[i]).map(|i| h.string(i as u32).encode_utf16().collect()).collect();
    let mut done = Redacted::default();
    done.written = h.write_replacing_strings(out, |i, text| {
        if !values.get(i as usize).copied().unwrap_or(false) || text.is_empty() {
            return None;
        }
        done.strings += 1;
        done.bytes += text.len() as u64;
        Some(match &masker {
            Some(m) => {
                // The mask is a permutation of the texts of one length and kind, so the walk
                // comes back to texts that are not kept; the bound is for safety only.
                let mut units: Vec<u16> = text.encode_utf16().collect();
                for _ in 0..MAX_WALK {
                    units = mask(m, &units);
                    if !kept.contains(&units) {
                        break;
                    }
                }
                units
            }
            None => vec![u16::from(b'0'); text.encode_utf16().count()],
        })
    })?;
    Ok(done)
}

/// `units` masked as UTF-16 text under `m`.
fn mask(m: &redact::Masker, units: &[u16]) -> Vec<u16> {
    let mut bytes: Vec<u8> = units.iter().flat_map(|u| u.to_be_bytes()).collect();
    m.mask(redact::Units::CharsBe, &mut bytes);
    bytes.chunks_exact(2).map(|b| u16::from_be_bytes([b[0], b[1]])).collect()
}
