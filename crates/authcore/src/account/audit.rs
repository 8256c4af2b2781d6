//! The stored audit log through `Auth` (see [`crate::audit`]): reading, checking and
//! pruning it, and recording a host's own events.

use time::OffsetDateTime;

use crate::adapter::{AdapterError, AuditLogStore, AuditQuery, AuditRecord};
use crate::audit::{AuditEvent, ChainReport, PRUNED, check};

/// Why an audit log call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// Records are not stored ([`AuditLog::store`](crate::audit::AuditLog::store) is off).
    #[error("the audit log is not stored: turn AuditLog::store on")]
    NotStored,
    /// The store failed.
    #[error(transparent)]
    Adapter(#[from] AdapterError),
}

impl crate::Auth {
    /// Records `event` in the audit log (stored and handed to the sinks), for what the host
    /// does itself (the OpenID Provider's grants, its own administrators' tools). Nothing
    /// happens when the audit log is off.
    pub async fn record_audit(&self, event: AuditEvent) {
        crate::actions::audit::record(&self.config().inner, event).await;
    }

    /// The stored audit records matching `query`.
    pub async fn audit_records(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, AuditError> {
        self.audit_store()?
            .query_audit_records(query)
            .await
            .map_err(AuditError::from)
    }

    /// Checks the stored log's chain from its first record to its last ([`check`]).
    pub async fn check_audit_log(&self) -> Result<ChainReport, AuditError> {
        Ok(check(self.audit_store()?).await?)
    }

    /// Deletes the stored records older than the retention
    /// ([`AuditLog::retention`](crate::audit::AuditLog::retention)) and
    /// records what went (an `audit.pruned` record); how many went. Hosts call it now and
    /// then (the server does, hourly); nothing goes without a retention.
    pub async fn prune_audit_log(&self) -> Result<u64, AuditError> {
        let c = &self.config().inner;
        let store = self.audit_store()?;
        let Some(retention) = c.auditor.retention() else {
            return Ok(0);
        };
        let cutoff = OffsetDateTime::now_utc()
            .checked_sub(time::Duration::try_from(retention).unwrap_or(time::Duration::MAX))
            .unwrap_or(time::PrimitiveDateTime::MIN.assume_utc());
        // The newest record older than the cutoff: everything up to it goes.
        let newest_old = store
            .query_audit_records(&AuditQuery {
                until: Some(cutoff),
                ascending: false,
                limit: 1,
                ..AuditQuery::default()
            })
            .await?;
        let Some(last) = newest_old.first() else {
            return Ok(0);
        };
        // The retention record goes in first: the chain stays anchored whatever happens
        // to the deletion after it.
        c.auditor
            .record(
                Some(store),
                &AuditEvent::new(PRUNED)
                    .with("throughSeq", last.seq)
                    .with("lastHash", last.hash.clone()),
            )
            .await?;
        Ok(store.prune_audit_records(last.seq).await?)
    }

    fn audit_store(&self) -> Result<&dyn AuditLogStore, AuditError> {
        crate::actions::audit::store(&self.config().inner).ok_or(AuditError::NotStored)
    }
}
