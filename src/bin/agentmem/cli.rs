//! The command-line grammar (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// What `agentmem --help` says after the options: exit codes, logging, an example.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  success (also when the reader of stdout goes away, as with `| head`)
  1  the operation failed: a store could not be opened or refused a write, an input
     line or document is malformed, an id is unknown
  2  usage error: bad or blank arguments, an unknown store URL, a store URL whose
     backend this build lacks, a misconfigured AGENTMEM_EMBED_MODEL, a refused
     confirmation

Logging goes to stderr: -v info, -vv debug, -vvv trace, or RUST_LOG / AGENTMEM_LOG
with tracing filter directives (for example `agentmemory_stores=debug`).

Example:
  agentmem --store sqlite://memory.db facts list --user alice";

/// The line every subcommand's help ends with.
pub const EXIT_CODES_SHORT: &str =
    "Exit codes: 0 success, 1 the operation failed, 2 usage error (see `agentmem --help`).";

/// The store URL used when neither `--store` nor `AGENTMEM_STORE_URL` names one.
pub const DEFAULT_STORE: &str = "sqlite://agentmem.db";

/// Inspect and operate agentmem stores: extract facts, manage user facts, bulk-load and
/// search vectors, look at conversations, and chat with a remembering agent.
#[derive(Debug, Parser)]
#[command(name = "agentmem", version, propagate_version = true)]
#[command(after_help = EXIT_CODES_HELP)]
pub struct Cli {
    /// Where memory lives: memory://, sqlite://PATH, file://DIR, redis://HOST:PORT/DB
    /// (redis+cluster://HOST:PORT,HOST:PORT/ for a Redis Cluster) or postgres://USER@HOST/DB
    /// (the last two need the `redis` / `postgres` features).
    #[arg(
        long,
        global = true,
        env = "AGENTMEM_STORE_URL",
        hide_env_values = true,
        default_value = DEFAULT_STORE,
        value_name = "URL"
    )]
    pub store: String,

    /// Log more on stderr: -v info, -vv debug, -vvv trace (overrides RUST_LOG and
    /// AGENTMEM_LOG, which take tracing filter directives such as `agentmemory_stores=debug`).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The command groups.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Extract facts from utterances on stdin (one per line) and print one JSON object per line.
    #[command(
        after_help = "Uses the offline rule extractor. The LLM extractor is used \
when a model is configured (with the `openai` feature).\n\n\
Example:\n  echo \"I'm Alice and I love hiking\" | agentmem extract"
    )]
    Extract,
    /// Long-term facts about a user.
    #[command(subcommand)]
    Facts(FactsCommand),
    /// Documents in a vector store namespace.
    #[command(subcommand)]
    Vectors(VectorsCommand),
    /// Stored conversations.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Chat with a remembering agent; one message per line on stdin, Ctrl-D ends.
    #[command(
        after_help = "Memory is on: facts about the user are injected into the \
system prompt and new ones extracted from each turn. The reply comes from the offline \
model, which restates the message and the facts it was given; an LLM is used when a \
model is configured (with the `openai` feature). The conversation resumes on the next \
run for the same user unless --new is given.\n\n\
Example:\n  agentmem chat --user alice --agent-prompt \"You are a travel agent.\""
    )]
    Chat(ChatArgs),
    /// Import a past conversation (JSONL on stdin) into a user's memory, at its own times.
    #[command(
        after_help = "Each stdin line is one message: {\"role\": \"user\"|\"assistant\", \"content\": \"...\", \"created_at\": \"2024-05-03T18:00:00Z\"} (created_at optional: now; an RFC 3339 time, 2024-05-03T18:00:00 or 2024-05-03 18:00:00 in UTC, or a date, 2024-05-03). A message over --max-message-bytes (1 MiB by default) stops the command, naming its line, before anything is written. The messages are logged as conversation --conversation (a new id when absent), kept as episodes of the user, and facts are extracted and reconciled at the messages' own times. Ingesting the same lines again into the same conversation changes nothing.\n\n\
Example:\n  agentmem ingest --user alice --conversation trip-2024 < trip.jsonl"
    )]
    Ingest(IngestArgs),
    /// Show what a turn would inject for MESSAGE: facts, episodes and the memory block.
    #[command(
        after_help = "Without MESSAGE, reads JSONL queries from stdin, {\"id\": ..., \"query\": \"...\", \"at\": \"2025-09-01T10:00:00Z\"} (at optional: now), and prints one JSON line per query: {\"id\", \"facts\", \"episodes\", \"block\"}.\n\n\
Example:\n  agentmem recall --user alice \"what did I do last weekend?\""
    )]
    Recall(RecallArgs),
    /// The knowledge graph of `mcp --memory-graph`: import and export memory.jsonl, history.
    #[command(subcommand)]
    Graph(crate::graph::GraphCommand),
    /// Embed what the store holds without a vector (or with another model's), now.
    #[command(
        after_help = "A store opened with the model on does this in the background; this \
command does it at once, with a progress bar on a terminal, and prints what it did. By \
default only what has no vector is embedded, and everything when the store recorded \
another model; --all drops every vector and embeds everything again.\n\n\
Example:\n  agentmem --store sqlite://memory.db reembed --all"
    )]
    Reembed(ReembedArgs),
    /// The embedding model: `fetch` it into the cache directory, `status` of the one in use.
    #[command(subcommand)]
    Model(crate::model::ModelCommand),
    /// Serve the working-memory REST API (and MCP at /mcp with the `mcp` feature).
    #[cfg(feature = "server")]
    #[command(
        after_help = "Example:\n  agentmem --store sqlite://memory.db serve --auth-token \"$TOKEN\""
    )]
    Serve(crate::serve::ServeArgs),
    /// Serve the MCP tools on stdin/stdout (for Claude Desktop, Cursor, IDE agents).
    #[cfg(feature = "mcp")]
    #[command(
        after_help = "With --memory-graph, the tools are the reference MCP memory server's nine \
knowledge-graph tools (create_entities, …, open_nodes) over a graph kept in the store.\n\n\
Examples:\n  agentmem --store sqlite://memory.db mcp --user alice\n  \
agentmem --store sqlite://memory.db mcp --memory-graph"
    )]
    Mcp(crate::serve::McpArgs),
}

