//! A request as the web UI sends it: its query parameters, percent-decoded and read as
//! numbers, addresses and pages, and a failed request's status.

use app::browse::BrowseError;
use app::page::Page;

use crate::dump_args;

/// Rows per page unless the request asks for fewer.
const PAGE: usize = 25;
/// Rows per page at most.
const MAX_PAGE: usize = 500;

/// A failed request: status and reason.
pub(super) struct Failure(pub(super) u16, pub(super) String);

pub(super) fn bad(msg: impl Into<String>) -> Failure {
    Failure(400, msg.into())
}

pub(super) fn not_found(msg: impl Into<String>) -> Failure {
    Failure(404, msg.into())
}

impl From<BrowseError> for Failure {
    fn from(e: BrowseError) -> Failure {
        match e {
            BrowseError::Bad(m) => bad(m),
            BrowseError::NotFound(m) => not_found(m),
        }
    }
}

/// A request's query parameters, percent-decoded.
pub(super) struct Query(Vec<(String, String)>);

impl Query {
    pub(super) fn parse(q: &str) -> Query {
        Query(
            q.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (decode(k), decode(v))
                })
                .collect(),
        )
    }

    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    pub(super) fn need(&self, key: &str) -> Result<&str, Failure> {
        self.get(key).filter(|v| !v.is_empty()).ok_or_else(|| bad(format!("missing parameter {key}")))
    }

    pub(super) fn number(&self, key: &str, default: usize) -> Result<usize, Failure> {
        match self.get(key) {
            None | Some("") => Ok(default),
            Some(v) => v.parse().map_err(|_| bad(format!("{key}={v:?} is not a number"))),
        }
    }

    /// `offset` and `limit`, the latter capped.
    pub(super) fn page(&self) -> Result<Page, Failure> {
        Ok(Page { offset: self.number("offset", 0)?, limit: self.number("limit", PAGE)?.clamp(1, MAX_PAGE) })
    }

    /// An object's address in parameter `key` (`0x...` or decimal).
    pub(super) fn id(&self, key: &str) -> Result<u64, Failure> {
        dump_args::parse_id(self.need(key)?).map_err(bad)
    }

    /// A grouping tree's node, `None` for its root.
    pub(super) fn node(&self) -> Result<Option<usize>, Failure> {
        self.get("node").filter(|v| !v.is_empty()).map(|_| self.number("node", 0)).transpose()
    }
}

/// Percent-decoding of a query component, `+` as space; invalid UTF-8 is replaced.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = |c: u8| char::from(c).to_digit(16);
                match (hex(b[i + 1]), hex(b[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
