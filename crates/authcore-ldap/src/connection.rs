//! Connections to the directory: opened with the connect timeout (TLS included), every
//! operation bounded by the operation timeout, and a small pool of connections bound as the
//! service account for searches.

use std::sync::Mutex;
use std::time::Duration;

use ldap3::{Ldap, LdapConnAsync, LdapConnSettings};
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::error::DirectoryError;
use crate::settings::Validated;

/// Opens a connection (StartTLS or LDAPS as configured) and runs its driver on the runtime.
pub(crate) async fn open(settings: &Validated) -> Result<Ldap, DirectoryError> {
    let mut conn_settings = LdapConnSettings::new()
        .set_conn_timeout(settings.connect_timeout)
        .set_starttls(settings.start_tls);
    if let Some(config) = &settings.tls_config {
        conn_settings = conn_settings.set_config(config.clone());
    }
    // ldap3 bounds the connect and the TLS handshake with the connect timeout; this outer
    // bound keeps the promise should that change.
    let opened = bounded(
        settings.connect_timeout + Duration::from_millis(100),
        LdapConnAsync::with_settings(conn_settings, &settings.url),
    )
    .await
    .map_err(|_| DirectoryError::Timeout("connect"))?;
    let (conn, ldap) = opened.map_err(|e| DirectoryError::connect(&e))?;
    tokio::spawn(async move {
        if let Err(e) = conn.drive().await {
            tracing::debug!(error = %e, "LDAP connection closed");
        }
    });
    Ok(ldap)
}

/// `future` with at most `limit`.
pub(crate) async fn bounded<T>(
    limit: Duration,
    future: impl Future<Output = T>,
) -> Result<T, tokio::time::error::Elapsed> {
    tokio::time::timeout(limit, future).await
}

/// A connection opened and bound as the service account.
pub(crate) async fn open_service(settings: &Validated) -> Result<Ldap, DirectoryError> {
    let mut ldap = open(settings).await?;
    let timeout = settings.operation_timeout;
    let result = bounded(
        timeout,
        ldap.with_timeout(timeout)
            .simple_bind(&settings.bind_dn, &settings.bind_password),
    )
    .await
    .map_err(|_| DirectoryError::Timeout("service bind"))?
    .map_err(|e| DirectoryError::operation("service bind", &e))?;
    if result.rc != 0 {
        return Err(DirectoryError::ServiceBind { rc: result.rc });
    }
    Ok(ldap)
}

/// Service-bound connections for searches: at most `size` in use at once, idle ones kept.
/// A connection goes back only after an operation that succeeded on it, so one that failed
/// (closed by the directory, timed out) is dropped, and the next search opens a new one.
pub(crate) struct ServicePool {
    idle: Mutex<Vec<Ldap>>,
    permits: Semaphore,
}

/// A pooled connection in use; [`PooledConnection::release`] puts it back.
pub(crate) struct PooledConnection<'a> {
    pool: &'a ServicePool,
    pub(crate) ldap: Ldap,
    /// Taken from the idle list rather than opened now: it may have been closed by the
    /// directory meanwhile.
    pub(crate) reused: bool,
    _permit: SemaphorePermit<'a>,
}

impl ServicePool {
    pub(crate) fn new(size: usize) -> Self {
        ServicePool {
            idle: Mutex::new(Vec::with_capacity(size)),
            permits: Semaphore::new(size),
        }
    }

    /// A service connection: an idle one, else one opened now. Waiting for a free one is
    /// bounded by the operation timeout.
    pub(crate) async fn get(
        &self,
        settings: &Validated,
    ) -> Result<PooledConnection<'_>, DirectoryError> {
        let permit = bounded(settings.operation_timeout, self.permits.acquire())
            .await
            .map_err(|_| DirectoryError::Timeout("a free service connection"))?
            .map_err(|_| DirectoryError::Closed)?;
        let idle = self.take_idle();
        let (ldap, reused) = match idle {
            Some(ldap) => (ldap, true),
            None => (open_service(settings).await?, false),
        };
        Ok(PooledConnection {
            pool: self,
            ldap,
            reused,
            _permit: permit,
        })
    }

    /// A fresh service connection in place of `used`, which failed.
    pub(crate) async fn reopen<'a>(
        &'a self,
        used: PooledConnection<'a>,
        settings: &Validated,
    ) -> Result<PooledConnection<'a>, DirectoryError> {
        let PooledConnection { pool, _permit, .. } = used;
        Ok(PooledConnection {
            pool,
            ldap: open_service(settings).await?,
            reused: false,
            _permit,
        })
    }

    fn take_idle(&self) -> Option<Ldap> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(mut ldap) = idle.pop() {
            if !ldap.is_closed() {
                return Some(ldap);
            }
        }
        None
    }
}

impl PooledConnection<'_> {
    /// Back to the idle list, for the next search.
    pub(crate) fn release(self) {
        let mut idle = self.pool.idle.lock().unwrap_or_else(|p| p.into_inner());
        idle.push(self.ldap);
    }
}
