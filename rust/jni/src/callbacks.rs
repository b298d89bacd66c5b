//! The Java methods this library calls, resolved once through the plugin's class loader.
//!
//! Every call into Java goes to a static method of `dev.lain.claudejb.mcp.NativeCallbacks`.
//! The class is loaded through the class loader of `Native` (the class whose native method
//! first starts the servers), not with `FindClass` from one of our own threads, which would
//! search the system class loader and miss a plugin's classes. Its parameters are typed
//! `Object` and cast in Java, so a mistake shows up as a `ClassCastException`, never as a
//! crash. After each call a thrown exception is taken, cleared and returned as
//! [`BridgeError::Java`].

use std::sync::{Arc, OnceLock};

use ide_mcp_server::ServerName;
use jni::objects::{Global, JClass, JObject, JObjectArray, JStaticMethodID, JString, JValue};
use jni::refs::LoaderContext;
use jni::signature::{JavaType, Primitive, ReturnType, RuntimeMethodSignature};
use jni::strings::JNIString;
use jni::sys::jvalue;
use jni::{jni_str, Env, JValueOwned};

use crate::error::{after_java_call, BridgeError};
use crate::java_names::{self, JavaName, JavaNames};
use crate::java_strings;

/// One Java type a callback takes or returns, by its name in [`java_callbacks!`]: its JNI
/// descriptor, the Rust type a caller passes, the `jvalue` it becomes, and for a return type
/// what `call_static_method_unchecked` is told and what the caller gets back.
macro_rules! java_type {
    (descriptor long) => { "J" };
    (descriptor int) => { "I" };
    (descriptor boolean) => { "Z" };
    (descriptor void) => { "V" };
    (descriptor Object) => { "Ljava/lang/Object;" };
    (descriptor String) => { "Ljava/lang/String;" };
    (descriptor StringArray) => { "[Ljava/lang/String;" };

    (rust long) => { i64 };
    (rust int) => { i32 };
    (rust boolean) => { bool };
    (rust Object) => { &JObject<'_> };
    (rust String) => { &JString<'_> };
    (rust StringArray) => { &JObjectArray<'_, JString<'_>> };

    (jvalue long, $value:expr) => { JValue::Long($value).as_jni() };
    (jvalue int, $value:expr) => { JValue::Int($value).as_jni() };
    (jvalue boolean, $value:expr) => { JValue::Bool($value).as_jni() };
    (jvalue $object:ident, $value:expr) => { JValue::Object($value).as_jni() };

    (return_type void) => { JavaType::Primitive(Primitive::Void) };
    (return_type $object:ident) => { JavaType::Object };

    (returns void) => { () };
    (returns $object:ident) => { JObject<'local> };

    (convert void, $result:expr) => { $result.map(drop) };
    (convert $object:ident, $result:expr) => { Ok($result?.l()?) };
}

/// Declares the static methods of `NativeCallbacks` this library calls, each once, as
/// `rust_name = "javaName"(argument: type, …) -> type;` with the types of [`java_type!`].
/// From that one line come the method id in [`JavaCallbacks`], its JNI signature (in
/// [`signature`]), its lookup in [`init`], and a typed call in [`typed`] that builds exactly
/// the `jvalue`s the signature describes, so an argument list and its signature cannot drift.
macro_rules! java_callbacks {
    ($(
        $(#[cfg($cfg:meta)])?
        $name:ident = $java:literal ( $($arg:ident : $ty:ident),* ) -> $ret:ident;
    )*) => {
        /// The cached class and method ids.
        pub struct JavaCallbacks {
            class: Global<JClass<'static>>,
            $($(#[cfg($cfg)])? $name: JStaticMethodID,)*
        }

        /// The JNI signature of each callback, built from its argument list.
        #[allow(non_upper_case_globals)]
        pub(crate) mod signature {
            $(
                $(#[cfg($cfg)])?
                pub(crate) const $name: &str = concat!(
                    "(", $(java_type!(descriptor $ty),)* ")", java_type!(descriptor $ret)
                );
            )*
        }

        fn resolve_all(
            env: &mut Env<'_>,
            class: Global<JClass<'static>>,
        ) -> Result<JavaCallbacks, BridgeError> {
            Ok(JavaCallbacks {
                $($(#[cfg($cfg)])? $name: resolve(env, &class, $java, signature::$name)?,)*
                class,
            })
        }

        /// One typed call per callback: the arguments of its line, in its order.
        mod typed {
            use super::*;

            $(
                $(#[cfg($cfg)])?
                #[allow(clippy::too_many_arguments)]
                pub(super) fn $name<'local>(
                    callbacks: &JavaCallbacks,
                    env: &mut Env<'local>,
                    $($arg: java_type!(rust $ty),)*
                ) -> Result<java_type!(returns $ret), BridgeError> {
                    let args: &[jvalue] = &[$(java_type!(jvalue $ty, $arg),)*];
                    let result =
                        callbacks.call(env, callbacks.$name, java_type!(return_type $ret), args);
                    java_type!(convert $ret, result)
                }
            )*
        }
    };
}

java_callbacks! {
    start_call = "startCall"(
        handler: Object, call_id: long, call_number: long, arguments_json: String,
        explicitly_allowed: boolean
    ) -> Object;
    judge_and_start = "judgeAndStart"(
        guard: Object, handler: Object, server: String, domain: String, tool: String,
        arguments_json: String, read_only: boolean, destructive: boolean, pid: int,
        client_name: String, connection_id: long, call_number: long, concerns: StringArray,
        call_id: long
    ) -> Object;
    fire_cancelled = "fireCancelled"(context: Object) -> void;
    judge = "judge"(
        guard: Object, server: String, domain: String, tool: String, arguments_json: String,
        read_only: boolean, destructive: boolean, pid: int, client_name: String,
        connection_id: long, call_number: long, concerns: StringArray
    ) -> String;
    confirm = "confirm"(
        host: Object, server: String, domain: String, tool: String, arguments_json: String,
        read_only: boolean, destructive: boolean, pid: int, client_name: String,
        connection_id: long, call_number: long, concerns: StringArray, prompt: String,
        confirmation_id: long
    ) -> void;
    tools_withheld = "toolsWithheld"(
        host: Object, server: String, normalized_name: String, tools: StringArray
    ) -> void;
    unexpected_client = "unexpectedClient"(
        host: Object, pid: int, executable: String, command_line: StringArray, admission_id: long
    ) -> void;
    split_mode_notice = "splitModeNotice"(
        host: Object, message: String, mcp_servers_json: String
    ) -> void;
    log = "log"(sink: Object, level: int, message: String) -> void;
    #[cfg(feature = "testing")]
    throw_for_testing = "throwForTesting"(message: String) -> void;
}

static CALLBACKS: OnceLock<JavaCallbacks> = OnceLock::new();

/// Looks one callback up with the signature its line in [`java_callbacks!`] built.
fn resolve(
    env: &mut Env<'_>,
    class: &Global<JClass<'static>>,
    name: &str,
    signature: &str,
) -> Result<JStaticMethodID, BridgeError> {
    let signature = RuntimeMethodSignature::from_str(signature)?;
    Ok(env.get_static_method_id(class, JNIString::new(name), signature.method_signature())?)
}

/// What a guard or a confirmation is asked about, owned so it can travel to a callback thread.
#[derive(Clone, Debug)]
pub struct GuardCall {
    /// The server the call came in on.
    pub server: ServerName,
    /// The tool's domain.
    pub domain: Arc<str>,
    /// The tool's name.
    pub tool: Arc<str>,
    /// The validated arguments, as JSON.
    pub arguments_json: String,
    /// The tool's read-only hint.
    pub read_only: bool,
    /// The tool's destructive hint.
    pub destructive: bool,
    /// The client's process id, or -1 when unknown.
    pub pid: i32,
    /// The name the client gave, if any.
    pub client_name: Option<Arc<str>>,
    /// The connection's number within the server set.
    pub connection_id: u64,
    /// The call's number, the same in the handler's context.
    pub call_number: u64,
    /// What the baseline policy found wrong (a path outside the project, a credential file).
    pub concerns: Vec<String>,
}

/// The client an unexpected connection came from, owned so it can travel to a callback thread.
#[derive(Clone, Debug)]
pub struct UnexpectedClientCall {
    /// The process id, from the kernel.
    pub pid: i32,
    /// The executable's path, when readable.
    pub executable: Option<String>,
    /// The command line, when readable.
    pub command_line: Vec<String>,
}

/// Resolves and caches the callbacks, once per process (per copy of this library, which
/// serves exactly one class loader). `native_class` is `dev.lain.claudejb.mcp.Native`.
pub fn init(env: &mut Env<'_>, native_class: &JClass<'_>) -> Result<(), BridgeError> {
    if CALLBACKS.get().is_some() {
        return Ok(());
    }
    let loader = native_class
        .get_class_loader(env)
        .map_err(|error| after_java_call(env, error))?;
    let class = LoaderContext::Loader(&loader)
        .load_class(env, jni_str!("dev.lain.claudejb.mcp.NativeCallbacks"), true)
        .map_err(|error| after_java_call(env, error))?;
    let class = env.new_global_ref(&class)?;
    let callbacks = resolve_all(env, class)?;
    // A racing first start may have won; its copy is identical.
    let _ = CALLBACKS.set(callbacks);
    Ok(())
}

/// The cached callbacks; an error before the first start.
pub fn get() -> Result<&'static JavaCallbacks, BridgeError> {
    CALLBACKS.get().ok_or_else(|| {
        BridgeError::IllegalState(
            "the Java callbacks are not resolved yet: start a server set first".to_owned(),
        )
    })
}

fn string<'local>(env: &mut Env<'local>, text: &str) -> Result<JString<'local>, BridgeError> {
    java_strings::to_java(env, text)
}

/// A call's arguments JSON as a Java string, made once per call: the guard judges it and the
/// handler's context holds the very same object, so arguments of any size are converted and
/// held in the Java heap once.
pub fn arguments_string<'local>(
    env: &mut Env<'local>,
    arguments_json: &str,
) -> Result<JString<'local>, BridgeError> {
    string(env, arguments_json)
}

fn optional_string<'local>(
    env: &mut Env<'local>,
    text: Option<&str>,
) -> Result<JString<'local>, BridgeError> {
    match text {
        Some(text) => string(env, text),
        None => Ok(JString::null()),
    }
}

pub(crate) fn string_array<'local>(
    env: &mut Env<'local>,
    items: &[String],
) -> Result<JObjectArray<'local, JString<'local>>, BridgeError> {
    let array = JObjectArray::<JString>::new(env, items.len(), JString::null())?;
    for (index, item) in items.iter().enumerate() {
        let item = string(env, item)?;
        array.set_element(env, index, &item)?;
        env.delete_local_ref(item);
    }
    Ok(array)
}

/// The strings of a judgement besides the tool's names: the server's name, the client's, and
/// the concerns.
fn judged_strings<'local>(
    env: &mut Env<'local>,
    call: &GuardCall,
    names: &JavaNames,
) -> Result<
    (
        JavaName<'local>,
        JavaName<'local>,
        JObjectArray<'local, JString<'local>>,
    ),
    BridgeError,
