//! `tools/call` of the three meta-tools: `domains()` and `tools(domain)` answer from the
//! registry at once; `run(tool, args)` is admitted under the session's caps and handed to the
//! call path (`call/`).

use std::sync::Arc;

use ide_mcp_protocol::jsonrpc::{ErrorObject, Id};
use serde_json::Value;

use crate::call::{self, RunCall};
use crate::mcp::{Era, MetaTool, RequestMeta, ServerResult, ToolArguments, ToolResult};
use crate::meta_tools::{domains_text, tools_text, within_budget};
use crate::session::{caps, Session};

pub(super) async fn answer(
    session: &Session,
    id: Id,
    era: Era,
    meta: RequestMeta,
    tool: MetaTool,
    arguments: ToolArguments,
) {
    let server = session.server;
    let budget = session.shared.config.output_budget_bytes;
    let result = match tool {
        MetaTool::Domains => {
            let text = domains_text(&session.shared.registry(), server);
            ToolResult::success(within_budget(text, budget))
        }
        MetaTool::Tools => match arguments
            .into_object()
            .get("domain")
            .and_then(Value::as_str)
        {
            None => ToolResult::error("tools needs `domain`, a domain name from domains()"),
            Some(domain) => match tools_text(&session.shared.registry(), server, domain) {
                Ok(text) => ToolResult::success(within_budget(text, budget)),
                Err(message) => ToolResult::error(message),
            },
        },
        MetaTool::Run => return start_run(session, id, era, arguments, meta.progress_token).await,
        MetaTool::Other(other) => {
            let error = ErrorObject::invalid_params(format!(
                "unknown tool `{other}`: this server's tools are domains, tools and run"
            ));
            return session.fail(id, error).await;
        }
    };
    session.reply(id, era, ServerResult::Tool(result)).await;
}

/// Admits a `run` call and starts it, or answers at once that a cap is reached.
async fn start_run(
    session: &Session,
    id: Id,
    era: Era,
    arguments: ToolArguments,
    progress_token: Option<Value>,
) {
    let Some(admitted) = caps::admit_run(session, &id, era).await else {
        return;
    };
    let call = RunCall {
        shared: Arc::clone(&session.shared),
        server: session.server,
        registry: session.shared.registry(),
        id,
        era,
        arguments,
        progress_token,
        client: session.identity.clone(),
        cancellation: admitted.cancellation,
        in_flight: Arc::clone(&session.in_flight),
        outgoing: session.outgoing.clone(),
        _handler_slot: admitted.handler_slot,
        others_waiting: session.others_waiting,
    };
    call::start(&session.shared, call).await;
}
