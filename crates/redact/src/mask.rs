//! Equality-preserving replacement of values under a secret key.
//!
//! A value (an array's contents, a string's characters, one field) is replaced by another of
//! the same length and type: equal values stay equal, within a dump and across dumps masked
//! with the same key, and different values stay different. Short values go through a keyed
//! permutation of their whole domain (a Feistel network over the value's index, walked until
//! it lands back in the domain), so no two can collide. Values whose domain exceeds 2^128
//! are replaced by a keyed hash's output stream instead, where a collision is as likely as
//! guessing a 128-bit key.
//!
//! The characters of a value keep their class: a value whose characters are all printable
//! ASCII becomes printable ASCII, one of printable Unicode stays printable Unicode, and only
//! a value that already held other characters may get them. Each class is masked as the set
//! of values that belong to it and to no narrower class, so the classes cannot collide.

use std::hash::Hasher;

use siphasher::sip128::{Hasher128, SipHasher13};

/// The secret that makes a redaction repeatable: 32 bytes, never written anywhere.
#[derive(Clone)]
pub struct Key {
    sip: [u8; 16],
    stream: [u8; 32],
    names: [u8; 32],
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

/// Shortest key file accepted: anything shorter could be guessed.
pub const MIN_KEY_BYTES: usize = 16;

impl Key {
    /// A key from the contents of a key file (at least [`MIN_KEY_BYTES`] bytes of any kind;
    /// they are hashed, so a passphrase works as well as random bytes).
    pub fn from_secret(secret: &[u8]) -> Option<Key> {
        (secret.len() >= MIN_KEY_BYTES).then(|| Key::derive(&blake3::derive_key("leakscope redact key v1", secret)))
    }

    /// A fresh random key from the operating system, for a one-off redaction.
    pub fn random() -> std::io::Result<Key> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Key::derive(&bytes))
    }

    fn derive(master: &[u8; 32]) -> Key {
        let sip = blake3::derive_key("leakscope redact permutation v1", master);
        Key {
            sip: sip[..16].try_into().expect("16 of 32 bytes"),
            stream: blake3::derive_key("leakscope redact stream v1", master),
            names: blake3::derive_key("leakscope redact names v1", master),
        }
    }

    /// The key of the pseudonyms of names (`--names`).
    pub(crate) fn names(&self) -> &[u8; 32] {
        &self.names
    }
}

/// One range of code points, both ends included.
type Range = (u32, u32);

/// A set of unit values (bytes or UTF-16 code units), as sorted ranges.
#[derive(Debug, Clone, Copy)]
struct Alphabet(&'static [Range]);

const PRINTABLE_ASCII: Alphabet = Alphabet(&[(0x20, 0x7e)]);
const ALL_BYTES: Alphabet = Alphabet(&[(0, 0xff)]);
const BOOLEANS: Alphabet = Alphabet(&[(0, 1)]);
/// Printable UTF-16 code units: no controls, no surrogates, no non-characters.
const PRINTABLE_BMP: Alphabet = Alphabet(&[(0x20, 0x7e), (0xa0, 0xd7ff), (0xe000, 0xfffd)]);
const ALL_UNITS: Alphabet = Alphabet(&[(0, 0xffff)]);

impl Alphabet {
    fn len(self) -> u32 {
        self.0.iter().map(|(a, b)| b - a + 1).sum()
    }

    fn index_of(self, unit: u32) -> Option<u32> {
        let mut base = 0;
        for &(a, b) in self.0 {
            if (a..=b).contains(&unit) {
                return Some(base + unit - a);
            }
            base += b - a + 1;
        }
        None
    }

    fn at(self, mut i: u32) -> u32 {
        for &(a, b) in self.0 {
            if i <= b - a {
                return a + i;
            }
            i -= b - a + 1;
        }
        unreachable!("index within the alphabet")
    }

    fn holds(self, mut units: impl Iterator<Item = u32>) -> bool {
        units.all(|u| self.index_of(u).is_some())
    }
}

/// How a value's bytes split into units, and the classes of units, narrowest first (each
/// contains the one before it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Units {
    /// One byte per unit, printable ASCII kept printable (`byte[]`, Latin-1 strings).
    Bytes,
    /// Two bytes per unit, big-endian (`char[]`, and char fields).
    CharsBe,
    /// Two bytes per unit, little-endian (the `byte[]` of a UTF-16 `String` on x86 and ARM).
    CharsLe,
    /// One byte per unit, 0 and 1 kept as booleans (`boolean[]`).
    Booleans,
    /// One byte per unit, any value (`int[]`, `long[]`, `float[]`...: raw bits).
    Raw,
}

