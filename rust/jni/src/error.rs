//! The bridge's error type, and the one policy that turns an error or a panic inside a native
//! method into the right Java exception.

use std::any::Any;

use jni::errors::ErrorPolicy;
use jni::objects::JThrowable;
use jni::{jni_str, Env};

/// A Java exception that a call into Java threw, taken and cleared so that it is a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JavaThrowable {
    /// The binary class name, e.g. `java.lang.IllegalStateException`.
    pub class_name: String,
    /// `getMessage()`, when there is one.
    pub message: Option<String>,
}

impl std::fmt::Display for JavaThrowable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.message {
            Some(message) => write!(f, "{}: {}", self.class_name, message),
            None => f.write_str(&self.class_name),
        }
    }
}

/// Why a native call or a call into Java failed. Each variant maps to one Java exception
/// class, so a Java caller can tell its own mistakes from the server's failures.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The Java caller passed something unusable: `IllegalArgumentException`.
    #[error("{0}")]
    IllegalArgument(String),
    /// The call does not fit the current state (a stopped or unknown handle):
    /// `IllegalStateException`.
    #[error("{0}")]
    IllegalState(String),
    /// The servers failed to do what was asked: `dev.lain.claudejb.mcp.McpException`.
    #[error("{0}")]
    Server(String),
    /// The project-files layer refused (a path outside the project, a credential, a bad
    /// pattern, a cancelled search): `dev.lain.claudejb.mcp.FileAccessException`, whose
    /// message is meant for the model.
    #[error("{0}")]
    FileAccess(String),
    /// A call into Java threw; the exception was cleared and kept here.
    #[error("Java code threw {0}")]
    Java(JavaThrowable),
    /// The JNI layer itself failed.
    #[error("JNI failure: {0}")]
    Jni(#[from] jni::errors::Error),
}

impl BridgeError {
    /// The JNI (slash-separated) name of the exception class this error becomes.
    fn exception_class(&self) -> &'static jni::strings::JNIStr {
        match self {
            BridgeError::IllegalArgument(_) => jni_str!("java/lang/IllegalArgumentException"),
            BridgeError::IllegalState(_) => jni_str!("java/lang/IllegalStateException"),
            BridgeError::FileAccess(_) => jni_str!("dev/lain/claudejb/mcp/FileAccessException"),
            BridgeError::Server(_) | BridgeError::Java(_) | BridgeError::Jni(_) => {
                jni_str!("dev/lain/claudejb/mcp/McpException")
            }
        }
    }
}

/// Turns a panic payload into the message it carried.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&'static str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "a panic with no message".to_owned()
    }
}

/// Throws `class` with `message` from inside a native method. If the class cannot be found
/// (it always can from a native method of `Native`, whose class loader holds it), falls back
/// to `RuntimeException` so the caller still sees a failure rather than a silent default.
fn throw(env: &mut Env<'_>, class: &jni::strings::JNIStr, message: &str) {
    let message = jni::strings::JNIString::from(message);
    if env.throw_new(class, &message).is_ok() || env.exception_check() {
        return;
    }
    let _ = env.throw_new(jni_str!("java/lang/RuntimeException"), &message);
}

/// The policy of every exported native method: an error becomes the Java exception its
/// variant names, a panic becomes a `McpException` that says so, and the method returns the
/// type's default (null, 0, false), which Java never sees because the exception is pending.
#[derive(Debug, Default)]
pub struct ThrowJavaException;

impl<T: Default> ErrorPolicy<T, BridgeError> for ThrowJavaException {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _captures: &mut Self::Captures<'unowned_env_local, 'native_method>,
        error: BridgeError,
    ) -> jni::errors::Result<T> {
        // A Java exception already pending (thrown by a JNI call in the body) is the most
        // precise report there is; let it propagate to the caller unchanged.
        if !env.exception_check() {
            throw(env, error.exception_class(), &error.to_string());
        }
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _captures: &mut Self::Captures<'unowned_env_local, 'native_method>,
        payload: Box<dyn Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        let message = format!(
            "internal error in the ide-mcp native library (a Rust panic: {}); the servers keep running",
            panic_message(payload.as_ref())
        );
        // A panic may have happened after a JNI call left an exception pending; ours replaces
        // it, because the panic is the real failure.
        env.exception_clear();
        throw(
            env,
            jni_str!("dev/lain/claudejb/mcp/McpException"),
            &message,
        );
        Ok(T::default())
    }
}

/// Takes the pending Java exception, if any, clears it and describes it. Every call into Java
/// goes through this when it fails, so no exception is ever left pending on a thread of ours.
pub fn take_pending_exception(env: &mut Env<'_>) -> Option<JavaThrowable> {
    let throwable = env.exception_occurred()?;
    env.exception_clear();
    let description = describe_throwable(env, &throwable);
    // Describing may itself throw (a getMessage that throws); that is not worth reporting.
    env.exception_clear();
    Some(description.unwrap_or_else(|_| JavaThrowable {
        class_name: "java.lang.Throwable".to_owned(),
        message: Some("(the exception could not be described)".to_owned()),
    }))
}

fn describe_throwable(
    env: &mut Env<'_>,
    throwable: &JThrowable<'_>,
) -> Result<JavaThrowable, jni::errors::Error> {
    let class = env.get_object_class(throwable)?;
    let class_name = class.get_name(env)?.try_to_string(env)?;
    let message = env
        .call_method(
            throwable,
            jni_str!("getMessage"),
            jni::jni_sig!(() -> java.lang.String),
            &[],
        )?
        .l()?;
    let message = if message.is_null() {
        None
    } else {
        let message = env.cast_local::<jni::objects::JString>(message)?;
        Some(message.try_to_string(env)?)
    };
    Ok(JavaThrowable {
        class_name,
        message,
    })
}

/// Turns the error of a failed call into Java into a [`BridgeError`], taking the pending
/// exception when that is what failed.
pub fn after_java_call(env: &mut Env<'_>, error: jni::errors::Error) -> BridgeError {
    match take_pending_exception(env) {
        Some(throwable) => BridgeError::Java(throwable),
        None => BridgeError::Jni(error),
    }
}
