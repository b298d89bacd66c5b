//! The only threads that enter Java on their own: a small pool of permanently attached (daemon)
//! callback threads that run Java handlers, guards and host callbacks, and one notifier
//! thread that delivers cancellations and log records and deletes global references.
//!
//! Tokio worker threads never make a JNI call: they hand work to these threads through
//! bounded queues (`job_queue.rs` for the callback threads) and wait for the answer on a
//! oneshot. The threads start with the first
//! server set and live as long as the process; a JVM never unloads this library while
//! classes that use it are alive, and the threads idle asleep on an empty queue at no cost.

use std::cell::Cell;
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crossbeam_channel::{Receiver, Sender};
use jni::objects::{Global, JObject};
use jni::{AttachConfig, Env, JavaVM};

use crate::callbacks;
use crate::error::{panic_message, take_pending_exception, BridgeError};
use crate::java_ref::JavaRef;
use crate::job_queue::JobQueue;

/// How many callback threads run Java handlers.
pub const CALLBACK_THREADS: usize = 4;

/// How many jobs may wait for a callback thread; one more is refused ("the IDE is busy").
pub const JOB_QUEUE_CAPACITY: usize = 256;

/// How many log records may wait for the notifier; more are dropped and counted.
pub const LOG_QUEUE_CAPACITY: usize = 4096;

/// How many local references one job may create before JNI has to grow the frame.
const LOCAL_FRAME_CAPACITY: usize = 64;

/// Work for a callback thread: a closure that gets the thread's JNI environment.
pub type Job = Box<dyn for<'local> FnOnce(&mut Env<'local>) + Send>;

/// One record for the Java log sink.
#[derive(Debug)]
pub struct LogRecord {
    /// 1 = error, 2 = warn, 3 = info, 4 = debug, 5 = trace.
    pub level: i32,
    /// The formatted record.
    pub message: String,
}

/// What the notifier thread does besides logging.
enum Event {
    /// Delete a global reference that was dropped on a thread that may not make JNI calls.
    Release(Global<JObject<'static>>),
    /// Tell a call's Java context that the call was cancelled (runs its `onCancel` actions).
    Cancelled(JavaRef),
}

struct Threads {
    jobs: Arc<JobQueue<Job>>,
    events: Sender<Event>,
    logs: Sender<LogRecord>,
}

static THREADS: OnceLock<Threads> = OnceLock::new();

/// Where log records go; `None` drops them.
static LOG_SINK: Mutex<Option<Arc<JavaRef>>> = Mutex::new(None);

/// Log records dropped because the queue was full.
static DROPPED_LOG_RECORDS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// True while this thread may make JNI calls: on our attached threads always, on a Java
    /// thread for the duration of a native method.
    static ON_JNI_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Whether the current thread may make JNI calls right now.
pub fn on_jni_thread() -> bool {
    ON_JNI_THREAD.with(Cell::get)
}

/// Marks the current thread as able to make JNI calls until the mark is dropped (used by
/// every native method, whose thread the JVM attached for us).
pub struct JniThreadMark {
    was: bool,
}

impl JniThreadMark {
    /// Sets the mark, remembering what it was (a native method may be re-entered).
    pub fn enter() -> Self {
        JniThreadMark {
            was: ON_JNI_THREAD.with(|mark| mark.replace(true)),
        }
    }
}

impl Drop for JniThreadMark {
    fn drop(&mut self) {
        let was = self.was;
        ON_JNI_THREAD.with(|mark| mark.set(was));
    }
}

/// Starts the callback pool and the notifier, once per process. Called from a native method,
/// so the JVM singleton is known.
pub fn ensure_started() -> Result<(), BridgeError> {
    if THREADS.get().is_some() {
        return Ok(());
    }
    let vm = JavaVM::singleton()?;
    let jobs = Arc::new(JobQueue::<Job>::new(JOB_QUEUE_CAPACITY));
    let (events, event_queue) = crossbeam_channel::unbounded::<Event>();
    let (logs, log_queue) = crossbeam_channel::bounded::<LogRecord>(LOG_QUEUE_CAPACITY);
    // Two native calls may race here; only the winner's queues are kept, and only the winner
    // spawns threads.
    let job_queue = Arc::clone(&jobs);
    if THREADS.set(Threads { jobs, events, logs }).is_err() {
        return Ok(());
    }
    for index in 0..CALLBACK_THREADS {
        let name = format!("ide-mcp-callback-{index}");
        let queue = Arc::clone(&job_queue);
        let vm = vm.clone();
        std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || callback_thread(vm, name, queue))
            .map_err(|error| {
                BridgeError::Server(format!("could not start a callback thread: {error}"))
            })?;
    }
    std::thread::Builder::new()
        .name("ide-mcp-notifier".to_owned())
        .spawn(move || notifier_thread(vm, event_queue, log_queue))
        .map_err(|error| {
            BridgeError::Server(format!("could not start the notifier thread: {error}"))
        })?;
    Ok(())
}

