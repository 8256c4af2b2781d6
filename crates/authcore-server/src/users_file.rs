//! A users file as a user source: the operator's list of users, their password hashes,
//! addresses and groups, in the format of Authelia's `users_database.yml`, so that such a
//! file loads unchanged.
//!
//! ```yaml
//! users:
//!   john:
//!     disabled: false
//!     displayname: "John Doe"
//!     password: "$argon2id$v=19$m=65536,t=3,p=4$…"
//!     email: john.doe@example.com
//!     groups: [admins, dev]
//! ```
//!
//! Every hash is checked when the file is read ([`authcore::passwords::parse`]: any
//! format it accepts), so a bad file stops the server at start-up with the line to fix
//! instead of failing a sign-in later. Keys Authelia knows and authcore does not
//! (`given_name`, `picture` …) are ignored. The file is read again when it changes
//! (checked at most once a second, at a sign-in); a new file that does not load is
//! logged with its line and the users already loaded stay.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use authcore::passwords::{PasswordHashing, SourceError, SourceUser, UserSource, parse};
use authcore::providers::email::normalize_email;
use serde::Deserialize;
use tokio::sync::Semaphore;

/// The id of the users file's user source and of the credentials provider that signs its
/// users in (`/auth/callback/users-file`).
pub const USERS_FILE_ID: &str = "users-file";

/// How often, at most, the file's modification time and size are looked at.
const RELOAD_CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// The longest username a file may hold (the credentials sign-in looks up no longer one).
const MAX_USERNAME_BYTES: usize = 256;

/// How long a sign-in waits for a free hashing slot before it answers
/// [`SourceError::Busy`].
const SLOT_WAIT: Duration = Duration::from_secs(10);

/// Why a users file could not be used. The message names the file, the line where it is
/// known, and what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UsersFileError {
    /// The file could not be read.
    #[error("users file {path}: cannot read it: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid users file.
    #[error("users file {path}{}: {message}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
    Invalid {
        /// The file.
        path: String,
        /// The line (1-based) of the offending user or value, where it could be found.
        line: Option<usize>,
        /// What is wrong and what to do.
        message: String,
    },
}

impl UsersFileError {
    /// The line (1-based) the error is about, when known.
    pub fn line(&self) -> Option<usize> {
        match self {
            UsersFileError::Invalid { line, .. } => *line,
            UsersFileError::Read { .. } => None,
        }
    }
}

/// The file as Authelia writes it. Unknown keys are ignored (Authelia's profile fields).
#[derive(Deserialize)]
struct RawFile {
    users: Option<RawUsers>,
}

/// The `users:` mapping in the file's order, a username written twice included (a map
/// would keep the last one silently).
struct RawUsers(Vec<(String, RawUser)>);

impl<'de> Deserialize<'de> for RawUsers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawUsers;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a mapping of usernames to users")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RawUsers, A::Error> {
                let mut users = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    users.push(entry);
                }
                Ok(RawUsers(users))
            }
        }
        d.deserialize_map(Visitor)
    }
}

#[derive(Deserialize)]
struct RawUser {
    #[serde(default)]
    disabled: bool,
    displayname: Option<String>,
    password: String,
    email: Option<String>,
    #[serde(default)]
    groups: Vec<String>,
}

/// One user of the file, checked.
#[derive(Debug)]
struct FileUser {
    username: String,
    name: Option<String>,
    /// The hash as written (trimmed).
    hash: String,
    /// The address, normalised (lower case), as sessions and the gateway compare it.
    email: Option<String>,
    groups: Vec<String>,
    disabled: bool,
}

/// The users of one version of the file, with what an unknown user's sign-in verifies so
/// that it costs what a known user's does.
struct Users {
    by_name: HashMap<String, Arc<FileUser>>,
    /// By normalised address (lower case): sign-in by email.
    by_email: HashMap<String, Arc<FileUser>>,
    /// argon2id with the parameters most of the file's argon2id hashes have.
    hashing: PasswordHashing,
    /// When most hashes are of another format (bcrypt, say): one of them, verified (its
    /// answer dropped) for an unknown user instead of `verify_unknown`'s argon2id.
    decoy: Option<String>,
}

