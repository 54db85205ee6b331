//! `agentmem graph`: the knowledge graph of `agentmem mcp --memory-graph`, imported from
//! and exported to the reference MCP `memory` server's `memory.jsonl`.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Subcommand};

use agentmemory::graph::{jsonl, user::DEFAULT_USER, GraphError, KnowledgeGraph, DEFAULT_GRAPH};

use crate::cli::non_blank;
use crate::error::CliError;
use crate::output;
use crate::store::Stores;

/// Which graph, and whose.
#[derive(Debug, Args, Clone)]
pub struct GraphArgs {
    /// The graph's name: several graphs can live in one store.
    #[arg(long = "graph", value_name = "NAME", default_value = DEFAULT_GRAPH, value_parser = non_blank)]
    pub name: String,
    /// The user: the entity named so holds the user's facts (observations on it are
    /// stored as facts, facts learned in chat show on it).
    #[arg(long, short = 'u', default_value = DEFAULT_USER, value_parser = non_blank)]
    pub user: String,
}

impl GraphArgs {
    /// The graph on `stores`.
    pub fn open(&self, stores: &Stores) -> Result<Arc<KnowledgeGraph>, CliError> {
        Ok(Arc::new(KnowledgeGraph::from_container(
            stores.container(),
            &self.name,
            Some(&self.user),
        )?))
    }
}

/// `agentmem graph …`.
#[derive(Debug, Subcommand)]
pub enum GraphCommand {
    /// Add the entities and relations of a memory.jsonl file (the reference MCP memory
    /// server's format) to the graph, in one atomic change.
    #[command(
        after_help = "Entities whose names the graph holds already are left as they are; relations \
whose ends are missing are skipped. Prints what was added.\n\n\
Example:\n  agentmem --store sqlite://memory.db graph import ~/memory.jsonl"
    )]
    Import {
        /// The file (`-` for stdin).
        file: PathBuf,
        #[command(flatten)]
        graph: GraphArgs,
    },
    /// Print the graph in the reference MCP memory server's memory.jsonl format.
    #[command(
        after_help = "Example:\n  agentmem --store sqlite://memory.db graph export > memory.jsonl"
    )]
    Export {
        #[command(flatten)]
        graph: GraphArgs,
    },
    /// Print every change of the graph, oldest first, one JSON object per line.
    #[command(
        after_help = "Each line is {\"seq\", \"at\", \"change\"}: the change as requested \
({\"op\": \"add_observations\", ...}), its position in the log and when it was written.\n\n\
Example:\n  agentmem --store sqlite://memory.db graph history | tail -5"
    )]
    History {
        #[command(flatten)]
        graph: GraphArgs,
    },
}

fn failed(error: GraphError) -> CliError {
    CliError::Runtime(error.to_string())
}

/// Runs a graph command.
pub async fn run(stores: &Stores, command: GraphCommand) -> Result<(), CliError> {
    match command {
        GraphCommand::Import { file, graph } => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(&file).map_err(|e| {
                    CliError::Runtime(format!("cannot read {}: {e}", file.display()))
                })?
            };
            let parsed = jsonl::parse(&text)
                .map_err(|e| CliError::Runtime(format!("{}: {e}", file.display())))?;
            let (entities, relations) = (parsed.entities.len(), parsed.relations.len());
            let created = graph.open(stores)?.import(parsed).await.map_err(failed)?;
            output::line(format!(
                "imported {} of {entities} entities and {} of {relations} relations into graph `{}`",
                created.entities.len(),
                created.relations.len(),
                graph.name
            ))
        }
        GraphCommand::Export { graph } => {
            let read = graph.open(stores)?.read_graph().await.map_err(failed)?;
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(jsonl::write(&read).as_bytes())?;
            out.flush()?;
            Ok(())
        }
        GraphCommand::History { graph } => {
            let history = graph.open(stores)?.history().await.map_err(failed)?;
            let mut out = std::io::stdout().lock();
            for event in history {
                let line = serde_json::json!({
                    "seq": event.seq,
                    "at": event.at,
                    "change": event.change,
                });
                output::json_line(&mut out, &line)?;
            }
            Ok(())
        }
    }
}
