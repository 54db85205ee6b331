//! Logging on stderr through `tracing-subscriber`.
//!
//! The level comes from, in order: the `-v` flags (`-v` info, `-vv` debug, `-vvv` trace),
//! `AGENTMEM_LOG`, `RUST_LOG` (both take `tracing` filter directives such as
//! `agentmemory_stores=debug,info`), and otherwise `default` (warnings only for one-shot
//! commands, info for the servers).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// The environment variables read for filter directives, first set one wins.
const LOG_ENV: [&str; 2] = ["AGENTMEM_LOG", "RUST_LOG"];

/// The filter directives for `verbosity` (the count of `-v`), the environment and `default`.
/// A variable whose directives do not parse is reported on stderr and skipped.
fn directives(verbosity: u8, default: &str) -> EnvFilter {
    let level = match verbosity {
        0 => None,
        1 => Some("info"),
        2 => Some("debug"),
        _ => Some("trace"),
    };
    if let Some(level) = level {
        return EnvFilter::new(level);
    }
    for var in LOG_ENV {
        match std::env::var(var) {
            Ok(value) if !value.trim().is_empty() => match EnvFilter::try_new(&value) {
                Ok(filter) => return filter,
                Err(e) => eprintln!("note: ignoring {var}=`{value}`: {e}"),
            },
            _ => {}
        }
    }
    EnvFilter::new(default)
}

/// Installs the stderr subscriber (once; later calls do nothing).
pub fn init(verbosity: u8, default: &str) {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(directives(verbosity, default))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
