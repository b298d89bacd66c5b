//! A short look at the socket for the client's next message, on the connection's own thread,
//! before the connection waits for it through the runtime — made only for a client that has
//! been sending its next message right after each reply.
//!
//! Why: a connection that waits through the runtime parks its worker in `epoll_wait`, and when
//! nothing else runs there its CPU goes idle. The next message then wakes that worker on an
//! idle CPU, which on a virtual machine whose idle CPUs halt costs more than the whole call
//! (docs/BENCHMARKS.md measures it). A client that makes one call after another (a script, a
//! test suite, an agent working through a batch) pays it on every call. Looking at the socket
//! for a few tens of microseconds after the reply takes such a client's next message without
//! any wake-up.
//!
//! What it costs, and to whom:
//! - **Nothing to a client that pauses between calls** (an agent thinking for seconds): the
//!   look is made only when the client's last message came within the window (the
//!   `socketLookMicros` option, 50 µs by default: about four times what a wake-up of a halted
//!   CPU costs on the machines measured, long enough for a client's turnaround, short enough
//!   that a look which finds nothing wastes little; zero never looks) of the
//!   connection going idle, and a look that finds nothing turns it off until a message comes
//!   that quickly again. An idle connection never looks.
//! - **A worker held for one client at a time**: only the connection that read last in its
//!   server set looks, and a look ends as soon as another connection reads. Each look is
//!   charged to the task's turn (Tokio's cooperative budget, in `connection/mod.rs`), so a
//!   message of another connection that comes while one client keeps the looks busy waits at
//!   most until that turn ends.
//! - **At most the window of one CPU** per reply, and only while the client keeps answering
//!   within it; within the window, a look lasts a few times as long as the client's messages
//!   usually take to come, so that a client that shares the worker's CPU (a loaded machine)
//!   is not kept waiting for the CPU by a look for its own message for the whole window.
//! - **The CPU given away between two looks.** A client that shares the worker's CPU was
//!   woken by the reply, but the scheduler lets a running thread use up its time slice
//!   before a woken one runs, so a look that only spun kept that client off the CPU until the
//!   look ended, and the message it was to send came after it. Each pause between two looks
//!   yields the CPU instead: such a client runs at once, and its message is there at the next
//!   look; with no other thread waiting for that CPU, a yield returns at once. A yield may
//!   hand the CPU to a busy thread for the rest of its slice, but a look that spins loses the
//!   CPU to that thread when its own slice ends all the same: with two CPU-bound threads
//!   beside the server, calls were no slower, at the median or in the tail, with the yields
//!   than without (docs/BENCHMARKS.md).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::BytesMut;

use crate::platform::{recv_now_on_half, StreamReadHalf};

/// Within the window, a look lasts this many times the client's usual wait (`usual_wait`):
/// long enough for the spread of a client's turnaround, short enough that a client kept off
/// the CPU by the look itself gets it back soon. That happens when client and worker share a
/// CPU (a loaded machine, or one CPU): the client's wake-up by the reply is queued behind the
/// look, and its next message comes only once the look gives the CPU up.
const LOOK_MARGIN: u32 = 4;

/// The shortest look (unless the window is shorter): below this, a client's spread is mostly
/// the machine's (interrupts, the timer), not the client's.
const SHORTEST_LOOK: Duration = Duration::from_micros(10);

/// What a look at the socket found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Looked {
    /// Bytes of the next message, now at the end of the read buffer.
    Bytes,
    /// The client closed its side.
    Closed,
    /// Nothing (or no look was made): wait through the runtime.
    Nothing,
}

/// One connection's state for looking ahead.
pub(super) struct RequestWatch {
    /// The connection, as written to its server set's last reader.
    connection_id: u64,
    /// The longest a look lasts, and how soon after the connection went idle a message must
    /// come for the next idle moment to be looked through.
    window: Duration,
    /// Whether the client's last message came within the window of the connection going
    /// idle: the next idle moment is looked through.
    prompt: bool,
    /// When the connection last went idle, until a message comes.
    idle_since: Option<Instant>,
    /// How soon after the connection goes idle this client's next message usually comes,
    /// at most the window, as looks found it: it rises at once to a longer wait and falls
    /// an eighth of the way to a shorter one at a time, so one quick message does not cut
    /// the next look short; a message well after a look that gave up raises it too.
    usual_wait: Duration,
    /// How long the look of the connection's current idle moment lasted, when it found
    /// nothing.
    gave_up_after: Option<Duration>,
}

