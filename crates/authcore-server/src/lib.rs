//! The authcore demo server: a credentials sign-in (`demo` / a configurable password), a
//! home page showing the session, and a page only signed-in users may see.
//!
//! Real users sign in from a user source instead: a users file in Authelia's format
//! ([`UsersFile`], `AUTHCORE_USERS_FILE`), whose presence turns the demo user off.
//!
//! OAuth providers are added when their credentials are in the environment (see
//! [`oauth_providers`]): any preset of authcore's catalogue by its Auth.js variables
//! (`AUTH_DISCORD_ID` / `AUTH_DISCORD_SECRET`, `AUTH_KEYCLOAK_ISSUER` …) and a generic OpenID
//! Connect provider with id `oidc` (`AUTH_OIDC_ISSUER`, `AUTH_OIDC_ID`, `AUTH_OIDC_SECRET`,
//! optional `AUTH_OIDC_NAME`).
//!
//! With a database (the default), passkeys (WebAuthn, id `passkey`) and email sign-in
//! (magic links) are offered too. Magic links go
//! out through the SMTP relay in `SMTP_URL` (`smtp://user:pass@host:587`, `smtps://…`), or,
//! when it is not set, are printed to the terminal by a console sender.
//!
//! [`ServerConfig::from_env`] (or [`ServerConfig::from_file`]) reads the configuration and
//! [`ServerConfig::build`] opens what it names and builds the [`Server`]: its handler and
//! its axum [`Router`](axum::Router), which the `authcore-server` binary serves. [`router`]
//! serves an [`Auth`](authcore::Auth) configured elsewhere with the demo's pages. The
//! provider configuration is mirrored by a Node (Auth.js) server for load comparisons: keep
//! both the same.
//!
//! The crate is configuration → composition → listener: [`config`] and [`config_file`]
//! read the settings (the environment over the file), `server` composes the handler, the
//! demo's pages, the gateway ([`authcore_gateway`]) and the OpenID Provider
//! ([`authcore_oidc_provider`]), and [`serve`] and [`ops`] run the listener, the probes and
//! the metrics; [`operator`] holds what the operator's commands do to a built [`Server`]
//! (invitations, organizations). The demo's pages and user are the `demo` module, which only the composition
//! uses.
#![forbid(unsafe_code)]

pub mod config;
pub mod config_file;
mod config_value;
mod demo;
mod host_trust;
pub mod keycloak_import;
pub mod operator;
pub mod ops;
mod providers;
pub mod serve;
mod server;
mod users_file;
pub use config::{
    DEFAULT_ADDR, DEFAULT_DATABASE_URL, DEFAULT_DEMO_PASSWORD, DEFAULT_EMAIL_FROM, EmailDelivery,
    PasswordOptions, ServerConfig, ServerConfigError, redact_url_password,
};
pub use config_file::{ConfigFile, ConfigFileError, SecretValue};
pub use demo::{DEMO_EMAIL, DEMO_USERNAME, router};
pub use host_trust::{HostTrust, LOOPBACK_HOSTS, host_trust};
pub use providers::{DEFAULT_OIDC_NAME, email_provider, oauth_providers};
pub use server::{Server, ServerError, ServerService, password_accounts};
pub use users_file::{USERS_FILE_ID, UsersFile, UsersFileError};
