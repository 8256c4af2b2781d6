//! authcore-ldap against a real OpenLDAP `slapd` started by each test (tests/support).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod attacks;
mod manual;
mod signin;
mod support;
