//! The live domains and tools, their compiled schemas, and name collisions.
//!
//! A `Registry` is immutable: registering or removing a domain builds a new one, and each
//! call works on the snapshot it started with, so a call never sees a half-updated set.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::handler::ToolHandler;
use crate::policy::PathArguments;
use crate::server_name::{PerServer, ServerName};
use crate::tool::{DomainSpec, ToolAnnotations};

/// A tool ready to run: its schema compiled once, at registration.
pub struct RegisteredTool {
    /// The name as registered (shared with every call's guard request and audit record).
    pub name: Arc<str>,
    /// The domain it belongs to (shared like the name).
    pub domain: Arc<str>,
    /// The server it is served on.
    pub server: ServerName,
    /// What it does.
    pub description: String,
    /// Its JSON Schema, as registered.
    pub input_schema: Value,
    /// Behaviour hints.
    pub annotations: ToolAnnotations,
    /// Its own deadline, if it has one.
    pub deadline: Option<Duration>,
    /// The implementation.
    pub handler: Arc<dyn ToolHandler>,
    validator: jsonschema::Validator,
    /// The arguments its schema marks as paths, for the baseline policy.
    pub(crate) path_arguments: PathArguments,
    /// The names of the properties its schema declares, sorted; shared with the audit records
    /// that name them, so that naming an argument copies nothing.
    declared_arguments: Box<[Arc<str>]>,
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.name)
            .field("domain", &self.domain)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl RegisteredTool {
    /// The names of the arguments a call gave that the schema declares, in the call's order:
    /// what the audit log may say of them (an undeclared name is the client's text, and is
    /// left out like a value).
    pub(crate) fn declared_names_in(&self, arguments: &Value) -> Vec<Arc<str>> {
        let Some(given) = arguments.as_object() else {
            return Vec::new();
        };
        given
            .keys()
            .filter_map(|name| {
                let at = self
                    .declared_arguments
                    .binary_search_by(|declared| (**declared).cmp(name.as_str()))
                    .ok()?;
                Some(Arc::clone(&self.declared_arguments[at]))
            })
            .collect()
    }

    /// Checks arguments against the schema; every violation, each naming where it is.
    pub fn validate(&self, arguments: &Value) -> Result<(), Vec<String>> {
        // Valid arguments, nearly every call's, are told apart without the error iterator
        // (a box, and a walk that keeps going after the first problem).
        if self.validator.is_valid(arguments) {
            return Ok(());
        }
        let problems: Vec<String> = self
            .validator
            .iter_errors(arguments)
            .map(|error| {
                let at = error.instance_path().to_string();
                if at.is_empty() {
                    error.to_string()
                } else {
                    format!("at {at}: {error}")
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

/// A domain as served: its description and its tools, withheld ones included.
#[derive(Debug)]
pub struct RegisteredDomain {
    /// The domain's name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The server that serves it.
    pub server: ServerName,
    /// Its tools in registration order.
    pub tools: Vec<Arc<RegisteredTool>>,
}

/// Two or more tools on one server whose names normalise to the same name: all of them are
/// withheld, because a model could not tell which one it is calling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCollision {
    /// The server where they collide.
    pub server: ServerName,
    /// The shared normalised name.
    pub normalized_name: String,
    /// Each colliding tool as `domain/name`.
    pub tools: Vec<String>,
}

/// What looking a tool up by name found.
#[derive(Debug)]
pub enum ToolLookup {
    /// The tool, ready to run.
    Found(Arc<RegisteredTool>),
    /// The name collides with another tool's, so neither is served.
    Withheld(ToolCollision),
    /// No such tool on this server.
    Unknown,
}

/// Why a domain could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// A tool's schema is not a valid JSON Schema.
    #[error("tool `{tool}` in domain `{domain}` has an invalid JSON Schema: {reason}")]
    InvalidSchema {
        /// The domain.
        domain: String,
        /// The tool.
        tool: String,
        /// What the schema compiler said.
        reason: String,
    },
    /// A name is empty or too long to be useful.
    #[error("{what} name `{name}` must be 1 to 128 characters")]
    BadName {
        /// `domain` or `tool`.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// The same tool name twice in one domain.
    #[error("domain `{domain}` declares tool `{tool}` twice")]
    DuplicateTool {
        /// The domain.
        domain: String,
        /// The tool.
        tool: String,
    },
}

/// Normalises a tool name the way models tend to mangle them: case-insensitive, and any run
/// of characters other than letters and digits counts as one `_`.
pub fn normalize_tool_name(name: &str) -> String {
    normalized_tool_name(name).into_owned()
}

/// [`normalize_tool_name`], borrowing a name that is normalised already (every call of a
/// model that spells the name right), which is checked in one pass without copying it.
fn normalized_tool_name(name: &str) -> std::borrow::Cow<'_, str> {
    let bytes = name.as_bytes();
    let plain = bytes
        .iter()
        .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if plain && bytes.first() != Some(&b'_') && bytes.last() != Some(&b'_') && !name.contains("__")
    {
        return std::borrow::Cow::Borrowed(name);
    }
    std::borrow::Cow::Owned(normalize_in_full(name))
}

fn normalize_in_full(name: &str) -> String {
    let mut normalized = String::with_capacity(name.len());
    let mut pending_separator = false;
    for character in name.chars() {
        if character.is_alphanumeric() {
            if pending_separator && !normalized.is_empty() {
                normalized.push('_');
            }
            pending_separator = false;
            normalized.extend(character.to_lowercase());
        } else {
            pending_separator = true;
        }
    }
    normalized
}

/// A server's tools by normalized name. The names are the plugin's; a client only looks
/// them up, so it cannot fill the table with colliding keys, and a hasher that is fast on
/// short keys (still seeded per process) saves each call most of a SipHash.
type ToolsByName = HashMap<String, Arc<RegisteredTool>, foldhash::fast::RandomState>;

/// An immutable snapshot of every registered domain.
#[derive(Debug, Default)]
pub struct Registry {
    domains: BTreeMap<(ServerName, String), Arc<RegisteredDomain>>,
    tools_by_server: PerServer<ToolsByName>,
    collisions: Vec<ToolCollision>,
}

impl Registry {
    /// A new snapshot with `spec` added (replacing a domain of the same name on the same
    /// server).
    pub fn with_domain(&self, spec: DomainSpec) -> Result<Registry, RegistryError> {
        let domain = compile_domain(spec)?;
        let mut domains = self.domains.clone();
        domains.insert((domain.server, domain.name.clone()), Arc::new(domain));
        Ok(Registry::index(domains))
    }

    /// A new snapshot without the named domain of `server`; `None` when there was no such
    /// domain.
    pub fn without_domain(&self, server: ServerName, name: &str) -> Option<Registry> {
        let key = (server, name.to_owned());
        if !self.domains.contains_key(&key) {
            return None;
        }
        let mut domains = self.domains.clone();
        domains.remove(&key);
        Some(Registry::index(domains))
    }

    fn index(domains: BTreeMap<(ServerName, String), Arc<RegisteredDomain>>) -> Registry {
        let mut by_normalized: BTreeMap<(ServerName, String), Vec<Arc<RegisteredTool>>> =
            BTreeMap::new();
        for domain in domains.values() {
            for tool in &domain.tools {
                by_normalized
                    .entry((domain.server, normalize_tool_name(&tool.name)))
                    .or_default()
                    .push(Arc::clone(tool));
            }
        }
        let mut tools_by_server: PerServer<ToolsByName> = PerServer::default();
        let mut collisions = Vec::new();
        for ((server, normalized_name), mut tools) in by_normalized {
            if tools.len() == 1 {
                if let Some(tool) = tools.pop() {
                    tools_by_server
                        .get_mut(server)
                        .insert(normalized_name, tool);
                }
            } else {
                collisions.push(ToolCollision {
                    server,
                    normalized_name,
                    tools: tools
                        .iter()
                        .map(|tool| format!("{}/{}", tool.domain, tool.name))
                        .collect(),
                });
            }
        }
        Registry {
            domains,
            tools_by_server,
            collisions,
        }
    }

    /// The domains served on `server`, by name.
    pub fn domains_on(&self, server: ServerName) -> impl Iterator<Item = &RegisteredDomain> {
        self.domains
            .values()
            .filter(move |domain| domain.server == server)
            .map(|domain| domain.as_ref())
    }

    /// Whether `server` has any domain, and so a socket.
    pub fn serves(&self, server: ServerName) -> bool {
        self.domains_on(server).next().is_some()
    }

    /// A domain on `server` by name.
    pub fn domain(&self, server: ServerName, name: &str) -> Option<&RegisteredDomain> {
        self.domains
            .get(&(server, name.to_owned()))
            .map(|domain| domain.as_ref())
    }

    /// Looks up a tool on `server` by (normalised) name.
    pub fn tool(&self, server: ServerName, name: &str) -> ToolLookup {
        let normalized = normalized_tool_name(name);
        if let Some(tool) = self.tools_by_server.get(server).get(normalized.as_ref()) {
            return ToolLookup::Found(Arc::clone(tool));
        }
        match self
            .collisions
            .iter()
            .find(|collision| collision.server == server && collision.normalized_name == normalized)
        {
            Some(collision) => ToolLookup::Withheld(collision.clone()),
            None => ToolLookup::Unknown,
        }
    }

    /// Whether the named tool is withheld because of a collision.
    pub fn is_withheld(&self, tool: &RegisteredTool) -> bool {
        matches!(self.tool(tool.server, &tool.name), ToolLookup::Withheld(_))
    }

    /// Every current collision.
    pub fn collisions(&self) -> &[ToolCollision] {
        &self.collisions
    }
}

const MAX_NAME_CHARS: usize = 128;

fn check_name(what: &'static str, name: &str) -> Result<(), RegistryError> {
    let length = name.chars().count();
    if length == 0 || length > MAX_NAME_CHARS {
        return Err(RegistryError::BadName {
            what,
            name: name.to_owned(),
        });
    }
    Ok(())
}

fn compile_domain(spec: DomainSpec) -> Result<RegisteredDomain, RegistryError> {
    check_name("domain", &spec.name)?;
    // One shared name for the domain's tools.
    let domain: Arc<str> = Arc::from(spec.name.as_str());
    let mut tools: Vec<Arc<RegisteredTool>> = Vec::with_capacity(spec.tools.len());
    for tool in spec.tools {
        check_name("tool", &tool.name)?;
        if tools.iter().any(|existing| *existing.name == *tool.name) {
            return Err(RegistryError::DuplicateTool {
                domain: spec.name.as_str().into(),
                tool: tool.name,
            });
        }
        let validator = jsonschema::draft202012::new(&tool.input_schema).map_err(|error| {
            RegistryError::InvalidSchema {
                domain: spec.name.as_str().into(),
                tool: tool.name.clone(),
                reason: error.to_string(),
            }
        })?;
        let mut declared_arguments: Box<[Arc<str>]> = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .keys()
                    .map(|name| Arc::from(name.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        declared_arguments.sort_unstable();
        tools.push(Arc::new(RegisteredTool {
            path_arguments: PathArguments::of(&tool.input_schema),
            declared_arguments,
            name: tool.name.into(),
            domain: Arc::clone(&domain),
            server: spec.server,
            description: tool.description,
            input_schema: tool.input_schema,
            annotations: tool.annotations,
            deadline: tool.deadline,
            handler: tool.handler,
            validator,
        }));
    }
    Ok(RegisteredDomain {
        name: spec.name,
        description: spec.description,
        server: spec.server,
        tools,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handler::{ToolCall, ToolError};
    use crate::tool::ToolSpec;
    use serde_json::json;

    fn tool(name: &str, schema: Value) -> ToolSpec {
        ToolSpec {
            name: name.to_owned(),
            description: format!("{name} tool"),
            input_schema: schema,
            annotations: ToolAnnotations::default(),
            deadline: None,
            handler: Arc::new(|_call: ToolCall| async { Ok::<Value, ToolError>(json!(null)) }),
        }
    }

    fn domain(name: &str, server: ServerName, tools: Vec<ToolSpec>) -> DomainSpec {
        DomainSpec {
            name: name.to_owned(),
            description: format!("{name} domain"),
            server,
            tools,
        }
    }

    #[test]
    fn normalization_folds_case_and_separators() {
        assert_eq!(normalize_tool_name("Read-File"), "read_file");
        assert_eq!(normalize_tool_name("read  file"), "read_file");
        assert_eq!(normalize_tool_name("__read.file__"), "read_file");
        assert_eq!(normalize_tool_name("readFile"), "readfile");
        // Names already normalised are borrowed, and agree with the full pass.
        for name in [
            "read_file",
            "x",
            "a1_b2",
            "",
            "_",
            "a__b",
            "_a",
            "a_",
            "Ab",
            "a-b",
            "é",
        ] {
            let fast = normalized_tool_name(name);
            assert_eq!(fast, normalize_in_full(name), "{name:?}");
            let borrowed = matches!(fast, std::borrow::Cow::Borrowed(_));
            assert_eq!(
                borrowed,
                ["read_file", "x", "a1_b2", ""].contains(&name),
                "{name:?}"
            );
        }
    }

    #[test]
    fn colliding_names_on_one_server_are_both_withheld() {
        let registry = Registry::default()
            .with_domain(domain(
                "a",
                ServerName::Code,
                vec![tool("read_file", json!({}))],
            ))
            .and_then(|r| {
                r.with_domain(domain(
                    "b",
                    ServerName::Code,
                    vec![tool("Read-File", json!({}))],
                ))
            })
            .expect("valid domains");
        assert!(matches!(
            registry.tool(ServerName::Code, "read_file"),
            ToolLookup::Withheld(_)
        ));
        assert!(matches!(
            registry.tool(ServerName::Code, "Read-File"),
            ToolLookup::Withheld(_)
        ));
        assert_eq!(registry.collisions().len(), 1);
        assert_eq!(
            registry.collisions()[0].tools,
            vec!["a/read_file", "b/Read-File"]
        );
    }

    #[test]
    fn same_name_on_different_servers_does_not_collide() {
        let registry = Registry::default()
            .with_domain(domain("a", ServerName::Code, vec![tool("x", json!({}))]))
            .and_then(|r| r.with_domain(domain("b", ServerName::Ops, vec![tool("x", json!({}))])))
            .expect("valid domains");
        assert!(registry.collisions().is_empty());
        assert!(matches!(
            registry.tool(ServerName::Ops, "x"),
            ToolLookup::Found(_)
        ));
    }

    #[test]
    fn removing_a_domain_lifts_the_collision() {
        let registry = Registry::default()
            .with_domain(domain("a", ServerName::Code, vec![tool("x", json!({}))]))
            .and_then(|r| r.with_domain(domain("b", ServerName::Code, vec![tool("X", json!({}))])))
            .expect("valid domains");
        let registry = registry
            .without_domain(ServerName::Code, "b")
            .expect("domain b exists");
        assert!(matches!(
            registry.tool(ServerName::Code, "x"),
            ToolLookup::Found(_)
        ));
        assert!(!registry.serves(ServerName::Vcs));
    }

    #[test]
    fn an_invalid_schema_is_refused_at_registration() {
        let error = Registry::default()
            .with_domain(domain(
                "a",
                ServerName::Code,
                vec![tool("x", json!({"type": 12}))],
            ))
            .expect_err("schema is invalid");
        assert!(matches!(error, RegistryError::InvalidSchema { .. }));
    }

    #[test]
    fn validation_lists_every_problem_with_its_place() {
        let registry = Registry::default()
            .with_domain(domain(
                "a",
                ServerName::Code,
                vec![tool(
                    "x",
                    json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["path"]}),
                )],
            ))
            .expect("valid domain");
        let ToolLookup::Found(tool) = registry.tool(ServerName::Code, "x") else {
            panic!("tool x is registered");
        };
        let problems = tool
            .validate(&json!({"n": "seven"}))
            .expect_err("two problems");
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("/n")));
        assert!(tool.validate(&json!({"n": 7, "path": "a"})).is_ok());
    }

    #[test]
    fn the_audit_names_only_declared_arguments_in_the_order_given() {
        let schema = json!({
            "type": "object",
            "properties": { "zeta": {}, "alpha": {}, "mid": {} },
        });
        let registered = compile_domain(domain(
            "d",
            ServerName::Run,
            vec![tool("t", schema), tool("bare", json!({ "type": "object" }))],
        ))
        .expect("valid domain");
        let [with_properties, without] = &registered.tools[..] else {
            panic!("two tools")
        };
        let given = json!({ "mid": 1, "stranger": 2, "alpha": 3, "zeta!": 4, "zeta": 5 });
        let names = with_properties.declared_names_in(&given);
        assert_eq!(
            names.iter().map(|name| &**name).collect::<Vec<_>>(),
            ["mid", "alpha", "zeta"]
        );
        assert!(with_properties.declared_names_in(&json!([1])).is_empty());
        assert!(without.declared_names_in(&given).is_empty());
    }
}
