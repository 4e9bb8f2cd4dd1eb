//! Credentials in text: what a dump must not carry out of production.
//!
//! Each detector matches a documented shape and then validates it where the format allows:
//! a PEM block's body must decode to a key structure, a JWT's header must be JSON naming
//! its algorithm, a GitHub or npm token's last six characters must be the CRC-32 of the rest,
//! a card number must pass Luhn's check and fit its network's prefix and length. What only
//! looks random is reported at low confidence.

use std::sync::LazyLock;

use base64::Engine as _;
use regex::Regex;

/// How sure a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Confidence {
    /// Only looks random (long, high-entropy text), or a known shape whose check failed.
    Low,
    /// A known shape that has no check, or one that can occur by chance (card numbers).
    Medium,
    /// A known shape that passed its check, or a prefix no other text has.
    High,
}

impl Confidence {
    /// The lowercase name (`high`).
    pub fn name(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// What kind of credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A PEM private key block whose body decodes to a key.
    PrivateKey,
    /// A JSON Web Token.
    Jwt,
    /// An AWS access key id.
    AwsAccessKey,
    /// A GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GithubToken,
    /// A GitLab personal access token (`glpat-`).
    GitlabToken,
    /// An npm access token (`npm_`).
    NpmToken,
    /// A Slack token (`xoxb-`, `xoxp-`, ...).
    SlackToken,
    /// A Stripe secret or restricted key (`sk_live_`, `rk_live_`).
    StripeKey,
    /// A Google API key (`AIza`).
    GoogleApiKey,
    /// A URL (JDBC included) that carries a password.
    UrlPassword,
    /// An HTTP `Authorization: Bearer` credential.
    BearerToken,
    /// An HTTP `Authorization: Basic` credential that decodes to `user:password`.
    BasicAuth,
    /// A payment card number.
    CardNumber,
    /// Long random-looking text.
    HighEntropy,
}

impl Kind {
    /// The kebab-case name (`private-key`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::PrivateKey => "private-key",
            Kind::Jwt => "jwt",
            Kind::AwsAccessKey => "aws-access-key",
            Kind::GithubToken => "github-token",
            Kind::GitlabToken => "gitlab-token",
            Kind::NpmToken => "npm-token",
            Kind::SlackToken => "slack-token",
            Kind::StripeKey => "stripe-key",
            Kind::GoogleApiKey => "google-api-key",
            Kind::UrlPassword => "url-password",
            Kind::BearerToken => "bearer-token",
            Kind::BasicAuth => "basic-auth",
            Kind::CardNumber => "card-number",
            Kind::HighEntropy => "high-entropy",
        }
    }
}

/// One credential found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// What it is.
    pub kind: Kind,
    /// How sure.
    pub confidence: Confidence,
    /// Byte range of the secret itself in the text.
    pub secret: std::ops::Range<usize>,
    /// Byte range of the match shown around it (a URL around its password).
    pub shown: std::ops::Range<usize>,
}

impl Hit {
    /// The match with its secret part masked: at most its first quarter (and never more than
    /// four characters) stays, the rest becomes `*`; never the whole secret.
    pub fn excerpt(&self, text: &str) -> String {
        let secret = &text[self.secret.clone()];
        let chars = secret.chars().count();
        let keep = (chars / 4).min(4);
        let masked: String =
            secret.chars().take(keep).chain(std::iter::repeat_n('*', (chars - keep).clamp(3, 12))).collect();
        let (before, after) = (&text[self.shown.start..self.secret.start], &text[self.secret.end..self.shown.end]);
        let clip = |s: &str, n: usize, tail: bool| -> String {
            let c: Vec<char> = s.chars().collect();
            if c.len() <= n {
                s.to_string()
            } else if tail {
                format!("…{}", c[c.len() - n..].iter().collect::<String>())
            } else {
                format!("{}…", c[..n].iter().collect::<String>())
            }
        };
        // One line: a PEM block's line breaks and a header's tabs become spaces.
        let line = format!("{}{masked}{}", clip(before, 40, true), clip(after, 24, false));
        line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
    }
}

/// Texts shorter than this hold no credential worth reporting.
pub const MIN_TEXT: usize = 12;

/// Longest text searched per object: credentials sit in short strings, and a megabyte of a
/// buffer is enough to find one that starts it.
pub const MAX_TEXT: usize = 1 << 20;

