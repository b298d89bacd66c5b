//! The rotating bearer token that clients must present.
//!
//! A token is base64url (no padding) of 32 bytes from the OS CSPRNG. The ring
//! holds the current token and, for a short overlap after each rotation, the
//! previous one, so a client that read the token file just before a rotation
//! is not cut off mid-handshake. Nothing older than the previous token is ever
//! accepted. Deadlines use an injectable monotonic [`Clock`].
//!
//! The ring only keeps time and answers questions; a timer task drives
//! [`TokenRing::rotate`] (see [`TokenRing::next_rotation_at`]) and publishes the
//! new token through the runtime directory's token file.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use subtle::{Choice, ConstantTimeEq};

use crate::clock::Clock;

pub use ide_mcp_protocol::contract::{DEFAULT_OVERLAP_MILLIS, ROTATION_MILLIS};

/// Random bytes per token.
pub const TOKEN_BYTES: usize = 32;

/// Length of a token's text: base64url without padding of [`TOKEN_BYTES`].
pub const TOKEN_LEN: usize = 43;

/// The OS random source failed, so no token could be made.
#[derive(Debug, thiserror::Error)]
#[error(
    "could not read {TOKEN_BYTES} random bytes from the operating system for a new token: {0}; \
     check that the OS random source (getrandom(2) or /dev/urandom) is available"
)]
pub struct TokenGenerationError(pub getrandom::Error);

/// Whether `a` and `b` hold the same bytes, in a time that depends on their lengths only.
///
/// The bytes' differences are gathered eight at a time into one word, with no branch on
/// them, and only that word is tested, in constant time. `subtle`'s comparison of slices
/// tests every byte in constant time on its own, which made checking the token of each
/// call cost about a thousand instructions; this is about a tenth of that.
fn same_bytes(a: &[u8], b: &[u8]) -> Choice {
    if a.len() != b.len() {
        return Choice::from(0);
    }
    let mut a_words = a.chunks_exact(8);
    let mut b_words = b.chunks_exact(8);
    let mut difference = 0u64;
    for (a_word, b_word) in (&mut a_words).zip(&mut b_words) {
        difference |= word(a_word) ^ word(b_word);
    }
    for (a_byte, b_byte) in a_words.remainder().iter().zip(b_words.remainder()) {
        difference |= u64::from(a_byte ^ b_byte);
    }
    // The optimiser sees an opaque value, so it cannot turn the gathering into an early exit.
    std::hint::black_box(difference).ct_eq(&0)
}

/// Eight bytes as a word (`bytes` has eight).
fn word(bytes: &[u8]) -> u64 {
    let mut eight = [0; 8];
    eight.copy_from_slice(bytes);
    u64::from_le_bytes(eight)
}

/// A secret bearer token.
///
/// Its `Debug` is redacted so the token cannot reach a log by accident; use
/// [`Token::expose`] where the text is really needed (writing the token file).
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A fresh token from the OS CSPRNG.
    pub fn generate() -> Result<Self, TokenGenerationError> {
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut bytes).map_err(TokenGenerationError)?;
        Ok(Self(URL_SAFE_NO_PAD.encode(bytes)))
    }

    /// The token's text. Never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// Timing of a [`TokenRing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenRingConfig {
    /// Time between rotations. Should be well above zero: a zero period makes
    /// a rotation due at every instant.
    pub rotation: Duration,
    /// How long the previous token is still accepted after a rotation.
    pub overlap: Duration,
}

impl Default for TokenRingConfig {
    fn default() -> Self {
        Self {
            rotation: Duration::from_millis(ROTATION_MILLIS),
            overlap: Duration::from_millis(DEFAULT_OVERLAP_MILLIS),
        }
    }
}

#[derive(Debug)]
struct State {
    current: Token,
    /// The token replaced by the last rotation and the instant it stops being
    /// accepted.
    previous: Option<(Token, Instant)>,
    next_rotation_at: Instant,
}

/// The current token and, during the overlap, the previous one.
///
/// Safe to share between threads (`Arc<TokenRing>`): each call holds an
/// internal mutex for a few comparisons only, never across an `.await`.
pub struct TokenRing {
    config: TokenRingConfig,
    clock: Arc<dyn Clock>,
    state: Mutex<State>,
}

