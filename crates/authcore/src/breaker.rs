//! A circuit breaker for a backend store (a database, Redis), shared by the storage crates:
//! once calls find the store unreachable (a timeout, or connection failures in a row — not
//! a query error such as a constraint violation), every call answers at once with the
//! backend's usual error instead of waiting for its timeout, and one probe in the
//! background checks the store at an interval until it answers, which closes the breaker.
//!
//! [`Circuit`] is the state machine alone, the time passed in; [`CircuitBreaker`] is the
//! shared handle a backend keeps, which drives a [`Circuit`] with the clock, runs the probe
//! loop (the backend supplies the probe and its runtime's sleep, as authcore names no async
//! runtime) and records [`STORE_AVAILABLE`](crate::telemetry::STORE_AVAILABLE).
//!
//! ```
//! use std::time::{Duration, Instant};
//! use authcore::breaker::{Circuit, CircuitState, Outage};
//!
//! let start = Instant::now();
//! let mut circuit = Circuit::new(Duration::from_secs(1));
//! assert!(circuit.admits());
//! assert!(!circuit.trip(start, Outage::Connection)); // one broken connection: not yet
//! circuit.succeeded(); // … and the next call worked
//! assert!(circuit.trip(start, Outage::Timeout)); // a timeout opens it: start the probe loop
//! assert!(!circuit.admits());
//! assert!(circuit.start_probe(start)); // the first probe is due at once
//! circuit.probe_done(false, start);
//! assert_eq!(circuit.next_probe(), Some(start + Duration::from_secs(1)));
//! assert!(circuit.start_probe(start + Duration::from_secs(1)));
//! circuit.probe_done(true, start + Duration::from_secs(1));
//! assert_eq!(circuit.state(), CircuitState::Closed);
//! ```

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a [`CircuitBreaker`] waits between two failed probes by default.
pub const DEFAULT_PROBE_INTERVAL: Duration = Duration::from_secs(1);

/// How many [`Outage::Connection`] failures in a row, with no call answered between them,
/// open a circuit: a single connection that broke (a terminated backend, a restarted
/// proxy) is replaced by the pool and is no outage, while a store that went away fails
/// every connection.
pub const CONNECTION_FAILURES_TO_OPEN: u32 = 3;

/// How a call found the store unreachable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outage {
    /// No answer, or no connection, within the backend's bound: opens the circuit at once,
    /// as every later call would wait as long.
    Timeout,
    /// A connection could not be opened or broke: opens the circuit at the
    /// [`CONNECTION_FAILURES_TO_OPEN`]th in a row.
    Connection,
}

/// Where a [`Circuit`] stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CircuitState {
    /// The store answers: calls go through.
    Closed,
    /// The store is unreachable: calls fail at once; a probe is due at
    /// [`Circuit::next_probe`].
    Open,
    /// The store is unreachable and a probe is in flight: calls fail at once.
    Probing,
}

/// The breaker's state machine, without I/O or clock: closed until [`Circuit::trip`] opens
/// it, then open, probing while a probe runs, and closed again when one succeeds.
#[derive(Debug, Clone)]
pub struct Circuit {
    state: CircuitState,
    interval: Duration,
    /// Connection failures in a row while closed.
    streak: u32,
    /// When the circuit opened (while open or probing).
    opened_at: Option<Instant>,
    /// When the next probe may start (while open).
    next_probe: Option<Instant>,
}

impl Circuit {
    /// A closed circuit whose failed probes are `interval` apart.
    pub fn new(interval: Duration) -> Self {
        Circuit {
            state: CircuitState::Closed,
            interval,
            streak: 0,
            opened_at: None,
            next_probe: None,
        }
    }

    /// Where it stands.
    pub fn state(&self) -> CircuitState {
        self.state
    }

    /// Whether calls go through (only when closed).
    pub fn admits(&self) -> bool {
        self.state == CircuitState::Closed
    }

    /// A call found the store unreachable at `now`: a closed circuit opens on a
    /// [`Outage::Timeout`] or on the [`CONNECTION_FAILURES_TO_OPEN`]th
    /// [`Outage::Connection`] in a row, its first probe due at once. `true` when this call
    /// opened it, and so must start the probe loop; an open circuit stays as it is.
    pub fn trip(&mut self, now: Instant, outage: Outage) -> bool {
        if self.state != CircuitState::Closed {
            return false;
        }
        self.streak = self.streak.saturating_add(1);
        if outage == Outage::Connection && self.streak < CONNECTION_FAILURES_TO_OPEN {
            return false;
        }
        self.streak = 0;
        self.state = CircuitState::Open;
        self.opened_at = Some(now);
        self.next_probe = Some(now);
        true
    }