impl RequestWatch {
    pub(super) fn new(connection_id: u64, window: Duration) -> Self {
        RequestWatch {
            connection_id,
            window,
            prompt: false,
            idle_since: None,
            usual_wait: window,
            gave_up_after: None,
        }
    }

    /// Bytes came through the runtime's wait: note this connection as its set's last reader,
    /// and whether they came soon enough after it went idle for a look to have caught them.
    pub(super) fn arrived(&mut self, last_reader: &AtomicU64) {
        self.note_reader(last_reader);
        if let Some(idle_since) = self.idle_since.take() {
            let waited = idle_since.elapsed();
            self.prompt = waited <= self.window;
            // A message that comes well after a look gave up says the client has become
            // slower, and the next look waits longer. One that comes soon after may have been
            // kept back by the look itself (see `LOOK_MARGIN`), and one that comes when no
            // look was made waited for the worker's wake-up too: neither says how long the
            // client takes.
            let slower = self
                .gave_up_after
                .take()
                .is_some_and(|looked| waited >= looked.saturating_mul(2));
            if self.prompt && slower {
                self.usual_wait = self.usual_wait.max(waited);
            }
        }
    }

    /// The connection has nothing left to do but wait for the socket (nothing buffered,
    /// nothing in flight, nothing to write): looks at the socket first, for at most the
    /// window, when the client has been prompt and no other connection of the set has read
    /// since this one. Reads what it finds into `buffer`.
    pub(super) fn before_waiting(
        &mut self,
        socket: &StreamReadHalf,
        buffer: &mut BytesMut,
        last_reader: &AtomicU64,
    ) -> Looked {
        let started = Instant::now();
        self.idle_since = Some(started);
        if !self.would_look(last_reader) {
            return Looked::Nothing;
        }
        // Straight into the connection's buffer, whose room is not zeroed first.
        super::make_read_room(buffer);
        let look_for = self.look_length();
        loop {
            match recv_now_on_half(socket, buffer) {
                Ok(0) => return Looked::Closed,
                Ok(_) => {
                    self.idle_since = None;
                    self.found_after(started.elapsed());
                    return Looked::Bytes;
                }
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
                // The runtime's read meets the same error and says what it was.
                Err(_) => return Looked::Nothing,
            }
            if last_reader.load(Ordering::Relaxed) != self.connection_id {
                // Another connection has work: leave the worker to it. The client may still
                // be prompt; the next message says.
                return Looked::Nothing;
            }
            if started.elapsed() >= look_for {
                self.gave_up_after = Some(look_for);
                self.prompt = false;
                return Looked::Nothing;
            }
            pause_between_looks();
        }
    }

    /// Whether [`RequestWatch::before_waiting`] would look now: the client has been prompt,
    /// looking is on, and no other connection of the set has read since this one.
    pub(super) fn would_look(&self, last_reader: &AtomicU64) -> bool {
        self.prompt
            && !self.window.is_zero()
            && last_reader.load(Ordering::Relaxed) == self.connection_id
    }

    /// How long a look lasts: [`LOOK_MARGIN`] times the client's usual wait, at least
    /// [`SHORTEST_LOOK`], at most the window.
    fn look_length(&self) -> Duration {
        // Saturating: the window is the embedder's (`ServerConfig::socket_look`), any length.
        self.usual_wait
            .saturating_mul(LOOK_MARGIN)
            .max(SHORTEST_LOOK)
            .min(self.window)
    }

    /// A look found the client's message `waited` after the connection went idle.
    fn found_after(&mut self, waited: Duration) {
        let waited = waited.min(self.window);
        if waited >= self.usual_wait {
            self.usual_wait = waited;
        } else {
            self.usual_wait -= (self.usual_wait - waited) / 8;
        }
    }