impl Units {
    fn width(self) -> usize {
        match self {
            Units::CharsBe | Units::CharsLe => 2,
            _ => 1,
        }
    }

    fn classes(self) -> &'static [Alphabet] {
        match self {
            Units::Bytes => &[PRINTABLE_ASCII, ALL_BYTES],
            Units::CharsBe | Units::CharsLe => &[PRINTABLE_ASCII, PRINTABLE_BMP, ALL_UNITS],
            Units::Booleans => &[BOOLEANS, ALL_BYTES],
            Units::Raw => &[ALL_BYTES],
        }
    }

    /// A number for each kind, part of every value's tweak.
    pub fn code(self) -> u8 {
        self as u8 + 1
    }

    /// The units of `bytes`, decoded as they are read.
    fn units(self, bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
        let width = self.width();
        (0..bytes.len() / width).map(move |i| match self {
            Units::CharsBe => u32::from(u16::from_be_bytes([bytes[2 * i], bytes[2 * i + 1]])),
            Units::CharsLe => u32::from(u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]])),
            _ => u32::from(bytes[i]),
        })
    }

    fn write(self, units: &[u32], bytes: &mut [u8]) {
        match self {
            Units::CharsBe => {
                for (u, b) in units.iter().zip(bytes.chunks_exact_mut(2)) {
                    b.copy_from_slice(&(*u as u16).to_be_bytes());
                }
            }
            Units::CharsLe => {
                for (u, b) in units.iter().zip(bytes.chunks_exact_mut(2)) {
                    b.copy_from_slice(&(*u as u16).to_le_bytes());
                }
            }
            _ => {
                for (u, b) in units.iter().zip(bytes.iter_mut()) {
                    *b = *u as u8;
                }
            }
        }
    }
}

/// Masks values under one key.
#[derive(Debug, Clone)]
pub struct Masker {
    key: Key,
}

/// Rounds of the Feistel network: well past the four a strong pseudo-random permutation needs.
const ROUNDS: u64 = 8;

impl Masker {
    /// A masker for `key`.
    pub fn new(key: Key) -> Masker {
        Masker { key }
    }

    /// Replaces `bytes` (whole units of `units`; a trailing odd byte is left) in place.
    pub fn mask(&self, units: Units, bytes: &mut [u8]) {
        let n = bytes.len() / units.width();
        if n == 0 {
            return;
        }
        let bytes = &mut bytes[..n * units.width()];
        let classes = units.classes();
        // The widest class holds every unit: only the narrower ones are tested.
        let level =
            classes[..classes.len() - 1].iter().position(|a| a.holds(units.units(bytes))).unwrap_or(classes.len() - 1);
        let (alphabet, narrower) = (classes[level], level.checked_sub(1).map(|l| classes[l]));
        let tweak = u64::from(units.code()) << 56 | (level as u64) << 48 | n as u64;
        let domain = domain(alphabet.len(), n);
        if units.width() == 1 && alphabet.len() == 256 && domain.is_none() {
            self.stream_bytes(bytes, narrower, tweak);
            return;
        }
        let values: Vec<u32> = units.units(bytes).collect();
        let out = match domain {
            Some(size) => self.permute(&values, alphabet, narrower, size, tweak),
            None => self.stream(&values, alphabet, narrower, units, tweak),
        };
        units.write(&out, bytes);
    }