/// Every credential in `text`, in order of position; overlapping weaker findings (a random
/// run inside a JWT) are dropped.
pub fn find(text: &str) -> Vec<Hit> {
    if text.len() < MIN_TEXT {
        return Vec::new();
    }
    let mut hits = Vec::new();
    private_keys(text, &mut hits);
    jwts(text, &mut hits);
    tokens(text, &mut hits);
    urls(text, &mut hits);
    authorization(text, &mut hits);
    cards(text, &mut hits);
    entropy(text, &mut hits);
    hits.sort_by_key(|h| (h.shown.start, std::cmp::Reverse(h.confidence)));
    let mut kept: Vec<Hit> = Vec::new();
    for h in hits {
        let overlaps = kept.iter().position(|k| k.shown.start < h.shown.end && h.shown.start < k.shown.end);
        match overlaps {
            Some(i) if kept[i].confidence >= h.confidence => {}
            Some(i) => kept[i] = h,
            None => kept.push(h),
        }
    }
    kept
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid pattern")
}

static PEM: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY)-----([A-Za-z0-9+/=\s:,\-]*?)-----END ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY)-----",
    )
});

fn private_keys(text: &str, hits: &mut Vec<Hit>) {
    if !text.contains("PRIVATE KEY-----") {
        return;
    }
    for c in PEM.captures_iter(text) {
        let (all, label, body) = (c.get(0).expect("match"), &c[1], c.get(2).expect("body"));
        if label != &c[3] {
            continue;
        }
        // Legacy encrypted PEM has headers (Proc-Type, DEK-Info) before a blank line.
        let b64: String =
            body.as_str().rsplit("\n\n").next().unwrap_or("").chars().filter(|c| !c.is_whitespace()).collect();
        let Ok(der) = base64::engine::general_purpose::STANDARD.decode(b64.as_bytes()) else { continue };
        let parses =
            if label == "OPENSSH PRIVATE KEY" { der.starts_with(b"openssh-key-v1\0") } else { is_der_sequence(&der) };
        if parses {
            hits.push(Hit {
                kind: Kind::PrivateKey,
                confidence: Confidence::High,
                secret: body.range(),
                shown: all.range(),
            });
        }
    }
}

/// Whether `der` is exactly one DER SEQUENCE whose length says how long it is, with a first
/// element inside (every private key encoding: PKCS#1, PKCS#8, SEC 1, encrypted PKCS#8).
fn is_der_sequence(der: &[u8]) -> bool {
    let Some((&0x30, rest)) = der.split_first() else { return false };
    let Some((&first, rest)) = rest.split_first() else { return false };
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return false;
        }
        (rest[..n].iter().fold(0usize, |a, &b| a << 8 | b as usize), &rest[n..])
    };
    len == rest.len() && len >= 2 && matches!(rest[0], 0x02 | 0x30)
}

