//! The Java strings a call is judged under (its server's, domain's and tool's names, its
//! client's name, and the empty list of concerns most calls have), made once instead of once
//! a call.
//!
//! As fresh objects they were, for every call a Java guard judged, four strings and an array
//! allocated in the Java heap and four conversions from UTF-8: garbage for the IDE's collector
//! and time on the call's path. Java strings and empty arrays cannot be changed, so sharing
//! them changes nothing a guard can see but the objects' identity. They are handed to Java as
//! the global references they are pinned by, without a local reference made for each call.
//!
//! Where each comes from:
//! - a server's name: one of four, pinned on its first call ([`JavaNames::server`]);
//! - a tool's domain and name: pinned by the tool's own handler on its first joint call
//!   ([`ToolNames`]), so a call finds them without a lock or a hash; for other calls (a Rust
//!   handler judged by a Java guard) from a map of the names the host registered, bounded by
//!   [`MAX_CACHED_NAMES`];
//! - the client's name: chosen by the client, so never put in a map a client could fill; each
//!   callback thread keeps the last one it used ([`client_name`]), which is the same name for
//!   every call of a connection.
//!
//! A [`JavaNames`] belongs to one server set's guard and a [`ToolNames`] to one tool's handler,
//! so their references go when the set stops or the domain is removed.

use std::cell::RefCell;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use ide_mcp_server::ServerName;
use jni::objects::{JObject, JObjectArray, JString};
use jni::Env;

use crate::callbacks::string_array;
use crate::error::BridgeError;
use crate::java_ref::JavaRef;
use crate::java_strings::to_java;

/// How many names one map holds at most; far more than the tools of a server set.
pub const MAX_CACHED_NAMES: usize = 1024;

/// A Java string for a call: pinned and shared, or made for this call alone.
pub enum JavaName<'local> {
    /// A string pinned by a cache.
    Pinned(Arc<JavaRef>),
    /// A string made for this call (a full map, a client without a name).
    Fresh(JString<'local>),
}

impl JavaName<'_> {
    /// The string as an object to pass to Java.
    pub fn as_obj(&self) -> &JObject<'_> {
        match self {
            JavaName::Pinned(pinned) => pinned.as_obj(),
            JavaName::Fresh(fresh) => fresh,
        }
    }
}

/// One server set's names: its servers', and the domains' and tools' it registered.
#[derive(Default)]
pub struct JavaNames {
    servers: [OnceLock<Arc<JavaRef>>; 4],
    strings: Mutex<HashMap<Box<str>, Arc<JavaRef>>>,
    /// A `String[0]`, for the calls without concerns.
    no_concerns: OnceLock<JavaRef>,
}

