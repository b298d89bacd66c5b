//! Every native method of `dev.lain.claudejb.mcp.Native`.
//!
//! Each one has the same shape: [`bridge`] runs the body with the JVM's environment, catches
//! a panic, and turns an error into the Java exception its [`BridgeError`] variant names. They
//! run on the calling Java thread, return quickly, and never wait on the I/O runtime, except
//! `stop`, which drains calls in flight (bounded by the drain timeout).
#![allow(non_snake_case)]

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use ide_mcp_server::live_sets;
use ide_mcp_server::page_delivery::{RouteOutcome, SPLIT_MODE_MESSAGE};
use ide_mcp_server::{AuditRecord, AuditVerdict, IdeMcpServers, ToolError, ToolHandler};
use jni::objects::{JClass, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jdouble, jint, jlong};
use jni::{Env, EnvUnowned};
use serde_json::{json, Value};

use crate::callbacks;
use crate::error::{BridgeError, ThrowJavaException};
use crate::handles;
use crate::java_handler::{self, JavaHost, JavaSecurityGuard, JavaToolHandler};
use crate::java_ref::JavaRef;
use crate::java_strings;
use crate::log_layer;
use crate::options::{parse_domain, parse_launcher, parse_server, parse_start_options};
use crate::page_delivery;
use crate::pending;
use crate::project_files;
use crate::threads::{self, JniThreadMark};

/// The one wrapper of every native method.
pub(crate) fn bridge<'local, T: Default>(
    mut env: EnvUnowned<'local>,
    body: impl FnOnce(&mut Env<'local>) -> Result<T, BridgeError>,
) -> T {
    env.with_env(|env| {
        let _mark = JniThreadMark::enter();
        body(env)
    })
    .resolve::<ThrowJavaException>()
}

/// A Java string argument as a Rust string; null is an `IllegalArgumentException` naming it.
/// `try_to_string` decodes the JVM's modified UTF-8, so NUL and characters outside the BMP
/// (surrogate pairs in Java) arrive as the Rust characters they are.
pub(crate) fn rust_string(
    env: &Env<'_>,
    string: &JString<'_>,
    what: &str,
) -> Result<String, BridgeError> {
    if string.is_null() {
        return Err(BridgeError::IllegalArgument(format!(
            "{what} must not be null"
        )));
    }
    Ok(string.try_to_string(env)?)
}

fn optional_rust_string(
    env: &Env<'_>,
    string: &JString<'_>,
) -> Result<Option<String>, BridgeError> {
    if string.is_null() {
        Ok(None)
    } else {
        Ok(Some(string.try_to_string(env)?))
    }
}

fn server_error(error: impl std::fmt::Display) -> BridgeError {
    BridgeError::Server(error.to_string())
}

fn call_id(id: jlong) -> Option<u64> {
    u64::try_from(id).ok()
}

