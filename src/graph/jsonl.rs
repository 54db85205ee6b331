//! The reference MCP `memory` server's file format: one JSON object per line, entities
//! (`{"type":"entity","name":…,"entityType":…,"observations":[…]}`) then relations
//! (`{"type":"relation","from":…,"to":…,"relationType":…}`), each line ending in `\n`.

use serde::{Deserialize, Serialize};

use super::error::GraphError;
use super::model::{Entity, Graph, Relation};

/// One line of the file.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line<'a> {
    Entity {
        name: std::borrow::Cow<'a, str>,
        #[serde(rename = "entityType")]
        entity_type: std::borrow::Cow<'a, str>,
        observations: std::borrow::Cow<'a, [String]>,
    },
    Relation {
        from: std::borrow::Cow<'a, str>,
        to: std::borrow::Cow<'a, str>,
        #[serde(rename = "relationType")]
        relation_type: std::borrow::Cow<'a, str>,
    },
}

/// Reads a file in the reference format. Blank lines are skipped, as the reference
/// server skips them; a line that is not a JSON entity or relation is an error naming
/// its number (the reference server drops such lines with a warning; an import should
/// not lose them silently).
///
/// ```
/// use agentmemory::graph::jsonl;
///
/// let text = "{\"type\":\"entity\",\"name\":\"Alice\",\"entityType\":\"person\",\"observations\":[\"likes tea\"]}\n";
/// let graph = jsonl::parse(text).unwrap();
/// assert_eq!(graph.entities[0].observations, ["likes tea"]);
/// assert_eq!(jsonl::write(&graph), text);
/// ```
pub fn parse(text: &str) -> Result<Graph, GraphError> {
    let mut graph = Graph::default();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line<'_> = serde_json::from_str(line).map_err(|e| GraphError::Jsonl {
            line: index + 1,
            reason: e.to_string(),
        })?;
        match parsed {
            Line::Entity {
                name,
                entity_type,
                observations,
            } => graph.entities.push(Entity {
                name: name.into_owned(),
                entity_type: entity_type.into_owned(),
                observations: observations.into_owned(),
            }),
            Line::Relation {
                from,
                to,
                relation_type,
            } => graph.relations.push(Relation {
                from: from.into_owned(),
                to: to.into_owned(),
                relation_type: relation_type.into_owned(),
            }),
        }
    }
    Ok(graph)
}

/// Writes `graph` as the reference server saves it: entities, then relations, one compact
/// JSON object per line with its keys in the reference order, every line ending in `\n`
/// (an empty graph is a single `\n`, as the reference writes it).
pub fn write(graph: &Graph) -> String {
    let mut out = String::new();
    let entities = graph.entities.iter().map(|e| Line::Entity {
        name: e.name.as_str().into(),
        entity_type: e.entity_type.as_str().into(),
        observations: e.observations.as_slice().into(),
    });
    let relations = graph.relations.iter().map(|r| Line::Relation {
        from: r.from.as_str().into(),
        to: r.to.as_str().into(),
        relation_type: r.relation_type.as_str().into(),
    });
    for line in entities.chain(relations) {
        // serialising strings and string lists cannot fail
        if let Ok(json) = serde_json::to_string(&line) {
            out.push_str(&json);
            out.push('\n');
        }
    }
    if out.is_empty() {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_reference_keys_in_the_reference_order() {
        let graph = Graph {
            entities: vec![Entity::new("Zoë \"Z\"", "person", ["says \\ and \n"])],
            relations: vec![Relation::new("Zoë \"Z\"", "Acme", "works_at")],
        };
        assert_eq!(
            write(&graph),
            concat!(
                r#"{"type":"entity","name":"Zoë \"Z\"","entityType":"person","observations":["says \\ and \n"]}"#,
                "\n",
                r#"{"type":"relation","from":"Zoë \"Z\"","to":"Acme","relationType":"works_at"}"#,
                "\n"
            )
        );
        assert_eq!(parse(&write(&graph)).unwrap(), graph);
        assert_eq!(write(&Graph::default()), "\n");
    }

    #[test]
    fn keys_in_any_order_and_blank_lines_read_the_same() {
        let text =
            "\n{\"observations\":[],\"entityType\":\"t\",\"name\":\"n\",\"type\":\"entity\"}\n\n";
        let graph = parse(text).unwrap();
        assert_eq!(
            graph.entities,
            [Entity::new("n", "t", Vec::<String>::new())]
        );
    }

    #[test]
    fn a_bad_line_is_an_error_naming_it() {
        for bad in [
            "{\"type\":\"entity\",\"name\":\"n\"}",
            "{\"type\":\"node\",\"name\":\"n\"}",
            "not json",
            "[1]",
        ] {
            let text = format!("\n{bad}\n");
            match parse(&text) {
                Err(GraphError::Jsonl { line: 2, .. }) => {}
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
