//! The memory-tool backend on real stores: every command, every error string, traversal
//! attempts refused, history kept on every edit, users kept apart. Runs on memory://
//! and SQLite; on Redis and PostgreSQL when `AGENTMEM_REDIS_URL` /
//! `AGENTMEM_POSTGRES_URL` are set (required with `CI=true`).

use agentmemory::memory_tool::{FileChange, MemoryFiles, MemoryTool, ToolOutput};
use agentmemory::stores::StoreUrl;
use serde_json::{json, Value};

async fn files_on(url: &StoreUrl) -> MemoryFiles {
    let container = url.open().await.unwrap();
    MemoryFiles::from_container(&container).unwrap()
}

/// A fresh user, so a long-lived shared store can run the suite again.
fn fresh_user(files: &MemoryFiles) -> MemoryTool {
    files.for_user(&format!("u-{}", ulid::Ulid::new())).unwrap()
}

async fn ok(tool: &MemoryTool, input: Value) -> String {
    let out = tool.run(&input).await;
    assert!(!out.is_error, "{input} failed: {}", out.content);
    out.content
}

async fn err(tool: &MemoryTool, input: Value) -> String {
    let out = tool.run(&input).await;
    assert!(out.is_error, "{input} should fail, got: {}", out.content);
    out.content
}

/// Every command, with the strings the reference handler answers.
async fn every_command(files: &MemoryFiles) {
    let tool = fresh_user(files);
    assert_eq!(
        ok(&tool, json!({"command": "view", "path": "/memories"})).await,
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n0B\t/memories"
    );
    assert_eq!(
        ok(&tool, json!({"command": "create", "path": "/memories/notes/todo.md", "file_text": "- buy milk\n- call Ana\n"})).await,
        "File created successfully at: /memories/notes/todo.md"
    );
    ok(&tool, json!({"command": "create", "path": "/memories/profile.xml", "file_text": "<user><name>Ana</name></user>"})).await;
    assert_eq!(
        ok(&tool, json!({"command": "view", "path": "/memories"})).await,
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n\
         51B\t/memories\n\
         22B\t/memories/notes/\n\
         22B\t/memories/notes/todo.md\n\
         29B\t/memories/profile.xml"
    );
    assert_eq!(
        ok(&tool, json!({"command": "view", "path": "/memories/notes/todo.md"})).await,
        "Here's the content of /memories/notes/todo.md with line numbers:\n     1\t- buy milk\n     2\t- call Ana\n     3\t"
    );
    assert_eq!(
        ok(&tool, json!({"command": "view", "path": "/memories/notes/todo.md", "view_range": [2, -1]})).await,
        "Here's the content of /memories/notes/todo.md with line numbers:\n     2\t- call Ana\n     3\t"
    );
    assert_eq!(
        ok(&tool, json!({"command": "str_replace", "path": "/memories/notes/todo.md", "old_str": "milk", "new_str": "oat milk"})).await,
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t- buy oat milk\n     2\t- call Ana\n     3\t"
    );
    assert_eq!(
        ok(&tool, json!({"command": "insert", "path": "/memories/notes/todo.md", "insert_line": 1, "insert_text": "- book dentist\n"})).await,
        "The file /memories/notes/todo.md has been edited."
    );
    assert_eq!(
        ok(&tool, json!({"command": "view", "path": "/memories/notes/todo.md"})).await,
        "Here's the content of /memories/notes/todo.md with line numbers:\n     1\t- buy oat milk\n     2\t- book dentist\n     3\t- call Ana\n     4\t"
    );
    assert_eq!(
        ok(&tool, json!({"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/archive/2026"})).await,
        "Successfully renamed /memories/notes to /memories/archive/2026"
    );
    assert!(ok(
        &tool,
        json!({"command": "view", "path": "/memories/archive/2026/todo.md"})
    )
    .await
    .contains("- book dentist"));
    err(
        &tool,
        json!({"command": "view", "path": "/memories/notes/todo.md"}),
    )
    .await;
    assert_eq!(
        ok(&tool, json!({"command": "rename", "old_path": "/memories/profile.xml", "new_path": "/memories/me.xml"})).await,
        "Successfully renamed /memories/profile.xml to /memories/me.xml"
    );
    assert_eq!(
        ok(
            &tool,
            json!({"command": "delete", "path": "/memories/archive"})
        )
        .await,
        "Successfully deleted /memories/archive"
    );
    assert_eq!(
        ok(
            &tool,
            json!({"command": "delete", "path": "/memories/me.xml"})
        )
        .await,
        "Successfully deleted /memories/me.xml"
    );
    assert_eq!(
        ok(&tool, json!({"command": "view", "path": "/memories"})).await,
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n0B\t/memories"
    );
}

