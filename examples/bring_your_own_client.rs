//! Memory around the model client you already have.
//!
//! The session prepares each turn (memory block, summary, window within the budget);
//! your own HTTP client calls the model, runs the tool it asks for, and calls it again;
//! the session then commits the reply and the tool round, and learns from the turn.
//!
//! Runs offline: an in-process mock of an OpenAI-compatible server answers. Point
//! `BASE_URL` at a real server to use one. `cargo run --example bring_your_own_client`.

use std::borrow::Cow;
use std::sync::Arc;

use agentmemory::prelude::*;
use agentmemory::{ChatRequest, ToolCall};
use serde_json::{json, Value};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[remember(top_k = 5)]
struct TravelAgent;

impl Agent for TravelAgent {
    fn system_prompt(&self) -> Cow<'_, str> {
        "You are a travel agent. Use the weather tool when asked about weather.".into()
    }
    fn model(&self) -> &str {
        "gpt-4o-mini"
    }
}

/// The request as OpenAI's chat-completions body, built by hand as any client would.
fn body(request: &ChatRequest) -> Value {
    let mut messages = vec![json!({"role": "system", "content": request.system})];
    for m in &request.messages {
        let mut wire = json!({"role": m.role.as_str(), "content": m.text()});
        if !m.tool_calls.is_empty() {
            wire["tool_calls"] = m
                .tool_calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments.to_string()}})
                })
                .collect();
        }
        if let Some(id) = &m.tool_call_id {
            wire["tool_call_id"] = json!(id);
        }
        messages.push(wire);
    }
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
        .collect();
    json!({"model": request.model, "messages": messages, "tools": tools})
}

/// The assistant message of a chat-completions answer.
fn message(answer: &Value) -> Message {
    let m = &answer["choices"][0]["message"];
    let calls = m["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    let args = c["function"]["arguments"].as_str().unwrap_or("{}");
                    ToolCall::new(
                        c["id"].as_str().unwrap_or_default(),
                        c["function"]["name"].as_str().unwrap_or_default(),
                        serde_json::from_str(args).unwrap_or(Value::Null),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Message::assistant_with_tools(m["content"].as_str().unwrap_or_default(), calls)
}

/// A mock model: asks for the weather tool, then answers with its result.
async fn mock_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_string_contains("\"role\":\"tool\""))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"message": {"role": "assistant", "content": "Sunny and 24°C in Lisbon: pack light."}}]
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Lisbon\"}"}}
            ]}}]
        })))
        .mount(&server)
        .await;
    server
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let server = mock_server().await;
    let base = std::env::var("BASE_URL").unwrap_or_else(|_| format!("{}/v1", server.uri()));
    let http = reqwest::Client::new();

    let container = Container::new();
    let facts = Arc::new(InMemoryUserMemoryStore::new());
    container.register_user_memory("user_memory", facts.clone());
    container.register_conversations("log", Arc::new(InMemoryConversationStore::new()));
    // Your client does the calls: the session needs no model registered.
    let mut session = Session::builder(TravelAgent, &container)
        .user("ana")
        .external_model()
        .build()
        .await?;

    let mut turn = session
        .prepare(Message::user("I live in Lisbon. What's the weather like?"))
        .await?;
    turn.request_mut().tools = vec![ToolDefinition::new(
        "weather",
        "Current weather in a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )];
    println!(
        "prompt: {} of {} tokens",
        turn.tokens().total,
        turn.tokens().budget
    );

    // Your loop: call the model, run the tools it asks for, call it again.
    let mut steps = Vec::new();
    let reply = loop {
        let answer: Value = http
            .post(format!("{base}/chat/completions"))
            .json(&body(turn.request()))
            .send()
            .await?
            .json()
            .await?;
        let reply = message(&answer);
        if reply.tool_calls.is_empty() {
            break reply;
        }
        let mut results = Vec::new();
        for call in &reply.tool_calls {
            let city = call.arguments["city"].as_str().unwrap_or("?");
            results.push(Message::tool_result(
                &call.id,
                format!("{city}: sunny, 24°C"),
            ));
        }
        for m in std::iter::once(reply.clone()).chain(results.iter().cloned()) {
            turn.request_mut().messages.push(Arc::new(m));
        }
        steps.push(reply);
        steps.extend(results);
    };
    let done = session
        .commit(turn, Reply::new(reply).with_steps(steps))
        .await?;
    println!("assistant: {}", done.text());
    for change in &done.report.fact_changes {
        println!("learned: {change:?}");
    }
    assert!(facts
        .list("ana")
        .await?
        .iter()
        .any(|f| f.text.contains("Lisbon")));
    assert_eq!(session.memory().len(), 4); // user, tool call, tool result, reply
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    run().await
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn runs_against_the_mock_server() {
        super::run().await.unwrap();
    }
}
