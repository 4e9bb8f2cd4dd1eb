//! Class names as JVMTI gives them (signatures) and as Java source writes them.

/// Converts a JVMTI class signature (`Ljava/util/HashMap$Node;`, `[I`) to a Java source name.
/// A hidden class (a lambda's) is named as the JVM names it, `Foo$$Lambda/0x…`, as
/// `Class.getName()` and `jcmd` print it: JVMTI writes its signature `LFoo$$Lambda.0x…;`, and
/// a `.` is in no other class's internal name (JVMS 4.2.1), so it is the hidden suffix's; the
/// heap dump's `Foo$$Lambda+0x…` is turned into the same name.
pub fn source_name(signature: &str) -> String {
    let raw = match signature.strip_prefix('L').and_then(|s| s.strip_suffix(';')) {
        Some(plain) => plain.to_string(),
        None => signature.to_string(),
    };
    let raw = match raw.rsplit_once('.') {
        Some((name, suffix)) if suffix.starts_with("0x") => format!("{name}+{suffix}"),
        _ => raw,
    };
    heap::names::java_name(raw.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::source_name;

    #[test]
    fn hidden_classes_are_named_as_class_get_name_names_them() {
        // As JDK 25's GetClassSignature and Class.getName() gave them for one lambda.
        assert_eq!(source_name("LLam$$Lambda.0x0000000019040210;"), "Lam$$Lambda/0x0000000019040210");
        assert_eq!(source_name("[LLam$$Lambda.0x0000000019040210;"), "Lam$$Lambda/0x0000000019040210[]");
        assert_eq!(source_name("Ljava/util/HashMap$Node;"), "java.util.HashMap$Node");
        assert_eq!(source_name("[I"), "int[]");
    }
}
