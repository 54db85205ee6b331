//! Claude's memory tool (`memory_20250818`) backed by agentmem: a tool-use exchange, as
//! the Messages API carries it, replayed against the handler.
//!
//! The assistant turns below hold the `tool_use` blocks Claude sends when it keeps
//! memory across conversations: it looks at `/memories`, writes what it learned, edits
//! it, reads part of it back, files it away and cleans up. Each block's `input` goes to
//! [`MemoryTool::run`] unchanged; the printed `tool_result` blocks are what the next
//! request sends back. The files live in a SQLite file here, and would on any store URL.
//!
//! ```text
//! cargo run --example memory_tool
//! ```

use agentmemory::memory_tool::{MemoryFiles, MemoryTool};
use agentmemory::stores::StoreUrl;
use serde_json::{json, Value};

/// The `content` of the assistant messages of the exchange: text and `tool_use` blocks.
const EXCHANGE: &str = r#"[
  [
    {"type": "text", "text": "Let me check my memory directory first."},
    {"type": "tool_use", "id": "toolu_01", "name": "memory",
     "input": {"command": "view", "path": "/memories"}}
  ],
  [
    {"type": "text", "text": "Nothing yet. I'll note your preferences."},
    {"type": "tool_use", "id": "toolu_02", "name": "memory",
     "input": {"command": "create", "path": "/memories/user_preferences.xml",
               "file_text": "<user>\n  <name>Ana</name>\n  <diet>vegetarian</diet>\n  <coffee>black</coffee>\n</user>\n"}}
  ],
  [
    {"type": "tool_use", "id": "toolu_03", "name": "memory",
     "input": {"command": "str_replace", "path": "/memories/user_preferences.xml",
               "old_str": "<coffee>black</coffee>", "new_str": "<coffee>flat white, oat milk</coffee>"}}
  ],
  [
    {"type": "tool_use", "id": "toolu_04", "name": "memory",
     "input": {"command": "insert", "path": "/memories/user_preferences.xml",
               "insert_line": 2, "insert_text": "  <city>Lisbon</city>\n"}}
  ],
  [
    {"type": "tool_use", "id": "toolu_05", "name": "memory",
     "input": {"command": "view", "path": "/memories/user_preferences.xml", "view_range": [2, 4]}}
  ],
  [
    {"type": "tool_use", "id": "toolu_06", "name": "memory",
     "input": {"command": "rename", "old_path": "/memories/user_preferences.xml",
               "new_path": "/memories/ana/preferences.xml"}}
  ],
  [
    {"type": "tool_use", "id": "toolu_07", "name": "memory",
     "input": {"command": "create", "path": "/memories/scratch.md", "file_text": "draft\n"}},
    {"type": "tool_use", "id": "toolu_08", "name": "memory",
     "input": {"command": "delete", "path": "/memories/scratch.md"}}
  ],
  [
    {"type": "text", "text": "Trying to read outside the memory directory is refused."},
    {"type": "tool_use", "id": "toolu_09", "name": "memory",
     "input": {"command": "view", "path": "/memories/../../etc/passwd"}}
  ],
  [
    {"type": "tool_use", "id": "toolu_10", "name": "memory",
     "input": {"command": "view", "path": "/memories"}}
  ]
]"#;

/// What each tool result must say (the run is a test: `cargo test --example memory_tool`).
const EXPECTED: [&str; 10] = [
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n0B\t/memories",
    "File created successfully at: /memories/user_preferences.xml",
    "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     2\t  <name>Ana</name>\n     3\t  <diet>vegetarian</diet>\n     4\t  <coffee>flat white, oat milk</coffee>\n     5\t</user>\n     6\t",
    "The file /memories/user_preferences.xml has been edited.",
    "Here's the content of /memories/user_preferences.xml with line numbers:\n     2\t  <name>Ana</name>\n     3\t  <city>Lisbon</city>\n     4\t  <diet>vegetarian</diet>",
    "Successfully renamed /memories/user_preferences.xml to /memories/ana/preferences.xml",
    "File created successfully at: /memories/scratch.md",
    "Successfully deleted /memories/scratch.md",
    "Path /memories/../../etc/passwd would escape /memories directory",
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n122B\t/memories\n122B\t/memories/ana/\n122B\t/memories/ana/preferences.xml",
];

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    run().await
}

/// Replays the exchange and checks every result.
async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let db = std::env::temp_dir().join(format!(
        "agentmem-memory-tool-example-{}.db",
        std::process::id()
    ));
    let url: StoreUrl = format!("sqlite://{}", db.display()).parse()?;
    let files = MemoryFiles::from_container(&url.open().await?)?;
    let tool = files.for_user("ana")?;
    println!("tools: [{}]\n", MemoryTool::definition());

    let exchange: Vec<Vec<Value>> = serde_json::from_str(EXCHANGE)?;
    let mut results = Vec::new();
    for turn in exchange {
        let mut tool_results = Vec::new();
        for block in turn {
            match block["type"].as_str() {
                Some("text") => println!("assistant: {}", block["text"].as_str().unwrap_or("")),
                Some("tool_use") => {
                    println!("tool_use {}: {}", block["id"], block["input"]);
                    let out = tool.run(&block["input"]).await;
                    tool_results.push(json!({
                        "type": "tool_result",
                        "tool_use_id": block["id"],
                        "content": out.content,
                        "is_error": out.is_error,
                    }));
                    results.push(out.content);
                }
                _ => {}
            }
        }
        // the next user message of the exchange
        let reply = json!({"role": "user", "content": tool_results});
        println!("{}\n", serde_json::to_string_pretty(&reply)?);
    }

    let history = tool.history("/memories/ana/preferences.xml").await?;
    println!("history of /memories/ana/preferences.xml:");
    for version in &history {
        println!(
            "  v{} {} {:?} at {}",
            version.version, version.path, version.change, version.at
        );
    }

    drop(tool);
    drop(files);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }

    for (got, expected) in results.iter().zip(EXPECTED) {
        assert_eq!(got, expected);
    }
    assert_eq!(results.len(), EXPECTED.len());
    assert_eq!(history.len(), 4, "create, str_replace, insert, rename");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn replays_the_exchange() {
        super::run().await.unwrap();
    }
}
