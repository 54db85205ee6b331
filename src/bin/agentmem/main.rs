//! `agentmem`: the command line of the agentmem memory framework.
//!
//! Each command group lives in its own module; [`cli`] holds the grammar, [`store`] opens
//! the store URL, [`models`] is the one place that chooses the chat model and the fact
//! extractor, [`error`] maps failures to exit codes.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::FromArgMatches;

mod chat;
mod cli;
mod error;
mod extract;
mod facts;
mod graph;
mod ingest;
mod logging;
mod model;
mod models;
mod output;
#[cfg(feature = "server")]
mod purge;
mod recall;
mod reembed;
#[cfg(feature = "server")]
mod serve;
mod sessions;
mod store;
mod vectors;

use cli::{Cli, Command};
use error::CliError;

fn main() -> ExitCode {
    // clap prints usage errors itself and exits with 2
    let matches = cli::command().get_matches();
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    if cli.store.trim().is_empty() {
        if matches.value_source("store") == Some(ValueSource::CommandLine) {
            cli::command()
                .error(
                    ErrorKind::InvalidValue,
                    "invalid value '' for '--store <URL>': must not be empty",
                )
                .exit();
        }
        // an empty AGENTMEM_STORE_URL means "unset", as in `StoreUrl::from_env_or`
        cli.store = cli::DEFAULT_STORE.to_owned();
    }
    // the servers say what they do by default; the one-shot commands only warn
    logging::init(
        cli.verbose,
        if is_server(&cli.command) {
            "info"
        } else {
            "warn"
        },
    );
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

/// Whether `command` serves requests until stopped (its log says more by default).
fn is_server(command: &Command) -> bool {
    #[cfg(feature = "server")]
    if matches!(command, Command::Serve(_)) {
        return true;
    }
    #[cfg(feature = "mcp")]
    if matches!(command, Command::Mcp(_)) {
        return true;
    }
    let _ = command;
    false
}

async fn run(cli: Cli) -> Result<(), CliError> {
    if let Command::Extract = cli.command {
        // no store needed
        return extract::run().await;
    }
    if let Command::Model(command) = cli.command {
        // the model lives outside any store
        return model::run(command).await;
    }
    if let Command::Reembed(args) = cli.command {
        // opened without the background backfill: this command is the backfill
        return reembed::run(cli.store.trim(), args).await;
    }
    let stores = store::Stores::open(cli.store.trim()).await?;
    if matches!(
        cli.command,
        Command::Facts(_)
            | Command::Vectors(_)
            | Command::Chat(_)
            | Command::Ingest(_)
            | Command::Recall(_)
            | Command::Graph(_)
    ) {
        stores.note_semantic_recall();
    }
    match cli.command {
        Command::Extract | Command::Model(_) | Command::Reembed(_) => Ok(()),
        Command::Facts(command) => facts::run(&stores, command).await,
        Command::Vectors(command) => vectors::run(&stores, command).await,
        Command::Sessions(command) => sessions::run(&stores, command).await,
        Command::Chat(args) => chat::run(&stores, args).await,
        Command::Ingest(args) => ingest::run(&stores, args).await,
        Command::Recall(args) => recall::run(&stores, args).await,
        Command::Graph(command) => graph::run(&stores, command).await,
        #[cfg(feature = "server")]
        Command::Serve(args) => serve::serve(&stores, args).await,
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => serve::mcp(&stores, args).await,
    }
}
