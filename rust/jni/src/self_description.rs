//! What the library says about itself, so the Java side can compare its own copies with the
//! Rust originals: the contract constants (`ContractTest`) and the option keys
//! (`OptionsTest`). Both are read-only and harmless, so they are in every build.

use ide_mcp_server::ServerConfig;
use jni::objects::{JClass, JString};
use jni::EnvUnowned;
use serde_json::Value;

use crate::native::bridge;

fn json_string<'local>(env: EnvUnowned<'local>, value: impl FnOnce() -> Value) -> JString<'local> {
    bridge(env, |env| Ok(JString::from_str(env, value().to_string())?))
}

/// `ide_mcp_protocol::contract`'s constants as a JSON object keyed by name.
#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_contractJson<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JString<'local> {
    json_string(env, ide_mcp_protocol::contract::as_json)
}

/// The keys of `ServerConfig`'s options as a JSON array, in the order of the table of
/// defaults.
#[no_mangle]
pub extern "system" fn Java_dev_lain_claudejb_mcp_Native_optionKeys<'local>(
    env: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JString<'local> {
    json_string(env, || ServerConfig::option_keys().collect())
}
