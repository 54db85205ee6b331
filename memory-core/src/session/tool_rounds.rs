//! Checking a reply's tool rounds before they enter the log and the window: every
//! assistant tool call answered once, by a result naming its id, before the next
//! assistant message; no result for a call that was not made.
//!
//! What a model API rejects must never be committed: once in the window, it would be in
//! every later request of the conversation.

use std::collections::HashSet;

use crate::error::{MemoryError, Result, ToolRoundProblem};
use crate::message::{Message, Role};

/// Checks `steps` followed by `last` (the final message, an assistant message).
pub(super) fn check(steps: &[Message], last: &Message) -> Result<()> {
    let fail = |index: usize, problem: ToolRoundProblem| {
        Err(MemoryError::InvalidToolRound { index, problem })
    };
    // Every call id of the reply, every result given, and the calls of the current
    // round still waiting for a result (with the index of the message that made them).
    let mut calls: HashSet<&str> = HashSet::new();
    let mut answered: HashSet<&str> = HashSet::new();
    let mut open: Vec<(&str, usize)> = Vec::new();
    for (index, message) in steps.iter().chain(std::iter::once(last)).enumerate() {
        match message.role {
            Role::Tool => {
                let Some(id) = message.tool_call_id.as_deref().filter(|id| !id.is_empty()) else {
                    return fail(index, ToolRoundProblem::MissingCallId);
                };
                if answered.contains(id) {
                    return fail(
                        index,
                        ToolRoundProblem::DuplicateResult {
                            call_id: id.to_owned(),
                        },
                    );
                }
                let Some(at) = open.iter().position(|(call, _)| *call == id) else {
                    return fail(
                        index,
                        ToolRoundProblem::UnknownCallId {
                            call_id: id.to_owned(),
                        },
                    );
                };
                open.remove(at);
                answered.insert(id);
            }
            Role::Assistant => {
                if let Some((id, at)) = open.first() {
                    return fail(
                        *at,
                        ToolRoundProblem::UnansweredCall {
                            call_id: (*id).to_owned(),
                        },
                    );
                }
                for call in &message.tool_calls {
                    if call.id.is_empty() {
                        return fail(index, ToolRoundProblem::MissingCallId);
                    }
                    if !calls.insert(call.id.as_str()) {
                        return fail(
                            index,
                            ToolRoundProblem::DuplicateCallId {
                                call_id: call.id.clone(),
                            },
                        );
                    }
                    open.push((call.id.as_str(), index));
                }
            }
            role @ (Role::User | Role::System) => {
                return fail(index, ToolRoundProblem::UnexpectedRole { role });
            }
        }
    }
    match open.first() {
        Some((id, at)) => fail(
            *at,
            ToolRoundProblem::UnansweredCall {
                call_id: (*id).to_owned(),
            },
        ),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn calls(ids: &[&str]) -> Message {
        Message::assistant_with_tools(
            "",
            ids.iter()
                .map(|id| ToolCall::new(*id, "tool", serde_json::json!({})))
                .collect(),
        )
    }

    fn result(id: &str) -> Message {
        Message::tool_result(id, "ok")
    }

    fn problem(steps: &[Message], last: &Message) -> (usize, ToolRoundProblem) {
        match check(steps, last) {
            Err(MemoryError::InvalidToolRound { index, problem }) => (index, problem),
            other => panic!("expected an invalid tool round, got {other:?}"),
        }
    }

    #[test]
    fn well_formed_rounds_pass() {
        let done = Message::assistant("done");
        check(&[], &done).unwrap();
        check(&[calls(&["a"]), result("a")], &done).unwrap();
        // Results in any order, several rounds.
        check(
            &[
                calls(&["a", "b"]),
                result("b"),
                result("a"),
                calls(&["c"]),
                result("c"),
            ],
            &done,
        )
        .unwrap();
    }

    #[test]
    fn an_unknown_result_is_named() {
        let (index, p) = problem(
            &[calls(&["a"]), result("a"), result("x")],
            &Message::assistant("ok"),
        );
        assert_eq!(index, 2);
        assert_eq!(
            p,
            ToolRoundProblem::UnknownCallId {
                call_id: "x".into()
            }
        );
        // A result before any call is unknown too.
        let (index, _) = problem(&[result("a")], &Message::assistant("ok"));
        assert_eq!(index, 0);
    }

    #[test]
    fn an_unanswered_call_points_at_its_message() {
        let (index, p) = problem(
            &[calls(&["a", "b"]), result("a")],
            &Message::assistant("ok"),
        );
        assert_eq!(index, 0);
        assert_eq!(
            p,
            ToolRoundProblem::UnansweredCall {
                call_id: "b".into()
            }
        );
        // A result that comes only after the next assistant message is too late.
        let (index, _) = problem(
            &[calls(&["a"]), Message::assistant("thinking"), result("a")],
            &Message::assistant("ok"),
        );
        assert_eq!(index, 0);
        // A final message that calls a tool leaves the call unanswered.
        let (index, p) = problem(&[], &calls(&["z"]));
        assert_eq!(index, 0);
        assert_eq!(
            p,
            ToolRoundProblem::UnansweredCall {
                call_id: "z".into()
            }
        );
    }

    #[test]
    fn duplicates_and_missing_ids_are_refused() {
        let done = Message::assistant("ok");
        let (index, p) = problem(&[calls(&["a"]), result("a"), result("a")], &done);
        assert_eq!(index, 2);
        assert_eq!(
            p,
            ToolRoundProblem::DuplicateResult {
                call_id: "a".into()
            }
        );
        let (_, p) = problem(&[calls(&["a"]), result("a"), calls(&["a"])], &done);
        assert_eq!(
            p,
            ToolRoundProblem::DuplicateCallId {
                call_id: "a".into()
            }
        );
        let (_, p) = problem(&[calls(&[""])], &done);
        assert_eq!(p, ToolRoundProblem::MissingCallId);
        let mut orphan = result("a");
        orphan.tool_call_id = None;
        let (_, p) = problem(&[calls(&["a"]), orphan], &done);
        assert_eq!(p, ToolRoundProblem::MissingCallId);
    }

    #[test]
    fn user_and_system_messages_are_not_steps() {
        let (index, p) = problem(&[Message::user("hi")], &Message::assistant("ok"));
        assert_eq!(index, 0);
        assert_eq!(p, ToolRoundProblem::UnexpectedRole { role: Role::User });
    }
}