impl JavaNames {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The Java string of a server's name, pinned on its first use.
    pub fn server<'local>(
        &self,
        env: &mut Env<'local>,
        server: ServerName,
    ) -> Result<JavaName<'local>, BridgeError> {
        let slot = &self.servers[server as usize];
        if let Some(pinned) = slot.get() {
            return Ok(JavaName::Pinned(Arc::clone(pinned)));
        }
        let pinned = Arc::new(pin_string(env, server.as_str())?);
        // Two threads may pin it at once; either copy will do.
        Ok(JavaName::Pinned(Arc::clone(slot.get_or_init(|| pinned))))
    }

    /// The Java string for `name`, pinned on its first use while the map has room. Only for
    /// names from the host's registrations, never for what a client sent.
    pub fn name<'local>(
        &self,
        env: &mut Env<'local>,
        name: &str,
    ) -> Result<JavaName<'local>, BridgeError> {
        // The lock is never held across a JNI call: look, make, then store.
        if let Some(pinned) = self.lock().get(name).map(Arc::clone) {
            return Ok(JavaName::Pinned(pinned));
        }
        if self.lock().len() >= MAX_CACHED_NAMES {
            return Ok(JavaName::Fresh(to_java(env, name)?));
        }
        let pinned = Arc::new(pin_string(env, name)?);
        // Another callback thread may have stored the same name meanwhile; either copy will
        // do. The one not kept is deleted (a JNI call) after the lock is released.
        let (kept, not_kept) = match self.lock().entry(name.into()) {
            Entry::Occupied(slot) => (Arc::clone(slot.get()), Some(pinned)),
            Entry::Vacant(slot) => (Arc::clone(slot.insert(pinned)), None),
        };
        drop(not_kept);
        Ok(JavaName::Pinned(kept))
    }

    /// A local reference to the concerns as a Java `String[]`: the shared empty one when there
    /// are none, as for most calls.
    pub fn concerns<'local>(
        &self,
        env: &mut Env<'local>,
        concerns: &[String],
    ) -> Result<JObjectArray<'local, JString<'local>>, BridgeError> {
        if !concerns.is_empty() {
            return string_array(env, concerns);
        }
        let pinned = match self.no_concerns.get() {
            Some(pinned) => pinned,
            None => {
                let empty = string_array(env, &[])?;
                let pinned = JavaRef::new(env, &empty, "an empty array")?;
                env.delete_local_ref(empty);
                self.no_concerns.get_or_init(|| pinned)
            }
        };
        // SAFETY: the pinned object is the `String[]` made just above (now or earlier).
        let empty = unsafe { env.as_cast_unchecked::<JObjectArray<JString>>(pinned.as_obj()) };
        Ok(env.new_local_ref(&*empty)?)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, Arc<JavaRef>>> {
        // Every update is one insert: a poisoned lock still holds a whole map.
        self.strings
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A tool's domain and name as Java strings, pinned by its handler on its first joint call.
#[derive(Default)]
pub struct ToolNames {
    pinned: OnceLock<PinnedToolNames>,
}

struct PinnedToolNames {
    domain: Arc<str>,
    tool: Arc<str>,
    java_domain: Arc<JavaRef>,
    java_tool: Arc<JavaRef>,
}

impl ToolNames {
    /// The Java strings of `domain` and `tool`, the names a call of this tool is judged under:
    /// pinned on the first call, compared and shared after. A call under other names (which
    /// the registry never makes) takes them from `names`.
    pub fn get<'local>(
        &self,
        env: &mut Env<'local>,
        domain: &Arc<str>,
        tool: &Arc<str>,
        names: &JavaNames,
    ) -> Result<(JavaName<'local>, JavaName<'local>), BridgeError> {
        let pinned = match self.pinned.get() {
            Some(pinned) => pinned,
            None => {
                let pinned = PinnedToolNames {
                    domain: Arc::clone(domain),
                    tool: Arc::clone(tool),
                    java_domain: Arc::new(pin_string(env, domain)?),
                    java_tool: Arc::new(pin_string(env, tool)?),
                };
                self.pinned.get_or_init(|| pinned)
            }
        };
        if same_name(&pinned.domain, domain) && same_name(&pinned.tool, tool) {
            return Ok((
                JavaName::Pinned(Arc::clone(&pinned.java_domain)),
                JavaName::Pinned(Arc::clone(&pinned.java_tool)),
            ));
        }
        Ok((names.name(env, domain)?, names.name(env, tool)?))
    }
}

/// Whether two names are the same: the same shared string (as the registry hands out), or
/// equal text.
fn same_name(kept: &Arc<str>, asked: &Arc<str>) -> bool {
    Arc::ptr_eq(kept, asked) || **kept == **asked
}

thread_local! {
    /// The client name this callback thread used last, and its Java string.
    static LAST_CLIENT_NAME: RefCell<Option<(Arc<str>, Arc<JavaRef>)>> =
        const { RefCell::new(None) };
}

/// The Java string of a client's name (`null` for none): the one this thread used last when
/// the name is the same, else made and kept in its place.
pub fn client_name<'local>(
    env: &mut Env<'local>,
    name: Option<&Arc<str>>,
) -> Result<JavaName<'local>, BridgeError> {
    let Some(name) = name else {
        return Ok(JavaName::Fresh(JString::null()));
    };
    let last = LAST_CLIENT_NAME.with(|last| {
        last.borrow()
            .as_ref()
            .filter(|(kept, _)| same_name(kept, name))
            .map(|(_, pinned)| Arc::clone(pinned))
    });
    if let Some(pinned) = last {
        return Ok(JavaName::Pinned(pinned));
    }
    let pinned = Arc::new(pin_string(env, name)?);
    let replaced = LAST_CLIENT_NAME.with(|last| {
        last.borrow_mut()
            .replace((Arc::clone(name), Arc::clone(&pinned)))
    });
    // The name it replaces is let go outside the cell (deleting it is a JNI call).
    drop(replaced);
    Ok(JavaName::Pinned(pinned))
}

/// A new Java string for `text`, pinned by a global reference.
fn pin_string(env: &mut Env<'_>, text: &str) -> Result<JavaRef, BridgeError> {
    let fresh = to_java(env, text)?;
    let pinned = JavaRef::new(env, &fresh, "a name")?;
    env.delete_local_ref(fresh);
    Ok(pinned)
}
