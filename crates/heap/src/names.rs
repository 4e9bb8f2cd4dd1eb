//! JVM internal class names to Java source names: `[Ljava/lang/Object;` → `java.lang.Object[]`.

use hprof::BasicType;

/// Converts a class name as the dump writes it (`java/util/HashMap$Node`, `[[I`,
/// `Foo$$Lambda$1+0x0000000800c03000`) to the name `Class.getName()`-style tools print,
/// with arrays in source form (`java.util.HashMap$Node`, `int[][]`, `Foo$$Lambda$1/0x0000000800c03000`).
pub fn java_name(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let dims = text.bytes().take_while(|&b| b == b'[').count();
    if dims == 0 {
        return plain_name(&text);
    }
    let elem = &text[dims..];
    let mut name = match elem.as_bytes().first() {
        Some(b'L') => plain_name(elem[1..].strip_suffix(';').unwrap_or(&elem[1..])),
        Some(&c) if elem.len() == 1 => match primitive_of_descriptor(c) {
            Some(t) => t.java_name().to_owned(),
            None => plain_name(elem),
        },
        _ => plain_name(elem),
    };
    for _ in 0..dims {
        name.push_str("[]");
    }
    name
}

fn plain_name(s: &str) -> String {
    let dotted = s.replace('/', ".");
    // Hidden classes: HotSpot writes `Name+0x<hex>`, Class.getName() says `Name/0x<hex>`.
    match dotted.rfind("+0x") {
        Some(i) if i > 0 && dotted[i + 3..].bytes().all(|b| b.is_ascii_hexdigit()) && dotted.len() > i + 3 => {
            format!("{}/{}", &dotted[..i], &dotted[i + 1..])
        }
        _ => dotted,
    }
}

fn primitive_of_descriptor(c: u8) -> Option<BasicType> {
    BasicType::PRIMITIVES.into_iter().find(|t| t.descriptor() as u8 == c)
}

/// The JVM's name of the array class of a primitive type (`[I` for int).
pub fn primitive_array_jvm_name(t: BasicType) -> String {
    format!("[{}", t.descriptor())
}

/// The package of a Java class name: `java.util` for `java.util.HashMap$Node` and for
/// `java.util.HashMap$Node[]`; empty for primitive arrays and the default package.
pub fn package_of(java_name: &str) -> &str {
    let elem = java_name.trim_end_matches("[]");
    match elem.rfind('.') {
        Some(i) => &elem[..i],
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_like_class_get_name() {
        assert_eq!(java_name(b"java/lang/String"), "java.lang.String");
        assert_eq!(java_name(b"[B"), "byte[]");
        assert_eq!(java_name(b"[[I"), "int[][]");
        assert_eq!(java_name(b"[Ljava/lang/Object;"), "java.lang.Object[]");
        assert_eq!(java_name(b"[[Ljava/util/HashMap$Node;"), "java.util.HashMap$Node[][]");
        assert_eq!(java_name(b"Quiet$$Lambda$1+0x00007fca38000a08"), "Quiet$$Lambda$1/0x00007fca38000a08");
        assert_eq!(java_name(b"a+b"), "a+b");
        assert_eq!(java_name(b"["), "[]");
    }

    #[test]
    fn packages() {
        assert_eq!(package_of("java.util.HashMap$Node[]"), "java.util");
        assert_eq!(package_of("int[]"), "");
        assert_eq!(package_of("Main"), "");
    }
}