/// Each refusal, with its string.
async fn every_error(files: &MemoryFiles) {
    let tool = fresh_user(files);
    ok(
        &tool,
        json!({"command": "create", "path": "/memories/a.txt", "file_text": "tea\ncoffee\ntea\n"}),
    )
    .await;
    ok(
        &tool,
        json!({"command": "create", "path": "/memories/dir/b.txt", "file_text": "b"}),
    )
    .await;
    let cases = [
        (json!({"command": "view", "path": "/memories/none.txt"}),
         "The path /memories/none.txt does not exist. Please provide a valid path."),
        (json!({"command": "view", "path": "/memories/a.txt", "view_range": [5, 6]}),
         "Invalid `view_range` parameter: [5, 6]. Its first element `5` should be within the range of lines of the file: [1, 4]."),
        (json!({"command": "view", "path": "/memories/a.txt", "view_range": [3, 1]}),
         "Invalid `view_range` parameter: [3, 1]. Its second element `1` should be -1 or larger than or equal to its first element `3`."),
        (json!({"command": "create", "path": "/memories/a.txt", "file_text": "x"}),
         "File /memories/a.txt already exists"),
        (json!({"command": "create", "path": "/memories/dir", "file_text": "x"}),
         "Cannot create /memories/dir: it is a directory"),
        (json!({"command": "create", "path": "/memories/a.txt/inner", "file_text": "x"}),
         "Cannot write /memories/a.txt/inner: /memories/a.txt is a file, not a directory"),
        (json!({"command": "str_replace", "path": "/memories/a.txt", "old_str": "tea", "new_str": "x"}),
         "No replacement was performed. Multiple occurrences of old_str `tea` in lines: 1, 3. Please ensure it is unique"),
        (json!({"command": "str_replace", "path": "/memories/a.txt", "old_str": "milk", "new_str": "x"}),
         "No replacement was performed, old_str `milk` did not appear verbatim in /memories/a.txt."),
        (json!({"command": "str_replace", "path": "/memories/a.txt", "old_str": "", "new_str": "x"}),
         "No replacement was performed, old_str is empty. Please give the exact text to replace in /memories/a.txt."),
        (json!({"command": "str_replace", "path": "/memories/dir", "old_str": "b", "new_str": "x"}),
         "The path /memories/dir is not a file."),
        (json!({"command": "str_replace", "path": "/memories/none.txt", "old_str": "b", "new_str": "x"}),
         "The path /memories/none.txt does not exist. Please provide a valid path."),
        (json!({"command": "insert", "path": "/memories/a.txt", "insert_line": 4, "insert_text": "x"}),
         "Invalid `insert_line` parameter: 4. It should be within the range [0, 3]."),
        (json!({"command": "insert", "path": "/memories/a.txt", "insert_line": -1, "insert_text": "x"}),
         "Invalid `insert_line` parameter: -1. It should be within the range [0, 3]."),
        (json!({"command": "insert", "path": "/memories/dir", "insert_line": 0, "insert_text": "x"}),
         "The path /memories/dir is not a file."),
        (json!({"command": "delete", "path": "/memories"}),
         "Cannot delete the /memories directory itself"),
        (json!({"command": "delete", "path": "/memories/none.txt"}),
         "The path /memories/none.txt does not exist"),
        (json!({"command": "rename", "old_path": "/memories/none.txt", "new_path": "/memories/x.txt"}),
         "The path /memories/none.txt does not exist"),
        (json!({"command": "rename", "old_path": "/memories/a.txt", "new_path": "/memories/dir/b.txt"}),
         "The destination /memories/dir/b.txt already exists"),
        (json!({"command": "rename", "old_path": "/memories/a.txt", "new_path": "/memories/dir"}),
         "The destination /memories/dir already exists"),
        (json!({"command": "rename", "old_path": "/memories/dir", "new_path": "/memories/dir/sub"}),
         "Cannot move /memories/dir into itself (/memories/dir/sub)"),
        (json!({"command": "rename", "old_path": "/memories", "new_path": "/memories/x"}),
         "Cannot rename the /memories directory itself"),
        (json!({"command": "rename", "old_path": "/memories/dir/b.txt", "new_path": "/memories/a.txt/b.txt"}),
         "Cannot write /memories/a.txt/b.txt: /memories/a.txt is a file, not a directory"),
        (json!({"command": "view", "path": "/etc/passwd"}),
         "Path must start with /memories, got: /etc/passwd"),
        (json!({"command": "view", "path": "/memories/../etc/passwd"}),
         "Path /memories/../etc/passwd would escape /memories directory"),
        (json!({"command": "chmod", "path": "/memories/a.txt"}),
         "Unknown command: chmod. The memory tool's commands are view, create, str_replace, insert, delete and rename"),
        (json!({"command": "create", "path": "/memories/c.txt"}),
         "Invalid create command: missing field `file_text`"),
        (json!({"path": "/memories"}),
         "Invalid memory command: missing field `command`"),
    ];
    for (input, expected) in cases {
        assert_eq!(err(&tool, input.clone()).await, expected, "{input}");
    }
    let small = files
        .clone()
        .max_file_bytes(8)
        .for_user(tool.user())
        .unwrap();
    assert_eq!(
        err(
            &small,
            json!({"command": "create", "path": "/memories/big.txt", "file_text": "123456789"})
        )
        .await,
        "File /memories/big.txt would be 9 bytes, over the limit of 8 bytes"
    );
    // nothing above changed a file
    assert_eq!(
        ok(&tool, json!({"command": "view", "path": "/memories/a.txt"})).await,
        "Here's the content of /memories/a.txt with line numbers:\n     1\ttea\n     2\tcoffee\n     3\ttea\n     4\t"
    );
}

