//! Tracing output for the Java log sink.
//!
//! Events are formatted on whatever thread emits them (usually a tokio worker) and pushed
//! into a bounded queue; the notifier thread, which is attached to the JVM, hands them to
//! `LogSink.log`. A full queue drops the record and counts the drop, so a slow sink can never
//! slow the servers down.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use tracing::field::{Field, Visit};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

use crate::threads::{self, LogRecord};

/// The most verbose level forwarded: 0 = off, 1 = error … 5 = trace. Info by default.
static MAX_LEVEL: AtomicU8 = AtomicU8::new(3);

static INSTALLED: OnceLock<()> = OnceLock::new();

/// The number Java's `LogSink.Level` uses for a tracing level.
pub fn level_number(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

/// Sets the most verbose level forwarded (0 turns forwarding off).
pub fn set_max_level(level: u8) {
    MAX_LEVEL.store(level.min(5), Ordering::Relaxed);
}

/// Makes the layer the process's tracing subscriber, once. When something else in this copy
/// of the library already installed one, that one stays and this does nothing.
pub fn install_once() {
    INSTALLED.get_or_init(|| {
        let subscriber = tracing_subscriber::registry().with(JavaLogLayer);
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}

/// Formats events and queues them for the notifier thread.
#[derive(Debug, Default)]
pub struct JavaLogLayer;

impl<S: Subscriber> Layer<S> for JavaLogLayer {
    fn register_callsite(&self, _metadata: &'static Metadata<'static>) -> Interest {
        // The level can change at run time, so every callsite is asked each time.
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>, _context: Context<'_, S>) -> bool {
        level_number(metadata.level()) <= MAX_LEVEL.load(Ordering::Relaxed)
    }

    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        if !threads::has_log_sink() {
            return;
        }
        let metadata = event.metadata();
        threads::push_log(LogRecord {
            level: i32::from(level_number(metadata.level())),
            message: format_event(metadata.target(), event),
        });
    }
}

/// `message key=value …`, with the target in front: what a line in idea.log needs.
fn format_event(target: &str, event: &Event<'_>) -> String {
    let mut visitor = FieldWriter::default();
    event.record(&mut visitor);
    let mut line = format!("[{target}] {}", visitor.message);
    line.push_str(&visitor.fields);
    line
}

#[derive(Default)]
struct FieldWriter {
    message: String,
    fields: String,
}

impl Visit for FieldWriter {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={}", field.name(), value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={:?}", field.name(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_to_the_numbers_java_uses() {
        assert_eq!(level_number(&Level::ERROR), 1);
        assert_eq!(level_number(&Level::TRACE), 5);
    }

    #[test]
    fn an_event_formats_as_target_message_and_fields() {
        struct Capture(std::sync::Mutex<Vec<String>>);
        impl<S: Subscriber> Layer<S> for &'static Capture {
            fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
                let line = format_event(event.metadata().target(), event);
                self.0
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .push(line);
            }
        }
        let capture: &'static Capture = Box::leak(Box::new(Capture(Default::default())));
        let subscriber = tracing_subscriber::registry().with(capture);
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(target: "ide_mcp", path = "a b", count = 3, "listening");
        });
        let lines = capture
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone();
        assert_eq!(
            lines,
            vec!["[ide_mcp] listening path=a b count=3".to_owned()]
        );
    }
}
