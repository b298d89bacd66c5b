//! A monotonic clock that can be replaced in tests.
//!
//! Token deadlines are measured on a monotonic clock so that a wall-clock jump
//! (NTP, suspend, a user changing the date) can neither extend nor cut short
//! the life of a token. Code that needs "now" takes an `Arc<dyn Clock>` so a
//! test can drive time by hand with [`ManualClock`] instead of sleeping.

use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A source of monotonic time.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current instant; never goes backwards.
    fn now(&self) -> Instant;
}

/// The operating system's monotonic clock ([`Instant::now`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemMonotonicClock;

impl Clock for SystemMonotonicClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that only moves when told to, for tests.
///
/// It starts at the real instant of its creation and then advances only by
/// [`ManualClock::advance`]. Share it as `Arc<ManualClock>`: keep one handle to
/// advance it and pass a clone (coerced to `Arc<dyn Clock>`) to the code under
/// test.
#[derive(Debug)]
pub struct ManualClock {
    start: Instant,
    elapsed: Mutex<Duration>,
}

impl ManualClock {
    /// A clock standing at the current real instant.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            elapsed: Mutex::new(Duration::ZERO),
        }
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        // The guarded value is a plain Duration, always valid, so a poisoned
        // lock (a panic elsewhere while holding it) is safe to reuse.
        let mut elapsed = self.elapsed.lock().unwrap_or_else(PoisonError::into_inner);
        *elapsed += by;
    }

    /// How far the clock has been advanced since it was created.
    pub fn elapsed(&self) -> Duration {
        *self.elapsed.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + self.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_advanced() {
        let clock = ManualClock::new();
        let t0 = clock.now();
        assert_eq!(clock.now(), t0);
        clock.advance(Duration::from_secs(5));
        assert_eq!(clock.now(), t0 + Duration::from_secs(5));
        assert_eq!(clock.elapsed(), Duration::from_secs(5));
    }

    #[test]
    fn system_clock_does_not_go_backwards() {
        let clock = SystemMonotonicClock;
        let a = clock.now();
        let b = clock.now();
        assert!(b >= a);
    }
}