/// Paths that try to leave `/memories` (or to be something else than a plain name),
/// refused by every command, and nothing stored.
async fn traversal_refused(files: &MemoryFiles) {
    let tool = fresh_user(files);
    let attempts = [
        "/memories/../etc/passwd",
        "/memories/..",
        "/memories/notes/../../root",
        "/memories/./a.txt",
        "../memories/a.txt",
        "memories/a.txt",
        "/etc/passwd",
        "/",
        "",
        "/memoriesX/a.txt",
        "/Memories/a.txt",
        "/memories/%2e%2e/secret",
        "/memories/%2E%2E%2Fsecret",
        "/memories/a%2fb",
        "/memories/%252e%252e/x",
        "/memories/..%5c..%5cwindows",
        "/memories\\..\\windows",
        "/memories/a\\b",
        "/memories/a\u{0}.txt",
        "/memories/a\n/b",
        "/memories/\u{202e}txt.exe",
        "/memories/\u{ff0e}\u{ff0e}/x",
        "/memories/a\u{2215}b",
        "/memories/~root/.ssh",
        "/memories/C:/Windows",
        "/memories/file.txt:stream",
        "/memories/CON",
        "/memories/nul.txt",
        "/memories/trailing.",
        "file:///memories/a.txt",
        "C:\\memories\\a.txt",
        "//server/share/memories",
    ];
    let long_name = format!("/memories/{}", "n".repeat(300));
    let long_path = format!("/memories/{}", "abc/".repeat(300));
    let deep = format!("/memories/{}", "d/".repeat(40));
    let mut refused = 0;
    for raw in
        attempts
            .iter()
            .copied()
            .chain([long_name.as_str(), long_path.as_str(), deep.as_str()])
    {
        for input in [
            json!({"command": "view", "path": raw}),
            json!({"command": "create", "path": raw, "file_text": "pwned"}),
            json!({"command": "str_replace", "path": raw, "old_str": "a", "new_str": "b"}),
            json!({"command": "insert", "path": raw, "insert_line": 0, "insert_text": "x"}),
            json!({"command": "delete", "path": raw}),
            json!({"command": "rename", "old_path": "/memories/x", "new_path": raw}),
        ] {
            let out = tool.run(&input).await;
            assert!(out.is_error, "{raw:?} was accepted: {}", out.content);
            assert!(
                out.content.starts_with("Path "),
                "{raw:?}: not a path refusal: {}",
                out.content
            );
            assert!(!out.content.contains('\u{0}') && !out.content.contains('\n'));
        }
        refused += 1;
    }
    assert!(refused >= 20, "{refused}");
    assert_eq!(
        ok(&tool, json!({"command": "view", "path": "/memories"})).await,
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n0B\t/memories"
    );
}

