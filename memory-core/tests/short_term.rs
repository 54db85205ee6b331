//! Properties of `ShortTermMemory` under random conversations and budgets.

use std::collections::HashSet;

use agentmemory_core::buffer::ShortTermMemory;
use agentmemory_core::{Message, Role, ToolCall};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    System(String),
    User(String),
    Assistant(String),
    /// An assistant message calling `n` tools, followed by their results.
    ToolRound(usize, String),
    Summary(String),
}

fn op() -> impl Strategy<Value = Op> {
    let text = "[a-zA-Z ]{0,80}";
    prop_oneof![
        1 => text.prop_map(Op::System),
        6 => text.prop_map(Op::User),
        6 => text.prop_map(Op::Assistant),
        2 => (1usize..4, text).prop_map(|(n, t)| Op::ToolRound(n, t)),
        1 => text.prop_map(Op::Summary),
    ]
}

fn apply(memory: &mut ShortTermMemory, ops: &[Op]) {
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::System(t) => {
                memory.add_system(t.as_str());
            }
            Op::User(t) => {
                memory.add_user(t.as_str());
            }
            Op::Assistant(t) => {
                memory.add_assistant(t.as_str());
            }
            Op::ToolRound(n, t) => {
                let calls: Vec<_> = (0..*n)
                    .map(|j| {
                        ToolCall::new(
                            format!("call-{i}-{j}"),
                            "lookup",
                            serde_json::json!({"q": t}),
                        )
                    })
                    .collect();
                memory.add_assistant_tool_calls("", calls);
                for j in 0..*n {
                    memory.add_tool_result(format!("call-{i}-{j}"), t.as_str());
                }
            }
            Op::Summary(t) => memory.set_summary(t.as_str()),
        }
    }
}

