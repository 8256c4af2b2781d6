//! Recording an event in the configured audit log ([`crate::audit`]), for the actions.

use crate::adapter::AuditLogStore;
use crate::audit::AuditEvent;

/// Records `event` in the configured audit log, if it is on. A failure (the store
/// failing) is logged: the action it records has happened and stays done.
pub(crate) async fn record(c: &crate::config::ConfigInner, event: AuditEvent) {
    if !c.auditor.is_on() {
        return;
    }
    let store = c.adapter.as_deref().and_then(|a| a.audit_log());
    if let Err(e) = c.auditor.record(store, &event).await {
        tracing::error!(
            target: "authcore",
            kind = %event.kind,
            error = %e,
            "[auth][error] the audit log could not record an event"
        );
    }
}

/// Where the configuration stores its audit records: `None` when they are not stored.
pub(crate) fn store(c: &crate::config::ConfigInner) -> Option<&dyn AuditLogStore> {
    if !c.auditor.stores() {
        return None;
    }
    c.adapter.as_deref().and_then(|a| a.audit_log())
}
