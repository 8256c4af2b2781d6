//! [`Conn`]: the connection every Redis call of the adapter and the rate-limit store goes
//! through, the [`ConnectionManager`] behind the circuit breaker.

use std::time::Duration;

use authcore::breaker::{CircuitBreaker, Outage, Prober};
use redis::aio::{ConnectionLike, ConnectionManager};
use redis::{Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, Value};

/// The detail of the error a call gets while the breaker is open (recognised by
/// [`is_breaker_open`]).
const BREAKER_OPEN: &str = "circuit breaker open";

/// The shared connection behind the breaker: while the breaker is open every command fails
/// at once with an I/O error ([`is_breaker_open`]); a command that finds Redis unreachable
/// (a timeout, or [`is_connection_failure`]) trips it, and the call that opens it starts a
/// `PING` probe in the background. Cheap to clone: clones share the connection and the breaker.
#[derive(Clone)]
pub(crate) struct Conn {
    manager: ConnectionManager,
    breaker: CircuitBreaker,
    /// The bound on one probe: a connection attempt and a reply.
    probe_timeout: Duration,
}

impl Conn {
    pub fn new(manager: ConnectionManager, probe_timeout: Duration) -> Self {
        Conn {
            manager,
            breaker: CircuitBreaker::new("redis"),
            probe_timeout,
        }
    }

    /// Whether Redis is taken to answer (the breaker is closed).
    pub fn available(&self) -> bool {
        self.breaker.admits()
    }

    /// Tells the breaker what `result` says: a timeout or a connection failure trips it
    /// (the call that opens it spawns the probe), any other answer (a server error
    /// included) means Redis answered.
    fn observe<T>(&self, result: &Result<T, RedisError>) {
        let outage = match result {
            Err(e) if e.is_timeout() => Outage::Timeout,
            Err(e) if is_connection_failure(e) => Outage::Connection,
            _ => return self.breaker.succeeded(),
        };
        let why = result.as_ref().err().map_or("", |e| e.category());
        if let Some(prober) = self.breaker.trip(outage, &why) {
            tokio::spawn(self.clone().probe_until_closed(prober));
        }
    }

    /// The error of a command refused while the breaker is open; when no probe loop runs
    /// (the last one's runtime shut down), this command's runtime starts one.
    fn refused(&self) -> RedisError {
        if let Some(prober) = self.breaker.prober() {
            tokio::spawn(self.clone().probe_until_closed(prober));
        }
        breaker_open()
    }

    /// `PING`s Redis (each bounded by the probe timeout) until it answers, which closes the
    /// breaker.
    async fn probe_until_closed(self, prober: Prober) {
        let timeout = self.probe_timeout;
        let probe = || {
            let mut manager = self.manager.clone();
            async move {
                let ping = redis::cmd("PING");
                let answer = tokio::time::timeout(timeout, ping.query_async::<()>(&mut manager));
                matches!(answer.await, Ok(Ok(())))
            }
        };
        prober.probe_until_closed(probe, tokio::time::sleep).await;
    }
}

/// Whether `e` says Redis is unreachable: I/O errors, a dropped or refused connection, a
/// timeout (not a server error such as `WRONGTYPE`).
pub(crate) fn is_connection_failure(e: &RedisError) -> bool {
    e.is_io_error() || e.is_timeout() || e.is_connection_dropped() || e.is_connection_refusal()
}

/// Whether `e` is the error of a call refused because the breaker is open.
pub(crate) fn is_breaker_open(e: &RedisError) -> bool {
    e.kind() == ErrorKind::Io && e.detail() == Some(BREAKER_OPEN)
}

fn breaker_open() -> RedisError {
    RedisError::from((ErrorKind::Io, "Redis unavailable", BREAKER_OPEN.to_owned()))
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            if !self.breaker.admits() {
                return Err(self.refused());
            }
            let result = self.manager.req_packed_command(cmd).await;
            self.observe(&result);
            result
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            if !self.breaker.admits() {
                return Err(self.refused());
            }
            let result = self
                .manager
                .req_packed_commands(pipeline, offset, count)
                .await;
            self.observe(&result);
            result
        })
    }

    fn get_db(&self) -> i64 {
        self.manager.get_db()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_breaker_error_is_recognised_and_is_a_connection_failure() {
        let open = breaker_open();
        assert!(is_breaker_open(&open));
        assert!(is_connection_failure(&open));
        for other in [
            RedisError::from((ErrorKind::Io, "broken pipe")),
            RedisError::from((
                ErrorKind::UnexpectedReturnType,
                "x",
                BREAKER_OPEN.to_owned(),
            )),
            RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
        ] {
            assert!(!is_breaker_open(&other), "{other:?}");
        }
        let refused = RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert!(is_connection_failure(&refused));
        let wrongtype = RedisError::from((
            ErrorKind::Server(redis::ServerErrorKind::ResponseError),
            "WRONGTYPE",
        ));
        assert!(!is_connection_failure(&wrongtype));
    }
}