impl Users {
    /// Spends the work of a sign-in of a user of this file, and answers nothing.
    fn verify_unknown(&self, password: &str) {
        match &self.decoy {
            Some(hash) => {
                let _ = self.hashing.verify(hash, password);
            }
            None => self.hashing.verify_unknown(password),
        }
    }
}

impl Users {
    fn find(&self, login: &str) -> Option<&Arc<FileUser>> {
        if let Some(user) = self.by_name.get(login) {
            return Some(user);
        }
        if !login.contains('@') {
            return None;
        }
        normalize_email(login)
            .ok()
            .and_then(|email| self.by_email.get(&email))
    }
}

/// What identifies a version of the file on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

impl Stamp {
    fn of(path: &Path) -> std::io::Result<Self> {
        let meta = std::fs::metadata(path)?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Ok(Stamp {
            modified: meta.modified().ok(),
            len: meta.len(),
            inode,
        })
    }
}

/// When the file was last looked at, and the version then seen.
struct Checked {
    at: Instant,
    stamp: Option<Stamp>,
}

struct Inner {
    path: PathBuf,
    users: RwLock<Arc<Users>>,
    checked: Mutex<Checked>,
}

/// The users of a users file, as a [`UserSource`] (id [`USERS_FILE_ID`]): load it with
/// [`UsersFile::load`] and sign its users in with
/// [`CredentialsProvider::from_source`](authcore::providers::CredentialsProvider::from_source).
///
/// A sign-in looks the user up by username (case-sensitive) or by email address (any
/// case), checks the password against the file's hash on a blocking thread, and answers
/// the user's username (its id), display name, address and groups. An unknown or disabled
/// user costs the same hashing work as a wrong password. Hashes are never rewritten: the
/// file is the operator's.
#[derive(Clone)]
pub struct UsersFile {
    inner: Arc<Inner>,
    /// Verifications running at once, at most one per CPU (each may take tens of MiB).
    slots: Arc<Semaphore>,
}

impl std::fmt::Debug for UsersFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UsersFile")
            .field("path", &self.inner.path)
            .field("users", &self.len())
            .finish_non_exhaustive()
    }
}

