//! The readers of the server's settings, shared by the environment (`config.rs`) and the
//! file (`config_file.rs`). A text reader takes a variable's value (or a file string) and
//! returns `None` where the value stands for the default; its error is the reason, which the
//! caller prefixes with the variable (or the file with its key and line).

use std::net::SocketAddr;
use std::time::Duration;

use serde::de::{Deserialize, Deserializer, Error};

use crate::ops::LogFormat;
use crate::serve::MAX_WORKERS;

/// A secret read from the file (secret, client secrets, SMTP URL with its password, demo
/// password): its `Debug` prints `[redacted]`.
#[derive(Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(transparent)]
pub struct SecretValue(String);

impl SecretValue {
    /// The value.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for SecretValue {
    fn from(value: String) -> Self {
        SecretValue(value)
    }
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// A listen address (blank: the default).
pub fn socket_addr(v: &str) -> Result<Option<SocketAddr>, String> {
    let v = v.trim();
    if v.is_empty() {
        return Ok(None);
    }
    v.parse()
        .map(Some)
        .map_err(|_| format!("is not a socket address (like {})", super::DEFAULT_ADDR))
}

/// `text` or `json`, any case (blank: the default).
pub fn log_format(v: &str) -> Result<Option<LogFormat>, String> {
    v.parse()
        .map(Some)
        .map_err(|_| "is not `text` or `json`".to_owned())
}

const NOT_SECONDS: &str = "is not a number of seconds (like 10 or 0.5)";
const NOT_COUNT: &str = "is not a positive number";

/// Seconds, more than 0 and up to a day.
pub fn seconds(s: f64) -> Result<Duration, String> {
    if s.is_finite() && s > 0.0 && s <= 86_400.0 {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(NOT_SECONDS.to_owned())
    }
}

/// [`seconds`] written as a decimal number (blank: the default).
pub fn seconds_text(v: &str) -> Result<Option<Duration>, String> {
    let v = v.trim();
    if v.is_empty() {
        return Ok(None);
    }
    let s = v.parse::<f64>().map_err(|_| NOT_SECONDS.to_owned())?;
    seconds(s).map(Some)
}

/// A positive count.
pub fn count(n: u64) -> Result<usize, String> {
    usize::try_from(n)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| NOT_COUNT.to_owned())
}

/// [`count`] written in decimal (blank: the default).
pub fn count_text(v: &str) -> Result<Option<usize>, String> {
    let v = v.trim();
    if v.is_empty() {
        return Ok(None);
    }
    let n = v.parse::<u64>().map_err(|_| NOT_COUNT.to_owned())?;
    count(n).map(Some)
}

/// A count of worker threads: at most [`MAX_WORKERS`] (a typo such as `1000000` would
/// otherwise start that many threads).
fn workers_cap(n: usize) -> Result<usize, String> {
    if n > MAX_WORKERS {
        return Err(format!("is more than {MAX_WORKERS} threads"));
    }
    Ok(n)
}

/// A positive count of worker threads, at most [`MAX_WORKERS`].
pub fn workers(n: u64) -> Result<usize, String> {
    count(n).and_then(workers_cap)
}

/// [`workers`] written in decimal (blank: the default).
pub fn workers_text(v: &str) -> Result<Option<usize>, String> {
    count_text(v)?.map(workers_cap).transpose()
}

/// The longest an invitation may last, in days.
pub const MAX_INVITATION_DAYS: u64 = 365;

/// Days an invitation lasts: 1 to [`MAX_INVITATION_DAYS`].
pub fn invitation_days(n: u64) -> Result<Duration, String> {
    days_up_to(n, MAX_INVITATION_DAYS)
}

/// [`invitation_days`] written in decimal (blank: the default).
pub fn invitation_days_text(v: &str) -> Result<Option<Duration>, String> {
    days_text(v, MAX_INVITATION_DAYS)
}

/// `n` days, from 1 to `max`.
fn days_up_to(n: u64, max: u64) -> Result<Duration, String> {
    if (1..=max).contains(&n) {
        Ok(Duration::from_secs(n * 86_400))
    } else {
        Err(format!("is not a number of days from 1 to {max}"))
    }
}

/// [`days_up_to`] written in decimal (blank: the default).
fn days_text(v: &str, max: u64) -> Result<Option<Duration>, String> {
    let v = v.trim();
    if v.is_empty() {
        return Ok(None);
    }
    let n = v
        .parse::<u64>()
        .map_err(|_| format!("is not a number of days from 1 to {max}"))?;
    days_up_to(n, max).map(Some)
}

/// The longest an audit record may be kept, in days (a hundred years: longer is a typo).
pub const MAX_RETENTION_DAYS: u64 = 36_500;

