//! The load generator: one call at a time for latency, and pipelined calls over several
//! connections for throughput. Blocking `std` sockets, one thread per connection, the same code
//! for every target.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use crate::connection::{BenchConnection, BenchError};
use crate::endpoint::Endpoint;
use crate::one_cpu::OneCpu;

/// The 50th and 99th percentile of a set of durations, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
}

impl Percentiles {
    /// Nearest-rank percentiles of `samples_ns`, sorting them in place; `None` when empty.
    pub fn of(samples_ns: &mut [u64]) -> Option<Percentiles> {
        if samples_ns.is_empty() {
            return None;
        }
        samples_ns.sort_unstable();
        let rank = |percent: f64| {
            let index = (percent / 100.0 * samples_ns.len() as f64).ceil() as usize;
            samples_ns[index.clamp(1, samples_ns.len()) - 1] as f64 / 1000.0
        };
        Some(Percentiles {
            p50_us: rank(50.0),
            p99_us: rank(99.0),
        })
    }
}

/// How the load generator waits for a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// Polls a non-blocking socket until the reply is there: the client never sleeps, so
    /// only the server's own wake-ups are in the figure.
    Spinning,
    /// Sleeps in `read` as most clients do: the client's wake-up is in the figure too.
    Blocking,
    /// Sleeps in `read`, with the client and every thread of the server held on one CPU
    /// ([`OneCpu`]) while it measures: each wake-up is a context switch on that CPU, never
    /// the wake-up of the other CPU, so the figure is the same from run to run.
    BlockingOneCpu,
}

impl ReadMode {
    /// Every mode, in the order of the report.
    pub const ALL: [ReadMode; 3] = [
        ReadMode::Spinning,
        ReadMode::Blocking,
        ReadMode::BlockingOneCpu,
    ];

    /// A short name for the report.
    pub fn label(self) -> &'static str {
        match self {
            ReadMode::Spinning => "spinning",
            ReadMode::Blocking => "blocking",
            ReadMode::BlockingOneCpu => "blocking, one CPU",
        }
    }
}

/// One connection of a latency run: where, and how its replies are read.
#[derive(Debug, Clone)]
pub struct LatencyProbe {
    /// The target.
    pub endpoint: Endpoint,
    /// How replies are waited for.
    pub reads: ReadMode,
}

/// One call at a time on one connection.
#[derive(Debug, Clone)]
pub struct LatencyResult {
    /// Calls measured (after the warm-up).
    pub calls: usize,
    /// Round-trip percentiles.
    pub percentiles: Percentiles,
    /// Encoded size of one request, framing included.
    pub request_bytes: usize,
    /// Payload size of one reply.
    pub reply_bytes: Option<usize>,
}

/// Measures the round trip of `calls` sequential echo calls after `warmup_calls`, reading
/// replies as `reads` says.
pub fn measure_latency(
    endpoint: &Endpoint,
    reads: ReadMode,
    warmup_calls: usize,
    calls: usize,
) -> Result<LatencyResult, BenchError> {
    let probe = LatencyProbe {
        endpoint: endpoint.clone(),
        reads,
    };
    let mut results =
        measure_latency_interleaved(std::slice::from_ref(&probe), warmup_calls, calls, 1)?;
    results
        .pop()
        .ok_or_else(|| BenchError("no latency result".to_owned()))
}

/// Measures every endpoint's round trip like [`measure_latency`], but in `rounds` rounds that
/// take turns between the endpoints, so a change in the machine's state during the run (other
/// load, CPU placement, frequency) falls on all of them alike instead of on whichever ran then.
pub fn measure_latency_interleaved(
    probes: &[LatencyProbe],
    warmup_calls: usize,
    calls: usize,
    rounds: usize,
) -> Result<Vec<LatencyResult>, BenchError> {
    let rounds = rounds.max(1);
    let mut connections = probes
        .iter()
        .map(|probe| {
            let mut connection = BenchConnection::open(&probe.endpoint)?;
            connection.set_busy_poll(probe.reads == ReadMode::Spinning)?;
            for _ in 0..warmup_calls {
                round_trip(&mut connection)?;
            }
            Ok(connection)
        })
        .collect::<Result<Vec<_>, BenchError>>()?;
    let mut samples_ns: Vec<Vec<u64>> = vec![Vec::with_capacity(calls); probes.len()];
    for round in 0..rounds {
        // Spread `calls` over the rounds, the remainder going to the first ones.
        let calls_this_round = calls / rounds + usize::from(round < calls % rounds);
        for ((connection, samples), probe) in
            connections.iter_mut().zip(&mut samples_ns).zip(probes)
        {
            let _pinned = match probe.reads {
                ReadMode::BlockingOneCpu => Some(OneCpu::pin(connection.server_pid()?)?),
                ReadMode::Spinning | ReadMode::Blocking => None,
            };
            for _ in 0..calls_this_round {
                let started = Instant::now();
                round_trip(connection)?;
                samples.push(elapsed_ns(started));
            }
        }
    }
    connections
        .iter()
        .zip(&mut samples_ns)
        .map(|(connection, samples)| {
            let percentiles = Percentiles::of(samples)
                .ok_or_else(|| BenchError("a latency run needs at least one call".to_owned()))?;
            Ok(LatencyResult {
                calls: samples.len(),
                percentiles,
                request_bytes: connection.request_bytes(),
                reply_bytes: connection.reply_bytes(),
            })
        })
        .collect()
}