/// Accepts a value unless it is empty or only whitespace (a usage error, exit 2).
pub fn non_blank(value: &str) -> Result<String, String> {
    if value.trim().is_empty() {
        Err("must not be empty".to_owned())
    } else {
        Ok(value.to_owned())
    }
}

/// `--user`, required by every facts command.
#[derive(Debug, Args)]
pub struct UserArg {
    /// The user id.
    #[arg(long, short = 'u', value_parser = non_blank)]
    pub user: String,
}

/// `--json`.
#[derive(Debug, Args, Clone, Copy)]
pub struct JsonArg {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `agentmem ingest`.
#[derive(Debug, Args)]
pub struct IngestArgs {
    #[command(flatten)]
    pub user: UserArg,
    /// The conversation id to log the messages under (a new one when absent).
    #[arg(long, short = 'c', value_parser = non_blank)]
    pub conversation: Option<String>,
    /// The largest message taken, in bytes: a larger one stops the command before
    /// anything is written.
    #[arg(
        long,
        value_name = "BYTES",
        env = "AGENTMEM_MAX_MESSAGE_BYTES",
        default_value_t = agentmemory::DEFAULT_MAX_MESSAGE_BYTES,
        value_parser = positive_bytes
    )]
    pub max_message_bytes: usize,
    #[command(flatten)]
    pub json: JsonArg,
}

/// A number of bytes, at least 1 (`_` separators allowed).
fn positive_bytes(value: &str) -> Result<usize, String> {
    match value.replace('_', "").parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "`{value}` is not a whole number of bytes, at least 1"
        )),
    }
}

/// `agentmem reembed`.
#[derive(Debug, Args)]
pub struct ReembedArgs {
    /// Drop every vector and embed every fact and document again.
    #[arg(long)]
    pub all: bool,
    /// Texts per call to the model.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..))]
    pub batch: u16,
    #[command(flatten)]
    pub json: JsonArg,
}

/// `agentmem recall`.
#[derive(Debug, Args)]
pub struct RecallArgs {
    #[command(flatten)]
    pub user: UserArg,
    /// At most this many earlier messages (episodes).
    #[arg(short, long, default_value_t = 5)]
    pub k: usize,
    /// At most this many facts.
    #[arg(long, default_value_t = 5)]
    pub facts: usize,
    /// The memory block's token cap.
    #[arg(long, default_value_t = 500)]
    pub max_tokens: usize,
    /// Recall the memory as it was at DATE: the facts that held then and the messages
    /// said by then (a date is the end of that day, UTC; or an RFC 3339 time).
    #[arg(long, value_name = "DATE", value_parser = as_of_time)]
    pub as_of: Option<chrono::DateTime<chrono::Utc>>,
    /// A fact enters the block only above this relevance to the message (0 to 1).
    #[arg(long, value_name = "R", default_value_t = agentmemory::recall::FACT_RELEVANCE_FLOOR)]
    pub min_fact_relevance: f32,
    #[command(flatten)]
    pub json: JsonArg,
    /// The message (several words are joined by spaces); stdin JSONL when absent.
    pub message: Vec<String>,
}

