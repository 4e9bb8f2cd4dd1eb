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

/// Whether reference rule element `pattern` (`rule:A>B>C`) names class `class_name`: by its
/// full Java name, its name without the package (`Outer$Inner`), or a nested class's own
/// name (`Inner`).
pub fn rule_element_matches(pattern: &str, class_name: &str) -> bool {
    let simple = class_name.rsplit('.').next().unwrap_or(class_name);
    class_name == pattern || simple == pattern || simple.rsplit('$').next() == Some(pattern)
}

/// Parses a reference rule `A>B>C` (a leading `rule:` is allowed): class names or short
/// names, the selected class last. No part may be empty or hold a comma, a semicolon or a
/// space, which no class name has and which separate rules and options where rules are
/// written inside other text (the agent's option string).
pub fn parse_rule(text: &str) -> Option<Vec<String>> {
    let text = text.trim();
    let body = text.strip_prefix("rule:").unwrap_or(text);
    let parts: Vec<String> = body.split('>').map(|p| p.trim().to_string()).collect();
    (!parts.iter().any(|p| p.is_empty() || p.contains([',', ';', ' ']))).then_some(parts)
}

/// Whether a path of class names from a root (`path`, the object's class last) matches a
/// reference rule: the rule's last element names the last class, and its other elements
/// appear along the path before it, in order (a subsequence).
pub fn rule_matches_path(rule: &[String], path: &[String]) -> bool {
    let (Some((last, prefix)), Some((object, before))) = (rule.split_last(), path.split_last()) else {
        return false;
    };
    let mut rest = before.iter();
    rule_element_matches(last, object) && prefix.iter().all(|p| rest.any(|c| rule_element_matches(p, c)))
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

    #[test]
    fn rules_match_paths_as_subsequences() {
        let rule: Vec<String> = ["Registry", "Session"].iter().map(|s| s.to_string()).collect();
        let path: Vec<String> = ["class com.a.Registry", "com.a.Registry", "java.util.HashMap", "com.a.Outer$Session"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(rule_matches_path(&rule, &path));
        assert!(!rule_matches_path(&rule, &path[2..]), "Registry must come before");
        assert!(!rule_matches_path(&rule, &path[..3]), "the last class must be a Session");
        assert!(!rule_matches_path(&rule, &[]));
        assert!(rule_element_matches("Outer$Session", "com.a.Outer$Session"));
        assert!(!rule_element_matches("Outer", "com.a.Outer$Session"));
    }

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