> {
    Ok((
        names.server(env, call.server)?,
        java_names::client_name(env, call.client_name.as_ref())?,
        names.concerns(env, &call.concerns)?,
    ))
}

/// A name as the `java.lang.String` it is, to pass where one is declared.
fn as_string<'name>(
    env: &Env<'_>,
    name: &'name JavaName<'_>,
) -> jni::refs::Cast<'name, 'name, JString<'static>> {
    // SAFETY: every `JavaName` is a `java.lang.String` (made from a Rust string by
    // `java_names`) or null.
    unsafe { env.as_cast_unchecked::<JString>(name.as_obj()) }
}

fn id_to_jlong(id: u64) -> i64 {
    // Ids count up from 1 and never come near 2^63; the cast keeps them positive.
    i64::try_from(id).unwrap_or(i64::MAX)
}

impl JavaCallbacks {
    /// Calls one cached static method; only the typed calls of [`java_callbacks!`] use it.
    ///
    /// Safety of the unchecked call: each typed call passes the method id resolved with the
    /// signature built from its own argument list, `args` built from that same list, and the
    /// `ret` of that signature's return type.
    fn call<'local>(
        &self,
        env: &mut Env<'local>,
        method: JStaticMethodID,
        ret: ReturnType,
        args: &[jvalue],
    ) -> Result<JValueOwned<'local>, BridgeError> {
        // SAFETY: see above; `self.class` is the class the id was resolved on.
        let result = unsafe { env.call_static_method_unchecked(&self.class, method, ret, args) };
        result.map_err(|error| after_java_call(env, error))
    }

    /// `NativeCallbacks.startCall(handler, callId, callNumber, argumentsJson,
    /// explicitlyAllowed)`: runs a Java `ToolHandler` with a new `ToolCallContext`; the context
    /// when the handler returned without answering, else null.
    pub fn start_call<'local>(
        &self,
        env: &mut Env<'local>,
        handler: &JObject<'_>,
        call_id: u64,
        call_number: u64,
        arguments: &JString<'_>,
        explicitly_allowed: bool,
    ) -> Result<JObject<'local>, BridgeError> {
        typed::start_call(
            self,
            env,
            handler,
            id_to_jlong(call_id),
            id_to_jlong(call_number),
            arguments,
            explicitly_allowed,
        )
    }

    /// `NativeCallbacks.judgeAndStart(guard, handler, …, callId)`: the guard's judgement,
    /// handed to `Native.admitJoint` on this thread, and the handler run when that lets it
    /// start; returns what [`Self::start_call`] returns (null when the handler did not start).
    /// The names are as for [`Self::judge`].
    #[allow(clippy::too_many_arguments)]
    pub fn judge_and_start<'local>(
        &self,
        env: &mut Env<'local>,
        guard: &JObject<'_>,
        handler: &JObject<'_>,
        call: &GuardCall,
        arguments: &JString<'_>,
        (domain, tool): (&JavaName<'_>, &JavaName<'_>),
        names: &JavaNames,
        call_id: u64,
    ) -> Result<JObject<'local>, BridgeError> {
        let (server, client_name, concerns) = judged_strings(env, call, names)?;
        let [server, domain, tool, client_name] =
            [&server, domain, tool, &client_name].map(|name| as_string(env, name));
        typed::judge_and_start(
            self,
            env,
            guard,
            handler,
            &server,
            &domain,
            &tool,
            arguments,
            call.read_only,
            call.destructive,
            call.pid,
            &client_name,
            id_to_jlong(call.connection_id),
            id_to_jlong(call.call_number),
            &concerns,
            id_to_jlong(call_id),
        )
    }

    /// `NativeCallbacks.fireCancelled(context)`: marks the context cancelled and runs its
    /// `onCancel` actions.
    pub fn fire_cancelled(
        &self,
        env: &mut Env<'_>,
        context: &JObject<'_>,
    ) -> Result<(), BridgeError> {
        typed::fire_cancelled(self, env, context)
    }

    fn guard_call_args<'local>(
        env: &mut Env<'local>,
        call: &GuardCall,
    ) -> Result<[JString<'local>; 4], BridgeError> {
        Ok([
            string(env, call.server.as_str())?,
            string(env, &call.domain)?,
            string(env, &call.tool)?,
            optional_string(env, call.client_name.as_deref())?,
        ])
    }

    /// `NativeCallbacks.judge(guard, …)`: the verdict, encoded as one letter (`A`llow,
    /// `E`xplicitly allow, `D`eny, ask = `Q`) followed by the reason or prompt, read by
    /// `decode`. `arguments` is `call.arguments_json` as made by [`arguments_string`];
    /// `domain` and `tool` are the Java strings of the call's names; the server's name, the
    /// client's and the concerns (when there are none) come from `names`.
    #[allow(clippy::too_many_arguments)]
    pub fn judge<T>(
        &self,
        env: &mut Env<'_>,
        guard: &JObject<'_>,
        call: &GuardCall,
        arguments: &JString<'_>,
        (domain, tool): (&JavaName<'_>, &JavaName<'_>),
        names: &JavaNames,
        decode: impl FnOnce(&str) -> T,
    ) -> Result<T, BridgeError> {
        let (server, client_name, concerns) = judged_strings(env, call, names)?;
        let [server, domain, tool, client_name] =
            [&server, domain, tool, &client_name].map(|name| as_string(env, name));
        let verdict = typed::judge(
            self,
            env,
            guard,
            &server,
            &domain,
            &tool,
            arguments,
            call.read_only,
            call.destructive,
            call.pid,
            &client_name,
            id_to_jlong(call.connection_id),
            id_to_jlong(call.call_number),
            &concerns,
        )?;
        if verdict.is_null() {
            return Err(BridgeError::Server(
                "the Security Guard returned null instead of a Verdict".to_owned(),
            ));
        }
        // SAFETY: `judge` is declared to return a `String` (the JVM checked the signature when
        // it was resolved), so a non-null result is one; a checked cast would ask the JVM again.
        let verdict = unsafe { env.as_cast_unchecked::<JString>(&verdict) };
        java_strings::read_from_java(env, &verdict, decode)
    }

    /// `NativeCallbacks.confirm(host, …, prompt, confirmationId)`: asks the host's UI; the
    /// answer comes back later through `Native.answerConfirmation`.
    pub fn confirm(
        &self,
        env: &mut Env<'_>,
        host: &JObject<'_>,
        call: &GuardCall,
        prompt: &str,
        confirmation_id: u64,
    ) -> Result<(), BridgeError> {
        let [server, domain, tool, client_name] = Self::guard_call_args(env, call)?;
        let arguments = string(env, &call.arguments_json)?;
        let concerns = string_array(env, &call.concerns)?;
        let prompt = string(env, prompt)?;
        typed::confirm(
            self,
            env,
            host,
            &server,
            &domain,
            &tool,
            &arguments,
            call.read_only,
            call.destructive,
            call.pid,
            &client_name,
            id_to_jlong(call.connection_id),
            id_to_jlong(call.call_number),
            &concerns,
            &prompt,
            id_to_jlong(confirmation_id),
        )
    }

    /// `NativeCallbacks.toolsWithheld(host, server, normalizedName, tools)`.
    pub fn tools_withheld(
        &self,
        env: &mut Env<'_>,
        host: &JObject<'_>,
        server: &str,
        normalized_name: &str,
        tools: &[String],
    ) -> Result<(), BridgeError> {
        let server = string(env, server)?;
        let normalized_name = string(env, normalized_name)?;
        let array = string_array(env, tools)?;
        typed::tools_withheld(self, env, host, &server, &normalized_name, &array)
    }

    /// `NativeCallbacks.unexpectedClient(host, pid, executable, commandLine, answerId)`: shows
    /// the client to the host; the answer comes back later through `Native.answerAdmission`.
    pub fn unexpected_client(
        &self,
        env: &mut Env<'_>,
        host: &JObject<'_>,
        client: &UnexpectedClientCall,
        answer_id: u64,
    ) -> Result<(), BridgeError> {
        let executable = optional_string(env, client.executable.as_deref())?;
        let command_line = string_array(env, &client.command_line)?;
        typed::unexpected_client(
            self,
            env,
            host,
            client.pid,
            &executable,
            &command_line,
            id_to_jlong(answer_id),
        )
    }

    /// `NativeCallbacks.splitModeNotice(host, message, mcpServersJson)`.
    pub fn split_mode_notice(
        &self,
        env: &mut Env<'_>,
        host: &JObject<'_>,
        message: &str,
        mcp_servers_json: &str,
    ) -> Result<(), BridgeError> {
        let message = string(env, message)?;
        let configuration = string(env, mcp_servers_json)?;
        typed::split_mode_notice(self, env, host, &message, &configuration)
    }

    /// `NativeCallbacks.log(sink, level, message)`.
    pub fn log(
        &self,
        env: &mut Env<'_>,
        sink: &JObject<'_>,
        level: i32,
        message: &str,
    ) -> Result<(), BridgeError> {
        let message = string(env, message)?;
        typed::log(self, env, sink, level, &message)
    }

    #[cfg(feature = "testing")]
    /// `NativeCallbacks.throwForTesting(message)`: always throws; proves a Java exception
    /// comes back as a value and is never left pending.
    pub fn throw_for_testing(&self, env: &mut Env<'_>, message: &str) -> Result<(), BridgeError> {
        let message = string(env, message)?;
        typed::throw_for_testing(self, env, &message)
    }
}

#[cfg(test)]
mod tests {
    use super::signature;

    /// The signatures built from the argument lists are the ones `NativeCallbacks` declares
    /// (the JVM checks that at `init`; these pin what the macro builds).
    #[test]
    fn signatures_are_built_from_the_argument_lists() {
        assert_eq!(
            signature::start_call,
            "(Ljava/lang/Object;JJLjava/lang/String;Z)Ljava/lang/Object;"
        );
        assert_eq!(signature::log, "(Ljava/lang/Object;ILjava/lang/String;)V");
        assert_eq!(
            signature::unexpected_client,
            "(Ljava/lang/Object;ILjava/lang/String;[Ljava/lang/String;J)V"
        );
        assert_eq!(
            signature::judge,
            "(Ljava/lang/Object;Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;\
             Ljava/lang/String;ZZILjava/lang/String;JJ[Ljava/lang/String;)Ljava/lang/String;"
        );
    }
}