impl TokenRing {
    /// A ring with a freshly generated current token, next rotation one
    /// `config.rotation` from now.
    pub fn new(
        config: TokenRingConfig,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, TokenGenerationError> {
        let now = clock.now();
        let state = State {
            current: Token::generate()?,
            previous: None,
            next_rotation_at: now + config.rotation,
        };
        Ok(Self {
            config,
            clock,
            state: Mutex::new(state),
        })
    }

    /// The token to publish and to accept.
    pub fn current(&self) -> Token {
        self.lock().current.clone()
    }

    /// Replaces the current token with a fresh one and returns it.
    ///
    /// The replaced token stays accepted until `now + overlap`; the one before
    /// it (if still in its own overlap) is dropped at once. The next rotation
    /// becomes due one `rotation` from now.
    pub fn rotate(&self) -> Result<Token, TokenGenerationError> {
        // Generate outside the lock: the syscall need not extend the critical
        // section.
        let fresh = Token::generate()?;
        let now = self.clock.now();
        let mut state = self.lock();
        let old = std::mem::replace(&mut state.current, fresh.clone());
        state.previous = Some((old, now + self.config.overlap));
        state.next_rotation_at = now + self.config.rotation;
        Ok(fresh)
    }

    /// Whether `presented` is the current token, or the previous one before
    /// its overlap ends.
    ///
    /// The comparison is constant-time in the token's content and does the
    /// same work whichever token matches (or whether there is a previous token
    /// at all), so timing reveals neither how much of a guess was right nor
    /// which token it matched. Only the length can end a comparison early, and
    /// the length of every token is the public constant [`TOKEN_LEN`].
    pub fn verify(&self, presented: &str) -> bool {
        let now = self.clock.now();
        let state = self.lock();
        let presented = presented.as_bytes();
        let current = same_bytes(state.current.0.as_bytes(), presented);
        let previous = match &state.previous {
            Some((token, deadline)) => {
                same_bytes(token.0.as_bytes(), presented) & Choice::from(u8::from(now < *deadline))
            }
            // Compare anyway so the absence of a previous token costs the same.
            None => same_bytes(state.current.0.as_bytes(), presented) & Choice::from(0),
        };
        // Bitwise OR of Choices: no short circuit.
        bool::from(current | previous)
    }

    /// Whether the next rotation is due (now is at or past
    /// [`TokenRing::next_rotation_at`]).
    pub fn rotation_due(&self) -> bool {
        let now = self.clock.now();
        now >= self.lock().next_rotation_at
    }

    /// When the next rotation is due, on the ring's clock.
    pub fn next_rotation_at(&self) -> Instant {
        self.lock().next_rotation_at
    }

    /// How long until the next rotation is due (zero if already due), for a
    /// timer task's sleep.
    pub fn time_until_rotation(&self) -> Duration {
        let now = self.clock.now();
        self.lock().next_rotation_at.saturating_duration_since(now)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update of State is a set of plain assignments that cannot
        // panic half-way, so a poisoned lock still guards a consistent value.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for TokenRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenRing")
            .field("config", &self.config)
            .field("next_rotation_at", &self.next_rotation_at())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::clock::ManualClock;
    use std::collections::HashSet;

    fn ring(config: TokenRingConfig) -> (TokenRing, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::new());
        let ring = TokenRing::new(config, clock.clone()).unwrap();
        (ring, clock)
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn bytes_compare_equal_only_when_every_byte_and_the_length_agree() {
        for length in 0..=50 {
            let a: Vec<u8> = (0..length).map(|i| (i * 37 + 11) as u8).collect();
            assert!(bool::from(same_bytes(&a, &a.clone())), "length {length}");
            for at in 0..length {
                for flip in [0x01, 0x80, 0xff] {
                    let mut b = a.clone();
                    b[at] ^= flip;
                    assert!(!bool::from(same_bytes(&a, &b)), "length {length}, at {at}");
                }
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!bool::from(same_bytes(&a, &longer)), "length {length}");
            assert!(!bool::from(same_bytes(&longer, &a)), "length {length}");
        }
    }

    #[test]
    fn current_token_is_accepted() {
        let (ring, _) = ring(TokenRingConfig::default());
        let token = ring.current();
        assert!(ring.verify(token.expose()));
    }

    #[test]
    fn previous_token_is_accepted_until_overlap_ends() {
        let (ring, clock) = ring(TokenRingConfig::default());
        let old = ring.current();
        let new = ring.rotate().unwrap();
        assert_ne!(old, new);
        assert_eq!(ring.current(), new);
        assert!(ring.verify(old.expose()));
        assert!(ring.verify(new.expose()));

        clock.advance(Duration::from_millis(DEFAULT_OVERLAP_MILLIS - 1));
        assert!(
            ring.verify(old.expose()),
            "accepted just before the deadline"
        );

        clock.advance(Duration::from_millis(1));
        assert!(!ring.verify(old.expose()), "rejected at the deadline");
        assert!(ring.verify(new.expose()));

        clock.advance(secs(3600));
        assert!(!ring.verify(old.expose()));
    }

    #[test]
    fn oldest_token_is_rejected_after_two_rotations_even_within_overlap() {
        let (ring, clock) = ring(TokenRingConfig::default());
        let first = ring.current();
        let second = ring.rotate().unwrap();
        clock.advance(secs(1));
        let third = ring.rotate().unwrap();
        assert!(!ring.verify(first.expose()));
        assert!(ring.verify(second.expose()));
        assert!(ring.verify(third.expose()));
    }

    #[test]
    fn wrong_empty_prefix_and_longer_strings_are_rejected() {
        let (ring, _) = ring(TokenRingConfig::default());
        let _ = ring.rotate().unwrap();
        let token = ring.current();
        let text = token.expose();
        let other = Token::generate().unwrap();
        assert!(!ring.verify(other.expose()));
        assert!(!ring.verify(""));
        assert!(!ring.verify(&text[..TOKEN_LEN - 1]));
        assert!(!ring.verify(&text[..1]));
        assert!(!ring.verify(&format!("{text}x")));
        assert!(!ring.verify(&format!("{text}{text}")));
        assert!(!ring.verify(&format!(" {text}")));
        assert!(!ring.verify(&text.to_uppercase()));
    }

    #[test]
    fn tokens_are_43_char_base64url_and_distinct() {
        let mut seen = HashSet::new();
        for _ in 0..100 {
            let token = Token::generate().unwrap();
            let text = token.expose();
            assert_eq!(text.len(), TOKEN_LEN);
            assert!(text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
            assert_eq!(URL_SAFE_NO_PAD.decode(text).unwrap().len(), TOKEN_BYTES);
            assert!(seen.insert(text.to_owned()), "duplicate token");
        }
    }

    #[test]
    fn debug_never_prints_the_token() {
        let (ring, _) = ring(TokenRingConfig::default());
        let _ = ring.rotate().unwrap();
        let token = ring.current();
        let shown = format!("{token:?} {ring:?} {:#?}", Some(&token));
        assert!(!shown.contains(token.expose()));
        assert!(shown.contains("redacted"));
    }

    #[test]
    fn rotation_schedule_follows_the_clock() {
        let config = TokenRingConfig {
            rotation: secs(100),
            overlap: secs(10),
        };
        let (ring, clock) = ring(config);
        let start = clock.now();
        assert!(!ring.rotation_due());
        assert_eq!(ring.next_rotation_at(), start + secs(100));
        assert_eq!(ring.time_until_rotation(), secs(100));

        clock.advance(secs(99));
        assert!(!ring.rotation_due());
        clock.advance(secs(1));
        assert!(ring.rotation_due());
        assert_eq!(ring.time_until_rotation(), Duration::ZERO);

        let old = ring.current();
        let _ = ring.rotate().unwrap();
        assert!(!ring.rotation_due());
        assert_eq!(ring.next_rotation_at(), start + secs(200));
        // The previous token is accepted until exactly one overlap after the
        // rotation (start + 110 s), and not at that instant.
        assert!(ring.verify(old.expose()));
        clock.advance(secs(10) - Duration::from_nanos(1));
        assert!(ring.verify(old.expose()), "accepted until start + 110 s");
        clock.advance(Duration::from_nanos(1));
        assert!(!ring.verify(old.expose()), "rejected from start + 110 s");
    }

    #[test]
    fn ring_is_shareable_across_threads() {
        let (ring, _) = ring(TokenRingConfig::default());
        let ring = Arc::new(ring);
        let token = ring.current();
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let ring = ring.clone();
                let token = token.clone();
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        assert!(ring.verify(token.expose()));
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
    }
}
