//! The Java side of the agent, built into it (`build.rs`).

/// `leakscope-api.jar`, the Java side of `LeakScope.expectDead` and the JUnit 5 extension
/// `@LeakTest`, built from `java/io/leakscope` (empty when no JDK was found at build time).
pub const API_JAR: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/leakscope-api.jar"));

/// `LeakScope` alone, for the bootstrap class path (the JUnit extension's classes there would
/// be defined by the boot loader, which cannot see JUnit).
pub(crate) const BOOT_JAR: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/leakscope-boot.jar"));

/// Whether [`API_JAR`] has the JUnit 5 extension `@LeakTest` (JUnit 5's API was found when
/// the agent was built).
pub const API_HAS_LEAK_TEST: bool = option_env!("LEAKSCOPE_API_HAS_LEAK_TEST").is_some();