fn round_trip(connection: &mut BenchConnection) -> Result<(), BenchError> {
    let id = connection.send_call()?;
    let reply = connection.read_reply()?;
    if reply.id != id {
        return Err(BenchError(format!(
            "sent id {id} and got a reply to {}",
            reply.id
        )));
    }
    if reply.busy {
        return Err(BenchError(
            "a lone call on an idle server was refused as busy".to_owned(),
        ));
    }
    Ok(())
}

/// How a throughput run is shaped.
#[derive(Debug, Clone)]
pub struct ThroughputPlan {
    /// One endpoint per connection (several may name the same socket).
    pub connections: Vec<Endpoint>,
    /// Calls kept outstanding on each connection.
    pub in_flight: usize,
    /// Time before counting starts (connections fill their pipelines, caches warm up).
    pub warmup: Duration,
    /// Time during which completed calls are counted.
    pub measure: Duration,
}

/// What a throughput run achieved.
#[derive(Debug, Clone)]
pub struct ThroughputResult {
    /// Connections used.
    pub connections: usize,
    /// Calls outstanding per connection.
    pub in_flight: usize,
    /// Successful echo replies that arrived inside the measured window.
    pub completed: u64,
    /// Busy refusals that arrived inside the measured window (not counted as completed).
    pub busy: u64,
    /// Every call sent during the whole run, warm-up and drain included.
    pub sent: u64,
    /// Every reply received during the whole run; equals `sent` when every call was answered.
    pub replied: u64,
    /// Successful calls per second in the measured window.
    pub calls_per_second: f64,
    /// Send-to-reply percentiles of the calls completed in the window (includes queueing
    /// behind the other outstanding calls).
    pub percentiles: Percentiles,
}

#[derive(Debug, Default)]
struct ConnectionTally {
    completed: u64,
    busy: u64,
    sent: u64,
    replied: u64,
    samples_ns: Vec<u64>,
}

/// Keeps `plan.in_flight` calls outstanding on every connection for the whole run, then
/// drains, so every call sent is answered before the connections close.
pub fn measure_throughput(plan: &ThroughputPlan) -> Result<ThroughputResult, BenchError> {
    let connections = plan
        .connections
        .iter()
        .map(BenchConnection::open)
        .collect::<Result<Vec<_>, _>>()?;
    let start_line = Barrier::new(connections.len());
    let tallies = std::thread::scope(|scope| {
        let workers: Vec<_> = connections
            .into_iter()
            .map(|connection| {
                let start_line = &start_line;
                scope.spawn(move || {
                    start_line.wait();
                    drive_connection(connection, plan.in_flight, plan.warmup, plan.measure)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|_| Err(BenchError("a load thread panicked".to_owned())))
            })
            .collect::<Result<Vec<_>, _>>()
    })?;
    let mut total = ConnectionTally::default();
    for tally in tallies {
        total.completed += tally.completed;
        total.busy += tally.busy;
        total.sent += tally.sent;
        total.replied += tally.replied;
        total.samples_ns.extend(tally.samples_ns);
    }
    let percentiles = Percentiles::of(&mut total.samples_ns)
        .ok_or_else(|| BenchError("no call completed inside the measured window".to_owned()))?;
    Ok(ThroughputResult {
        connections: plan.connections.len(),
        in_flight: plan.in_flight,
        completed: total.completed,
        busy: total.busy,
        sent: total.sent,
        replied: total.replied,
        calls_per_second: total.completed as f64 / plan.measure.as_secs_f64(),
        percentiles,
    })
}

fn drive_connection(
    mut connection: BenchConnection,
    in_flight: usize,
    warmup: Duration,
    measure: Duration,
) -> Result<ConnectionTally, BenchError> {
    let started = Instant::now();
    let window_start = started + warmup;
    let window_end = window_start + measure;
    let mut tally = ConnectionTally::default();
    // (id, when it was sent); at most `in_flight` entries, so a linear search is cheapest.
    let mut outstanding: Vec<(u64, Instant)> = Vec::with_capacity(in_flight);
    for _ in 0..in_flight {
        outstanding.push((connection.send_call()?, Instant::now()));
        tally.sent += 1;
    }
    while !outstanding.is_empty() {
        let reply = connection.read_reply()?;
        let arrived = Instant::now();
        let position = outstanding
            .iter()
            .position(|(id, _)| *id == reply.id)
            .ok_or_else(|| {
                BenchError(format!(
                    "a reply to id {} that is not outstanding on this connection",
                    reply.id
                ))
            })?;
        let (_, sent_at) = outstanding.swap_remove(position);
        tally.replied += 1;
        if arrived >= window_start && arrived < window_end {
            if reply.busy {
                tally.busy += 1;
            } else {
                tally.completed += 1;
                tally
                    .samples_ns
                    .push(u64::try_from((arrived - sent_at).as_nanos()).unwrap_or(u64::MAX));
            }
        }
        if arrived < window_end {
            outstanding.push((connection.send_call()?, Instant::now()));
            tally.sent += 1;
        }
    }
    Ok(tally)
}

fn elapsed_ns(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX)
}