    /// One primitive field's raw bits (as the dump widens them to 64), masked for its type.
    pub fn mask_field(&self, ty: hprof::BasicType, raw: u64) -> u64 {
        use hprof::BasicType as T;
        let width = ty.primitive_bytes() as usize;
        let mut bytes = raw.to_be_bytes()[8 - width..].to_vec();
        let units = match ty {
            T::Char => Units::CharsBe,
            T::Boolean => Units::Booleans,
            _ => Units::Raw,
        };
        // A field is one value: its bytes are masked together, so numbers keep their width.
        self.mask(units, &mut bytes);
        bytes.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b))
    }

    fn permute(
        &self,
        values: &[u32],
        alphabet: Alphabet,
        narrower: Option<Alphabet>,
        size: u128,
        tweak: u64,
    ) -> Vec<u32> {
        let radix = u128::from(alphabet.len());
        let index = values
            .iter()
            .fold(0u128, |acc, &v| acc * radix + u128::from(alphabet.index_of(v).expect("the value's own class")));
        let bits = (128 - (size - 1).leading_zeros()).max(2).next_multiple_of(2);
        let mut y = index;
        loop {
            y = self.feistel(y, bits, tweak);
            if y >= size {
                continue;
            }
            let out = decode(y, alphabet, values.len());
            if narrower.is_none_or(|a| !a.holds(out.iter().copied())) {
                return out;
            }
        }
    }

    fn feistel(&self, x: u128, bits: u32, tweak: u64) -> u128 {
        let half = bits / 2;
        let mask = if half == 64 { u64::MAX } else { (1u64 << half) - 1 };
        let (mut left, mut right) = ((x >> half) as u64 & mask, x as u64 & mask);
        for round in 0..ROUNDS {
            let mut h = SipHasher13::new_with_key(&self.key.sip);
            h.write_u64(tweak);
            h.write_u64(round << 8 | u64::from(bits));
            h.write_u64(right);
            let f = h.finish128().h1 & mask;
            (left, right) = (right, left ^ f);
        }
        u128::from(left) << half | u128::from(right)
    }

    /// [`Masker::stream`] for one-byte units drawn from all 256 values, in place: the same
    /// draws (the key stream's bytes are the units), without widening each byte to a `u32`
    /// and back, which took most of the time on a heap of byte arrays.
    fn stream_bytes(&self, bytes: &mut [u8], narrower: Option<Alphabet>, tweak: u64) {
        let mut h = blake3::Hasher::new_keyed(&self.key.stream);
        h.update(&tweak.to_le_bytes());
        h.update(bytes);
        let mut reader = h.finalize_xof();
        loop {
            reader.fill(bytes);
            if narrower.is_none_or(|a| !a.holds(bytes.iter().map(|&b| u32::from(b)))) {
                return;
            }
        }
    }

    fn stream(
        &self,
        values: &[u32],
        alphabet: Alphabet,
        narrower: Option<Alphabet>,
        units: Units,
        tweak: u64,
    ) -> Vec<u32> {
        // The hash reads the units little-endian, each in its width; the output is drawn a
        // unit's width at a time. Both go through buffers: a call per byte made keyed
        // redaction of a heap of byte arrays 14 times slower than zeroing it.
        let width = units.width();
        let mut input = Vec::with_capacity(8 + values.len() * width);
        input.extend_from_slice(&tweak.to_le_bytes());
        for v in values {
            input.extend_from_slice(&v.to_le_bytes()[..width]);
        }
        let mut h = blake3::Hasher::new_keyed(&self.key.stream);
        h.update(&input);
        let mut reader = h.finalize_xof();
        let radix = alphabet.len();
        let limit = (1u32 << (8 * width)) / radix * radix;
        // Units of the alphabet by index, for the alphabets small enough to list.
        let table: Vec<u32> = if radix <= 256 { (0..radix).map(|i| alphabet.at(i)).collect() } else { Vec::new() };
        let mut buf = vec![0u8; (values.len() * width).clamp(64, 64 << 10).next_multiple_of(width)];
        let mut at = buf.len();
        loop {
            let mut out = Vec::with_capacity(values.len());
            while out.len() < values.len() {
                if at == buf.len() {
                    reader.fill(&mut buf);
                    at = 0;
                }
                let r = buf[at..at + width].iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b));
                at += width;
                if r < limit {
                    let i = r % radix;
                    out.push(table.get(i as usize).copied().unwrap_or_else(|| alphabet.at(i)));
                }
            }
            if narrower.is_none_or(|a| !a.holds(out.iter().copied())) {
                return out;
            }
        }
    }
}