/// Every edit keeps the version before it, with its time; renames keep one chain.
async fn history_on_every_edit(files: &MemoryFiles) {
    let tool = fresh_user(files);
    ok(
        &tool,
        json!({"command": "create", "path": "/memories/prefs.md", "file_text": "coffee: black\n"}),
    )
    .await;
    ok(&tool, json!({"command": "str_replace", "path": "/memories/prefs.md", "old_str": "black", "new_str": "with oat milk"})).await;
    ok(&tool, json!({"command": "insert", "path": "/memories/prefs.md", "insert_line": 0, "insert_text": "# Preferences"})).await;
    ok(&tool, json!({"command": "rename", "old_path": "/memories/prefs.md", "new_path": "/memories/user/prefs.md"})).await;
    ok(
        &tool,
        json!({"command": "delete", "path": "/memories/user/prefs.md"}),
    )
    .await;

    let versions = tool.history("/memories/user/prefs.md").await.unwrap();
    assert_eq!(tool.history("/memories/prefs.md").await.unwrap(), versions);
    let summary: Vec<(u64, &str, Option<&str>, &FileChange)> = versions
        .iter()
        .map(|v| (v.version, v.path.as_str(), v.content.as_deref(), &v.change))
        .collect();
    assert_eq!(
        summary,
        [
            (
                1,
                "/memories/prefs.md",
                Some("coffee: black\n"),
                &FileChange::Created
            ),
            (
                2,
                "/memories/prefs.md",
                Some("coffee: with oat milk\n"),
                &FileChange::Replaced
            ),
            (
                3,
                "/memories/prefs.md",
                Some("# Preferences\ncoffee: with oat milk\n"),
                &FileChange::Inserted
            ),
            (
                4,
                "/memories/user/prefs.md",
                Some("# Preferences\ncoffee: with oat milk\n"),
                &FileChange::Renamed {
                    from: "/memories/prefs.md".into()
                }
            ),
            (5, "/memories/user/prefs.md", None, &FileChange::Deleted),
        ]
    );
    assert!(versions.iter().all(|v| v.file_id == versions[0].file_id));
    assert!(versions.windows(2).all(|w| w[0].at <= w[1].at));
    assert_eq!(versions[1].supersedes(), Some(1));

    // A new file at the same path starts a new chain; the deleted one stays retrievable.
    ok(
        &tool,
        json!({"command": "create", "path": "/memories/user/prefs.md", "file_text": "tea\n"}),
    )
    .await;
    let versions = tool.history("/memories/user/prefs.md").await.unwrap();
    assert_eq!(versions.len(), 6);
    assert_ne!(versions[5].file_id, versions[0].file_id);
    assert_eq!(versions[5].content.as_deref(), Some("tea\n"));
    assert!(tool.history("/memories/never.md").await.is_err());
}

/// Search finds current files by their words, never an old version or a deleted file.
async fn search_current_versions(files: &MemoryFiles) {
    let tool = fresh_user(files);
    ok(&tool, json!({"command": "create", "path": "/memories/travel.md", "file_text": "Ana prefers window seats on long flights\n"})).await;
    ok(&tool, json!({"command": "create", "path": "/memories/food.md", "file_text": "Ana is vegetarian and allergic to peanuts\n"})).await;
    ok(&tool, json!({"command": "create", "path": "/memories/old.md", "file_text": "Ana liked aisle seats\n"})).await;
    ok(
        &tool,
        json!({"command": "delete", "path": "/memories/old.md"}),
    )
    .await;
    ok(&tool, json!({"command": "str_replace", "path": "/memories/travel.md", "old_str": "window", "new_str": "exit-row"})).await;

    let hits = tool.search("peanuts allergy", 3).await.unwrap();
    assert_eq!(hits[0].path, "/memories/food.md", "{hits:?}");
    // Only current versions and live files: the replaced text and the deleted file never
    // come back. (With the embedder on, unrelated files may follow at a low meaning score.)
    let hits = tool.search("seats", 5).await.unwrap();
    assert!(
        hits.iter().all(|h| h.path != "/memories/old.md"),
        "{hits:?}"
    );
    assert_eq!(
        hits.iter()
            .filter(|h| h.path == "/memories/travel.md")
            .count(),
        1,
        "{hits:?}"
    );
    assert_eq!(hits[0].path, "/memories/travel.md");
    assert_eq!(hits[0].version, 2);
    assert!(hits[0].content.contains("exit-row"));
    let replaced = tool.search("window", 5).await.unwrap();
    assert!(
        replaced.iter().all(|h| !h.content.contains("window")),
        "{replaced:?}"
    );
}

