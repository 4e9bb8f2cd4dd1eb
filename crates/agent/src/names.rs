//! Class names as JVMTI gives them (signatures) and as Java source writes them.

/// Converts a JVMTI class signature (`Ljava/util/HashMap$Node;`, `[I`) to a Java source name.
pub fn source_name(signature: &str) -> String {
    let raw = match signature.strip_prefix('L').and_then(|s| s.strip_suffix(';')) {
        Some(plain) => plain,
        None => signature,
    };
    heap::names::java_name(raw.as_bytes())
}