    /// Writes this connection as its set's last reader, unless it is already: a store to a
    /// line other threads read only when it changes.
    fn note_reader(&self, last_reader: &AtomicU64) {
        if last_reader.load(Ordering::Relaxed) != self.connection_id {
            last_reader.store(self.connection_id, Ordering::Relaxed);
        }
    }
}

/// The pause between two looks: the CPU offered to any thread waiting for it (a client
/// sharing it, above all).
fn pause_between_looks() {
    std::thread::yield_now();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::Write;
    use std::sync::Arc;

    use super::*;
    use crate::platform::tests::accepted_read_half;
    use crate::platform::BlockingStream;

    /// A real accepted connection: the server's read half and the client's end.
    struct Connection {
        socket: StreamReadHalf,
        client: BlockingStream,
        _dir: tempfile::TempDir,
    }

    fn connection() -> Connection {
        let (dir, socket, client) = accepted_read_half();
        Connection {
            socket,
            client,
            _dir: dir,
        }
    }

    /// A watch with its own window, whose connection read last.
    fn watch(window: Duration, last_reader: &AtomicU64) -> RequestWatch {
        let watch = RequestWatch::new(7, window);
        watch.note_reader(last_reader);
        watch
    }

    /// The same, for a client that has been prompt: its next idle moment is looked through.
    fn prompt_watch(window: Duration, last_reader: &AtomicU64) -> RequestWatch {
        let mut watch = watch(window, last_reader);
        watch.prompt = true;
        watch
    }

    #[test]
    fn a_client_not_yet_seen_prompt_is_not_looked_for() {
        let mut connection = connection();
        let last_reader = AtomicU64::new(0);
        let mut watch = watch(Duration::from_secs(10), &last_reader);
        connection.client.write_all(b"waiting").unwrap();
        let mut buffer = BytesMut::new();
        let looked = watch.before_waiting(&connection.socket, &mut buffer, &last_reader);
        assert_eq!(looked, Looked::Nothing);
        assert!(buffer.is_empty(), "no look, so nothing read");
    }

    #[test]
    fn a_message_soon_after_idle_makes_the_next_idle_moment_looked_through() {
        let mut connection = connection();
        let last_reader = AtomicU64::new(0);
        let mut watch = watch(Duration::from_secs(10), &last_reader);
        let mut buffer = BytesMut::new();
        watch.before_waiting(&connection.socket, &mut buffer, &last_reader);
        watch.arrived(&last_reader);
        assert!(watch.prompt);
        connection.client.write_all(b"next message").unwrap();
        let looked = watch.before_waiting(&connection.socket, &mut buffer, &last_reader);
        assert_eq!(looked, Looked::Bytes);
        assert_eq!(&buffer[..], b"next message");
    }

    #[test]
    fn a_message_long_after_idle_turns_looking_off() {
        let last_reader = AtomicU64::new(0);
        let mut watch = prompt_watch(Duration::from_millis(1), &last_reader);
        watch.idle_since = Some(Instant::now() - Duration::from_millis(5));
        watch.arrived(&last_reader);
        assert!(!watch.prompt);
    }

    #[test]
    fn a_look_that_finds_nothing_turns_looking_off() {
        let mut connection = connection();
        let last_reader = AtomicU64::new(0);
        let mut watch = prompt_watch(Duration::from_micros(200), &last_reader);
        let mut buffer = BytesMut::new();
        let looked = watch.before_waiting(&connection.socket, &mut buffer, &last_reader);
        assert_eq!(looked, Looked::Nothing);
        assert!(!watch.prompt);
        connection.client.write_all(b"late").unwrap();
        let looked = watch.before_waiting(&connection.socket, &mut buffer, &last_reader);
        assert_eq!(
            looked,
            Looked::Nothing,
            "no look until a message comes soon after idle again"
        );
        assert!(buffer.is_empty());
    }

    #[test]
    fn a_window_of_zero_never_looks() {
        let mut connection = connection();
        let last_reader = AtomicU64::new(0);
        let mut watch = prompt_watch(Duration::ZERO, &last_reader);
        connection.client.write_all(b"waiting").unwrap();
        let mut buffer = BytesMut::new();
        let looked = watch.before_waiting(&connection.socket, &mut buffer, &last_reader);
        assert_eq!(looked, Looked::Nothing);
        assert!(buffer.is_empty());
    }

    #[test]
    fn a_client_that_hung_up_is_seen_by_the_look() {
        let connection = connection();
        let last_reader = AtomicU64::new(0);
        let mut watch = prompt_watch(Duration::from_secs(10), &last_reader);
        connection
            .client
            .shutdown(std::net::Shutdown::Write)
            .unwrap();
        let mut buffer = BytesMut::new();
        let looked = watch.before_waiting(&connection.socket, &mut buffer, &last_reader);
        assert_eq!(looked, Looked::Closed);
    }

    #[test]
    fn no_look_while_another_connection_of_the_set_read_last() {
        let mut connection = connection();
        let last_reader = AtomicU64::new(0);
        let mut watch = prompt_watch(Duration::from_secs(10), &last_reader);
        last_reader.store(8, Ordering::Relaxed);
        connection.client.write_all(b"waiting").unwrap();
        let mut buffer = BytesMut::new();
        let looked = watch.before_waiting(&connection.socket, &mut buffer, &last_reader);
        assert_eq!(looked, Looked::Nothing);
        assert!(buffer.is_empty());
        assert!(watch.prompt, "the client may still be prompt");
    }

    #[test]
    fn a_look_in_progress_ends_when_another_connection_reads() {
        let connection = connection();
        let last_reader = Arc::new(AtomicU64::new(0));
        let mut watch = prompt_watch(Duration::from_secs(60), &last_reader);
        let other = Arc::clone(&last_reader);
        let other_reader = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            other.store(8, Ordering::Relaxed);
        });
        let started = Instant::now();
        let mut buffer = BytesMut::new();
        let looked = watch.before_waiting(&connection.socket, &mut buffer, &last_reader);
        other_reader.join().unwrap();
        assert_eq!(looked, Looked::Nothing);
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "ended before its window"
        );
        assert!(watch.prompt);
    }

    #[test]
    fn a_look_lasts_a_few_times_the_clients_usual_wait() {
        let connection = connection();
        let last_reader = AtomicU64::new(0);
        let mut watch = prompt_watch(Duration::from_secs(10), &last_reader);
        watch.usual_wait = Duration::from_millis(5);
        let started = Instant::now();
        let mut buffer = BytesMut::new();
        let looked = watch.before_waiting(&connection.socket, &mut buffer, &last_reader);
        let lasted = started.elapsed();
        assert_eq!(looked, Looked::Nothing);
        assert!(lasted >= Duration::from_millis(20), "{lasted:?}");
        assert!(
            lasted < Duration::from_secs(5),
            "not the window: {lasted:?}"
        );
        assert_eq!(watch.gave_up_after, Some(Duration::from_millis(20)));
        assert!(!watch.prompt);
    }

    /// A client woken by the reply on the worker's own CPU runs at the look's next pause
    /// rather than when the look ends: the scheduler lets a running thread use up its time
    /// slice before a woken one runs, so a look that only spun kept it from sending the
    /// message looked for. Both threads are held on one CPU, the client woken while the
    /// looking thread runs.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_pause_between_looks_lets_a_client_waiting_for_the_cpu_run() {
        use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};
        use std::sync::atomic::AtomicBool;

        let own = sched_getaffinity(None).unwrap();
        let cpu = (0..CpuSet::MAX_CPU).find(|&cpu| own.is_set(cpu)).unwrap();
        let mut only = CpuSet::new();
        only.set(cpu);
        sched_setaffinity(None, &only).unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let (reply, replied) = std::sync::mpsc::channel::<()>();
        // Started while this thread is held, so held on the same CPU.
        let client = {
            let ran = Arc::clone(&ran);
            std::thread::spawn(move || {
                replied.recv().unwrap();
                ran.store(true, Ordering::Release);
            })
        };
        // The client waits for its reply meanwhile, as a blocking client does.
        std::thread::sleep(Duration::from_millis(20));
        reply.send(()).unwrap();
        let mut pauses = 0;
        while !ran.load(Ordering::Acquire) && pauses < 1000 {
            pause_between_looks();
            pauses += 1;
        }
        let client_ran = ran.load(Ordering::Acquire);
        client.join().unwrap();
        sched_setaffinity(None, &own).unwrap();
        assert!(client_ran, "the client did not run in {pauses} pauses");
    }

    #[test]
    fn the_usual_wait_rises_at_once_and_falls_an_eighth_at_a_time() {
        let last_reader = AtomicU64::new(0);
        let mut watch = watch(Duration::from_millis(1), &last_reader);
        assert_eq!(
            watch.usual_wait,
            Duration::from_millis(1),
            "the window at first"
        );
        watch.usual_wait = Duration::from_micros(100);
        watch.found_after(Duration::from_micros(420));
        assert_eq!(watch.usual_wait, Duration::from_micros(420));
        watch.found_after(Duration::from_micros(20));
        assert_eq!(watch.usual_wait, Duration::from_micros(370));
        watch.found_after(Duration::from_secs(3));
        assert_eq!(
            watch.usual_wait,
            Duration::from_millis(1),
            "at most the window"
        );
    }

    #[test]
    fn a_look_is_at_least_the_shortest_and_at_most_the_window() {
        let last_reader = AtomicU64::new(0);
        let short = watch(Duration::from_micros(3), &last_reader);
        let mut endless = watch(Duration::MAX, &last_reader);
        let mut watch = watch(Duration::from_millis(1), &last_reader);
        watch.usual_wait = Duration::from_micros(1);
        assert_eq!(watch.look_length(), SHORTEST_LOOK);
        watch.usual_wait = Duration::from_micros(100);
        assert_eq!(watch.look_length(), Duration::from_micros(400));
        watch.usual_wait = Duration::from_micros(300);
        assert_eq!(watch.look_length(), Duration::from_millis(1));
        assert_eq!(short.look_length(), Duration::from_micros(3));
        assert_eq!(endless.look_length(), Duration::MAX, "no overflow");
        endless.gave_up_after = Some(Duration::MAX);
        endless.idle_since = Some(Instant::now());
        endless.arrived(&last_reader);
        assert!(endless.prompt);
    }

    #[test]
    fn a_window_shorter_than_the_shortest_look_still_bounds_the_look() {
        let connection = connection();
        let last_reader = AtomicU64::new(0);
        let mut watch = prompt_watch(Duration::from_micros(3), &last_reader);
        let mut buffer = BytesMut::new();
        let looked = watch.before_waiting(&connection.socket, &mut buffer, &last_reader);
        assert_eq!(looked, Looked::Nothing);
        assert_eq!(watch.gave_up_after, Some(Duration::from_micros(3)));
    }

    /// A watch whose client's usual wait is 10 ms (the window 10 s) after a message came
    /// `waited` after the connection went idle, once a look of `gave_up_after` found nothing
    /// (`None`: no look was made).
    fn arrived_after(waited: Duration, gave_up_after: Option<Duration>) -> RequestWatch {
        let last_reader = AtomicU64::new(0);
        let mut watch = watch(Duration::from_secs(10), &last_reader);
        watch.usual_wait = Duration::from_millis(10);
        watch.gave_up_after = gave_up_after;
        watch.idle_since = Some(Instant::now() - waited);
        watch.arrived(&last_reader);
        watch
    }

    #[test]
    fn a_message_soon_after_a_look_gave_up_leaves_the_usual_wait_as_it_was() {
        let watch = arrived_after(Duration::from_millis(600), Some(Duration::from_millis(500)));
        assert!(watch.prompt);
        assert_eq!(
            watch.usual_wait,
            Duration::from_millis(10),
            "perhaps kept back by the look"
        );
        assert_eq!(watch.gave_up_after, None);
    }

    #[test]
    fn a_message_well_after_a_look_gave_up_lengthens_the_next_look() {
        let watch = arrived_after(Duration::from_secs(2), Some(Duration::from_millis(500)));
        assert!(watch.prompt);
        assert!(watch.usual_wait >= Duration::from_secs(2));
    }

    #[test]
    fn a_message_when_no_look_was_made_leaves_the_usual_wait_as_it_was() {
        let watch = arrived_after(Duration::from_secs(3), None);
        assert!(watch.prompt);
        assert_eq!(
            watch.usual_wait,
            Duration::from_millis(10),
            "the worker's wake-up is in that wait"
        );
    }
}
