//! Failures of a command and their exit codes.

use std::fmt;
use std::io;
use std::process::ExitCode;

use agentmemory::MemoryError;

/// Why a command failed.
#[derive(Debug)]
pub enum CliError {
    /// The command line or the confirmation was refused (exit 2).
    Usage(String),
    /// The operation failed (exit 1).
    Runtime(String),
    /// The reader of stdout went away: stop quietly (exit 0).
    BrokenPipe,
}

impl CliError {
    /// A runtime failure of `operation`.
    pub fn runtime(operation: &str, error: impl fmt::Display) -> Self {
        CliError::Runtime(format!("{operation}: {error}"))
    }
}

impl From<MemoryError> for CliError {
    fn from(error: MemoryError) -> Self {
        CliError::Runtime(error.chain().to_string())
    }
}

impl From<io::Error> for CliError {
    fn from(error: io::Error) -> Self {
        if error.kind() == io::ErrorKind::BrokenPipe {
            CliError::BrokenPipe
        } else {
            CliError::Runtime(format!("I/O error: {error}"))
        }
    }
}

/// Prints `error` on stderr (prefixed `agentmem: `) and returns its exit code.
pub fn report(error: CliError) -> ExitCode {
    match error {
        CliError::BrokenPipe => ExitCode::SUCCESS,
        CliError::Usage(message) => {
            eprintln!("agentmem: {message}");
            ExitCode::from(2)
        }
        CliError::Runtime(message) => {
            eprintln!("agentmem: {message}");
            ExitCode::from(1)
        }
    }
}
