//! Object ids: typed in the models, written `0x7f3a10` wherever a person or a JSON document
//! reads them.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An object's address in a heap dump (its HPROF id). Displays and serializes as `0x…` hex;
/// parses from that or from plain hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId(pub u64);

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:x}", self.0)
    }
}

/// Why text is not an object id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an object id such as 0x7f3a10")]
pub struct BadObjectId(pub String);

impl FromStr for ObjectId {
    type Err = BadObjectId;

    fn from_str(s: &str) -> Result<ObjectId, BadObjectId> {
        let hex = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
        u64::from_str_radix(hex, 16).map(ObjectId).map_err(|_| BadObjectId(s.to_string()))
    }
}

impl Serialize for ObjectId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ObjectId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ObjectId, D::Error> {
        let s = Cow::<str>::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for ObjectId {
    fn schema_name() -> Cow<'static, str> {
        "ObjectId".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "An object's address in the heap dump, in hex.",
            "type": "string",
            "pattern": "^0x[0-9a-f]+$"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_it_writes() {
        let id = ObjectId(0x7f3a10);
        assert_eq!(id.to_string(), "0x7f3a10");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"0x7f3a10\"");
        assert_eq!(serde_json::from_str::<ObjectId>("\"0x7f3a10\"").unwrap(), id);
        assert_eq!("7F3A10".parse::<ObjectId>().unwrap(), id);
        assert_eq!("0X7f3a10".parse::<ObjectId>().unwrap(), id);
        assert!("0xzz".parse::<ObjectId>().is_err() && "".parse::<ObjectId>().is_err());
        assert_eq!(format!("{:x}", u64::MAX).parse::<ObjectId>().unwrap(), ObjectId(u64::MAX));
    }
}
