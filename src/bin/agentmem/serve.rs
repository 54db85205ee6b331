//! `agentmem serve` and `agentmem mcp`: the memory server over the `--store` URL.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;

use agentmemory::server::{
    self, Auth, MemoryService, ServerConfig, ServerSettings, BACKGROUND_CONCURRENCY_ENV,
    POSTGRES_BACKGROUND_CONCURRENCY,
};

use crate::error::CliError;
use crate::store::Stores;

/// `agentmem serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8000", env = "AGENTMEM_ADDR")]
    pub addr: SocketAddr,
    /// Bearer token every request must send (`Authorization: Bearer <token>`).
    #[arg(
        long,
        env = "AGENTMEM_AUTH_TOKEN",
        hide_env_values = true,
        required_unless_present_any = ["no_auth", "api_keys"]
    )]
    pub auth_token: Option<String>,
    /// An API key of a tenant, as `TENANT=KEY` (repeatable; or comma-separated in
    /// AGENTMEM_API_KEYS): it opens Anthropic's memory stores API and the Redis Agent
    /// Memory data plane, where each tenant sees only its own stores.
    #[arg(
        long = "api-key",
        env = "AGENTMEM_API_KEYS",
        hide_env_values = true,
        value_delimiter = ','
    )]
    pub api_keys: Vec<String>,
    /// Accept requests without a token (prints a warning).
    #[arg(long, conflicts_with_all = ["auth_token", "api_keys"])]
    pub no_auth: bool,
    /// Act for this user only: requests naming another user are refused.
    #[arg(long, short = 'u')]
    pub user: Option<String>,
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = server::DEFAULT_BODY_LIMIT)]
    pub max_body_bytes: usize,
    /// Time a request may take, in seconds.
    #[arg(long, default_value_t = 30)]
    pub timeout_secs: u64,
    /// Allow browser calls from this origin (repeatable). CORS is off without it.
    #[arg(long = "cors-origin")]
    pub cors_origins: Vec<String>,
    /// Seconds between purges of expired entries from the store (0: never purge; expired
    /// entries are hidden from reads either way).
    #[arg(long, default_value_t = 60, env = "AGENTMEM_PURGE_INTERVAL_SECS")]
    pub purge_interval_secs: u64,
    #[command(flatten)]
    pub index: IndexArgs,
    #[cfg(feature = "mcp")]
    #[command(flatten)]
    pub graph: MemoryGraphArgs,
}

/// `agentmem mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Act for this user: memories are stored and searched as theirs.
    #[arg(long, short = 'u')]
    pub user: Option<String>,
    #[command(flatten)]
    pub index: IndexArgs,
    #[cfg(feature = "mcp")]
    #[command(flatten)]
    pub graph: MemoryGraphArgs,
}

/// `--memory-graph`: the reference MCP `memory` server's knowledge-graph tools.
#[cfg(feature = "mcp")]
#[derive(Debug, Args)]
pub struct MemoryGraphArgs {
    /// Serve the knowledge-graph tools of the reference MCP memory server
    /// (create_entities, create_relations, add_observations, delete_entities,
    /// delete_observations, delete_relations, read_graph, search_nodes, open_nodes)
    /// instead of the long-term memory tools. The entity named like --user (default
    /// `default_user`) holds the user's facts.
    #[arg(long)]
    pub memory_graph: bool,
    /// The knowledge graph's name (several can live in one store).
    #[arg(long = "graph", value_name = "NAME", default_value = agentmemory::graph::DEFAULT_GRAPH, value_parser = crate::cli::non_blank)]
    pub graph_name: String,
}

#[cfg(feature = "mcp")]
impl MemoryGraphArgs {
    /// The graph when --memory-graph is on, linked to `user` (default `default_user`).
    fn open(
        &self,
        stores: &Stores,
        user: Option<&str>,
    ) -> Result<Option<std::sync::Arc<agentmemory::graph::KnowledgeGraph>>, CliError> {
        if !self.memory_graph {
            return Ok(None);
        }
        crate::graph::GraphArgs {
            name: self.graph_name.clone(),
            user: user
                .unwrap_or(agentmemory::graph::user::DEFAULT_USER)
                .to_owned(),
        }
        .open(stores)
        .map(Some)
    }
}

/// The reference server's `index_all_messages_in_long_term_memory`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Index every working-memory message as an episode of the session's user (recalled
    /// by memory prompts, searchable across conversations) and rebuild an expired or
    /// missing session from them on GET instead of 404 (true/false, on/off, 1/0).
    #[arg(
        long,
        env = "INDEX_ALL_MESSAGES_IN_LONG_TERM_MEMORY",
        value_name = "BOOL",
        default_value = "true",
        value_parser = clap::builder::BoolishValueParser::new(),
        action = clap::ArgAction::Set
    )]
    pub index_all_messages_in_long_term_memory: bool,
}