fn start_servers(
    env: &mut Env<'_>,
    class: &JClass<'_>,
    options: &JString<'_>,
    guard: &JObject<'_>,
    host: &JObject<'_>,
) -> Result<jlong, BridgeError> {
    callbacks::init(env, class)?;
    threads::ensure_started()?;
    log_layer::install_once();
    let options = parse_start_options(&rust_string(env, options, "the options")?)?;
    let guard = JavaRef::new(env, guard, "the Security Guard")?;
    let mut builder = IdeMcpServers::builder(options.bases)
        .config(options.config)
        .guard(Arc::new(JavaSecurityGuard::new(guard)));
    if !host.is_null() {
        let host = JavaRef::new(env, host, "the host")?;
        builder = builder.host(Arc::new(JavaHost::new(host, options.host_can_confirm)));
    }
    let servers = builder.start().map_err(server_error)?;
    Ok(handles::insert(servers))
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_start<'local>(
    env: EnvUnowned<'local>,
    class: JClass<'local>,
    options: JString<'local>,
    guard: JObject<'local>,
    host: JObject<'local>,
) -> jlong {
    bridge(env, |env| {
        start_servers(env, &class, &options, &guard, &host)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_stop<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    bridge(env, |_env| {
        let servers = handles::remove(handle)?;
        match Arc::try_unwrap(servers) {
            Ok(servers) => servers.stop().map_err(server_error),
            // Another native call is using the set right now; the last one to finish drops
            // it, and dropping stops it in the same order.
            Err(_in_use) => Ok(()),
        }
    })
}

fn register_domain(
    env: &mut Env<'_>,
    handle: jlong,
    domain: &JString<'_>,
    handlers: &JObjectArray<'_>,
) -> Result<String, BridgeError> {
    let servers = handles::get(handle)?;
    let domain = rust_string(env, domain, "the domain")?;
    if handlers.is_null() {
        return Err(BridgeError::IllegalArgument(
            "the handlers must not be null".to_owned(),
        ));
    }
    let count = handlers.len(env)?;
    let mut tool_handlers: Vec<Arc<dyn ToolHandler>> = Vec::with_capacity(count);
    for index in 0..count {
        let handler = handlers.get_element(env, index)?;
        let pinned = JavaRef::new(env, &handler, "a tool's handler")?;
        env.delete_local_ref(handler);
        tool_handlers.push(Arc::new(JavaToolHandler::new(pinned)));
    }
    let domain = parse_domain(&domain, tool_handlers)?;
    let collisions = servers.register_domain(domain).map_err(server_error)?;
    let withheld: Vec<Value> = collisions
        .iter()
        .flat_map(|collision| collision.tools.iter().cloned().map(Value::String))
        .collect();
    Ok(Value::Array(withheld).to_string())
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_registerDomain<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    domain: JString<'local>,
    handlers: JObjectArray<'local>,
) -> JString<'local> {
    bridge(env, |env| {
        let withheld = register_domain(env, handle, &domain, &handlers)?;
        Ok(JString::from_str(env, withheld)?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_removeDomain<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    server: JString<'local>,
    name: JString<'local>,
) -> jboolean {
    bridge(env, |env| {
        let servers = handles::get(handle)?;
        let server = parse_server(&rust_string(env, &server, "the server")?)?;
        let name = rust_string(env, &name, "the domain name")?;
        servers.remove_domain(server, &name).map_err(server_error)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_rotateToken<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    bridge(env, |_env| {
        handles::get(handle)?.rotate_token().map_err(server_error)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_directory<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    bridge(env, |env| {
        let servers = handles::get(handle)?;
        let directory = servers
            .directory()
            .ok_or_else(|| BridgeError::IllegalState("the servers are stopped".to_owned()))?;
        Ok(JString::from_str(env, directory.to_string_lossy())?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_registryRecord<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    bridge(env, |env| {
        let servers = handles::get(handle)?;
        match servers.registry_record() {
            Some(record) => Ok(JString::from_str(env, record.to_string_lossy())?),
            None => Ok(JString::null()),
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_socketPath<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    server: JString<'local>,
) -> JString<'local> {
    bridge(env, |env| {
        let servers = handles::get(handle)?;
        let server = parse_server(&rust_string(env, &server, "the server")?)?;
        let path = servers
            .socket_path(server)
            .ok_or_else(|| BridgeError::IllegalState("the servers are stopped".to_owned()))?;
        Ok(JString::from_str(env, path.to_string_lossy())?)
    })
}

/// `Native.liveSetEndpoint(projectDirectory, server)`: `{socket, tokenFile}` of `server` of the
/// live set that serves the directory, read from the per-user registry (for the Java
/// `StdioBridge --project`); `McpException` naming what was found when no single set does.
#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_liveSetEndpoint<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    project_directory: JString<'local>,
    server: JString<'local>,
) -> JObjectArray<'local, JString<'local>> {
    bridge(env, |env| {
        let directory = rust_string(env, &project_directory, "the project directory")?;
        let server = parse_server(&rust_string(env, &server, "the server")?)?;
        let directory = live_sets::absolute_project_directory(std::path::Path::new(&directory))
            .map_err(BridgeError::IllegalArgument)?;
        let endpoint =
            live_sets::endpoint_for_project(&directory, server).map_err(BridgeError::Server)?;
        let paths = [endpoint.socket, endpoint.token_file];
        string_array(env, paths.iter().map(|path| path.to_string_lossy()))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_liveServers<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JObjectArray<'local, JString<'local>> {
    bridge(env, |env| {
        let live = handles::get(handle)?.live_servers();
        string_array(env, live.iter().map(|server| server.as_str()))
    })
}

/// A Java `String[]` holding `items` in order.
fn string_array<'local>(
    env: &mut Env<'local>,
    items: impl ExactSizeIterator<Item = impl AsRef<str>>,
) -> Result<JObjectArray<'local, JString<'local>>, BridgeError> {
    let array = JObjectArray::<JString>::new(env, items.len(), JString::null())?;
    for (index, item) in items.enumerate() {
        let item = JString::from_str(env, item.as_ref())?;
        array.set_element(env, index, &item)?;
    }
    Ok(array)
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_completeCall<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    id: jlong,
    result: JString<'local>,
) -> jboolean {
    bridge(env, |env| {
        let Some(id) = call_id(id) else {
            return Ok(false);
        };
        if result.is_null() {
            return Err(BridgeError::IllegalArgument(
                "the result must not be null".to_owned(),
            ));
        }
        let parsed =
            java_strings::read_from_java(env, &result, |text| serde_json::from_str::<Value>(text))?;
        match parsed {
            Ok(value) => Ok(pending::resolve_call(id, Ok(value))),
            Err(error) => {
                // The model still gets an answer; the handler's author gets the exception.
                pending::resolve_call(
                    id,
                    Err(ToolError::new(
                        "the IDE's handler produced a result that is not valid JSON",
                    )),
                );
                Err(BridgeError::IllegalArgument(format!(
                    "the result is not valid JSON: {error}"
                )))
            }
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_admitJoint<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    verdict_code: jint,
    text: JString<'local>,
) -> jint {
    bridge(env, |env| {
        let verdict = java_handler::verdict_of_code(verdict_code, || {
            java_strings::read_from_java(env, &text, str::to_owned)
                .map_err(|error| format!("its reason could not be read: {error}"))
        });
        Ok(java_handler::admit_joint(verdict))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_failCall<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    id: jlong,
    message: JString<'local>,
) -> jboolean {
    bridge(env, |env| {
        let Some(id) = call_id(id) else {
            return Ok(false);
        };
        let message = optional_rust_string(env, &message)?
            .unwrap_or_else(|| "the handler failed without a message".to_owned());
        Ok(pending::resolve_call(id, Err(ToolError::new(message))))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_isCallCancelled<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    id: jlong,
) -> jboolean {
    bridge(env, |_env| {
        Ok(call_id(id).is_none_or(pending::is_call_cancelled))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_reportProgress<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    id: jlong,
    progress: jdouble,
    total: jdouble,
    message: JString<'local>,
) {
    bridge(env, |env| {
        let Some(id) = call_id(id) else {
            return Ok(());
        };
        if !progress.is_finite() {
            return Err(BridgeError::IllegalArgument(format!(
                "progress must be a finite number, not {progress}"
            )));
        }
        let total = total.is_finite().then_some(total);
        let message = optional_rust_string(env, &message)?;
        pending::report_progress(id, progress, total, message);
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_answerConfirmation<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    id: jlong,
    allowed: jboolean,
) -> jboolean {
    bridge(env, |_env| {
        Ok(call_id(id).is_some_and(|id| pending::resolve_confirmation(id, allowed)))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_setLogSink<'local>(
    env: EnvUnowned<'local>,
    class: JClass<'local>,
    sink: JObject<'local>,
    max_level: jint,
) {
    bridge(env, |env| {
        callbacks::init(env, &class)?;
        threads::ensure_started()?;
        log_layer::install_once();
        log_layer::set_max_level(u8::try_from(max_level.clamp(0, 5)).unwrap_or(0));
        let sink = if sink.is_null() {
            None
        } else {
            Some(JavaRef::new(env, &sink, "the log sink")?)
        };
        threads::set_log_sink(sink);
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_droppedLogRecords<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jlong {
    bridge(env, |_env| {
        Ok(i64::try_from(threads::dropped_log_records()).unwrap_or(i64::MAX))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_pendingCallCount<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jint {
    bridge(env, |_env| {
        Ok(i32::try_from(pending::pending_call_count()).unwrap_or(i32::MAX))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_liveServerSetCount<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jint {
    bridge(env, |_env| {
        Ok(i32::try_from(handles::live_count()).unwrap_or(i32::MAX))
    })
}

fn pid(pid: jlong) -> Result<i32, BridgeError> {
    i32::try_from(pid)
        .ok()
        .filter(|pid| *pid > 0)
        .ok_or_else(|| BridgeError::IllegalArgument(format!("{pid} is not a process id")))
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_declareLaunchedClient<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    client_pid: jlong,
) {
    bridge(env, |_env| {
        let servers = handles::get(handle)?;
        servers
            .declare_launched_client(pid(client_pid)?)
            .map_err(server_error)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_forgetLaunchedClient<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    client_pid: jlong,
) {
    bridge(env, |_env| {
        let servers = handles::get(handle)?;
        servers
            .forget_launched_client(pid(client_pid)?)
            .map_err(server_error)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_grantAdmissionCredit<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    valid_for_millis: jlong,
) {
    bridge(env, |_env| {
        let servers = handles::get(handle)?;
        let millis = u64::try_from(valid_for_millis)
            .ok()
            .filter(|millis| *millis > 0)
            .ok_or_else(|| {
                BridgeError::IllegalArgument(format!(
                    "a credit must be valid for a positive time, not {valid_for_millis} ms"
                ))
            })?;
        servers
            .grant_admission_credit(Duration::from_millis(millis))
            .map_err(server_error)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_answerAdmission<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    id: jlong,
    allowed: jboolean,
) -> jboolean {
    bridge(env, |_env| {
        Ok(call_id(id).is_some_and(|id| pending::resolve_admission(id, allowed)))
    })
}

fn audit_record_json(record: &AuditRecord) -> Value {
    let at_millis = record.at.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    });
    json!({
        "atMillis": at_millis,
        "clientPid": record.client.pid,
        "clientName": record.client.name.as_deref(),
        "connectionId": record.client.connection_id,
        "server": record.server.as_str(),
        "domain": &*record.domain,
        "tool": &*record.tool,
        "arguments": record.arguments.iter().map(|name| &**name).collect::<Vec<&str>>(),
        "verdict": match record.verdict {
            AuditVerdict::Allowed => "ALLOWED",
            AuditVerdict::Denied => "DENIED",
        },
        "reason": &*record.reason,
        "durationNanos": u64::try_from(record.duration.as_nanos()).unwrap_or(u64::MAX),
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_auditLog<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    bridge(env, |env| {
        let records: Vec<Value> = handles::get(handle)?
            .audit_log()
            .iter()
            .map(audit_record_json)
            .collect();
        Ok(JString::from_str(env, Value::Array(records).to_string())?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_mcpServersBlock<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    launcher: JString<'local>,
) -> JString<'local> {
    bridge(env, |env| {
        let servers = handles::get(handle)?;
        let launcher = parse_launcher(&rust_string(env, &launcher, "the bridge launcher")?)?;
        let block = servers
            .mcp_servers_block(&launcher)
            .ok_or_else(|| BridgeError::IllegalState("the servers are stopped".to_owned()))?;
        Ok(JString::from_str(env, block.to_string())?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_announceSplitMode<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    launcher: JString<'local>,
) -> JString<'local> {
    bridge(env, |env| {
        let servers = handles::get(handle)?;
        let launcher = parse_launcher(&rust_string(env, &launcher, "the bridge launcher")?)?;
        let notice = servers
            .announce_split_mode(&launcher)
            .map_err(server_error)?;
        Ok(JString::from_str(env, notice.configuration.to_string())?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_splitModeMessage<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JString<'local> {
    bridge(env, |env| Ok(JString::from_str(env, SPLIT_MODE_MESSAGE)?))
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_newPageDelivery<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jlong {
    bridge(env, |_env| Ok(page_delivery::create()))
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_freePageDelivery<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jboolean {
    bridge(env, |_env| Ok(page_delivery::free(handle)))
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_registerRoute<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    route: JString<'local>,
) {
    bridge(env, |env| {
        let delivery = page_delivery::get(handle)?;
        delivery.register_route(&rust_string(env, &route, "the route")?);
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_reportRoute<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    route: JString<'local>,
    delivered: jboolean,
    reason: JString<'local>,
) -> jint {
    bridge(env, |env| {
        let delivery = page_delivery::get(handle)?;
        let route = rust_string(env, &route, "the route")?;
        let outcome = if delivered {
            RouteOutcome::Delivered
        } else {
            RouteOutcome::Failed(
                optional_rust_string(env, &reason)?.unwrap_or_else(|| "no reason given".to_owned()),
            )
        };
        Ok(page_delivery::state_code(&delivery.report(&route, outcome)))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_routeOutcomes<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    bridge(env, |env| {
        let delivery = page_delivery::get(handle)?;
        Ok(JString::from_str(
            env,
            page_delivery::outcomes_json(&delivery),
        )?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_pendingQuestionCount<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jint {
    bridge(env, |_env| {
        Ok(i32::try_from(pending::pending_question_count()).unwrap_or(i32::MAX))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_livePageDeliveryCount<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jint {
    bridge(env, |_env| {
        Ok(i32::try_from(page_delivery::live_count()).unwrap_or(i32::MAX))
    })
}

// Project files: confined reads, listings and searches beneath a root (rust/project-files).
// They run on the calling thread until done; a search ends by its deadline or its
// cancellation flag, which another thread raises with `filesCancel`.

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_filesOpen<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    root: JString<'local>,
    portable_walk: jboolean,
) -> jlong {
    bridge(env, |env| {
        project_files::open(&rust_string(env, &root, "the project root")?, portable_walk)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_filesClose<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jboolean {
    bridge(env, |_env| Ok(project_files::close(handle)))
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_filesRoot<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    bridge(env, |env| {
        Ok(JString::from_str(env, project_files::root_path(handle)?)?)
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_filesReadLines<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    path: JString<'local>,
    start_line: jlong,
    end_line: jlong,
    max_file_bytes: jlong,
    max_whole_bytes: jlong,
    max_content_bytes: jlong,
    allow_credentials: jboolean,
) -> JString<'local> {
    bridge(env, |env| {
        let path = rust_string(env, &path, "the path")?;
        let arguments = project_files::ReadArguments {
            start_line,
            end_line,
            max_file_bytes,
            max_whole_bytes,
            max_content_bytes,
            allow_credentials,
        };
        Ok(JString::from_str(
            env,
            project_files::read_lines(handle, &path, &arguments)?,
        )?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_filesListDirectory<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    path: JString<'local>,
    max_entries: jlong,
) -> JString<'local> {
    bridge(env, |env| {
        let path = rust_string(env, &path, "the path")?;
        Ok(JString::from_str(
            env,
            project_files::list_directory(handle, &path, max_entries)?,
        )?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_filesStat<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    path: JString<'local>,
) -> JString<'local> {
    bridge(env, |env| {
        let path = rust_string(env, &path, "the path")?;
        Ok(JString::from_str(env, project_files::stat(handle, &path)?)?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_filesNewCancel<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jlong {
    bridge(env, |_env| Ok(project_files::new_cancel()))
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_filesCancel<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    cancel: jlong,
) -> jboolean {
    bridge(env, |_env| Ok(project_files::cancel(cancel)))
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_filesFreeCancel<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    cancel: jlong,
) -> jboolean {
    bridge(env, |_env| Ok(project_files::free_cancel(cancel)))
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_filesSearchText<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    cancel: jlong,
    request: JString<'local>,
) -> JString<'local> {
    bridge(env, |env| {
        let request = rust_string(env, &request, "the request")?;
        Ok(JString::from_str(
            env,
            project_files::search_text(handle, cancel, &request)?,
        )?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_filesFindFiles<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    cancel: jlong,
    request: JString<'local>,
) -> JString<'local> {
    bridge(env, |env| {
        let request = rust_string(env, &request, "the request")?;
        Ok(JString::from_str(
            env,
            project_files::find_files(handle, cancel, &request)?,
        )?)
    })
}
