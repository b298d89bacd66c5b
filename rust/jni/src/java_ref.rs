//! A global reference to a Java object that is safe to hold anywhere, including in futures
//! that tokio worker threads poll and drop.

use jni::objects::{Global, JObject};
use jni::Env;

use crate::error::BridgeError;
use crate::threads;

/// Owns one JNI global reference.
///
/// Deleting a global reference is a JNI call, and a tokio worker thread must never make one.
/// So a `JavaRef` dropped on a thread that is not attached by this library (see
/// [`threads::on_jni_thread`]) hands its reference to the notifier thread, which deletes it.
pub struct JavaRef {
    global: Option<Global<JObject<'static>>>,
}

impl std::fmt::Debug for JavaRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JavaRef").finish_non_exhaustive()
    }
}

impl JavaRef {
    /// Pins `object` with a new global reference. `what` names the object in the error a
    /// null gets.
    pub fn new(env: &Env<'_>, object: &JObject<'_>, what: &str) -> Result<Self, BridgeError> {
        if object.is_null() {
            return Err(BridgeError::IllegalArgument(format!(
                "{what} must not be null"
            )));
        }
        let global = env.new_global_ref(object)?;
        Ok(JavaRef {
            global: Some(global),
        })
    }

    /// The referenced object.
    pub fn as_obj(&self) -> &JObject<'static> {
        match &self.global {
            Some(global) => global.as_obj(),
            None => &NULL,
        }
    }
}

static NULL: JObject<'static> = JObject::null();

impl Drop for JavaRef {
    fn drop(&mut self) {
        if let Some(global) = self.global.take() {
            if threads::on_jni_thread() {
                drop(global);
            } else {
                threads::release_on_jni_thread(global);
            }
        }
    }
}