/// One user's files are invisible to another, whatever path they use.
async fn users_apart(files: &MemoryFiles) {
    let ana = fresh_user(files);
    let bob = fresh_user(files);
    ok(
        &ana,
        json!({"command": "create", "path": "/memories/secret.md", "file_text": "Ana's diary\n"}),
    )
    .await;
    assert_eq!(
        ok(&bob, json!({"command": "view", "path": "/memories"})).await,
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n0B\t/memories"
    );
    assert_eq!(
        err(
            &bob,
            json!({"command": "view", "path": "/memories/secret.md"})
        )
        .await,
        "The path /memories/secret.md does not exist. Please provide a valid path."
    );
    err(
        &bob,
        json!({"command": "delete", "path": "/memories/secret.md"}),
    )
    .await;
    assert!(bob.search("diary", 5).await.unwrap().is_empty());
    assert!(bob.history("/memories/secret.md").await.is_err());
    ok(
        &bob,
        json!({"command": "create", "path": "/memories/secret.md", "file_text": "Bob's\n"}),
    )
    .await;
    assert!(ok(
        &ana,
        json!({"command": "view", "path": "/memories/secret.md"})
    )
    .await
    .contains("Ana's diary"));
    assert!(files.for_user("").is_err());
    assert!(files.for_user("a\u{1f}b").is_err());
}

/// Names that sort between a directory and its files (`a b`, `a.txt` between `a` and
/// `a/...`) are neither in it nor hide it.
async fn sibling_names(files: &MemoryFiles) {
    let tool = fresh_user(files);
    for path in [
        "/memories/a.txt",
        "/memories/a b.md",
        "/memories/a-z",
        "/memories/a/x.md",
    ] {
        ok(
            &tool,
            json!({"command": "create", "path": path, "file_text": "x"}),
        )
        .await;
    }
    assert_eq!(
        ok(&tool, json!({"command": "view", "path": "/memories/a"})).await,
        "Here're the files and directories up to 2 levels deep in /memories/a, excluding hidden items:\n1B\t/memories/a\n1B\t/memories/a/x.md"
    );
    ok(
        &tool,
        json!({"command": "rename", "old_path": "/memories/a", "new_path": "/memories/b"}),
    )
    .await;
    ok(&tool, json!({"command": "delete", "path": "/memories/b"})).await;
    assert_eq!(
        ok(&tool, json!({"command": "view", "path": "/memories"})).await,
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n3B\t/memories\n1B\t/memories/a b.md\n1B\t/memories/a-z\n1B\t/memories/a.txt"
    );
}

async fn suite(url: &StoreUrl) {
    let files = files_on(url).await;
    every_command(&files).await;
    every_error(&files).await;
    traversal_refused(&files).await;
    history_on_every_edit(&files).await;
    search_current_versions(&files).await;
    users_apart(&files).await;
    sibling_names(&files).await;
}

#[tokio::test]
async fn memory_tool_in_memory() {
    suite(&StoreUrl::Memory).await;
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn memory_tool_on_sqlite_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let url: StoreUrl = format!("sqlite://{}", dir.path().join("m.db").display())
        .parse()
        .unwrap();
    suite(&url).await;
    let tool = files_on(&url).await.for_user("reopened").unwrap();
    ok(
        &tool,
        json!({"command": "create", "path": "/memories/kept.md", "file_text": "kept\n"}),
    )
    .await;
    drop(tool);
    let again = files_on(&url).await.for_user("reopened").unwrap();
    assert!(ok(
        &again,
        json!({"command": "view", "path": "/memories/kept.md"})
    )
    .await
    .contains("kept"));
}

#[tokio::test]
async fn results_are_tool_results() {
    let files = files_on(&StoreUrl::Memory).await;
    let tool = files.for_user("ana").unwrap();
    let out = tool
        .run(&json!({"command": "view", "path": "/memories"}))
        .await;
    let block: ToolOutput = serde_json::from_value(serde_json::to_value(&out).unwrap()).unwrap();
    assert_eq!(block, out);
    assert_eq!(
        MemoryTool::definition(),
        json!({"type": "memory_20250818", "name": "memory"})
    );
    ok(
        &tool,
        json!({"command": "create", "path": "/memories/a", "file_text": "x"}),
    )
    .await;
    ok(
        &tool,
        json!({"command": "create", "path": "/memories/d/b", "file_text": "y"}),
    )
    .await;
    assert_eq!(tool.clear().await.unwrap(), 2);
    assert_eq!(tool.history("/memories/d/b").await.unwrap().len(), 2);
}

#[cfg(any(feature = "redis", feature = "postgres"))]
fn service_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{var} is required with CI=true")
        }
        _ => {
            eprintln!("skipping: {var} is not set");
            None
        }
    }
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn memory_tool_on_redis() {
    if let Some(url) = service_url("AGENTMEM_REDIS_URL") {
        suite(&url.parse().unwrap()).await;
    }
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn memory_tool_on_postgres() {
    if let Some(url) = service_url("AGENTMEM_POSTGRES_URL") {
        suite(&url.parse().unwrap()).await;
    }
}