/// `agentmem facts ...`.
#[derive(Debug, Subcommand)]
pub enum FactsCommand {
    /// Extract facts from TEXT and reconcile them with what is known about the user.
    #[command(
        after_help = "Prints what changed: added, reinforced, superseded or ignored.\n\n\
Example:\n  agentmem facts add --user alice \"I live in Paris and I love museums\""
    )]
    Add {
        #[command(flatten)]
        user: UserArg,
        #[command(flatten)]
        json: JsonArg,
        /// What the user said (several words are joined by spaces).
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// The user's current facts.
    #[command(
        after_help = "With --json, each fact is its JSON record without its embedding; \
--with-embeddings keeps it.\n\n\
Example:\n  agentmem facts list --user alice --history"
    )]
    List {
        #[command(flatten)]
        user: UserArg,
        #[command(flatten)]
        json: JsonArg,
        /// Also show the versions each current fact superseded.
        #[arg(long)]
        history: bool,
        /// With --json, keep each fact's embedding (384 floats with the default model),
        /// left out otherwise.
        #[arg(long)]
        with_embeddings: bool,
        /// The facts as they stood at this moment instead of now: `2024-06-30` (the end
        /// of that day, UTC) or an RFC 3339 time. Each comes with when it stopped holding.
        #[arg(long, value_name = "DATE", value_parser = as_of_time, conflicts_with = "history")]
        as_of: Option<chrono::DateTime<chrono::Utc>>,
    },
    /// The user's facts most relevant to QUERY.
    #[command(
        after_help = "Example:\n  agentmem facts search --user alice -k 3 \"where do I live\""
    )]
    Search {
        #[command(flatten)]
        user: UserArg,
        #[command(flatten)]
        json: JsonArg,
        /// How many facts at most.
        #[arg(short, long, default_value_t = 5)]
        k: usize,
        /// With --json, keep each fact's embedding (384 floats with the default model),
        /// left out otherwise.
        #[arg(long)]
        with_embeddings: bool,
        /// The query (several words are joined by spaces).
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
    },
    /// Delete one fact (with its history) or every fact of the user.
    #[command(
        after_help = "Asks for confirmation on a terminal; without a terminal, \
--yes is required (otherwise exit 2).\n\n\
Example:\n  agentmem facts forget --user alice --yes"
    )]
    Forget {
        #[command(flatten)]
        user: UserArg,
        /// Only this fact (and the versions it superseded).
        #[arg(long)]
        id: Option<String>,
        /// Do not ask.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Every fact of the user, history included, as versioned JSON on stdout.
    #[command(after_help = "Example:\n  agentmem facts export --user alice > alice.json")]
    Export {
        #[command(flatten)]
        user: UserArg,
    },
    /// Load a facts export (from FILE, or stdin).
    #[command(
        after_help = "The whole document is validated before anything is written (unknown \
version, facts of another user, dangling or cyclic supersession links: nothing is \
written). Every version is restored as it is, in one batch: ids, timestamps, confidence, \
history. Facts already present are skipped, so importing twice writes nothing the second \
time; under another --user the ids are derived from that user and the originals.\n\n\
Example:\n  agentmem facts import alice.json --user alice2"
    )]
    Import {
        /// The export file; stdin when absent.
        file: Option<PathBuf>,
        /// Import for this user instead of the one in the document.
        #[arg(long, short = 'u', value_parser = non_blank)]
        user: Option<String>,
        #[command(flatten)]
        json: JsonArg,
    },
}

/// `--namespace`.
#[derive(Debug, Args)]
pub struct NamespaceArg {
    /// The vector namespace.
    #[arg(long, short = 'n', value_parser = non_blank)]
    pub namespace: String,
}

