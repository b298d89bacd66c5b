//! The Java methods this library calls, resolved once through the plugin's class loader.
//!
//! Every call into Java goes to a static method of `dev.lain.claudejb.mcp.NativeCallbacks`.
//! The class is loaded through the class loader of `Native` (the class whose native method
//! first starts the servers), not with `FindClass` from one of our own threads, which would
//! search the system class loader and miss a plugin's classes. Its parameters are typed
//! `Object` and cast in Java, so a mistake shows up as a `ClassCastException`, never as a
//! crash. After each call a thrown exception is taken, cleared and returned as
//! [`BridgeError::Java`].

use std::sync::OnceLock;

use jni::objects::{Global, JClass, JObject, JObjectArray, JStaticMethodID, JString, JValue};
use jni::refs::LoaderContext;
use jni::signature::{JavaType, Primitive, ReturnType};
use jni::sys::jvalue;
use jni::{jni_sig, jni_str, Env, JValueOwned};

use crate::error::{after_java_call, BridgeError};

/// The cached class and method ids.
pub struct JavaCallbacks {
    class: Global<JClass<'static>>,
    new_call_context: JStaticMethodID,
    invoke_handler: JStaticMethodID,
    fire_cancelled: JStaticMethodID,
    judge: JStaticMethodID,
    confirm: JStaticMethodID,
    tools_withheld: JStaticMethodID,
    unexpected_client: JStaticMethodID,
    split_mode_notice: JStaticMethodID,
    log: JStaticMethodID,
    #[cfg(feature = "testing")]
    throw_for_testing: JStaticMethodID,
}

static CALLBACKS: OnceLock<JavaCallbacks> = OnceLock::new();

/// What a guard or a confirmation is asked about, owned so it can travel to a callback thread.
#[derive(Clone, Debug)]
pub struct GuardCall {
    /// `code`, `run`, `vcs` or `ops`.
    pub server: String,
    /// The tool's domain.
    pub domain: String,
    /// The tool's name.
    pub tool: String,
    /// The validated arguments, as JSON.
    pub arguments_json: String,
    /// The tool's read-only hint.
    pub read_only: bool,
    /// The tool's destructive hint.
    pub destructive: bool,
    /// The client's process id, or -1 when unknown.
    pub pid: i32,
    /// The name the client gave, if any.
    pub client_name: Option<String>,
    /// The connection's number within the server set.
    pub connection_id: u64,
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
    let callbacks = JavaCallbacks {
        new_call_context: env.get_static_method_id(
            &class,
            jni_str!("newCallContext"),
            jni_sig!("(JLjava/lang/String;)Ljava/lang/Object;"),
        )?,
        invoke_handler: env.get_static_method_id(
            &class,
            jni_str!("invokeHandler"),
            jni_sig!("(Ljava/lang/Object;Ljava/lang/Object;)V"),
        )?,
        fire_cancelled: env.get_static_method_id(
            &class,
            jni_str!("fireCancelled"),
            jni_sig!("(Ljava/lang/Object;)V"),
        )?,
        judge: env.get_static_method_id(
            &class,
            jni_str!("judge"),
            jni_sig!("(Ljava/lang/Object;Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;ZZILjava/lang/String;J[Ljava/lang/String;)Ljava/lang/String;"),
        )?,
        confirm: env.get_static_method_id(
            &class,
            jni_str!("confirm"),
            jni_sig!("(Ljava/lang/Object;Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;ZZILjava/lang/String;J[Ljava/lang/String;Ljava/lang/String;J)V"),
        )?,
        tools_withheld: env.get_static_method_id(
            &class,
            jni_str!("toolsWithheld"),
            jni_sig!("(Ljava/lang/Object;Ljava/lang/String;Ljava/lang/String;[Ljava/lang/String;)V"),
        )?,
        unexpected_client: env.get_static_method_id(
            &class,
            jni_str!("unexpectedClient"),
            jni_sig!("(Ljava/lang/Object;ILjava/lang/String;[Ljava/lang/String;J)V"),
        )?,
        split_mode_notice: env.get_static_method_id(
            &class,
            jni_str!("splitModeNotice"),
            jni_sig!("(Ljava/lang/Object;Ljava/lang/String;Ljava/lang/String;)V"),
        )?,
        log: env.get_static_method_id(
            &class,
            jni_str!("log"),
            jni_sig!("(Ljava/lang/Object;ILjava/lang/String;)V"),
        )?,
        #[cfg(feature = "testing")]
        throw_for_testing: env.get_static_method_id(
            &class,
            jni_str!("throwForTesting"),
            jni_sig!("(Ljava/lang/String;)V"),
        )?,
        class,
    };
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

const VOID: ReturnType = JavaType::Primitive(Primitive::Void);
const OBJECT: ReturnType = JavaType::Object;

fn string<'local>(env: &mut Env<'local>, text: &str) -> Result<JString<'local>, BridgeError> {
    Ok(JString::from_str(env, text)?)
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

fn string_array<'local>(
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

fn id_to_jlong(id: u64) -> i64 {
    // Ids count up from 1 and never come near 2^63; the cast keeps them positive.
    i64::try_from(id).unwrap_or(i64::MAX)
}

impl JavaCallbacks {
    /// Calls one cached static method.
    ///
    /// Safety of the unchecked call: every method id was resolved above with the signature
    /// that its callers here build `args` for, and `ret` matches that signature's return type.
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

