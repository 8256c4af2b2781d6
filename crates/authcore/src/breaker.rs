//! A circuit breaker for a backend store (a database, Redis), shared by the storage crates:
//! once calls find the store unreachable (timeouts or connection failures in a row — not
//! a query error such as a constraint violation, nor one slow call), every call answers at
//! once with the backend's usual error instead of waiting for its timeout, and one probe in
//! the background checks the store at an interval until it answers, which closes the
//! breaker.
//!
//! [`Circuit`] is the state machine alone, the time passed in; [`CircuitBreaker`] is the
//! shared handle a backend keeps, which drives a [`Circuit`] with the clock, hands out the
//! one [`Prober`] that runs the probe loop (the backend supplies the probe and its
//! runtime's sleep, as authcore names no async runtime) and records
//! [`STORE_AVAILABLE`](crate::telemetry::STORE_AVAILABLE). A probe loop that is dropped
//! before the store answers (its runtime shut down, its task cancelled or panicking) gives
//! its role back, and the next call that finds the breaker open starts another: the
//! breaker never stays open for want of a probe.
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
//! assert!(!circuit.trip(start, Outage::Timeout)); // one slow call: not yet
//! assert!(circuit.trip(start, Outage::Timeout)); // the second in a row opens it
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

/// How many failures in a row, the last an [`Outage::Timeout`], with no call answered
/// between them, open a circuit: one slow query or one wait for a busy pool is no outage
/// (the calls around it are answered), while a store that went away or hangs times out
/// every call, and the concurrent calls of a loaded server time out together.
pub const TIMEOUTS_TO_OPEN: u32 = 2;

/// How a call found the store unreachable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outage {
    /// No answer, or no connection, within the backend's bound: opens the circuit at the
    /// [`TIMEOUTS_TO_OPEN`]th failure in a row, as every later call would wait as long.
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
    /// Whether a probe loop holds the role of probing (while open or probing).
    prober: bool,
    /// Moves on each time a probe loop takes the role, so that one that gives it back
    /// after a newer one took it changes nothing.
    generation: u64,
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
            prober: false,
            generation: 0,
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

    /// A call found the store unreachable at `now`: a closed circuit opens at the
    /// [`TIMEOUTS_TO_OPEN`]th failure in a row when this one is an [`Outage::Timeout`], or
    /// at the [`CONNECTION_FAILURES_TO_OPEN`]th, its first probe due at once. `true` when
    /// this call opened it: the caller holds the prober's role and must start the probe
    /// loop; an open circuit stays as it is.
    pub fn trip(&mut self, now: Instant, outage: Outage) -> bool {
        if self.state != CircuitState::Closed {
            return false;
        }
        self.streak = self.streak.saturating_add(1);
        let needed = match outage {
            Outage::Timeout => TIMEOUTS_TO_OPEN,
            Outage::Connection => CONNECTION_FAILURES_TO_OPEN,
        };
        if self.streak < needed {
            return false;
        }
        self.streak = 0;
        self.state = CircuitState::Open;
        self.opened_at = Some(now);
        self.next_probe = Some(now);
        self.take_prober_role();
        true
    }

    fn take_prober_role(&mut self) {
        self.prober = true;
        self.generation = self.generation.wrapping_add(1);
    }

    /// Takes the prober's role when the circuit is not closed and no probe loop holds it
    /// (the one that held it was dropped): `true` when the caller must start a probe loop.
    pub fn claim_prober(&mut self) -> bool {
        if self.state == CircuitState::Closed || self.prober {
            return false;
        }
        self.take_prober_role();
        true
    }

    /// Whether a probe loop holds the prober's role.
    pub fn has_prober(&self) -> bool {
        self.prober
    }

    /// The generation of the prober's role: the one a loop gets when it takes the role
    /// ([`Circuit::trip`] opening, [`Circuit::claim_prober`]), to give back with.
    pub fn prober_generation(&self) -> u64 {
        self.generation
    }

    /// The probe loop of role `generation` gave its role back at `now` (it ended, or was
    /// dropped): a probe it left in flight counts as failed, with the next one due at once,
    /// so that the next [`Circuit::claim_prober`] starts probing again. A loop whose role a
    /// newer one took since (the circuit closed and opened again before it was dropped)
    /// changes nothing: `false`.
    pub fn prober_gone(&mut self, generation: u64, now: Instant) -> bool {
        if generation != self.generation {
            return false;
        }
        self.prober = false;
        if self.state == CircuitState::Probing {
            self.state = CircuitState::Open;
            self.next_probe = Some(now);
        }
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
/// A backend asks [`CircuitBreaker::admits`] before each call; when it does not, the
/// backend answers its usual "unavailable" error, after spawning the loop of the
/// [`Prober`] that [`CircuitBreaker::prober`] hands out when no probe loop is running.
/// After the call it reports [`CircuitBreaker::succeeded`] when the store answered, or
/// [`CircuitBreaker::trip`] when the call failed for want of the store; when that opens the
/// breaker it spawns the loop of the [`Prober`] it returns ([`Prober::probe_until_closed`])
/// on its runtime.
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
    /// Whether a [`Prober`] exists ([`Circuit::has_prober`]): the open path's check before
    /// [`CircuitBreaker::prober`] takes the lock.
    prober: AtomicBool,
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
                prober: AtomicBool::new(false),
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
    /// URL). When this opened the breaker ([`Circuit::trip`]), the [`Prober`] whose loop
    /// the caller spawns.
    pub fn trip(&self, outage: Outage, why: &dyn std::fmt::Display) -> Option<Prober> {
        let mut circuit = self.lock();
        let opened = circuit.trip(Instant::now(), outage);
        self.inner
            .suspects
            .store(circuit.suspects(), Ordering::Relaxed);
        if opened {
            self.inner.prober.store(true, Ordering::Release);
        }
        let generation = circuit.prober_generation();
        drop(circuit);
        if !opened {
            return None;
        }
        self.inner.closed.store(false, Ordering::Release);
        crate::telemetry::store_available(self.inner.store, false);
        tracing::warn!(
            store = self.inner.store,
            error = %why,
            "circuit breaker open: calls fail at once until a background probe reaches the store"
        );
        Some(Prober {
            breaker: self.clone(),
            generation,
        })
    }

    /// The [`Prober`] to spawn when the breaker is open and no probe loop runs (the last
    /// one was dropped before the store answered): a call refused while the breaker is
    /// open asks, so that probing resumes on the runtime that serves calls now. Without
    /// the lock while a probe loop runs.
    pub fn prober(&self) -> Option<Prober> {
        if self.admits() || self.inner.prober.load(Ordering::Acquire) {
            return None;
        }
        let mut circuit = self.lock();
        if !circuit.claim_prober() {
            return None;
        }
        self.inner.prober.store(true, Ordering::Release);
        let generation = circuit.prober_generation();
        drop(circuit);
        tracing::info!(
            store = self.inner.store,
            "circuit breaker: no probe was running; a new one starts"
        );
        Some(Prober {
            breaker: self.clone(),
            generation,
        })
    }
}