/// The service over the store, configured by the reference server's environment
/// variables (`WINDOW_SIZE`, `LONG_TERM_MEMORY`, `ENABLE_DISCRETE_MEMORY_EXTRACTION`,
/// `GENERATION_MODEL`, `OPENAI_BASE_URL`, `OPENAI_API_KEY`; see
/// `agentmemory::server::ServerSettings`).
fn service(stores: &Stores, index: &IndexArgs) -> Result<MemoryService, CliError> {
    let mut settings = ServerSettings::from_env().map_err(|e| CliError::Usage(e.to_string()))?;
    let postgres =
        stores.url().starts_with("postgres://") || stores.url().starts_with("postgresql://");
    if postgres && std::env::var_os(BACKGROUND_CONCURRENCY_ENV).is_none() {
        // each running batch holds one of the pool's connections (16 by default): the
        // requests keep the others
        settings.background_concurrency = POSTGRES_BACKGROUND_CONCURRENCY;
    }
    if let Some(model) = &settings.model {
        tracing::info!(model = %model.name, "generation model configured: extraction and summaries use it");
    }
    Ok(MemoryService::from_container(stores.container())
        .map_err(CliError::from)?
        .with_settings(settings)
        .index_all_messages(index.index_all_messages_in_long_term_memory))
}

/// Runs the REST server until Ctrl-C or SIGTERM.
pub async fn serve(stores: &Stores, args: ServeArgs) -> Result<(), CliError> {
    let auth = match (&args.auth_token, args.no_auth) {
        (Some(token), _) if token.trim().is_empty() => {
            return Err(CliError::Usage("--auth-token is empty".into()))
        }
        (Some(token), _) => Auth::token(token),
        (None, false) => Auth::disabled(),
        (None, true) => {
            eprintln!("agentmem: WARNING: authentication is off (--no-auth); anyone who can reach {} can read and change memory", args.addr);
            Auth::disabled()
        }
    };
    let mut auth = auth;
    for pair in &args.api_keys {
        let (tenant, key) = pair
            .split_once('=')
            .filter(|(_, key)| !key.trim().is_empty())
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "--api-key wants TENANT=KEY, got `{}`",
                    redact(pair)
                ))
            })?;
        auth = auth
            .with_api_key(tenant, key)
            .map_err(|e| CliError::Usage(e.to_string()))?;
    }
    let mut config = ServerConfig::new(auth);
    config.user = args.user;
    config.body_limit = args.max_body_bytes;
    config.timeout = Duration::from_secs(args.timeout_secs.max(1));
    config.cors_origins = args.cors_origins;
    #[cfg(feature = "mcp")]
    {
        config.memory_graph = args.graph.open(stores, config.user.as_deref())?;
    }
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .map_err(|e| CliError::runtime(&format!("cannot listen on {}", args.addr), e))?;
    let local = listener.local_addr().map_err(CliError::from)?;
    tracing::info!(addr = %local, "agentmem server listening");
    eprintln!("agentmem: listening on http://{local}");
    let service = service(stores, &args.index)?;
    let purger = match args.purge_interval_secs {
        0 => None,
        secs => Some(crate::purge::spawn(stores.kv()?, Duration::from_secs(secs))),
    };
    let served = server::serve(listener, service, config, server::shutdown_signal()).await;
    if let Some(purger) = purger {
        purger.abort();
    }
    served.map_err(|e| CliError::runtime("server", e))
}

/// `TENANT=KEY` with the key hidden, for error messages.
fn redact(pair: &str) -> String {
    match pair.split_once('=') {
        Some((tenant, _)) => format!("{tenant}=…"),
        None => "…".to_owned(),
    }
}

/// Serves the MCP tools on stdin/stdout.
#[cfg(feature = "mcp")]
pub async fn mcp(stores: &Stores, args: McpArgs) -> Result<(), CliError> {
    if let Some(graph) = args.graph.open(stores, args.user.as_deref())? {
        return server::serve_graph_stdio(graph)
            .await
            .map_err(|e| CliError::runtime("mcp", e));
    }
    server::serve_stdio(service(stores, &args.index)?, args.user)
        .await
        .map_err(|e| CliError::runtime("mcp", e))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::IndexArgs;

    #[derive(Debug, Parser)]
    struct Probe {
        #[command(flatten)]
        index: IndexArgs,
    }

    fn parse(args: &[&str]) -> bool {
        Probe::try_parse_from(std::iter::once("agentmem").chain(args.iter().copied()))
            .unwrap()
            .index
            .index_all_messages_in_long_term_memory
    }

    #[test]
    fn indexing_is_on_by_default_and_the_flag_turns_it_off() {
        // The environment variable is read too; this test does not set it, and it is not
        // set where the tests run unless on purpose.
        if std::env::var_os("INDEX_ALL_MESSAGES_IN_LONG_TERM_MEMORY").is_none() {
            assert!(parse(&[]));
        }
        for off in ["false", "off", "0", "no"] {
            assert!(
                !parse(&["--index-all-messages-in-long-term-memory", off]),
                "{off}"
            );
        }
        for on in ["true", "on", "1", "yes"] {
            assert!(
                parse(&["--index-all-messages-in-long-term-memory", on]),
                "{on}"
            );
        }
        assert!(Probe::try_parse_from([
            "agentmem",
            "--index-all-messages-in-long-term-memory",
            "maybe"
        ])
        .is_err());
    }
}