    /// `NativeCallbacks.newCallContext(callId, argumentsJson)`: the `ToolCallContext`.
    pub fn new_call_context<'local>(
        &self,
        env: &mut Env<'local>,
        call_id: u64,
        arguments_json: &str,
    ) -> Result<JObject<'local>, BridgeError> {
        let arguments = string(env, arguments_json)?;
        let args = [
            JValue::Long(id_to_jlong(call_id)).as_jni(),
            JValue::Object(&arguments).as_jni(),
        ];
        Ok(self.call(env, self.new_call_context, OBJECT, &args)?.l()?)
    }

    /// `NativeCallbacks.invokeHandler(handler, context)`: runs a Java `ToolHandler`.
    pub fn invoke_handler(
        &self,
        env: &mut Env<'_>,
        handler: &JObject<'_>,
        context: &JObject<'_>,
    ) -> Result<(), BridgeError> {
        let args = [
            JValue::Object(handler).as_jni(),
            JValue::Object(context).as_jni(),
        ];
        self.call(env, self.invoke_handler, VOID, &args).map(drop)
    }

    /// `NativeCallbacks.fireCancelled(context)`: marks the context cancelled and runs its
    /// `onCancel` actions.
    pub fn fire_cancelled(
        &self,
        env: &mut Env<'_>,
        context: &JObject<'_>,
    ) -> Result<(), BridgeError> {
        let args = [JValue::Object(context).as_jni()];
        self.call(env, self.fire_cancelled, VOID, &args).map(drop)
    }

    fn guard_call_args<'local>(
        env: &mut Env<'local>,
        call: &GuardCall,
    ) -> Result<[JObject<'local>; 5], BridgeError> {
        Ok([
            string(env, &call.server)?.into(),
            string(env, &call.domain)?.into(),
            string(env, &call.tool)?.into(),
            string(env, &call.arguments_json)?.into(),
            optional_string(env, call.client_name.as_deref())?.into(),
        ])
    }

    /// `NativeCallbacks.judge(guard, …)`: the verdict, encoded as one letter (`A`llow,
    /// `E`xplicitly allow, `D`eny, ask = `Q`) followed by the reason or prompt.
    pub fn judge(
        &self,
        env: &mut Env<'_>,
        guard: &JObject<'_>,
        call: &GuardCall,
    ) -> Result<String, BridgeError> {
        let [server, domain, tool, arguments, client_name] = Self::guard_call_args(env, call)?;
        let concerns = string_array(env, &call.concerns)?;
        let args = [
            JValue::Object(guard).as_jni(),
            JValue::Object(&server).as_jni(),
            JValue::Object(&domain).as_jni(),
            JValue::Object(&tool).as_jni(),
            JValue::Object(&arguments).as_jni(),
            JValue::Bool(call.read_only).as_jni(),
            JValue::Bool(call.destructive).as_jni(),
            JValue::Int(call.pid).as_jni(),
            JValue::Object(&client_name).as_jni(),
            JValue::Long(id_to_jlong(call.connection_id)).as_jni(),
            JValue::Object(&concerns).as_jni(),
        ];
        let verdict = self.call(env, self.judge, OBJECT, &args)?.l()?;
        if verdict.is_null() {
            return Err(BridgeError::Server(
                "the Security Guard returned null instead of a Verdict".to_owned(),
            ));
        }
        let verdict = env.cast_local::<JString>(verdict)?;
        Ok(verdict.try_to_string(env)?)
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
        let [server, domain, tool, arguments, client_name] = Self::guard_call_args(env, call)?;
        let concerns = string_array(env, &call.concerns)?;
        let prompt = string(env, prompt)?;
        let args = [
            JValue::Object(host).as_jni(),
            JValue::Object(&server).as_jni(),
            JValue::Object(&domain).as_jni(),
            JValue::Object(&tool).as_jni(),
            JValue::Object(&arguments).as_jni(),
            JValue::Bool(call.read_only).as_jni(),
            JValue::Bool(call.destructive).as_jni(),
            JValue::Int(call.pid).as_jni(),
            JValue::Object(&client_name).as_jni(),
            JValue::Long(id_to_jlong(call.connection_id)).as_jni(),
            JValue::Object(&concerns).as_jni(),
            JValue::Object(&prompt).as_jni(),
            JValue::Long(id_to_jlong(confirmation_id)).as_jni(),
        ];
        self.call(env, self.confirm, VOID, &args).map(drop)
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
        let args = [
            JValue::Object(host).as_jni(),
            JValue::Object(&server).as_jni(),
            JValue::Object(&normalized_name).as_jni(),
            JValue::Object(&array).as_jni(),
        ];
        self.call(env, self.tools_withheld, VOID, &args).map(drop)
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
        let args = [
            JValue::Object(host).as_jni(),
            JValue::Int(client.pid).as_jni(),
            JValue::Object(&executable).as_jni(),
            JValue::Object(&command_line).as_jni(),
            JValue::Long(id_to_jlong(answer_id)).as_jni(),
        ];
        self.call(env, self.unexpected_client, VOID, &args)
            .map(drop)
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
        let args = [
            JValue::Object(host).as_jni(),
            JValue::Object(&message).as_jni(),
            JValue::Object(&configuration).as_jni(),
        ];
        self.call(env, self.split_mode_notice, VOID, &args)
            .map(drop)
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
        let args = [
            JValue::Object(sink).as_jni(),
            JValue::Int(level).as_jni(),
            JValue::Object(&message).as_jni(),
        ];
        self.call(env, self.log, VOID, &args).map(drop)
    }

    #[cfg(feature = "testing")]
    /// `NativeCallbacks.throwForTesting(message)`: always throws; proves a Java exception
    /// comes back as a value and is never left pending.
    pub fn throw_for_testing(&self, env: &mut Env<'_>, message: &str) -> Result<(), BridgeError> {
        let message = string(env, message)?;
        let args = [JValue::Object(&message).as_jni()];
        self.call(env, self.throw_for_testing, VOID, &args)
            .map(drop)
    }
}
