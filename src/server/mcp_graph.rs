//! The reference MCP `memory` server's nine knowledge-graph tools over a
//! [`KnowledgeGraph`]: stdio ([`serve_stdio`], `agentmem mcp --memory-graph`) and
//! streamable HTTP ([`http_service`], `/mcp` of `agentmem serve --memory-graph`).
//!
//! Names, argument schemas, annotations and results are the reference server's
//! (modelcontextprotocol/servers, `src/memory`): each result is the reference's text (the
//! JSON of the result, indented by two spaces, or the message of a deletion) and the same
//! structured content; a failure is a tool error whose text is the reference's message
//! (`Entity with name X not found`). The whole graph is also the resource
//! `memory://knowledge-graph` (JSON), as the reference serves it. What differs is behind the tools: the graph is kept
//! as a log of changes on agentmem's stores, several processes may share it, search ranks
//! by words and meaning, and the user's entity shows the user's facts (see
//! [`crate::graph`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::graph::{
    self as core, AddedObservations, GraphError, KnowledgeGraph, ObservationAddition,
    ObservationDeletion,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::Peer;
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt};
use rmcp::{ErrorData as McpError, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The longest `search_nodes` query, in UTF-16 code units (the reference's limit).
pub const SEARCH_QUERY_MAX_LENGTH: usize = 2048;

/// An entity, as the tools take and give it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct EntityArg {
    /// The name of the entity
    pub name: String,
    /// The type of the entity
    #[serde(rename = "entityType")]
    pub entity_type: String,
    /// An array of observation contents associated with the entity
    pub observations: Vec<String>,
}

/// A relation, as the tools take and give it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RelationArg {
    /// The name of the entity where the relation starts
    pub from: String,
    /// The name of the entity where the relation ends
    pub to: String,
    /// The type of the relation
    #[serde(rename = "relationType")]
    pub relation_type: String,
}

impl From<EntityArg> for core::Entity {
    fn from(e: EntityArg) -> Self {
        core::Entity::new(e.name, e.entity_type, e.observations)
    }
}

impl From<RelationArg> for core::Relation {
    fn from(r: RelationArg) -> Self {
        core::Relation::new(r.from, r.to, r.relation_type)
    }
}

/// Arguments of `create_entities`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateEntitiesArgs {
    /// The entities to create.
    pub entities: Vec<EntityArg>,
}

/// Arguments of `create_relations`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateRelationsArgs {
    /// The relations to create.
    pub relations: Vec<RelationArg>,
}

/// Observations for one entity, in `add_observations`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AdditionArg {
    /// The name of the entity to add the observations to
    #[serde(rename = "entityName")]
    pub entity_name: String,
    /// An array of observation contents to add
    pub contents: Vec<String>,
}

/// Arguments of `add_observations`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AddObservationsArgs {
    /// What to add to which entity.
    pub observations: Vec<AdditionArg>,
}

/// Arguments of `delete_entities`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteEntitiesArgs {
    /// An array of entity names to delete
    #[serde(rename = "entityNames")]
    pub entity_names: Vec<String>,
}

/// Observations to delete from one entity, in `delete_observations`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeletionArg {
    /// The name of the entity containing the observations
    #[serde(rename = "entityName")]
    pub entity_name: String,
    /// An array of observations to delete
    pub observations: Vec<String>,
}

/// Arguments of `delete_observations`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteObservationsArgs {
    /// What to delete from which entity.
    pub deletions: Vec<DeletionArg>,
}

/// Arguments of `delete_relations`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteRelationsArgs {
    /// An array of relations to delete
    pub relations: Vec<RelationArg>,
}

/// Arguments of `search_nodes`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchNodesArgs {
    /// The search query to match against entity names, types, and observation content
    #[schemars(length(max = 2048))]
    pub query: String,
}

/// Arguments of `open_nodes`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct OpenNodesArgs {
    /// An array of entity names to retrieve
    pub names: Vec<String>,
}

/// Output of `create_entities`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EntitiesOutput {
    /// The entities created.
    pub entities: Vec<EntityArg>,
}

/// Output of `create_relations`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RelationsOutput {
    /// The relations created.
    pub relations: Vec<RelationArg>,
}

/// What was added to one entity.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AddedOutput {
    /// The entity.
    #[serde(rename = "entityName")]
    pub entity_name: String,
    /// The observations that were new to it.
    #[serde(rename = "addedObservations")]
    pub added_observations: Vec<String>,
}

/// Output of `add_observations`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResultsOutput {
    /// What was added to each entity.
    pub results: Vec<AddedOutput>,
}

/// Output of the deletions.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MessageOutput {
    /// Always true: a deletion that fails is a tool error.
    pub success: bool,
    /// What was deleted.
    pub message: String,
}

/// Output of `read_graph`, `search_nodes` and `open_nodes`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GraphOutput {
    /// The entities.
    pub entities: Vec<EntityArg>,
    /// The relations.
    pub relations: Vec<RelationArg>,
}

