//! The binary's exit codes, in one place.

/// How `leakscope` ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The command did what was asked.
    Success = 0,
    /// A requested check failed (such as `--fail-on-growth`).
    CheckFailed = 1,
    /// Bad input or usage: the error was printed.
    Error = 2,
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable() {
        assert_eq!(Exit::Success as u8, 0);
        assert_eq!(Exit::CheckFailed as u8, 1);
        assert_eq!(Exit::Error as u8, 2);
    }
}
