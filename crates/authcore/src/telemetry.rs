//! Metrics authcore records through the `metrics` facade (the `metrics` feature; without it
//! the names below are still defined and nothing is recorded), as it logs through `tracing`:
//! nothing is kept or exported unless the host installs a recorder (for Prometheus,
//! `metrics-exporter-prometheus`, as `authcore-server` does); without one each record is a
//! check of one atomic. Label values are bounded: configured provider ids (or `unknown`),
//! Auth.js error type names, and the fixed outcomes below.
//!
//! | Name | Kind | Labels |
//! |------|------|--------|
//! | [`SIGN_INS`] | counter | `provider`, `outcome` (`success`, or the Auth.js error type: `CredentialsSignin`, `OAuthCallbackError`, `AccessDenied` …) |
//! | [`RATE_LIMITED`] | counter | `limit` (`credentials_per_identifier`, `requests_per_client` …) |
//! | [`AUDIT_SINK_DROPPED`] | counter | `sink` (`jsonLines`, `webhook`), `reason` (`queueFull`: the sink's queue was full; `failed`: written or sent in vain) |
//! | [`SESSION_READS`] | counter | `strategy` (`jwt`, `database`), `outcome` (`active`; `none`: no cookie; `invalid`: expired, unknown or forged; `error`: the session store failed) |
//! | [`STORE_AVAILABLE`] | gauge | `store` (`database`, `redis`): 1 while the store's circuit breaker is closed, 0 while it is open ([`crate::breaker`]) |

#[cfg(feature = "metrics")]
use metrics::{Key, Label, Metadata};

/// Callbacks (`/callback/<provider>`) that ended a sign-in, by provider and outcome.
pub const SIGN_INS: &str = "authcore_sign_ins_total";
/// Session reads (`/session`, and the reads of guards and the gateway), by strategy and
/// outcome.
pub const SESSION_READS: &str = "authcore_session_reads_total";

/// What a session read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionReadOutcome {
    /// A valid session.
    Active = 0,
    /// No session cookie.
    None = 1,
    /// A cookie that is not (or no longer) a session: expired, unknown, forged.
    Invalid = 2,
    /// The session store failed.
    Error = 3,
}

#[cfg(feature = "metrics")]
/// The labels of every (strategy, outcome) pair, indexed `[database][outcome]`: session
/// reads are the hot path, and static labels make their key without an allocation.
static SESSION_READ_LABELS: [[[Label; 2]; 4]; 2] = {
    const fn pair(strategy: &'static str, outcome: &'static str) -> [Label; 2] {
        [
            Label::from_static_parts("strategy", strategy),
            Label::from_static_parts("outcome", outcome),
        ]
    }
    const fn outcomes(strategy: &'static str) -> [[Label; 2]; 4] {
        [
            pair(strategy, "active"),
            pair(strategy, "none"),
            pair(strategy, "invalid"),
            pair(strategy, "error"),
        ]
    }
    [outcomes("jwt"), outcomes("database")]
};

#[cfg(feature = "metrics")]
static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

/// Counts one session read.
pub(crate) fn session_read(database: bool, outcome: SessionReadOutcome) {
    #[cfg(not(feature = "metrics"))]
    let _ = (database, outcome);
    #[cfg(feature = "metrics")]
    {
        let labels = &SESSION_READ_LABELS[usize::from(database)][outcome as usize];
        let key = Key::from_static_parts(SESSION_READS, labels);
        metrics::with_recorder(|r| r.register_counter(&key, &METADATA)).increment(1);
    }
}

/// Requests refused by a rate limit, by limit name.
pub const RATE_LIMITED: &str = "authcore_rate_limited_total";

/// Counts one request refused by the rate limit `limit`.
pub(crate) fn rate_limited(limit: &'static str) {
    #[cfg(not(feature = "metrics"))]
    let _ = limit;
    #[cfg(feature = "metrics")]
    metrics::counter!(RATE_LIMITED, "limit" => limit).increment(1);
}

/// Counts one sign-in callback: `provider` is a configured provider's id (or `unknown`),
/// `error` the Auth.js type of the error that ended it, if any.
pub(crate) fn sign_in(provider: Option<&str>, error: Option<&'static str>) {
    #[cfg(not(feature = "metrics"))]
    let _ = (provider, error);
    #[cfg(feature = "metrics")]
    {
        let provider = provider.unwrap_or("unknown").to_owned();
        metrics::counter!(SIGN_INS, "provider" => provider, "outcome" => error.unwrap_or("success"))
            .increment(1);
    }
}

/// Audit records a sink (`audit-sinks` feature) did not pass on, by sink and reason.
pub const AUDIT_SINK_DROPPED: &str = "authcore_audit_sink_dropped_total";

/// Counts one audit record that sink `sink` did not pass on, for `reason`.
#[cfg(feature = "audit-sinks")]
pub(crate) fn audit_sink_dropped(sink: &'static str, reason: &'static str) {
    #[cfg(not(feature = "metrics"))]
    let _ = (sink, reason);
    #[cfg(feature = "metrics")]
    metrics::counter!(AUDIT_SINK_DROPPED, "sink" => sink, "reason" => reason).increment(1);
}

/// Whether a backend store is reachable, by store: 1 while its circuit breaker
/// ([`crate::breaker`]) is closed, 0 while it is open (gauge).
pub const STORE_AVAILABLE: &str = "authcore_store_available";

/// Records whether the store labelled `store` is available.
pub(crate) fn store_available(store: &'static str, available: bool) {
    #[cfg(not(feature = "metrics"))]
    let _ = (store, available);
    #[cfg(feature = "metrics")]
    metrics::gauge!(STORE_AVAILABLE, "store" => store).set(if available { 1.0 } else { 0.0 });
}
