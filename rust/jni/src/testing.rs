//! Native methods that exist only in the test build (`--features testing`): they provoke the
//! failures the bridge must survive, so the Java tests can prove it does.
#![allow(non_snake_case)]

use std::sync::mpsc;
use std::time::Duration;

use ide_mcp_server::{DomainSpec, ToolAnnotations, ToolCall, ToolSpec};
use jni::objects::{JClass, JString};
use jni::sys::jlong;
use jni::{Env, EnvUnowned};
use serde_json::json;

use crate::callbacks;
use crate::error::BridgeError;
use crate::handles;
use crate::native::{bridge, rust_string};
use crate::options::parse_server;
use crate::threads;

/// Panics inside a native call; the caller must get a `McpException` and the JVM live on.
#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_TESTING_1panicInNativeCall<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    message: JString<'local>,
) {
    bridge(env, |env| -> Result<(), BridgeError> {
        let message = rust_string(env, &message, "the message")?;
        panic!("{message}");
    })
}

/// Registers a domain with one Rust tool whose handler panics on every call.
#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_TESTING_1registerPanickingTool<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    server: JString<'local>,
    domain: JString<'local>,
    tool: JString<'local>,
) {
    bridge(env, |env| {
        let servers = handles::get(handle)?;
        let server = parse_server(&rust_string(env, &server, "the server")?)?;
        let domain = rust_string(env, &domain, "the domain")?;
        let tool = rust_string(env, &tool, "the tool")?;
        let spec = DomainSpec {
            name: domain,
            description: "A domain whose tool panics in Rust".to_owned(),
            server,
            tools: vec![ToolSpec {
                name: tool,
                description: "Panics".to_owned(),
                input_schema: json!({"type": "object"}),
                annotations: ToolAnnotations::default(),
                deadline: None,
                handler: std::sync::Arc::new(|_call: ToolCall| async move {
                    panic!("a Rust tool handler panicked on purpose")
                }),
            }],
        };
        servers
            .register_domain(spec)
            .map(drop)
            .map_err(|error| BridgeError::Server(error.to_string()))
    })
}

fn describe_throw(env: &mut Env<'_>, message: &str) -> Result<String, BridgeError> {
    match callbacks::get()?.throw_for_testing(env, message) {
        Ok(()) => Err(BridgeError::Server(
            "NativeCallbacks.throwForTesting returned instead of throwing".to_owned(),
        )),
        Err(BridgeError::Java(thrown)) => {
            // Proof that the exception was taken: a pending one would be reported here.
            if env.exception_check() {
                return Err(BridgeError::Server(
                    "the exception was left pending".to_owned(),
                ));
            }
            Ok(thrown.to_string())
        }
        Err(other) => Err(other),
    }
}

/// Calls a Java method that throws, on the calling thread, and returns what was caught.
#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_TESTING_1callThrowingJava<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    message: JString<'local>,
) -> JString<'local> {
    bridge(env, |env| {
        let message = rust_string(env, &message, "the message")?;
        let caught = describe_throw(env, &message)?;
        Ok(JString::from_str(env, caught)?)
    })
}

/// Like `TESTING_callThrowingJava`, but on a callback thread, the way handlers are called.
#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_TESTING_1callThrowingJavaOnCallbackThread<
    'local,
>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
    message: JString<'local>,
) -> JString<'local> {
    bridge(env, |env| {
        let message = rust_string(env, &message, "the message")?;
        let (answer, answered) = mpsc::channel();
        let job: threads::Job = Box::new(move |env: &mut Env<'_>| {
            let caught = describe_throw(env, &message).map_err(|error| error.to_string());
            let still_pending = env.exception_check();
            let _ = answer.send((caught, still_pending));
        });
        threads::submit(job)
            .map_err(|_| BridgeError::Server("the callback queue is full".to_owned()))?;
        let (caught, still_pending) = answered
            .recv_timeout(Duration::from_secs(10))
            .map_err(|_| BridgeError::Server("no callback thread answered".to_owned()))?;
        let caught = caught.map_err(BridgeError::Server)?;
        if still_pending {
            return Err(BridgeError::Server(
                "an exception was left pending on the callback thread".to_owned(),
            ));
        }
        Ok(JString::from_str(env, caught)?)
    })
}
