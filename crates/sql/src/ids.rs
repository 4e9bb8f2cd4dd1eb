//! Object ids as every other output writes them, `0x…`: in queries, where DataFusion reads
//! `0xea900000` as a binary literal (issue 35: "type_coercion") and `'0xea900000'` as text it
//! cannot compare with a number, and in answers, where id columns would print in decimal.

use std::collections::HashMap;

use datafusion::arrow::datatypes::Field;

/// The metadata key that marks a column of object ids; projections keep it, so an id column
/// prints as `0x…` under any alias.
pub const ID_KEY: &str = "leakscope.id";

/// `field`, marked as a column of object ids.
pub fn id_field(field: Field) -> Field {
    field.with_metadata(HashMap::from([(ID_KEY.to_owned(), "true".to_owned())]))
}

/// Whether `field` holds object ids.
pub fn is_id(field: &Field) -> bool {
    field.metadata().contains_key(ID_KEY)
}

/// `sql` with every hexadecimal number written `0x…` (bare, or quoted right after a
/// comparison: `id = '0xea900000'`) turned into its decimal value. Text in other quotes,
/// quoted identifiers and comments is left as it is.
pub fn decimal_ids(sql: &str) -> String {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    // The last token that is not whitespace: a quoted id is one only after a comparison.
    let mut after_comparison = false;
    while i < b.len() {
        let c = b[i];
        let start = i;
        match c {
            b'\'' | b'"' => {
                i += 1;
                while i < b.len() {
                    if b[i] == c {
                        if b.get(i + 1) == Some(&c) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
                let inner = &sql[start + 1..i.saturating_sub(1).max(start + 1)];
                match hex(inner) {
                    Some(v) if c == b'\'' && after_comparison => out.push_str(&v.to_string()),
                    _ => out.push_str(&sql[start..i]),
                }
                after_comparison = false;
                continue;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                i = sql[i..].find('\n').map_or(b.len(), |n| i + n);
                out.push_str(&sql[start..i]);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = sql[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                out.push_str(&sql[start..i]);
                continue;
            }
            _ if c.is_ascii_alphanumeric() || c == b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &sql[start..i];
                match hex(word) {
                    Some(v) => out.push_str(&v.to_string()),
                    None => out.push_str(word),
                }
                after_comparison = false;
                continue;
            }
            _ => {}
        }
        let ch = sql[i..].chars().next().expect("a char at a char boundary");
        i += ch.len_utf8();
        out.push(ch);
        if !ch.is_whitespace() {
            after_comparison = matches!(ch, '=' | '<' | '>' | '(' | ',');
        }
    }
    out
}

/// The value of `0x…` (at most 16 hex digits), else None.
fn hex(s: &str) -> Option<u64> {
    let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    (!digits.is_empty() && digits.len() <= 16).then(|| u64::from_str_radix(digits, 16).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::decimal_ids;

    #[test]
    fn hex_ids_become_numbers_and_nothing_else_changes() {
        assert_eq!(
            decimal_ids("SELECT * FROM objects WHERE id = 0xea900000"),
            "SELECT * FROM objects WHERE id = 3935305728"
        );
        assert_eq!(decimal_ids("WHERE id='0xEA900000'"), "WHERE id=3935305728");
        assert_eq!(decimal_ids("WHERE id IN (0x10, '0x20')"), "WHERE id IN (16, 32)");
        // Text that only looks like an id stays text: a string's value, an identifier, a comment.
        assert_eq!(decimal_ids("SELECT '0x10' AS t"), "SELECT '0x10' AS t");
        assert_eq!(decimal_ids("SELECT \"0x10\", x0x10 -- 0x10"), "SELECT \"0x10\", x0x10 -- 0x10");
        assert_eq!(decimal_ids("WHERE text = 'it''s 0x1' /* 0x2 */"), "WHERE text = 'it''s 0x1' /* 0x2 */");
        // Not a number: too long, or not hex.
        assert_eq!(decimal_ids("0x12345678901234567 0xZZ é"), "0x12345678901234567 0xZZ é");
    }
}