/// The MCP server of the knowledge-graph tools.
#[derive(Clone)]
pub struct GraphMcp {
    graph: Arc<KnowledgeGraph>,
    /// Whether this session's client subscribed to [`RESOURCE_URI`].
    subscribed: Arc<AtomicBool>,
    tool_router: ToolRouter<Self>,
}

type ToolResult = Result<CallToolResult, String>;

fn failed(error: GraphError) -> String {
    error.to_string()
}

/// A result whose text is `shown` as JSON indented by two spaces (as the reference's
/// `JSON.stringify(result, null, 2)`) and whose structured content is `structured`.
fn json_result(shown: &impl Serialize, structured: Value) -> ToolResult {
    let text = serde_json::to_string_pretty(shown).map_err(|e| e.to_string())?;
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    Ok(result)
}

/// A deletion's result: its message as text, and `{success, message}`.
fn message_result(message: String) -> ToolResult {
    let structured = json!({"success": true, "message": message});
    let mut result = CallToolResult::success(vec![ContentBlock::text(message)]);
    result.structured_content = Some(structured);
    Ok(result)
}

fn graph_result(graph: &core::Graph) -> ToolResult {
    let value = serde_json::to_value(graph).map_err(|e| e.to_string())?;
    json_result(graph, value)
}

#[tool_router(router = tool_router)]
impl GraphMcp {
    /// The tools over `graph`.
    pub fn new(graph: Arc<KnowledgeGraph>) -> Self {
        Self {
            graph,
            subscribed: Arc::new(AtomicBool::new(false)),
            tool_router: Self::tool_router(),
        }
    }

    /// Tells a subscribed client that [`RESOURCE_URI`] changed (the reference notifies
    /// after every write call, whatever it changed).
    async fn graph_changed(&self, peer: &Peer<RoleServer>) {
        if !self.subscribed.load(Ordering::Relaxed) {
            return;
        }
        let notice = ResourceUpdatedNotificationParam::new(RESOURCE_URI);
        if let Err(error) = peer.notify_resource_updated(notice).await {
            tracing::debug!(%error, "the client did not take the resource notification");
        }
    }

    /// Create multiple new entities in the knowledge graph
    #[tool(
        name = "create_entities",
        title = "Create Entities",
        output_schema = rmcp::handler::server::common::schema_for_output::<EntitiesOutput>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn create_entities(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<CreateEntitiesArgs>,
    ) -> ToolResult {
        let created = self
            .graph
            .create_entities(args.entities.into_iter().map(Into::into).collect())
            .await
            .map_err(failed)?;
        self.graph_changed(&peer).await;
        json_result(&created, json!({ "entities": created }))
    }

    /// Create multiple new relations between entities in the knowledge graph. Relations should be in active voice
    #[tool(
        name = "create_relations",
        title = "Create Relations",
        output_schema = rmcp::handler::server::common::schema_for_output::<RelationsOutput>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn create_relations(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<CreateRelationsArgs>,
    ) -> ToolResult {
        let created = self
            .graph
            .create_relations(args.relations.into_iter().map(Into::into).collect())
            .await
            .map_err(failed)?;
        self.graph_changed(&peer).await;
        json_result(&created, json!({ "relations": created }))
    }

    /// Add new observations to existing entities in the knowledge graph
    #[tool(
        name = "add_observations",
        title = "Add Observations",
        output_schema = rmcp::handler::server::common::schema_for_output::<ResultsOutput>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn add_observations(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<AddObservationsArgs>,
    ) -> ToolResult {
        let additions = args
            .observations
            .into_iter()
            .map(|a| ObservationAddition {
                entity_name: a.entity_name,
                contents: a.contents,
            })
            .collect();
        let added: Vec<AddedObservations> = self
            .graph
            .add_observations(additions)
            .await
            .map_err(failed)?;
        self.graph_changed(&peer).await;
        json_result(&added, json!({ "results": added }))
    }

    /// Delete multiple entities and their associated relations from the knowledge graph
    #[tool(
        name = "delete_entities",
        title = "Delete Entities",
        output_schema = rmcp::handler::server::common::schema_for_output::<MessageOutput>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_entities(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<DeleteEntitiesArgs>,
    ) -> ToolResult {
        let asked = args.entity_names.len();
        let report = self
            .graph
            .delete_entities(args.entity_names)
            .await
            .map_err(failed)?;
        self.graph_changed(&peer).await;
        message_result(if report.not_found.is_empty() {
            "Entities deleted successfully".to_owned()
        } else {
            format!(
                "Deleted {} of {} entities. Not found: {}",
                report.deleted.len(),
                asked,
                report.not_found.join(", ")
            )
        })
    }

