//! `agentmem`: the command line of the agentmem memory framework.
//!
//! Each command group lives in its own module; [`cli`] holds the grammar, [`store`] opens
//! the store URL, [`models`] is the one place that chooses the chat model and the fact
//! extractor, [`error`] maps failures to exit codes.

use std::process::ExitCode;

use clap::Parser;

mod chat;
mod cli;
mod error;
mod extract;
mod facts;
mod models;
mod output;
#[cfg(feature = "server")]
mod serve;
mod sessions;
mod store;
mod vectors;

use cli::{Cli, Command};
use error::CliError;

fn main() -> ExitCode {
    // clap prints usage errors itself and exits with 2
    let cli = Cli::parse();
    init_tracing(cli.verbose, is_server(&cli.command));
    // the server answers many connections at once: one worker per core
    #[cfg(feature = "server")]
    let mut builder = if matches!(cli.command, Command::Serve(_)) {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    #[cfg(not(feature = "server"))]
    let mut builder = tokio::runtime::Builder::new_current_thread();
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            return error::report(CliError::Runtime(format!("cannot start the runtime: {e}")))
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => error::report(e),
    }
}

/// Logs to stderr: warnings by default (the server: its info lines too), more with each
/// `-v`; `AGENTMEM_LOG` or `RUST_LOG` set the filter themselves.
fn init_tracing(verbose: u8, server: bool) {
    use tracing_subscriber::EnvFilter;
    let from_env = ["AGENTMEM_LOG", "RUST_LOG"]
        .into_iter()
        .find_map(|var| EnvFilter::try_from_env(var).ok());
    let filter = from_env.unwrap_or_else(|| {
        EnvFilter::new(match (verbose, server) {
            (0, false) => "warn",
            (0, true) | (1, _) => "info",
            (2, _) => "debug",
            _ => "trace",
        })
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}

#[cfg(feature = "server")]
fn is_server(command: &Command) -> bool {
    matches!(command, Command::Serve(_))
}

#[cfg(not(feature = "server"))]
fn is_server(_: &Command) -> bool {
    false
}

async fn run(cli: Cli) -> Result<(), CliError> {
    if let Command::Extract = cli.command {
        // no store needed
        return extract::run().await;
    }
    // an empty AGENTMEM_STORE_URL means "unset", as in `StoreUrl::from_env_or`
    let url = match cli.store.trim() {
        "" => cli::DEFAULT_STORE,
        url => url,
    };
    let stores = store::Stores::open(url).await?;
    if matches!(
        cli.command,
        Command::Facts(_) | Command::Vectors(_) | Command::Chat(_)
    ) {
        stores.note_semantic_recall();
    }
    match cli.command {
        Command::Extract => Ok(()),
        Command::Facts(command) => facts::run(&stores, command).await,
        Command::Vectors(command) => vectors::run(&stores, command).await,
        Command::Sessions(command) => sessions::run(&stores, command).await,
        Command::Chat(args) => chat::run(&stores, args).await,
        #[cfg(feature = "server")]
        Command::Serve(args) => serve::serve(&stores, args).await,
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => serve::mcp(&stores, args).await,
    }
}