/// `agentmem vectors ...`.
#[derive(Debug, Subcommand)]
pub enum VectorsCommand {
    /// Bulk-load JSONL documents {"id", "content", "metadata"} (from --file, or stdin).
    #[command(
        after_help = "Documents are written in batches, each in one transaction; \
a malformed line stops the load before its batch is written, naming the line.\n\n\
Example:\n  agentmem vectors upsert --namespace docs --file docs.jsonl"
    )]
    Upsert {
        #[command(flatten)]
        namespace: NamespaceArg,
        /// The JSONL file; stdin when absent.
        #[arg(long, short = 'f')]
        file: Option<PathBuf>,
        /// Documents per batch (one transaction each).
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
        batch_size: u32,
    },
    /// Search with QUERY, or batch-search JSONL queries {"id", "query"} from stdin.
    #[command(
        after_help = "Without QUERY, prints one {\"id\", \"hits\": [{\"id\", \"score\"}]} \
line per query line, in order.\n\n\
Examples:\n  agentmem vectors search --namespace docs -k 3 \"rust memory\"\n  \
agentmem vectors search --namespace docs < queries.jsonl"
    )]
    Search {
        #[command(flatten)]
        namespace: NamespaceArg,
        #[command(flatten)]
        json: JsonArg,
        /// Hits per query.
        #[arg(short, long, default_value_t = 10)]
        k: usize,
        /// The query (several words are joined by spaces); JSONL on stdin when absent.
        query: Vec<String>,
        /// JSONL mode: searches running at once on the store's readers (results stay in
        /// input order).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
        concurrency: u16,
    },
    /// Delete documents by id.
    #[command(after_help = "Example:\n  agentmem vectors delete --namespace docs doc-1 doc-2")]
    Delete {
        #[command(flatten)]
        namespace: NamespaceArg,
        /// The ids.
        #[arg(required = true, num_args = 1..)]
        ids: Vec<String>,
    },
    /// How many documents the namespace holds.
    #[command(after_help = "Example:\n  agentmem vectors stats --namespace docs --json")]
    Stats {
        #[command(flatten)]
        namespace: NamespaceArg,
        #[command(flatten)]
        json: JsonArg,
    },
}

/// `agentmem sessions ...`.
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// Conversation ids with their user, agent and message count.
    #[command(after_help = "Example:\n  agentmem sessions list --user alice")]
    List {
        /// Only this user's conversations.
        #[arg(long, short = 'u', value_parser = non_blank)]
        user: Option<String>,
        #[command(flatten)]
        json: JsonArg,
    },
    /// The conversation window as a session would rebuild it, its summary and token totals.
    #[command(after_help = "Example:\n  agentmem sessions show 01J9Z6...")]
    Show {
        /// The conversation id.
        id: String,
        #[command(flatten)]
        json: JsonArg,
    },
    /// A conversation as versioned JSON on stdout.
    #[command(after_help = "Example:\n  agentmem sessions export 01J9Z6... > chat.json")]
    Export {
        /// The conversation id.
        id: String,
    },
    /// Load a conversation export.
    #[command(after_help = "Example:\n  agentmem sessions import chat.json --as copy-1")]
    Import {
        /// The export file.
        file: PathBuf,
        /// Store it under this id instead of the one in the document.
        #[arg(long = "as", value_name = "NEW_ID")]
        as_id: Option<String>,
    },
    /// Delete a conversation's log.
    #[command(after_help = "Example:\n  agentmem sessions delete 01J9Z6...")]
    Delete {
        /// The conversation id.
        id: String,
    },
}

/// `agentmem chat`.
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// The user id.
    #[arg(long, short = 'u', value_parser = non_blank)]
    pub user: String,
    /// The agent's system prompt.
    #[arg(long, default_value = "You are a helpful assistant.")]
    pub agent_prompt: String,
    /// Resume (or start) this conversation instead of the user's last one.
    #[arg(long, conflicts_with = "new")]
    pub conversation: Option<String>,
    /// Start a new conversation even if the user has a last one.
    #[arg(long)]
    pub new: bool,
    /// Token budget of the whole prompt (system prompt, memory, summary and window).
    #[arg(long, value_parser = clap::value_parser!(u32).range(64..))]
    pub max_tokens: Option<u32>,
    /// The largest message taken, in bytes (default 1 MiB, or AGENTMEM_MAX_MESSAGE_BYTES):
    /// a larger one is refused, with an error on stderr, and the chat goes on.
    #[arg(long, value_name = "BYTES", value_parser = positive_bytes)]
    pub max_message_bytes: Option<usize>,
}

/// The command line's grammar, with the exit codes line appended to the help of every
/// subcommand (and theirs).
pub fn command() -> clap::Command {
    fn append(command: clap::Command) -> clap::Command {
        let help = match command.get_after_help() {
            Some(text) => format!("{text}\n\n{EXIT_CODES_SHORT}"),
            None => EXIT_CODES_SHORT.to_owned(),
        };
        command.after_help(help).mut_subcommands(append)
    }
    <Cli as clap::CommandFactory>::command().mut_subcommands(append)
}

/// `--as-of`: a date (the end of that day, UTC) or an RFC 3339 time.
fn as_of_time(s: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&chrono::Utc));
    }
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(23, 59, 59))
        .map(|t| t.and_utc())
        .ok_or_else(|| {
            format!(
                "`{s}` is not a date: use YYYY-MM-DD or an RFC 3339 time (2024-06-30T12:00:00Z)"
            )
        })
}