    /// Delete specific observations from entities in the knowledge graph
    #[tool(
        name = "delete_observations",
        title = "Delete Observations",
        output_schema = rmcp::handler::server::common::schema_for_output::<MessageOutput>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_observations(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<DeleteObservationsArgs>,
    ) -> ToolResult {
        let requested: usize = args.deletions.iter().map(|d| d.observations.len()).sum();
        let deletions = args
            .deletions
            .into_iter()
            .map(|d| ObservationDeletion {
                entity_name: d.entity_name,
                observations: d.observations,
            })
            .collect();
        let report = self
            .graph
            .delete_observations(deletions)
            .await
            .map_err(failed)?;
        self.graph_changed(&peer).await;
        message_result(if report.deleted_count == requested {
            "Observations deleted successfully".to_owned()
        } else {
            let mut message = format!(
                "Deleted {} of {requested} observations.",
                report.deleted_count
            );
            if !report.missing_entities.is_empty() {
                message.push_str(&format!(
                    " Entities not found: {}",
                    report.missing_entities.join(", ")
                ));
            }
            message
        })
    }

    /// Delete multiple relations from the knowledge graph
    #[tool(
        name = "delete_relations",
        title = "Delete Relations",
        output_schema = rmcp::handler::server::common::schema_for_output::<MessageOutput>(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn delete_relations(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<DeleteRelationsArgs>,
    ) -> ToolResult {
        let asked = args.relations.len();
        let deleted = self
            .graph
            .delete_relations(args.relations.into_iter().map(Into::into).collect())
            .await
            .map_err(failed)?;
        self.graph_changed(&peer).await;
        message_result(if deleted == asked {
            "Relations deleted successfully".to_owned()
        } else {
            format!("Deleted {deleted} of {asked} relations. The rest matched nothing.")
        })
    }

    /// Read the entire knowledge graph
    #[tool(
        name = "read_graph",
        title = "Read Graph",
        output_schema = rmcp::handler::server::common::schema_for_output::<GraphOutput>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn read_graph(&self) -> ToolResult {
        graph_result(&self.graph.read_graph().await.map_err(failed)?)
    }

    /// Search for nodes in the knowledge graph based on a query
    #[tool(
        name = "search_nodes",
        title = "Search Nodes",
        output_schema = rmcp::handler::server::common::schema_for_output::<GraphOutput>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn search_nodes(&self, Parameters(args): Parameters<SearchNodesArgs>) -> ToolResult {
        if args.query.encode_utf16().count() > SEARCH_QUERY_MAX_LENGTH {
            return Err(format!(
                "query: the search query is longer than {SEARCH_QUERY_MAX_LENGTH} characters"
            ));
        }
        graph_result(&self.graph.search_nodes(&args.query).await.map_err(failed)?)
    }

    /// Open specific nodes in the knowledge graph by their names
    #[tool(
        name = "open_nodes",
        title = "Open Nodes",
        output_schema = rmcp::handler::server::common::schema_for_output::<GraphOutput>(),
        annotations(read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn open_nodes(&self, Parameters(args): Parameters<OpenNodesArgs>) -> ToolResult {
        graph_result(&self.graph.open_nodes(&args.names).await.map_err(failed)?)
    }
}

/// The URI of the whole graph as a resource (the reference server's).
pub const RESOURCE_URI: &str = "memory://knowledge-graph";

/// The resource the reference server lists: the whole graph as JSON.
fn graph_resource() -> Resource {
    Resource::new(RESOURCE_URI, "knowledge-graph")
        .with_title("Knowledge Graph")
        .with_description("The full knowledge graph with all entities and relations")
        .with_mime_type("application/json")
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for GraphMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new(
            "agentmem-memory-graph",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(
            "A knowledge graph of entities (name, type, observations) and relations between them, kept with its history. The user's entity (named like the user) holds the user's facts. The resource memory://knowledge-graph is the whole graph as JSON.",
        )
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if request.uri != RESOURCE_URI {
            return Err(McpError::resource_not_found(
                format!("Resource {} not found", request.uri),
                None,
            ));
        }
        self.subscribed.store(true, Ordering::Relaxed);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if request.uri == RESOURCE_URI {
            self.subscribed.store(false, Ordering::Relaxed);
        }
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![graph_resource()]))
    }

    /// The whole graph (the user's facts on the user's entity, as `read_graph` gives
    /// it), read from the log as it stands now, indented like the reference's.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != RESOURCE_URI {
            return Err(McpError::resource_not_found(
                format!("Resource {} not found", request.uri),
                None,
            ));
        }
        let graph = self
            .graph
            .read_graph()
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let text = serde_json::to_string_pretty(&graph)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, RESOURCE_URI).with_mime_type("application/json")
        ])
        .into())
    }
}

/// Serves the tools on stdin/stdout until the client closes them. A line that is not
/// JSON is answered with a JSON-RPC parse error (code -32700, `id` null) and the next
/// line is served.
pub async fn serve_stdio(
    graph: Arc<KnowledgeGraph>,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    super::stdio::serve(|transport| async move {
        let running = GraphMcp::new(graph).serve(transport).await?;
        running.waiting().await?;
        Ok(())
    })
    .await
}

/// The streamable-HTTP endpoint of the tools, for mounting in an axum router.
pub fn http_service(
    graph: Arc<KnowledgeGraph>,
) -> StreamableHttpService<GraphMcp, LocalSessionManager> {
    StreamableHttpService::new(
        move || Ok(GraphMcp::new(graph.clone())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    )
}