    /// A call got an answer from the store (a query error included): the connection
    /// failures before it were no outage.
    pub fn succeeded(&mut self) {
        self.streak = 0;
    }

    /// Whether connection failures are counting towards opening it (closed, with at least
    /// one since the last answer).
    pub fn suspects(&self) -> bool {
        self.streak > 0
    }

    /// When the next probe may start; `None` when closed or while a probe runs.
    pub fn next_probe(&self) -> Option<Instant> {
        match self.state {
            CircuitState::Open => self.next_probe,
            _ => None,
        }
    }

    /// Starts a probe if one is due at `now` (open → probing); `false` otherwise.
    pub fn start_probe(&mut self, now: Instant) -> bool {
        match self.next_probe() {
            Some(due) if now >= due => {
                self.state = CircuitState::Probing;
                self.next_probe = None;
                true
            }
            _ => false,
        }
    }

    /// The probe started by [`Circuit::start_probe`] ended at `now`: a success closes the
    /// circuit, a failure opens it again with the next probe one interval later. Outside a
    /// probe it changes nothing.
    pub fn probe_done(&mut self, ok: bool, now: Instant) {
        if self.state != CircuitState::Probing {
            return;
        }
        if ok {
            self.state = CircuitState::Closed;
            self.opened_at = None;
        } else {
            self.state = CircuitState::Open;
            self.next_probe = Some(now + self.interval);
        }
    }

    /// How long it has been open at `now`; `None` when closed.
    pub fn open_for(&self, now: Instant) -> Option<Duration> {
        self.opened_at.map(|at| now.saturating_duration_since(at))
    }
}

/// The circuit breaker of one store, shared by every handle on it (an adapter and the
/// rate-limit store made from it share one): cheap to clone.
///
/// A backend asks [`CircuitBreaker::admits`] before each call and answers its usual
/// "unavailable" error when it does not; after the call it reports
/// [`CircuitBreaker::succeeded`] when the store answered, or [`CircuitBreaker::trip`] when
/// the call failed for want of the store, and when that opens the breaker it spawns
/// [`CircuitBreaker::probe_until_closed`] on its runtime.
#[derive(Clone)]
pub struct CircuitBreaker {
    inner: Arc<Inner>,
}

struct Inner {
    /// The store's label in logs and in [`STORE_AVAILABLE`](crate::telemetry::STORE_AVAILABLE).
    store: &'static str,
    /// Whether the circuit is closed: the hot path's check, without the lock.
    closed: AtomicBool,
    /// Whether connection failures are counting ([`Circuit::suspects`]): the hot path's
    /// check before [`CircuitBreaker::succeeded`] takes the lock.
    suspects: AtomicBool,
    circuit: Mutex<Circuit>,
}

impl std::fmt::Debug for CircuitBreaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CircuitBreaker")
            .field("store", &self.inner.store)
            .field("state", &self.state())
            .finish()
    }
}

impl CircuitBreaker {
    /// A closed breaker for the store labelled `store` (`database`, `redis`), its failed
    /// probes [`DEFAULT_PROBE_INTERVAL`] apart; records the store as available.
    pub fn new(store: &'static str) -> Self {
        Self::with_probe_interval(store, DEFAULT_PROBE_INTERVAL)
    }

    /// [`CircuitBreaker::new`] with failed probes `interval` apart.
    pub fn with_probe_interval(store: &'static str, interval: Duration) -> Self {
        crate::telemetry::store_available(store, true);
        CircuitBreaker {
            inner: Arc::new(Inner {
                store,
                closed: AtomicBool::new(true),
                suspects: AtomicBool::new(false),
                circuit: Mutex::new(Circuit::new(interval)),
            }),
        }
    }