/// The one probe loop of an open [`CircuitBreaker`] (from [`CircuitBreaker::trip`] or
/// [`CircuitBreaker::prober`]). Dropping it, run or not — its task cancelled, its
/// runtime shut down, its probe panicking — gives the role back: the next call that finds
/// the breaker open gets a new one.
#[must_use = "spawn its probe_until_closed, or the breaker waits for the next call to probe"]
pub struct Prober {
    breaker: CircuitBreaker,
    /// The generation of the role it holds ([`Circuit::prober_generation`]).
    generation: u64,
}

impl std::fmt::Debug for Prober {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prober")
            .field("store", &self.breaker.inner.store)
            .finish()
    }
}

impl Drop for Prober {
    fn drop(&mut self) {
        let mut circuit = self.breaker.lock();
        if circuit.prober_gone(self.generation, Instant::now()) {
            self.breaker.inner.prober.store(false, Ordering::Release);
        }
        drop(circuit);
    }
}

impl Prober {
    /// Probes the store until a probe succeeds, which closes the breaker: the first probe
    /// when due (at once after the breaker opened), then one `sleep` of the probe interval
    /// after each failure. `probe` must be bounded in time (the backend's timeout) and
    /// answer whether the store answered; `sleep` is the runtime's timer. Returns at once
    /// if the breaker is not open.
    pub async fn probe_until_closed<P, PF, S, SF>(self, mut probe: P, sleep: S)
    where
        P: FnMut() -> PF,
        PF: Future<Output = bool>,
        S: Fn(Duration) -> SF,
        SF: Future<Output = ()>,
    {
        let breaker = &self.breaker;
        loop {
            let wait = {
                let mut circuit = breaker.lock();
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
            let mut circuit = breaker.lock();
            let now = Instant::now();
            let down_for = circuit.open_for(now).unwrap_or_default();
            circuit.probe_done(ok, now);
            if circuit.admits() {
                breaker.inner.closed.store(true, Ordering::Release);
                drop(circuit);
                crate::telemetry::store_available(breaker.inner.store, true);
                tracing::info!(
                    store = breaker.inner.store,
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
        Trip {
            at: u64,
            opens: bool,
        },
        Broken {
            at: u64,
            opens: bool,
        },
        Answered,
        StartProbe {
            at: u64,
            starts: bool,
        },
        ProbeDone {
            at: u64,
            ok: bool,
        },
        /// A call asks for the prober's role.
        Claim {
            claims: bool,
        },
        /// The probe loop is dropped.
        Gone {
            at: u64,
        },
        /// A probe loop whose role a newer one took since is dropped.
        StaleGone {
            at: u64,
        },
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
                    (
                        Trip {
                            at: 0,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
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
                            at: 9,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
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
                            at: 1999,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
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
                "one slow call between answered ones never opens it",
                &[
                    (
                        Trip {
                            at: 0,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                    (Answered, Closed, None),
                    (
                        Trip {
                            at: 1,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                    (Answered, Closed, None),
                    (
                        Trip {
                            at: 2,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                ],
            ),
            (
                "a timeout after a connection failure opens it",
                &[
                    (
                        Broken {
                            at: 0,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                    (Trip { at: 1, opens: true }, Open, Some(1)),
                ],
            ),
            (
                "a dropped probe loop gives its role back, and the next call probes",
                &[
                    (Claim { claims: false }, Closed, None),
                    (
                        Trip {
                            at: 0,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                    (Trip { at: 0, opens: true }, Open, Some(0)),
                    // The call that opened it holds the role.
                    (Claim { claims: false }, Open, Some(0)),
                    (
                        StartProbe {
                            at: 1,
                            starts: true,
                        },
                        Probing,
                        None,
                    ),
                    // Its task dropped mid-probe: that probe failed, the next one is due.
                    (Gone { at: 7 }, Open, Some(7)),
                    (Claim { claims: true }, Open, Some(7)),
                    (Claim { claims: false }, Open, Some(7)),
                    (
                        StartProbe {
                            at: 7,
                            starts: true,
                        },
                        Probing,
                        None,
                    ),
                    (ProbeDone { at: 8, ok: true }, Closed, None),
                    (Gone { at: 9 }, Closed, None),
                    (Claim { claims: false }, Closed, None),
                ],
            ),
            (
                "a probe loop dropped while it waits leaves the due time as it was",
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
                            at: 0,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                    (Broken { at: 0, opens: true }, Open, Some(0)),
                    (
                        StartProbe {
                            at: 0,
                            starts: true,
                        },
                        Probing,
                        None,
                    ),
                    (ProbeDone { at: 10, ok: false }, Open, Some(1010)),
                    (Gone { at: 20 }, Open, Some(1010)),
                    (Claim { claims: true }, Open, Some(1010)),
                ],
            ),
            (
                "a probe loop dropped after a newer one took the role changes nothing",
                &[
                    (
                        Trip {
                            at: 0,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                    (Trip { at: 0, opens: true }, Open, Some(0)),
                    (
                        StartProbe {
                            at: 0,
                            starts: true,
                        },
                        Probing,
                        None,
                    ),
                    (ProbeDone { at: 10, ok: true }, Closed, None),
                    // Open again before the first loop was dropped: a second loop.
                    (
                        Trip {
                            at: 20,
                            opens: false,
                        },
                        Closed,
                        None,
                    ),
                    (
                        Trip {
                            at: 20,
                            opens: true,
                        },
                        Open,
                        Some(20),
                    ),
                    (
                        StartProbe {
                            at: 20,
                            starts: true,
                        },
                        Probing,
                        None,
                    ),
                    (StaleGone { at: 30 }, Probing, None),
                    (Claim { claims: false }, Probing, None),
                    (ProbeDone { at: 40, ok: true }, Closed, None),
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
                    Claim { claims } => {
                        assert_eq!(circuit.claim_prober(), claims, "{name} {i}")
                    }
                    Gone { at: t } => {
                        let current = circuit.prober_generation();
                        assert!(circuit.prober_gone(current, at(t)), "{name} {i}")
                    }
                    StaleGone { at: t } => {
                        let earlier = circuit.prober_generation().wrapping_sub(1);
                        assert!(!circuit.prober_gone(earlier, at(t)), "{name} {i}")
                    }
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
        assert_eq!(circuit.open_for(start), None, "one timeout");
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
            assert!(
                breaker
                    .trip(Outage::Connection, &"connection refused")
                    .is_none()
            );
        }
        assert!(breaker.admits());
        let prober = breaker.trip(Outage::Connection, &"connection refused");
        let prober = prober.expect("the third failure opens it");
        assert!(
            breaker.trip(Outage::Timeout, &"timed out").is_none(),
            "already open"
        );
        assert!(breaker.prober().is_none(), "one probe loop at a time");
        assert!(!breaker.admits());
        let mut answers = [false, false, true].into_iter();
        let mut probes = 0;
        let sleeps = std::cell::Cell::new(0);
        // Probes and sleeps are ready at once, so the loop ends within one poll.
        prober
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
        assert!(breaker.prober().is_none(), "nothing to probe while closed");
    }

    /// Opens `breaker` by timeouts: the prober of the call that opened it.
    fn opened(breaker: &CircuitBreaker) -> Prober {
        assert!(breaker.trip(Outage::Timeout, &"timed out").is_none());
        breaker
            .trip(Outage::Timeout, &"timed out")
            .expect("the second timeout in a row opens it")
    }

    #[test]
    fn a_probe_loop_that_is_dropped_or_panics_is_replaced_by_the_next_call() {
        let breaker = CircuitBreaker::with_probe_interval("test", Duration::from_millis(1));
        // Never spawned (a runtime that was shutting down drops the task at once).
        drop(opened(&breaker));
        assert_eq!(breaker.state(), CircuitState::Open);
        // Cancelled while its probe is in flight (the probe never answers).
        let prober = breaker
            .prober()
            .expect("no loop runs: the next call probes");
        assert!(breaker.prober().is_none(), "one probe loop at a time");
        let cancelled = prober
            .probe_until_closed(std::future::pending::<bool>, |_| std::future::ready(()))
            .now_or_never();
        assert!(
            cancelled.is_none(),
            "the probe is still in flight when dropped"
        );
        assert_eq!(breaker.state(), CircuitState::Open, "not left probing");
        // A probe that panics.
        let prober = breaker
            .prober()
            .expect("the dropped loop gave its role back");
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            prober
                .probe_until_closed(
                    || -> std::future::Ready<bool> { panic!("a probe that panics") },
                    |_| std::future::ready(()),
                )
                .now_or_never()
        }));
        assert!(panicked.is_err());
        assert!(!breaker.admits());
        // The next call's loop closes it.
        breaker
            .prober()
            .expect("the panicked loop gave its role back")
            .probe_until_closed(|| std::future::ready(true), |_| std::future::ready(()))
            .now_or_never()
            .expect("nothing to wait for");
        assert!(breaker.admits());
        assert!(breaker.prober().is_none());
    }

    #[test]
    fn one_slow_call_between_answers_keeps_it_closed() {
        let breaker = CircuitBreaker::new("test");
        for _ in 0..5 {
            assert!(breaker.trip(Outage::Timeout, &"timed out").is_none());
            breaker.succeeded();
        }
        assert!(breaker.admits());
        drop(opened(&breaker));
        assert!(!breaker.admits());
    }

    #[test]
    fn an_answer_between_connection_failures_keeps_it_closed() {
        let breaker = CircuitBreaker::new("test");
        for _ in 0..3 {
            for _ in 1..CONNECTION_FAILURES_TO_OPEN {
                assert!(
                    breaker
                        .trip(Outage::Connection, &"connection reset")
                        .is_none()
                );
            }
            breaker.succeeded();
        }
        assert!(breaker.admits());
        assert_eq!(breaker.state(), CircuitState::Closed);
    }

    #[test]
    fn the_probe_loop_returns_at_once_when_closed() {
        let breaker = CircuitBreaker::new("test");
        let prober = opened(&breaker);
        // Closed by another way meanwhile (a test's reset, a closed pool's probe).
        {
            let mut circuit = breaker.lock();
            assert!(circuit.start_probe(Instant::now()));
            circuit.probe_done(true, Instant::now());
        }
        prober
            .probe_until_closed(
                || -> std::future::Ready<bool> { panic!("no probe while closed") },
                |_| std::future::ready(()),
            )
            .now_or_never()
            .expect("nothing to wait for");
        assert_eq!(breaker.state(), CircuitState::Closed);
    }
}
