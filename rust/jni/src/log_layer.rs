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
use tracing::level_filters::LevelFilter;
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

/// Sets the most verbose level forwarded (0 turns forwarding off), and has every callsite
/// asked again whether it is wanted: each one remembers the answer, so an event below the level
/// costs its callsite one comparison instead of a question to the subscriber every time.
pub fn set_max_level(level: u8) {
    MAX_LEVEL.store(level.min(5), Ordering::Relaxed);
    tracing::callsite::rebuild_interest_cache();
}

/// Whether events at `level` are forwarded at the current most verbose level.
fn wanted(level: &Level) -> bool {
    level_number(level) <= MAX_LEVEL.load(Ordering::Relaxed)
}

/// The current most verbose level as tracing's filter, for its global check before a
/// callsite is looked at.
fn max_level_filter() -> LevelFilter {
    match MAX_LEVEL.load(Ordering::Relaxed) {
        0 => LevelFilter::OFF,
        1 => LevelFilter::ERROR,
        2 => LevelFilter::WARN,
        3 => LevelFilter::INFO,
        4 => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    }
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
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        // Kept by the callsite until the level changes (`set_max_level` has every callsite
        // registered again).
        if wanted(metadata.level()) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>, _context: Context<'_, S>) -> bool {
        wanted(metadata.level())
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(max_level_filter())
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
    fn a_level_change_reaches_callsites_that_already_answered() {
        struct Count(std::sync::atomic::AtomicUsize);
        impl<S: Subscriber> Layer<S> for &'static Count {
            fn on_event(&self, _event: &Event<'_>, _context: Context<'_, S>) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let count: &'static Count = Box::leak(Box::new(Count(Default::default())));
        let subscriber = tracing_subscriber::registry()
            .with(JavaLogLayer)
            .with(count);
        // One callsite, asked at each level: it remembers its answer until the level changes.
        fn one_info_event() {
            tracing::info!("judged");
        }
        let seen = || count.0.load(Ordering::Relaxed);
        tracing::subscriber::with_default(subscriber, || {
            set_max_level(2);
            one_info_event();
            assert_eq!(
                seen(),
                0,
                "an info event at the warn level is not forwarded"
            );
            set_max_level(3);
            one_info_event();
            assert_eq!(
                seen(),
                1,
                "the callsite is asked again when the level rises"
            );
            set_max_level(2);
            one_info_event();
            assert_eq!(seen(), 1, "and again when it falls");
            set_max_level(3);
        });
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