/// Checks the window's structural invariants against the full history.
fn check_window(memory: &ShortTermMemory, window: &[&Message]) {
    let all = memory.all_messages();
    // Order preserved: the window is a subsequence of the history.
    let mut it = all.iter();
    for m in window {
        assert!(
            it.any(|h| h.id == m.id),
            "window is not an ordered subsequence of the history"
        );
    }
    // Every system message is present.
    let ids: HashSet<_> = window.iter().map(|m| m.id).collect();
    for m in all.iter().filter(|m| m.role == Role::System) {
        assert!(ids.contains(&m.id), "system message dropped");
    }
    // No orphaned tool result; no call separated from its results.
    let mut open_calls = HashSet::new();
    for m in window {
        for c in &m.tool_calls {
            open_calls.insert(c.id.clone());
        }
        if m.role == Role::Tool {
            let id = m.tool_call_id.clone().unwrap_or_default();
            assert!(
                open_calls.contains(&id),
                "tool result {id} without its call in the window"
            );
        }
    }
    for m in &all {
        if m.role == Role::Tool && open_calls.contains(m.tool_call_id.as_deref().unwrap_or("")) {
            assert!(
                ids.contains(&m.id),
                "a call is in the window but one of its results is not"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn window_respects_budget_and_structure(ops in prop::collection::vec(op(), 0..80), budget in 0usize..600) {
        let mut memory = ShortTermMemory::new(budget);
        apply(&mut memory, &ops);
        let window = memory.messages();
        check_window(&memory, &window);

        let counter = memory.counter().clone();
        let system_tokens: usize = memory.all_messages().iter()
            .filter(|m| m.role == Role::System)
            .map(|m| counter.count_message(m))
            .sum();
        let summary_tokens = memory.summary()
            .map(|s| counter.count_text(s) + counter.per_message_overhead())
            .unwrap_or(0);
        let window_tokens: usize = window.iter().map(|m| counter.count_message(m)).sum::<usize>() + summary_tokens;
        prop_assert_eq!(window_tokens, memory.window_tokens());
        if system_tokens + summary_tokens <= budget {
            prop_assert!(window_tokens <= budget, "window {} over budget {}", window_tokens, budget);
        }
        // messages() does not mutate.
        prop_assert_eq!(memory.messages(), window);
    }

    #[test]
    fn trim_to_fit_keeps_the_same_window(ops in prop::collection::vec(op(), 0..80), budget in 0usize..600) {
        let mut memory = ShortTermMemory::new(budget);
        apply(&mut memory, &ops);
        let before: Vec<Message> = memory.messages().into_iter().cloned().collect();
        memory.trim_to_fit(budget);
        let after: Vec<Message> = memory.messages().into_iter().cloned().collect();
        prop_assert_eq!(&after, &before);
        prop_assert_eq!(memory.all_messages(), before);
    }

    #[test]
    fn summarize_split_never_orphans(ops in prop::collection::vec(op(), 0..60), keep in 0usize..12) {
        let mut memory = ShortTermMemory::new(1_000_000);
        apply(&mut memory, &ops);
        let total = memory.len();
        let to_summarize = memory.messages_to_summarize(keep);
        prop_assert!(to_summarize.iter().all(|m| m.role != Role::System));
        let dropped = memory.trim_to_recent(keep);
        prop_assert_eq!(dropped, to_summarize.len());
        prop_assert_eq!(memory.len(), total - dropped);
        let window = memory.messages();
        check_window(&memory, &window);
        let non_system = memory.all_messages().iter().filter(|m| m.role != Role::System).count();
        prop_assert!(non_system <= keep);
    }

    #[test]
    fn snapshot_restore_snapshot_is_identical(ops in prop::collection::vec(op(), 0..60)) {
        let mut memory = ShortTermMemory::new(500);
        apply(&mut memory, &ops);
        let first = memory.snapshot();
        let json = first.to_json();
        let mut restored = ShortTermMemory::new(500);
        restored.restore_json(&json).unwrap();
        prop_assert_eq!(restored.snapshot(), first.clone());
        prop_assert_eq!(restored.snapshot().to_json(), json);
        prop_assert_eq!(restored.messages(), memory.messages());
        prop_assert_eq!(restored.token_count(), memory.token_count());
    }

    #[test]
    fn bad_snapshots_leave_memory_untouched(ops in prop::collection::vec(op(), 0..20), garbage in ".{0,40}", version in 2u32..1000) {
        let mut memory = ShortTermMemory::new(500);
        apply(&mut memory, &ops);
        let before = memory.snapshot();
        let future = format!(r#"{{"version": {version}, "messages": [], "summary": "x"}}"#);
        let rejected = memory.restore_json(&future).is_err();
        prop_assert!(rejected);
        if serde_json::from_str::<Vec<Message>>(&garbage).is_err()
            && !garbage.trim_start().starts_with('{')
        {
            let rejected = memory.restore_json(&garbage).is_err();
            prop_assert!(rejected);
        }
        let missing_fields = r#"{"version": 1, "messages": [{"role": "user"}]}"#;
        let rejected = memory.restore_json(missing_fields).is_err();
        prop_assert!(rejected);
        prop_assert_eq!(memory.snapshot(), before);
    }
}

#[test]
fn legacy_bare_list_is_accepted() {
    let mut memory = ShortTermMemory::new(100);
    memory.add_user("hello");
    memory.add_assistant("hi");
    let bare = serde_json::to_string(&memory.all_messages()).unwrap();
    let mut restored = ShortTermMemory::new(100);
    restored.restore_json(&bare).unwrap();
    assert_eq!(restored.all_messages(), memory.all_messages());
    assert_eq!(restored.summary(), None);
}

#[test]
fn future_version_names_the_version() {
    let mut memory = ShortTermMemory::new(100);
    let err = memory
        .restore_json(r#"{"version": 9, "messages": []}"#)
        .unwrap_err();
    assert!(err.to_string().contains("version 9"), "{err}");
}

#[test]
fn window_skips_orphaned_tool_results() {
    // Budget fits the results but not the call before them.
    let mut memory = ShortTermMemory::new(40);
    memory.add_user("x".repeat(200));
    memory.add_assistant_tool_calls(
        "",
        vec![ToolCall::new(
            "c1",
            "t",
            serde_json::json!({"a": "b".repeat(100)}),
        )],
    );
    memory.add_tool_result("c1", "short");
    memory.add_user("and now?");
    let window = memory.messages();
    assert!(window.iter().all(|m| m.role != Role::Tool));
    assert_eq!(window.last().unwrap().text(), "and now?");
}