/// Days an audit record is kept: 1 to [`MAX_RETENTION_DAYS`].
pub fn retention_days(n: u64) -> Result<Duration, String> {
    days_up_to(n, MAX_RETENTION_DAYS)
}

/// [`retention_days`] written in decimal (blank: the default).
pub fn retention_days_text(v: &str) -> Result<Option<Duration>, String> {
    days_text(v, MAX_RETENTION_DAYS)
}

/// The longest impersonation: 1 to 480 minutes.
pub fn impersonation_minutes(n: u64) -> Result<Duration, String> {
    if (1..=480).contains(&n) {
        Ok(Duration::from_secs(n * 60))
    } else {
        Err("is not a number of minutes from 1 to 480".into())
    }
}

/// [`impersonation_minutes`] from text.
pub fn impersonation_minutes_text(v: &str) -> Result<Option<Duration>, String> {
    let n: u64 = v
        .trim()
        .parse()
        .map_err(|_| "is not a number of minutes from 1 to 480".to_owned())?;
    impersonation_minutes(n).map(Some)
}

/// `on` or `off`.
pub fn on_off(v: &str) -> Result<Option<bool>, String> {
    match v {
        "on" => Ok(Some(true)),
        "off" => Ok(Some(false)),
        _ => Err("is not `on` or `off`".to_owned()),
    }
}

/// Who may enrol a user's first second factor: `first-factor`, `email-link` or `operator`
/// (blank: the default).
pub fn first_enrolment(v: &str) -> Result<Option<authcore::two_factor::FirstEnrolment>, String> {
    use authcore::two_factor::FirstEnrolment;
    match v.trim() {
        "" => Ok(None),
        "first-factor" => Ok(Some(FirstEnrolment::FirstFactor)),
        "email-link" => Ok(Some(FirstEnrolment::EmailLink)),
        "operator" => Ok(Some(FirstEnrolment::Operator)),
        _ => Err("is not `first-factor`, `email-link` or `operator`".to_owned()),
    }
}

/// A comma-separated list (blank entries dropped; blank: the default).
pub fn comma_list(v: &str) -> Result<Option<Vec<String>>, String> {
    if v.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(
        v.split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect(),
    ))
}

/// A list written as one (blank entries dropped; empty: the default).
pub fn list(items: Vec<String>) -> Option<Vec<String>> {
    let items: Vec<String> = items
        .iter()
        .flat_map(|item| item.split(','))
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    (!items.is_empty()).then_some(items)
}

/// A text value trimmed, unless blank.
pub fn non_blank(v: Option<String>) -> Option<String> {
    v.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

/// A file string read by the text reader `parse`.
fn text<'de, D: Deserializer<'de>, T>(
    d: D,
    parse: fn(&str) -> Result<Option<T>, String>,
) -> Result<Option<T>, D::Error> {
    let v = String::deserialize(d)?;
    parse(&v).map_err(|reason| D::Error::custom(format!("{v:?} {reason}")))
}

/// A file number read by `check`.
fn number<'de, D: Deserializer<'de>, N: Deserialize<'de> + std::fmt::Display + Copy, T>(
    d: D,
    check: fn(N) -> Result<T, String>,
) -> Result<Option<T>, D::Error> {
    let n = N::deserialize(d)?;
    check(n)
        .map(Some)
        .map_err(|reason| D::Error::custom(format!("{n} {reason}")))
}

/// `[server] addr`, `metrics_addr`.
pub fn de_socket_addr<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SocketAddr>, D::Error> {
    text(d, socket_addr)
}

/// `[server] log_format`.
pub fn de_log_format<'de, D: Deserializer<'de>>(d: D) -> Result<Option<LogFormat>, D::Error> {
    text(d, log_format)
}

/// `[server] header_read_timeout`, `request_timeout`, `database_timeout`.
pub fn de_seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    number(d, seconds)
}

/// `[server] max_connections`, `database_max_connections`.
pub fn de_count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    number(d, count)
}

/// `[server] workers`.
pub fn de_workers<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    number(d, workers)
}

/// `[organizations] invitation_days`.
pub fn de_invitation_days<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    number(d, invitation_days)
}

/// `[admin] impersonation_minutes`.
pub fn de_impersonation_minutes<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Duration>, D::Error> {
    number(d, impersonation_minutes)
}

/// `[audit] retention_days`.
pub fn de_retention_days<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    number(d, retention_days)
}

/// `[two_factor] first_enrolment`.
pub fn de_first_enrolment<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<authcore::two_factor::FirstEnrolment>, D::Error> {
    text(d, first_enrolment)
}
