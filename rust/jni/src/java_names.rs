//! The Java strings a call is judged under (its server's, domain's and tool's names, and the
//! empty list of concerns most calls have), made once per server set instead of once a call.
//!
//! As fresh objects they were, for every call a Java guard judged, three strings and an array
//! allocated in the Java heap and three conversions from UTF-8: garbage for the IDE's
//! collector and time on the call's path. These names come from the tools the host
//! registered, so they are few and fixed; each is made on its first call and shared after.
//! Java strings and empty arrays cannot be changed, so sharing them changes nothing a guard can
//! see but the objects' identity. A name a client chose (its own name, its arguments) is never
//! cached: a client could fill the cache with them. The cache is bounded all the same
//! ([`MAX_CACHED_NAMES`]); past that, a name is made fresh for each call, as before.
//!
//! A cache belongs to one server set's guard, so its references go when the set stops.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use jni::objects::{JObjectArray, JString};
use jni::Env;

use crate::callbacks::string_array;
use crate::error::BridgeError;
use crate::java_ref::JavaRef;

/// How many names one cache holds at most; far more than the tools of a server set.
pub const MAX_CACHED_NAMES: usize = 1024;

/// One server set's cache of names.
#[derive(Default)]
pub struct JavaNames {
    strings: Mutex<HashMap<Box<str>, Arc<JavaRef>>>,
    /// A `String[0]`, for the calls without concerns.
    no_concerns: OnceLock<JavaRef>,
}

impl JavaNames {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// A local reference to the Java string for `name`, made on its first use. Only for names
    /// from the host's registrations, never for what a client sent.
    pub fn name<'local>(
        &self,
        env: &mut Env<'local>,
        name: &str,
    ) -> Result<JString<'local>, BridgeError> {
        // The lock is never held across a JNI call: look, make, then store.
        let cached = self.lock().get(name).map(Arc::clone);
        if let Some(pinned) = cached {
            // SAFETY: every cached name was pinned from a `JString`, below.
            let string = unsafe { env.as_cast_unchecked::<JString>(pinned.as_obj()) };
            return Ok(env.new_local_ref(&*string)?);
        }
        let fresh = JString::from_str(env, name)?;
        if self.lock().len() < MAX_CACHED_NAMES {
            let pinned = Arc::new(JavaRef::new(env, &fresh, "a name")?);
            // Another callback thread may have stored the same name meanwhile; either copy
            // will do. The one not kept is deleted (a JNI call) after the lock is released.
            let not_kept = match self.lock().entry(name.into()) {
                Entry::Occupied(_) => Some(pinned),
                Entry::Vacant(slot) => {
                    slot.insert(pinned);
                    None
                }
            };
            drop(not_kept);
        }
        Ok(fresh)
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
