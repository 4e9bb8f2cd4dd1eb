//! V8's vocabulary, as the growth engine names structures by it: which of the classes a V8
//! snapshot's summary shows are the engine's internals, which are JavaScript's collections,
//! and how a closure's variable is said. The JVM's is in [`crate::platform`].
//!
//! A V8 summary's classes are DevTools' constructor groups: a constructor's name (`Map`,
//! `Session`), V8's own objects as `system / NAME`, and the other node types in brackets
//! (`(array)`, `(string)`, `(closure)`). No JVM class is spelled that way.

/// The class of a closure's context: the scope whose variables a closure keeps, a CommonJS
/// module's top-level variables included. Chrome's V8 adds the scope's id
/// (`system / Context / scope @45973`).
pub const CONTEXT: &str = "system / Context";

/// Whether a class is a closure's or a script's context ([`CONTEXT`]).
pub fn is_context(class: &str) -> bool {
    class.strip_prefix(CONTEXT).is_some_and(|rest| rest.is_empty() || rest.starts_with(" / "))
}

/// Whether a class is V8's internals rather than a place a person names: its internal arrays
/// (a `Map`'s table, an object's elements and properties), its hidden objects, and its
/// `system / …` objects but closure contexts.
pub fn is_internal(class: &str) -> bool {
    matches!(class, "(array)" | "(system)" | "(object shape)" | "(compiled code)")
        || (class.starts_with("system / ") && !is_context(class))
}

/// Whether a class is part of a collection in JavaScript: V8's internals, and the built-in
/// collections and plain objects that hold a structure's elements (an `EventEmitter`'s
/// `_events` is an `Object` of `Array`s).
pub fn is_collection_part(class: &str) -> bool {
    is_internal(class) || matches!(class, "Object" | "Array" | "Map" | "Set" | "WeakMap" | "WeakSet")
}

/// How a person says the variable `name` of a closure's context.
pub fn context_variable(name: &str) -> String {
    format!("{name} (closure variable)")
}

#[cfg(test)]
mod tests {
    use super::{is_collection_part, is_internal};

    #[test]
    fn v8s_internals_are_not_places_but_a_closures_context_is() {
        assert!(is_internal("(array)") && is_internal("system / Map") && is_internal("(system)"));
        assert!(!is_internal("system / Context") && !is_internal("Map") && !is_internal("(closure)"));
        assert!(!is_internal("system / Context / scope @45973") && is_internal("system / ContextSidePropertyCell"));
        assert!(is_collection_part("Object") && is_collection_part("(array)"));
        assert!(!is_collection_part("EventEmitter") && !is_collection_part("system / Context"));
        // No JVM class is spelled like these.
        assert!(!is_internal("java.lang.Object[]") && !is_collection_part("java.lang.Object"));
    }
}