    /// The store's label.
    pub fn store(&self) -> &'static str {
        self.inner.store
    }

    /// Whether calls go through (the breaker is closed).
    pub fn admits(&self) -> bool {
        self.inner.closed.load(Ordering::Acquire)
    }

    /// Where the circuit stands.
    pub fn state(&self) -> CircuitState {
        self.lock().state()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Circuit> {
        // The circuit is left consistent by every step, so a poisoned lock is still usable.
        self.inner
            .circuit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A call got an answer from the store (a query error included). Takes the lock only
    /// after connection failures.
    pub fn succeeded(&self) {
        if self.inner.suspects.load(Ordering::Relaxed) {
            let mut circuit = self.lock();
            circuit.succeeded();
            // Cleared under the lock: a failure counted by another call after this reset
            // sets it again, and is not left counting past the next success.
            self.inner.suspects.store(false, Ordering::Relaxed);
            drop(circuit);
        }
    }

    /// A call failed for want of the store (`outage`; `why`, for the log: no data, no
    /// URL). `true` when this opened the breaker ([`Circuit::trip`]): the caller then
    /// spawns [`CircuitBreaker::probe_until_closed`].
    pub fn trip(&self, outage: Outage, why: &dyn std::fmt::Display) -> bool {
        let mut circuit = self.lock();
        let opened = circuit.trip(Instant::now(), outage);
        self.inner
            .suspects
            .store(circuit.suspects(), Ordering::Relaxed);
        drop(circuit);
        if opened {
            self.inner.closed.store(false, Ordering::Release);
            crate::telemetry::store_available(self.inner.store, false);
            tracing::warn!(
                store = self.inner.store,
                error = %why,
                "circuit breaker open: calls fail at once until a background probe reaches the store"
            );
        }
        opened
    }

    /// Probes the store until a probe succeeds, which closes the breaker: the first probe
    /// at once, then one `sleep` of the probe interval after each failure. `probe` must be
    /// bounded in time (the backend's timeout) and answer whether the store answered;
    /// `sleep` is the runtime's timer. Returns at once if the breaker is not open.
    pub async fn probe_until_closed<P, PF, S, SF>(&self, mut probe: P, sleep: S)
    where
        P: FnMut() -> PF,
        PF: Future<Output = bool>,
        S: Fn(Duration) -> SF,
        SF: Future<Output = ()>,
    {
        loop {
            let wait = {
                let mut circuit = self.lock();
                let now = Instant::now();
                match circuit.next_probe() {
                    None => return,
                    Some(_) if circuit.start_probe(now) => None,
                    Some(due) => Some(due.saturating_duration_since(now)),
                }
            };
            if let Some(wait) = wait {
                sleep(wait).await;
                continue;
            }
            let ok = probe().await;
            let mut circuit = self.lock();
            let now = Instant::now();
            let down_for = circuit.open_for(now).unwrap_or_default();
            circuit.probe_done(ok, now);
            if circuit.admits() {
                self.inner.closed.store(true, Ordering::Release);
                drop(circuit);
                crate::telemetry::store_available(self.inner.store, true);
                tracing::info!(
                    store = self.inner.store,
                    down_ms = u64::try_from(down_for.as_millis()).unwrap_or(u64::MAX),
                    "circuit breaker closed: the store answers again"
                );
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt as _;

    /// One step of a table-driven walk through the state machine, at `at` ms.
    #[derive(Debug, Clone, Copy)]
    enum Step {
        Trip { at: u64, opens: bool },
        Broken { at: u64, opens: bool },
        Answered,
        StartProbe { at: u64, starts: bool },
        ProbeDone { at: u64, ok: bool },
    }

    /// Steps, each with the state and the next probe (ms) it must leave.
    type Walk = &'static [(Step, CircuitState, Option<u64>)];

    #[test]
    fn walks_through_the_states() {
        use CircuitState::{Closed, Open, Probing};
        use Step::*;
        let cases: &[(&str, Walk)] = &[
            (
                "connection failures open it at the third in a row",
                &[
                    (
                        Broken {
                            at: 0,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                    (
                        Broken {
                            at: 1,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                    (Answered, Closed, None),
                    (
                        Broken {
                            at: 2,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                    (
                        Broken {
                            at: 3,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                    (Broken { at: 4, opens: true }, Open, Some(4)),
                    (
                        Broken {
                            at: 5,
                            opens: false,
                        },
                        Open,
                        Some(4),
                    ),
                    (
                        StartProbe {
                            at: 5,
                            starts: true,
                        },
                        Probing,
                        None,
                    ),
                    (ProbeDone { at: 6, ok: true }, Closed, None),
                    (
                        Broken {
                            at: 7,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                ],
            ),
            (
                "a probe that succeeds at once closes it",
                &[
                    (Trip { at: 0, opens: true }, Open, Some(0)),
                    (
                        StartProbe {
                            at: 0,
                            starts: true,
                        },
                        Probing,
                        None,
                    ),
                    (ProbeDone { at: 5, ok: true }, Closed, None),
                ],
            ),
            (
                "failed probes are an interval apart; further failures change nothing",
                &[
                    (
                        Trip {
                            at: 10,
                            opens: true,
                        },
                        Open,
                        Some(10),
                    ),
                    (
                        Trip {
                            at: 11,
                            opens: false,
                        },
                        Open,
                        Some(10),
                    ),
                    (
                        StartProbe {
                            at: 12,
                            starts: true,
                        },
                        Probing,
                        None,
                    ),
                    (
                        Trip {
                            at: 13,
                            opens: false,
                        },
                        Probing,
                        None,
                    ),
                    (ProbeDone { at: 20, ok: false }, Open, Some(1020)),
                    (
                        StartProbe {
                            at: 500,
                            starts: false,
                        },
                        Open,
                        Some(1020),
                    ),
                    (
                        StartProbe {
                            at: 1020,
                            starts: true,
                        },
                        Probing,
                        None,
                    ),
                    (ProbeDone { at: 1030, ok: true }, Closed, None),
                    (
                        Trip {
                            at: 2000,
                            opens: true,
                        },
                        Open,
                        Some(2000),
                    ),
                ],
            ),
            (
                "nothing to probe or finish while closed",
                &[
                    (
                        StartProbe {
                            at: 0,
                            starts: false,
                        },
                        Closed,
                        None,
                    ),
                    (ProbeDone { at: 0, ok: false }, Closed, None),
                ],
            ),
        ];
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        for (name, steps) in cases {
            let mut circuit = Circuit::new(Duration::from_secs(1));
            for (i, (step, state, next)) in steps.iter().enumerate() {
                match *step {
                    Trip { at: t, opens } => {
                        assert_eq!(circuit.trip(at(t), Outage::Timeout), opens, "{name} {i}")
                    }
                    Broken { at: t, opens } => {
                        assert_eq!(circuit.trip(at(t), Outage::Connection), opens, "{name} {i}")
                    }
                    Answered => circuit.succeeded(),
                    StartProbe { at: t, starts } => {
                        assert_eq!(circuit.start_probe(at(t)), starts, "{name} {i}")
                    }
                    ProbeDone { at: t, ok } => circuit.probe_done(ok, at(t)),
                }
                assert_eq!(circuit.state(), *state, "{name} {i}");
                assert_eq!(circuit.admits(), *state == Closed, "{name} {i}");
                assert_eq!(circuit.next_probe(), next.map(at), "{name} {i}");
            }
        }
    }

    #[test]
    fn open_for_counts_from_the_trip() {
        let start = Instant::now();
        let mut circuit = Circuit::new(Duration::from_secs(1));
        assert_eq!(circuit.open_for(start), None);
        circuit.trip(start, Outage::Timeout);
        assert!(circuit.start_probe(start));
        circuit.probe_done(false, start + Duration::from_secs(2));
        assert_eq!(
            circuit.open_for(start + Duration::from_secs(3)),
            Some(Duration::from_secs(3))
        );
        assert!(circuit.start_probe(start + Duration::from_secs(3)));
        circuit.probe_done(true, start + Duration::from_secs(3));
        assert_eq!(circuit.open_for(start + Duration::from_secs(4)), None);
    }

    #[test]
    fn the_probe_loop_closes_the_breaker_after_the_first_success() {
        let breaker = CircuitBreaker::with_probe_interval("test", Duration::from_millis(1));
        assert!(breaker.admits());
        for _ in 1..CONNECTION_FAILURES_TO_OPEN {
            assert!(!breaker.trip(Outage::Connection, &"connection refused"));
        }
        assert!(breaker.admits());
        assert!(breaker.trip(Outage::Connection, &"connection refused"));
        assert!(!breaker.trip(Outage::Timeout, &"timed out"), "already open");
        assert!(!breaker.admits());
        let mut answers = [false, false, true].into_iter();
        let mut probes = 0;
        let sleeps = std::cell::Cell::new(0);
        // Probes and sleeps are ready at once, so the loop ends within one poll.
        breaker
            .probe_until_closed(
                || {
                    probes += 1;
                    std::future::ready(answers.next().unwrap_or(true))
                },
                |d: Duration| {
                    assert!(d <= Duration::from_millis(1), "{d:?}");
                    sleeps.set(sleeps.get() + 1);
                    std::thread::sleep(d);
                    std::future::ready(())
                },
            )
            .now_or_never()
            .expect("nothing to wait for");
        assert_eq!(probes, 3);
        assert!(sleeps.get() >= 2, "a pause after each failed probe");
        assert!(breaker.admits());
        assert_eq!(breaker.state(), CircuitState::Closed);
    }

    #[test]
    fn an_answer_between_connection_failures_keeps_it_closed() {
        let breaker = CircuitBreaker::new("test");
        for _ in 0..3 {
            for _ in 1..CONNECTION_FAILURES_TO_OPEN {
                assert!(!breaker.trip(Outage::Connection, &"connection reset"));
            }
            breaker.succeeded();
        }
        assert!(breaker.admits());
        assert_eq!(breaker.state(), CircuitState::Closed);
    }

    #[test]
    fn the_probe_loop_returns_at_once_when_closed() {
        let breaker = CircuitBreaker::new("test");
        breaker
            .probe_until_closed(
                || -> std::future::Ready<bool> { panic!("no probe while closed") },
                |_| std::future::ready(()),
            )
            .now_or_never()
            .expect("nothing to wait for");
        assert!(breaker.admits());
    }
}