/// |alphabet|^n when it fits in 128 bits.
fn domain(radix: u32, n: usize) -> Option<u128> {
    let mut size = 1u128;
    for _ in 0..n {
        size = size.checked_mul(u128::from(radix))?;
    }
    // The Feistel network works on an even number of bits up to 128.
    (size <= 1u128 << 126).then_some(size)
}

fn decode(mut y: u128, alphabet: Alphabet, n: usize) -> Vec<u32> {
    let radix = u128::from(alphabet.len());
    let mut out = vec![0u32; n];
    for slot in out.iter_mut().rev() {
        *slot = alphabet.at((y % radix) as u32);
        y /= radix;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn masker() -> Masker {
        Masker::new(Key::from_secret(b"a test key of some length").unwrap())
    }

    fn masked(m: &Masker, units: Units, v: &[u8]) -> Vec<u8> {
        let mut b = v.to_vec();
        m.mask(units, &mut b);
        b
    }

    #[test]
    fn every_short_value_gets_its_own_image_of_its_own_class() {
        let m = masker();
        // Every byte string of lengths 1 and 2: a bijection on each class.
        for len in 1..=2u32 {
            let mut seen = HashMap::new();
            for i in 0..256u32.pow(len) {
                let v: Vec<u8> = (0..len).rev().map(|k| (i >> (8 * k)) as u8).collect();
                let out = masked(&m, Units::Bytes, &v);
                assert_eq!(out.len(), v.len());
                let class = |b: &[u8]| b.iter().all(|&c| (0x20..=0x7e).contains(&c));
                assert_eq!(class(&out), class(&v), "{v:?} -> {out:?}");
                assert!(seen.insert(out.clone(), v.clone()).is_none(), "{v:?} and {:?} collide", seen[&out]);
            }
        }
    }

    #[test]
    fn masking_is_repeatable_under_a_key_and_differs_under_another() {
        let (a, b) = (masker(), Masker::new(Key::from_secret(b"another key, also long").unwrap()));
        let long = b"jdbc:postgresql://db.internal:5432/billing?user=app&password=hunter2-but-longer".to_vec();
        for v in [b"hunter2".to_vec(), long] {
            assert_eq!(masked(&a, Units::Bytes, &v), masked(&a, Units::Bytes, &v));
            assert_ne!(masked(&a, Units::Bytes, &v), v);
            assert_ne!(masked(&a, Units::Bytes, &v), masked(&b, Units::Bytes, &v));
            assert!(masked(&a, Units::Bytes, &v).iter().all(|c| (0x20..=0x7e).contains(c)));
        }
        assert!(Key::from_secret(b"short").is_none());
    }

    #[test]
    fn chars_stay_printable_and_fields_keep_their_width() {
        let m = masker();
        let text: Vec<u8> = "Grüße, 東京".encode_utf16().flat_map(|u| u.to_be_bytes()).collect();
        let out = masked(&m, Units::CharsBe, &text);
        let units: Vec<u16> = out.chunks_exact(2).map(|b| u16::from_be_bytes([b[0], b[1]])).collect();
        assert!(units.iter().all(|&u| PRINTABLE_BMP.index_of(u32::from(u)).is_some()), "{units:x?}");
        assert_ne!(out, text);
        for ty in [hprof::BasicType::Int, hprof::BasicType::Short, hprof::BasicType::Byte] {
            let bits = 8 * ty.primitive_bytes();
            let values = 0..(1u64 << bits).min(300);
            let outs: std::collections::HashSet<u64> = values.clone().map(|v| m.mask_field(ty, v)).collect();
            assert_eq!(outs.len(), values.count());
            assert!(outs.iter().all(|&v| v >> bits == 0));
        }
        assert!([0, 1].contains(&m.mask_field(hprof::BasicType::Boolean, 1)));
    }

    #[test]
    fn booleans_stay_booleans() {
        let m = masker();
        let v = vec![0, 1, 1, 0, 1, 0, 0, 0, 1];
        let out = masked(&m, Units::Booleans, &v);
        assert!(out.iter().all(|&b| b <= 1));
        assert_ne!(out, v);
    }
}