/// Queues a job for a callback thread without blocking. A full queue gives the job back, so
/// the caller can answer "busy" (and the job's references are released properly).
pub fn submit(job: Job) -> Result<(), Job> {
    let Some(threads) = THREADS.get() else {
        return Err(job);
    };
    threads.jobs.try_push(job)
}

/// Asks the notifier to tell a call's Java context that it was cancelled.
pub fn notify_cancelled(context: JavaRef) {
    if let Some(threads) = THREADS.get() {
        let _ = threads.events.send(Event::Cancelled(context));
    }
}

/// Hands a global reference to the notifier for deletion.
pub fn release_on_jni_thread(global: Global<JObject<'static>>) {
    match THREADS.get() {
        Some(threads) => {
            if let Err(error) = threads.events.send(Event::Release(global)) {
                // The notifier is gone (never happens while the process lives); leaking one
                // reference beats a JNI call from a thread that must not make one.
                if let Event::Release(global) = error.into_inner() {
                    std::mem::forget(global);
                }
            }
        }
        None => std::mem::forget(global),
    }
}

/// Queues a log record; drops it (and counts the drop) when the queue is full.
pub fn push_log(record: LogRecord) {
    let Some(threads) = THREADS.get() else {
        return;
    };
    if threads.logs.try_send(record).is_err() {
        DROPPED_LOG_RECORDS.fetch_add(1, Ordering::Relaxed);
    }
}

/// How many log records were dropped because the Java sink could not keep up.
pub fn dropped_log_records() -> u64 {
    DROPPED_LOG_RECORDS.load(Ordering::Relaxed)
}

/// Replaces the Java log sink; `None` drops records from now on.
pub fn set_log_sink(sink: Option<JavaRef>) {
    let previous = {
        let mut current = LOG_SINK
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        std::mem::replace(&mut *current, sink.map(Arc::new))
    };
    // Dropped outside the lock: deleting the reference may be a JNI call.
    drop(previous);
}

/// Whether a log sink is set, so the tracing layer can skip formatting when nobody listens.
pub fn has_log_sink() -> bool {
    LOG_SINK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .is_some()
}

/// Attaches the current thread permanently, as a daemon thread.
///
/// These threads idle on a queue for the life of the process; as ordinary (non-daemon) Java
/// threads they would keep a headless JVM from exiting when its `main` returns. jni 0.22 has
/// no daemon attachment of its own, so this is the one raw invocation call of the crate; the
/// attachment is then borrowed by `attach_current_thread`, which leaves an existing
/// attachment alone. The threads never exit, so they are never detached.
fn attach_as_daemon(vm: &JavaVM, name: &str) -> Result<(), String> {
    let name = CString::new(name).map_err(|error| error.to_string())?;
    let mut args = jni::sys::JavaVMAttachArgs {
        version: jni::sys::JNI_VERSION_1_8,
        name: name.as_ptr().cast_mut(),
        group: std::ptr::null_mut(),
    };
    let mut env: *mut c_void = std::ptr::null_mut();
    let raw = vm.get_raw();
    // SAFETY: `raw` is the process's live JavaVM (from `JavaVM::singleton`), whose invocation
    // table is valid for the life of the process; `env` and `args` outlive the call, and the
    // name is a NUL-terminated ASCII (so modified UTF-8) string.
    let code = unsafe {
        ((**raw).v1_4.AttachCurrentThreadAsDaemon)(
            raw,
            &mut env,
            (&mut args as *mut jni::sys::JavaVMAttachArgs).cast(),
        )
    };
    if code == jni::sys::JNI_OK {
        Ok(())
    } else {
        Err(format!("AttachCurrentThreadAsDaemon returned {code}"))
    }
}