static JWT: LazyLock<Regex> = LazyLock::new(|| re(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"));

fn jwts(text: &str, hits: &mut Vec<Hit>) {
    if !text.contains("eyJ") {
        return;
    }
    for m in JWT.find_iter(text) {
        let header = m.as_str().split('.').next().unwrap_or("");
        let Ok(json) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header.trim_end_matches('=')) else {
            continue;
        };
        let alg = serde_json::from_slice::<serde_json::Value>(&json)
            .ok()
            .is_some_and(|v| v.get("alg").is_some_and(serde_json::Value::is_string));
        if alg {
            hits.push(Hit { kind: Kind::Jwt, confidence: Confidence::High, secret: m.range(), shown: m.range() });
        }
    }
}

static TOKENS: LazyLock<Vec<(Kind, Regex)>> = LazyLock::new(|| {
    vec![
        (Kind::AwsAccessKey, re(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b")),
        (Kind::GithubToken, re(r"\bgh[pousr]_[A-Za-z0-9]{36}\b")),
        (Kind::GithubToken, re(r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b")),
        (Kind::GitlabToken, re(r"\bglpat-[A-Za-z0-9_-]{20}\b")),
        (Kind::NpmToken, re(r"\bnpm_[A-Za-z0-9]{36}\b")),
        (Kind::SlackToken, re(r"\bxox[baprs]-[0-9]{8,13}-[0-9A-Za-z-]{10,}")),
        (Kind::StripeKey, re(r"\b[rs]k_live_[0-9A-Za-z]{24,99}\b")),
        (Kind::GoogleApiKey, re(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ]
});

fn tokens(text: &str, hits: &mut Vec<Hit>) {
    for (kind, pattern) in TOKENS.iter() {
        for m in pattern.find_iter(text) {
            let confidence = match kind {
                // The last six characters are a CRC-32 of the random part (GitHub's and npm's
                // formats since 2021); a token that fails it was not issued by them.
                Kind::GithubToken | Kind::NpmToken if !m.as_str().starts_with("github_pat_") => {
                    if crc_checks(m.as_str()) {
                        Confidence::High
                    } else {
                        Confidence::Low
                    }
                }
                _ => Confidence::High,
            };
            hits.push(Hit { kind: *kind, confidence, secret: m.range(), shown: m.range() });
        }
    }
}

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The six-character base-62 CRC-32 that GitHub and npm append to a token's random part.
pub fn crc_suffix(random: &str) -> String {
    let mut n = crc32fast::hash(random.as_bytes());
    let mut out = [b'0'; 6];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn crc_checks(token: &str) -> bool {
    let Some((_, body)) = token.split_once('_') else { return false };
    body.len() > 6 && crc_suffix(&body[..body.len() - 6]) == body[body.len() - 6..]
}

static URL_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*(?::[a-zA-Z0-9+.\-]+)*://[^\s:/@?#]+:([^\s@/?#\x00-\x1f]+)@[^\s/]")
});
static PARAM_PASSWORD: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\bjdbc:[^\s]*?[;&?:](?:password|pwd|passwd)=([^\s;&\x00-\x1f]+)"));

fn urls(text: &str, hits: &mut Vec<Hit>) {
    if text.contains("://") {
        for c in URL_PASSWORD.captures_iter(text) {
            push_password(c, Kind::UrlPassword, hits);
        }
    }
    if text.contains("jdbc:") || text.contains("JDBC:") {
        for c in PARAM_PASSWORD.captures_iter(text) {
            push_password(c, Kind::UrlPassword, hits);
        }
    }
}

fn push_password(c: regex::Captures<'_>, kind: Kind, hits: &mut Vec<Hit>) {
    let (all, secret) = (c.get(0).expect("match"), c.get(1).expect("password"));
    let placeholder = secret.as_str().starts_with("${") || secret.as_str().chars().all(|c| c == '*' || c == 'x');
    if !placeholder {
        hits.push(Hit { kind, confidence: Confidence::High, secret: secret.range(), shown: all.range() });
    }
}

static BEARER: LazyLock<Regex> = LazyLock::new(|| re(r"\bBearer\s+([A-Za-z0-9\-._~+/]{16,}=*)"));
static BASIC: LazyLock<Regex> = LazyLock::new(|| re(r"\bBasic\s+([A-Za-z0-9+/]{6,}={0,2})"));

fn authorization(text: &str, hits: &mut Vec<Hit>) {
    if text.contains("Bearer") {
        for c in BEARER.captures_iter(text) {
            let (all, secret) = (c.get(0).expect("match"), c.get(1).expect("token"));
            hits.push(Hit {
                kind: Kind::BearerToken,
                confidence: Confidence::Medium,
                secret: secret.range(),
                shown: all.range(),
            });
        }
    }
    if text.contains("Basic") {
        for c in BASIC.captures_iter(text) {
            let (all, secret) = (c.get(0).expect("match"), c.get(1).expect("credential"));
            let decoded = base64::engine::general_purpose::STANDARD.decode(secret.as_str()).ok();
            let user_password = decoded
                .and_then(|d| String::from_utf8(d).ok())
                .is_some_and(|s| s.contains(':') && !s.starts_with(':') && s.chars().all(|c| !c.is_control()));
            if user_password {
                hits.push(Hit {
                    kind: Kind::BasicAuth,
                    confidence: Confidence::High,
                    secret: secret.range(),
                    shown: all.range(),
                });
            }
        }
    }
}

static CARD: LazyLock<Regex> = LazyLock::new(|| re(r"\b\d(?:[ -]?\d){12,18}\b"));

fn cards(text: &str, hits: &mut Vec<Hit>) {
    if text.bytes().filter(u8::is_ascii_digit).count() < 13 {
        return;
    }
    for m in CARD.find_iter(text) {
        let digits: Vec<u8> = m.as_str().bytes().filter(u8::is_ascii_digit).map(|d| d - b'0').collect();
        if luhn(&digits)
            && network_fits(&digits)
            && !part_of_a_longer_token(text, m.range())
            && grouped_as_a_card(m.as_str())
        {
            hits.push(Hit {
                kind: Kind::CardNumber,
                confidence: Confidence::Medium,
                secret: m.range(),
                shown: m.range(),
            });
        }
    }
}

/// Whether the digits at `r` continue into a longer token joined by hyphens or dots, as a
/// UUID's groups do (`44641234-5678-9012-3456-7890abcdef12`: the first four groups are 16
/// digits that pass Luhn's check one time in ten).
fn part_of_a_longer_token(text: &str, r: std::ops::Range<usize>) -> bool {
    let b = text.as_bytes();
    let joined = |at: usize, next: Option<&u8>| {
        matches!(b.get(at), Some(b'-' | b'.')) && next.is_some_and(u8::is_ascii_alphanumeric)
    };
    joined(r.end, b.get(r.end + 1)) || (r.start >= 2 && joined(r.start - 1, b.get(r.start - 2)))
}

/// Whether a number written with separators is grouped as cards print theirs: fours (the last
/// group may be shorter), or 4-6-5 and 4-6-4 (American Express, Diners Club). A UUID's 8-4-4-4
/// groups are not.
fn grouped_as_a_card(s: &str) -> bool {
    let groups: Vec<usize> = s.split([' ', '-']).map(str::len).collect();
    let n = groups.len();
    n == 1
        || groups[..n - 1].iter().all(|&g| g == 4) && (1..=4).contains(&groups[n - 1])
        || groups == [4, 6, 5]
        || groups == [4, 6, 4]
}

/// Luhn's check digit test.
pub fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 1 {
                if d * 2 > 9 {
                    d * 2 - 9
                } else {
                    d * 2
                }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Whether the number has the prefix and length of a card network (Visa, Mastercard,
/// American Express, Discover, JCB, Diners Club, UnionPay).
fn network_fits(d: &[u8]) -> bool {
    let prefix = |n: usize| d.iter().take(n).fold(0u32, |a, &x| a * 10 + u32::from(x));
    let len = d.len();
    (d[0] == 4 && matches!(len, 13 | 16 | 19))
        || ((51..=55).contains(&prefix(2)) || (2221..=2720).contains(&prefix(4))) && len == 16
        || matches!(prefix(2), 34 | 37) && len == 15
        || (prefix(4) == 6011 || prefix(2) == 65 || (644..=649).contains(&prefix(3))) && matches!(len, 16 | 19)
        || (3528..=3589).contains(&prefix(4)) && (16..=19).contains(&len)
        || (prefix(2) == 36 || (300..=305).contains(&prefix(3))) && len == 14
        || prefix(2) == 62 && (16..=19).contains(&len)
}

static RANDOM_RUN: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z0-9+/_\-]{32,}={0,2}"));

fn entropy(text: &str, hits: &mut Vec<Hit>) {
    if text.len() < 32 {
        return;
    }
    for m in RANDOM_RUN.find_iter(text) {
        let s = m.as_str();
        let classes = [
            s.bytes().any(|b| b.is_ascii_lowercase()),
            s.bytes().any(|b| b.is_ascii_uppercase()),
            s.bytes().any(|b| b.is_ascii_digit()),
        ];
        let hex = s.bytes().all(|b| b.is_ascii_hexdigit());
        let bits = shannon(s);
        // File paths and alphabets (`0123456789abcdef…`) are long and varied, not random.
        let path = s.matches('/').count() >= 2 && !s.contains('+');
        let runs = s.as_bytes().windows(2).filter(|w| w[1] == w[0].wrapping_add(1)).count();
        if path || runs * 3 > s.len() {
            continue;
        }
        let random =
            if hex { s.len() >= 40 && bits >= 3.5 } else { classes.iter().filter(|c| **c).count() >= 2 && bits >= 4.2 };
        if random {
            hits.push(Hit {
                kind: Kind::HighEntropy,
                confidence: Confidence::Low,
                secret: m.range(),
                shown: m.range(),
            });
        }
    }
}

/// Shannon entropy in bits per character.
fn shannon(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| f64::from(c) / n).map(|p| -p * p.log2()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, Confidence)> {
        find(text).into_iter().map(|h| (h.kind, h.confidence)).collect()
    }

    #[test]
    fn tokens_with_a_checksum_are_sure_only_when_it_holds() {
        let random = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5";
        let good = format!("ghp_{random}{}", crc_suffix(random));
        let bad = format!("ghp_{random}000000");
        assert_eq!(kinds(&format!("token={good}")), [(Kind::GithubToken, Confidence::High)]);
        assert_eq!(kinds(&bad), [(Kind::GithubToken, Confidence::Low)]);
    }

    #[test]
    fn jwts_need_a_json_header_naming_the_algorithm() {
        let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let jwt = format!("{}.{}.c2lnbmF0dXJlLWJ5dGVz", enc(r#"{"alg":"HS256","typ":"JWT"}"#), enc(r#"{"sub":"42"}"#));
        assert_eq!(kinds(&jwt), [(Kind::Jwt, Confidence::High)]);
        let fake = format!("{}.{}.c2lnbmF0dXJl", enc("{not json at all, really}"), enc(r#"{"sub":"42"}"#));
        assert!(kinds(&fake).iter().all(|k| k.1 == Confidence::Low), "{:?}", kinds(&fake));
    }

    #[test]
    fn urls_cards_and_headers() {
        assert_eq!(
            kinds("jdbc:postgresql://db:5432/app?user=app&password=s3cr3t!"),
            [(Kind::UrlPassword, Confidence::High)]
        );
        assert_eq!(kinds("https://deploy:hunter22@git.example.com/x.git"), [(Kind::UrlPassword, Confidence::High)]);
        assert!(kinds("https://example.com/path?a=b").is_empty());
        // javac's string concatenation recipes put \u{1} where an argument goes.
        assert!(kinds("jdbc:postgresql://db/app?user=app&password=\u{1}").is_empty());
        assert_eq!(kinds("card 4111 1111 1111 1111 on file"), [(Kind::CardNumber, Confidence::Medium)]);
        assert!(kinds("card 4111 1111 1111 1112 on file").is_empty());
        assert_eq!(kinds("amex 3782-822463-10005"), [(Kind::CardNumber, Confidence::Medium)]);
        assert_eq!(kinds("4111111111111111"), [(Kind::CardNumber, Confidence::Medium)]);
        assert_eq!(kinds("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l"), [(Kind::BasicAuth, Confidence::High)]);
        let h = &find("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l")[0];
        let shown = h.excerpt("Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l");
        assert!(shown.starts_with("Basic YWxh*") && !shown.contains("ZGRpbjpvcGVu"), "{shown}");
    }

    #[test]
    fn uuids_are_not_card_numbers() {
        // Digits across a UUID's hyphens whose first 16 pass Luhn's check and fit Visa's
        // prefix and length (the oracle checks them), ending at a letter or running on.
        let digits = |s: &str| s.bytes().filter(u8::is_ascii_digit).map(|d| d - b'0').collect::<Vec<u8>>();
        for uuid in ["44640836-9007-1284-a1b2-3c4d5e6f7a8b", "44643318-1234-2079-604a-3c4d5e6f7a8b"] {
            let d = digits(&uuid[..18]);
            assert!(luhn(&d) && network_fits(&d), "{uuid}: the oracle needs a card-like run");
            assert!(kinds(uuid).is_empty(), "{uuid}: {:?}", kinds(uuid));
            assert!(kinds(&format!("session {uuid} open")).is_empty(), "{uuid}");
        }
        // A random sample of UUIDs whose groups are digits: none is a card.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..2000 {
            let (a, b) = (next(), next());
            let uuid = format!(
                "{:08}-{:04}-{:04}-{:04}-{:012x}",
                a % 100_000_000,
                (a >> 32) % 10_000,
                b % 10_000,
                (b >> 20) % 10_000,
                next() & 0xffff_ffff_ffff
            );
            assert!(kinds(&uuid).iter().all(|k| k.0 != Kind::CardNumber), "{uuid}: {:?}", kinds(&uuid));
        }
    }

    #[test]
    fn pem_blocks_count_only_when_their_body_is_a_key() {
        let der = [0x30u8, 0x05, 0x02, 0x01, 0x00, 0x02, 0x00];
        let body = base64::engine::general_purpose::STANDARD.encode(der);
        let key = format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n");
        assert_eq!(kinds(&key), [(Kind::PrivateKey, Confidence::High)]);
        let junk = "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5IGF0IGFsbA==\n-----END PRIVATE KEY-----";
        assert!(kinds(junk).is_empty());
    }
}