impl UsersFile {
    /// Reads and checks the file at `path`.
    pub fn load(path: impl Into<PathBuf>) -> Result<Self, UsersFileError> {
        let path = path.into();
        let stamp = Stamp::of(&path).ok();
        let users = read(&path)?;
        let cpus = std::thread::available_parallelism().map_or(2, usize::from);
        Ok(UsersFile {
            inner: Arc::new(Inner {
                path,
                users: RwLock::new(Arc::new(users)),
                checked: Mutex::new(Checked {
                    at: Instant::now(),
                    stamp,
                }),
            }),
            slots: Arc::new(Semaphore::new(cpus)),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// How many users the file holds now (disabled ones included).
    pub fn len(&self) -> usize {
        self.inner.current().by_name.len()
    }

    /// Whether the file holds no users.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Inner {
    fn current(&self) -> Arc<Users> {
        match self.users.read() {
            Ok(users) => Arc::clone(&users),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Reads the file again if it changed since it was last looked at (at most once per
    /// [`RELOAD_CHECK_INTERVAL`]; another thread already looking is not waited for). A
    /// new file that does not load is logged and the users already loaded stay.
    fn reload_if_changed(&self) {
        let Ok(mut checked) = self.checked.try_lock() else {
            return;
        };
        if checked.at.elapsed() < RELOAD_CHECK_INTERVAL {
            return;
        }
        checked.at = Instant::now();
        let stamp = match Stamp::of(&self.path) {
            Ok(stamp) => stamp,
            Err(e) => {
                if checked.stamp.take().is_some() {
                    tracing::error!(
                        path = %self.path.display(),
                        error = %e,
                        "cannot read the users file; its last users stay"
                    );
                }
                return;
            }
        };
        if checked.stamp.as_ref() == Some(&stamp) {
            return;
        }
        // A file that does not load is reported once per version, not at every check.
        checked.stamp = Some(stamp);
        match read(&self.path) {
            Ok(users) => {
                let count = users.by_name.len();
                match self.users.write() {
                    Ok(mut slot) => *slot = Arc::new(users),
                    Err(poisoned) => *poisoned.into_inner() = Arc::new(users),
                }
                tracing::info!(path = %self.path.display(), users = count, "users file reloaded");
            }
            Err(e) => {
                tracing::error!(
                    line = e.line(),
                    "{e}; the users loaded before stay until the file is fixed"
                );
            }
        }
    }

    /// The blocking part of a sign-in: the reload check, the look-up and the hash.
    fn authenticate(&self, login: &str, password: &str) -> Option<SourceUser> {
        self.reload_if_changed();
        let users = self.current();
        let Some(user) = users.find(login).filter(|u| !u.disabled) else {
            users.verify_unknown(password);
            return None;
        };
        match users.hashing.verify(&user.hash, password) {
            Ok(v) if v.is_match() => {}
            Ok(_) => return None,
            Err(e) => {
                // Checked at load, so not expected; the hash itself is not logged.
                tracing::error!(username = %user.username, error = %e, "users file: a stored hash cannot be read");
                return None;
            }
        }
        let mut found = SourceUser::new(user.username.clone()).groups(user.groups.clone());
        if let Some(name) = &user.name {
            found = found.name(name.clone());
        }
        if let Some(email) = &user.email {
            found = found.email(email.clone());
        }
        Some(found)
    }
}

#[authcore::async_trait]
impl UserSource for UsersFile {
    fn id(&self) -> &str {
        USERS_FILE_ID
    }

    /// The file is the operator's: its addresses are.
    fn vouches_for_addresses(&self) -> bool {
        true
    }

    async fn authenticate(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<SourceUser>, SourceError> {
        if username.is_empty() || password.is_empty() {
            return Ok(None);
        }
        let permit =
            match tokio::time::timeout(SLOT_WAIT, Arc::clone(&self.slots).acquire_owned()).await {
                Ok(Ok(permit)) => permit,
                Ok(Err(_)) | Err(_) => return Err(SourceError::Busy),
            };
        let inner = Arc::clone(&self.inner);
        let (username, password) = (username.to_owned(), password.to_owned());
        let found = tokio::task::spawn_blocking(move || {
            let found = inner.authenticate(&username, &password);
            drop(permit);
            found
        })
        .await
        .map_err(|e| SourceError::Unavailable(format!("a password check failed: {e}").into()))?;
        Ok(found)
    }
}

/// Reads and checks the file at `path`.
fn read(path: &Path) -> Result<Users, UsersFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| UsersFileError::Read {
        path: path.display().to_string(),
        source,
    })?;
    parse_users(&text).map_err(|(line, message)| UsersFileError::Invalid {
        path: path.display().to_string(),
        line,
        message,
    })
}

/// The users of a file's text, checked; an error is the line (where known) and what to fix.
fn parse_users(text: &str) -> Result<Users, (Option<usize>, String)> {
    let raw: RawFile = yaml_serde::from_str(text).map_err(|e| {
        let line = e.location().map(|l| l.line());
        (line, format!("not a users file: {e}"))
    })?;
    let Some(raw_users) = raw.users else {
        return Err((
            None,
            "no `users:` mapping (the file lists `users:` and under it each username with its `password:`)".to_owned(),
        ));
    };
    // Each user's line: by position when every key was found in the text (a username
    // with escapes is written otherwise than it reads), else by name.
    let key_lines = user_key_lines(text);
    let positional = key_lines.len() == raw_users.0.len();
    let mut by_name: HashMap<String, Arc<FileUser>> = HashMap::with_capacity(raw_users.0.len());
    let mut by_email: HashMap<String, Arc<FileUser>> = HashMap::new();
    for (index, (username, raw)) in raw_users.0.into_iter().enumerate() {
        let at = if positional {
            key_lines.get(index).map(|(line, _)| *line)
        } else {
            key_lines
                .iter()
                .find(|(_, key)| *key == username)
                .map(|(line, _)| *line)
        };
        if by_name.contains_key(&username) {
            return Err((
                at,
                format!("user {username:?} is written twice (a duplicate key): keep one"),
            ));
        }
        let bad =
            |line: Option<usize>, what: String| (line.or(at), format!("user {username:?}: {what}"));
        if username.is_empty() || username.trim() != username {
            return Err(bad(
                None,
                "the username is empty or has spaces around it: write it as users sign in".into(),
            ));
        }
        if username.len() > MAX_USERNAME_BYTES || username.chars().any(char::is_control) {
            return Err(bad(
                None,
                format!(
                    "the username holds a control character or is longer than {MAX_USERNAME_BYTES} bytes: rename the user"
                ),
            ));
        }
        let hash = raw.password.trim().to_owned();
        if let Err(e) = parse(&hash) {
            return Err(bad(
                key_line(text, at, "password"),
                format!(
                    "`password` is not a password hash authcore can verify ({e}): put a hash made by `authcore-server hash-password` (argon2id), or an argon2, bcrypt, scrypt or PBKDF2 hash"
                ),
            ));
        }
        let email = match raw.email.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(email) => match normalize_email(email) {
                Ok(normalized) => Some(normalized),
                Err(_) => {
                    return Err(bad(
                        key_line(text, at, "email"),
                        "`email` is not a well-formed address (like john.doe@example.com)".into(),
                    ));
                }
            },
        };
        let name = raw
            .displayname
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty());
        if name
            .as_deref()
            .is_some_and(|n| n.chars().any(char::is_control))
        {
            return Err(bad(
                key_line(text, at, "displayname"),
                "`displayname` holds a control character: remove it".into(),
            ));
        }
        if let Some(group) = raw
            .groups
            .iter()
            .find(|g| g.trim().is_empty() || g.contains(',') || g.chars().any(char::is_control))
        {
            return Err(bad(
                key_line(text, at, "groups"),
                format!(
                    "group {group:?} is empty or holds a comma or a control character (groups travel comma-separated in identity headers): rename it"
                ),
            ));
        }
        let user = Arc::new(FileUser {
            username: username.clone(),
            name,
            hash,
            email: email.clone(),
            groups: raw.groups,
            disabled: raw.disabled,
        });
        if let Some(normalized) = email {
            if let Some(other) = by_email.get(&normalized) {
                return Err(bad(
                    key_line(text, at, "email"),
                    format!(
                        "`email` is also user {:?}'s: an address names one user (it signs in, and links to the same account)",
                        other.username
                    ),
                ));
            }
            by_email.insert(normalized, Arc::clone(&user));
        }
        by_name.insert(username, user);
    }
    Ok(Users {
        hashing: hashing_like(by_name.values().map(|u| u.hash.as_str())),
        decoy: decoy(by_name.values().map(|u| u.hash.as_str())),
        by_name,
        by_email,
    })
}

/// When argon2id hashes are not the majority: a hash of the most common format and cost
/// (`$2b$12`, `$pbkdf2-sha256$29000` …), for unknown users to verify.
fn decoy<'a>(hashes: impl Iterator<Item = &'a str>) -> Option<String> {
    let (mut argon2id, mut total) = (0usize, 0usize);
    let mut classes: HashMap<String, (usize, &str)> = HashMap::new();
    for hash in hashes {
        total += 1;
        if argon2id_params(hash).is_some() {
            argon2id += 1;
            continue;
        }
        // The format and its cost: `$2b$12`, `$scrypt$ln=17,r=8,p=1`, `pbkdf2_sha256$600000`.
        let head = if hash.starts_with('$') { 3 } else { 2 };
        let class = hash.split('$').take(head).collect::<Vec<_>>().join("$");
        classes.entry(class).or_insert((0, hash)).0 += 1;
    }
    if argon2id * 2 >= total {
        return None;
    }
    classes
        .into_iter()
        .max_by(|(a, (n, _)), (b, (m, _))| n.cmp(m).then_with(|| b.cmp(a)))
        .map(|(_, (_, hash))| hash.to_owned())
}

/// The hashing whose `verify_unknown` spends what verifying the file's hashes does: the
/// argon2id parameters most of them use (OWASP's when none is argon2id).
fn hashing_like<'a>(hashes: impl Iterator<Item = &'a str>) -> PasswordHashing {
    let mut counts: HashMap<(u32, u32, u32), usize> = HashMap::new();
    for params in hashes.filter_map(argon2id_params) {
        *counts.entry(params).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|(params, n)| (*n, *params))
        .and_then(|((m, t, p), _)| PasswordHashing::argon2id(m, t, p).ok())
        .unwrap_or_else(PasswordHashing::owasp)
}

/// `m`, `t` and `p` of a `$argon2id$v=19$m=…,t=…,p=…$…` hash.
fn argon2id_params(hash: &str) -> Option<(u32, u32, u32)> {
    let rest = hash.strip_prefix("$argon2id$")?;
    let params = rest.split('$').find(|s| s.starts_with("m="))?;
    let (mut m, mut t, mut p) = (None, None, None);
    for pair in params.split(',') {
        let (k, v) = pair.split_once('=')?;
        let v = v.parse().ok()?;
        match k {
            "m" => m = Some(v),
            "t" => t = Some(v),
            "p" => p = Some(v),
            _ => {}
        }
    }
    Some((m?, t?, p?))
}

/// The indentation and the key of a line `  key: …` (the key unquoted).
fn key_of(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start().len();
    let body = line.trim_start();
    if body.starts_with('#') {
        return None;
    }
    let (key, _) = body.split_once(':')?;
    let key = key.trim();
    let key = key
        .strip_prefix('"')
        .and_then(|k| k.strip_suffix('"'))
        .or_else(|| key.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')))
        .unwrap_or(key);
    Some((indent, key))
}

/// The keys under `users:` with their lines (1-based), in the file's order.
fn user_key_lines(text: &str) -> Vec<(usize, String)> {
    let mut in_users = false;
    let mut user_indent = None;
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        match key_of(line) {
            Some((0, key)) => {
                in_users = key == "users";
                user_indent = None;
            }
            Some((indent, key)) if in_users && indent > 0 => {
                // Users are the keys at the first indentation under `users:`.
                let first = *user_indent.get_or_insert(indent);
                if indent == first {
                    found.push((i + 1, key.to_owned()));
                }
            }
            _ => {}
        }
    }
    found
}

/// The line (1-based) of `key` in the user whose key is at line `user`.
fn key_line(text: &str, user: Option<usize>, key: &str) -> Option<usize> {
    let user = user?;
    let lines: Vec<&str> = text.lines().collect();
    let (user_indent, _) = key_of(lines.get(user - 1)?)?;
    for (i, line) in lines.iter().enumerate().skip(user) {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.len() - line.trim_start().len() <= user_indent {
            break;
        }
        if key_of(line).is_some_and(|(_, k)| k == key) {
            return Some(i + 1);
        }
    }
    Some(user)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lines_of_users_and_keys() {
        let text = "# users\nusers:\n  john:\n    displayname: John\n    password: x\n  'jane':\n    email: a\n    password: y\n";
        assert_eq!(
            user_key_lines(text),
            [(3, "john".to_owned()), (6, "jane".to_owned())]
        );
        assert_eq!(key_line(text, Some(3), "password"), Some(5));
        assert_eq!(key_line(text, Some(6), "password"), Some(8));
        assert_eq!(
            key_line(text, Some(3), "email"),
            Some(3),
            "not in john's block"
        );
    }

    #[test]
    fn unknown_users_verify_the_common_format() {
        let argon = "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA";
        let bcrypt12 = "$2b$12$JjDmj/xcvO0LHh3qR6gVHukRQivtLoyW.z8d2wT9EKEQa856rBJOK";
        let bcrypt4 = "$2b$04$b/LcjGM9OmyQFGwit63qlespAOcaiuwiMLDGW8bMk90qMLcChkMoW";
        assert_eq!(decoy([argon, bcrypt12].into_iter()), None);
        assert_eq!(decoy([].into_iter()), None);
        assert_eq!(
            decoy([argon, bcrypt12, bcrypt4, bcrypt12].into_iter()).as_deref(),
            Some(bcrypt12)
        );
    }

    #[test]
    fn argon2id_parameters_of_a_hash() {
        assert_eq!(
            argon2id_params("$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA"),
            Some((65536, 3, 4))
        );
        assert_eq!(argon2id_params("$2b$12$abc"), None);
        assert_eq!(argon2id_params("$argon2id$v=19$m=x,t=3,p=4$a$b"), None);
    }
}