fn callback_thread(vm: JavaVM, name: String, queue: Arc<JobQueue<Job>>) {
    ON_JNI_THREAD.with(|mark| mark.set(true));
    if let Err(error) = attach_as_daemon(&vm, &name) {
        tracing::error!(%error, thread = %name, "a callback thread could not attach to the JVM");
        return;
    }
    loop {
        let job = queue.pop();
        let attached = vm.attach_current_thread_with_config(
            AttachConfig::new,
            Some(LOCAL_FRAME_CAPACITY),
            |env| -> Result<(), jni::errors::Error> {
                run_guarded(env, "a callback job", job);
                Ok(())
            },
        );
        if let Err(error) = attached {
            tracing::error!(%error, thread = %name, "a callback thread could not attach to the JVM");
        }
    }
}

/// Runs `work` so that neither a panic nor a pending exception escapes it.
fn run_guarded<'local>(env: &mut Env<'local>, what: &str, work: impl FnOnce(&mut Env<'local>)) {
    let outcome = catch_unwind(AssertUnwindSafe(|| work(&mut *env)));
    if let Some(thrown) = take_pending_exception(env) {
        tracing::warn!(exception = %thrown, "{what} left a Java exception pending; it was cleared");
    }
    if let Err(payload) = outcome {
        tracing::error!(
            panic = %panic_message(payload.as_ref()),
            "{what} panicked; the callback thread goes on"
        );
    }
}

fn notifier_thread(vm: JavaVM, events: Receiver<Event>, logs: Receiver<LogRecord>) {
    ON_JNI_THREAD.with(|mark| mark.set(true));
    if let Err(error) = attach_as_daemon(&vm, "ide-mcp-notifier") {
        eprintln!("ide-mcp: the notifier thread could not attach to the JVM: {error}");
        return;
    }
    loop {
        let work: Box<dyn for<'local> FnOnce(&mut Env<'local>)> = crossbeam_channel::select! {
            recv(events) -> event => match event {
                Ok(Event::Release(global)) => Box::new(move |_env: &mut Env<'_>| drop(global)),
                Ok(Event::Cancelled(context)) => Box::new(move |env: &mut Env<'_>| deliver_cancellation(env, &context)),
                Err(_) => return,
            },
            recv(logs) -> record => match record {
                Ok(record) => Box::new(move |env: &mut Env<'_>| deliver_log(env, record)),
                Err(_) => return,
            },
        };
        let _ = vm.attach_current_thread_with_config(
            AttachConfig::new,
            Some(LOCAL_FRAME_CAPACITY),
            |env| -> Result<(), jni::errors::Error> {
                run_guarded(env, "the notifier", work);
                Ok(())
            },
        );
    }
}

fn deliver_cancellation(env: &mut Env<'_>, context: &JavaRef) {
    let result = callbacks::get().and_then(|java| java.fire_cancelled(env, context.as_obj()));
    if let Err(error) = result {
        tracing::warn!(%error, "an onCancel action of a Java handler failed");
    }
}

fn deliver_log(env: &mut Env<'_>, record: LogRecord) {
    let sink = LOG_SINK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone();
    let Some(sink) = sink else {
        return;
    };
    let result = callbacks::get()
        .and_then(|java| java.log(env, sink.as_obj(), record.level, &record.message));
    if let Err(error) = result {
        // Not logged through tracing: a failing sink would feed itself.
        eprintln!("ide-mcp: the Java log sink failed: {error}");
    }
}
