#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod dispatch;
mod layer;
mod principal;
mod router;
mod service;
mod session;

pub use dispatch::AuthDispatch;
pub use layer::{RequireAuth, RequireAuthLayer};
pub use principal::{CurrentPrincipal, PrincipalRejection};
pub use router::AuthRouterExt;
pub use service::AuthService;
pub use session::{OptionalSession, Session, SessionRequired};

/// The README's example, compiled as a doctest so it cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The manual's getting-started example, compiled as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/manual/getting-started.md")]
pub struct ManualDoctests;

/// The organizations chapter's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/manual/organizations.md")]
pub struct OrganizationsDoctests;

/// The administrators chapter's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/manual/administrators.md")]
pub struct AdministratorsDoctests;

/// The migration guide's examples (a session reader beside Next.js), compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/manual/migrating-from-authjs.md")]
pub struct MigrationDoctests;
