//! The JNI bridge: lets a JVM (an IDE plugin, a headless host, a test) start ide-mcp servers
//! and serve tools from Java handlers.
//!
//! The Java side is `dev.lain.claudejb.mcp` in `jvm-glue/`; `docs/JNI.md` lists every native
//! method, its thread and its exceptions.
//!
//! Architecture invariants:
//! - This is the only crate that depends on `jni`.
//! - No tokio worker thread makes a JNI call. Java handlers, guards and host callbacks run on
//!   a small pool of permanently attached callback threads fed by a bounded queue; log
//!   records, cancellations and reference deletions go through one attached notifier thread.
//! - A panic never crosses into the JVM, and a Java exception never stays pending on a thread
//!   of ours: every native method goes through one wrapper that catches panics and maps
//!   errors to exceptions, and every call into Java takes and clears what it threw.
//! - Handles are keys into a table, never pointers.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod callbacks;
mod error;
mod handles;
mod java_handler;
mod java_names;
mod java_ref;
mod java_strings;
mod job_queue;
mod log_layer;
mod native;
mod options;
mod page_delivery;
mod pending;
mod project_files;
mod self_description;
#[cfg(feature = "testing")]
mod testing;
mod threads;

pub use error::{BridgeError, JavaThrowable};
