//! `authcore-server`: serves the authcore demo app (see the crate docs of
//! `authcore_server`). Configuration comes from a TOML file (`--config <path>` or
//! `AUTHCORE_CONFIG`; see `authcore.example.toml`) and the environment, which wins:
//! `AUTHCORE_ADDR`, `AUTH_SECRET`, `AUTHCORE_DEMO_PASSWORD`, `AUTH_URL`, `AUTH_TRUST_HOST`,
//! `AUTHCORE_DATABASE_URL`, `AUTHCORE_USERS_FILE`, `SMTP_URL`, `AUTH_GITHUB_*` …, `RUST_LOG`.
//!
//! `authcore-server hash-password` reads a password from standard input and prints its
//! argon2id hash, for a users file; `add-user`, `invite` and `create-organization` act on
//! the configured database (see the usage text).
#![forbid(unsafe_code)]

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use authcore::SignUpPolicy;
use authcore::env::Env;
use authcore::passwords::PasswordHashing;
use authcore_server::{DEMO_USERNAME, HostTrust, ServerConfig, ops};

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("hash-password") => return hash_password(),
        Some("add-user") => return add_user(),
        Some("invite") => return invite(),
        Some("create-organization") => return create_organization(),
        Some("import-keycloak") => return import_keycloak(),
        Some("audit-check") => return audit_check(),
        _ => {}
    }
    // The log format is a setting: read the configuration first (its errors are printed).
    let config = match config_path().and_then(|path| read_config(path.as_deref())) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("authcore-server: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Held to the end of `main`: its drop writes the log lines still queued.
    let _log = ops::init_logging(config.log_format);
    let runtime = match authcore_server::serve::runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("authcore-server: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("authcore-server: {e}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: authcore-server [--config <file.toml>]\n       \
authcore-server hash-password\n       \
authcore-server add-user <email> [--name <name>] [--config <file.toml>]\n       \
authcore-server invite <email> [--organization <slug>] [--role <role>]... [--config <file.toml>]\n       \
authcore-server create-organization <name> --owner <email> [--slug <slug>] [--config <file.toml>]\n       \
authcore-server import-keycloak <realm.json> [--config <file.toml>]\n       \
authcore-server audit-check [--config <file.toml>]\n\n\
Serves the authcore demo on AUTHCORE_ADDR (default 127.0.0.1:3000). Settings come from the\n\
TOML file (--config, or AUTHCORE_CONFIG; see authcore.example.toml) and from environment\n\
variables, which take precedence.\n\n\
hash-password reads a password from standard input (asked for twice, without echo, on a\n\
terminal) and prints its argon2id hash for the `password:` of a users file\n\
(AUTHCORE_USERS_FILE, [users_file] path).\n\n\
add-user gives the user of <email> (made if there is none) a password account in the\n\
configured database: the password is read as hash-password reads it, and must meet the\n\
password policy (12 to 128 characters, not a common or breached password). Users then sign\n\
in with it when password accounts are on ([passwords] enabled, AUTHCORE_PASSWORDS=on).\n\n\
invite makes an invitation as the operator, with organizations on ([organizations] enabled):\n\
to sign up ([auth] sign_up = \"invite\" lets only invited addresses become users), or with\n\
--organization to that organization, as a member or with the --role given (repeatable). It is\n\
mailed when SMTP_URL is set, and its link is printed for you to deliver otherwise.\n\n\
create-organization makes an organization owned by the existing user of --owner (its slug\n\
made from the name unless --slug gives one).\n\n\
import-keycloak brings the users of a Keycloak realm export (kc.sh export --realm <name>\n\
--file realm.json) into the configured database: their addresses, names, groups and\n\
PBKDF2 passwords, which are verified as they are and rehashed to argon2id at the next sign-in.\n\
Disabled users and users without an address are skipped and named; no password that a user\n\
already has here is overwritten.\n\n\
audit-check checks the audit log kept in the configured database from its first record to\n\
its last: each record's hash, and that each follows the one before. It prints what it\n\
checked and each fault found, and exits with 1 when there is one (2 when it cannot check).";

/// Where the audit log goes, for the start-up lines; none when nowhere.
fn audit_summary(
    audit: &authcore_server::config::AuditSettings,
    has_database: bool,
) -> Option<String> {
    let mut parts = Vec::new();
    match (audit.store, audit.retention) {
        (Some(false), _) => {}
        _ if !has_database => {}
        (_, Some(retention)) => parts.push(format!(
            "kept in the database for {} days",
            retention.as_secs() / 86_400
        )),
        (_, None) => parts.push("kept in the database".to_owned()),
    }
    match &audit.json_lines {
        Some(authcore::audit::JsonLinesTarget::File(path)) => {
            parts.push(format!("JSON lines to {}", path.display()));
        }
        Some(_) => parts.push("JSON lines to standard output".to_owned()),
        None => {}
    }
    match audit.webhooks.len() {
        0 => {}
        1 => parts.push("1 webhook".to_owned()),
        n => parts.push(format!("{n} webhooks")),
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `hash-password`: a password from standard input, its argon2id hash on standard output.
fn hash_password() -> ExitCode {
    if let Some(extra) = std::env::args().nth(2) {
        eprintln!(
            "authcore-server hash-password: unexpected argument {extra:?} (the password is read from standard input)\n\n{USAGE}"
        );
        return ExitCode::FAILURE;
    }
    let password = match read_password() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("authcore-server hash-password: {e}");
            return ExitCode::FAILURE;
        }
    };
    match PasswordHashing::owasp().hash(&password) {
        Ok(hash) => {
            println!("{hash}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("authcore-server hash-password: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `add-user <email> [--name <name>] [--config <file>]`: the user of `email` (made, with the
/// address taken as verified: the operator vouches for it, if there is none) gets the
/// password read from standard input, kept in the configured database.
fn add_user() -> ExitCode {
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("authcore-server add-user: {e}");
        ExitCode::FAILURE
    };
    let (email, name, path) = match add_user_args(std::env::args().skip(2)) {
        Ok(a) => a,
        Err(e) => return fail(&format!("{e}\n\n{USAGE}")),
    };
    let config = match command_config(path) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let Some(url) = config.database_url.clone() else {
        return fail(
            &"there is no database to keep the password in: set AUTHCORE_DATABASE_URL (or [server] database_url)",
        );
    };
    let email = match authcore::providers::email::normalize_email(&email) {
        Ok(e) => e,
        Err(e) => return fail(&format!("{email:?}: {e}")),
    };
    let password = match read_password() {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let context = authcore::passwords::PasswordContext::new().email(&email);
    if let Err(violation) =
        authcore::passwords::PasswordPolicy::default().check(&password, &context)
    {
        return fail(&format!("the password is refused: {violation}"));
    }
    let runtime = match authcore_server::serve::runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    let pool = config.database_pool;
    match runtime.block_on(give_password(&url, pool, &email, name, &password)) {
        Ok(made) => {
            let what = if made {
                "made, with a password"
            } else {
                "given a password"
            };
            println!("{email}: {what} (users sign in with it when AUTHCORE_PASSWORDS=on)");
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

/// The email, `--name` and `--config` of `add-user`'s arguments.
fn add_user_args(
    args: impl Iterator<Item = String>,
) -> Result<(String, Option<String>, Option<std::path::PathBuf>), String> {
    let mut parsed = CommandArgs::parse(args, &["name"], &[])?;
    let email = parsed.only_positional("add-user needs the user's email address")?;
    Ok((email, parsed.option("name"), parsed.config))
}

/// The arguments of an operator command: what is not an option, the options by name (each
/// `--name value` or `--name=value`) and `--config` (`-c`).
#[derive(Debug, Default)]
struct CommandArgs {
    positional: Vec<String>,
    options: Vec<(String, String)>,
    config: Option<std::path::PathBuf>,
}

impl CommandArgs {
    /// Reads `args`: options of `once` may be given once, those of `repeated` any number of
    /// times; anything else starting with `-` is refused.
    fn parse(
        mut args: impl Iterator<Item = String>,
        once: &[&str],
        repeated: &[&str],
    ) -> Result<Self, String> {
        let mut parsed = CommandArgs::default();
        while let Some(arg) = args.next() {
            if arg == "-c" {
                parsed.config = Some(args.next().ok_or("--config needs a file path")?.into());
                continue;
            }
            let Some(option) = arg.strip_prefix("--") else {
                if arg.starts_with('-') {
                    return Err(format!("unexpected argument {arg:?}"));
                }
                parsed.positional.push(arg);
                continue;
            };
            let (name, inline) = match option.split_once('=') {
                Some((name, value)) => (name, Some(value.to_owned())),
                None => (option, None),
            };
            let known = name == "config" || once.contains(&name) || repeated.contains(&name);
            if !known {
                return Err(format!("unexpected argument {arg:?}"));
            }
            let value = match inline {
                Some(v) => v,
                None => args.next().ok_or_else(|| {
                    if name == "config" {
                        "--config needs a file path".to_owned()
                    } else {
                        format!("--{name} needs a value")
                    }
                })?,
            };
            if name == "config" {
                parsed.config = Some(value.into());
            } else if once.contains(&name) && parsed.option(name).is_some() {
                return Err(format!("--{name} is given twice"));
            } else {
                parsed.options.push((name.to_owned(), value));
            }
        }
        Ok(parsed)
    }

    /// The one positional argument (`missing` when there is none).
    fn only_positional(&mut self, missing: &str) -> Result<String, String> {
        match self.positional.len() {
            0 => Err(missing.to_owned()),
            1 => Ok(self.positional.remove(0)),
            _ => Err(format!("unexpected argument {:?}", self.positional[1])),
        }
    }

    /// The value of option `name`, if given.
    fn option(&self, name: &str) -> Option<String> {
        self.values(name).next()
    }

    /// Every value of option `name`, in order.
    fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = String> + 'a {
        self.options
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }
}

/// The configuration of an operator command: its `--config` file, else `AUTHCORE_CONFIG`,
/// else the environment alone.
fn command_config(path: Option<std::path::PathBuf>) -> Result<ServerConfig, String> {
    read_config(
        path.or_else(|| std::env::var_os("AUTHCORE_CONFIG").map(Into::into))
            .as_deref(),
    )
}

/// Builds the server of `config` (opening its database) and runs `command` on it.
fn on_server<T>(
    config: ServerConfig,
    command: impl AsyncFnOnce(&authcore_server::Server) -> Result<T, String>,
) -> Result<T, String> {
    let runtime =
        authcore_server::serve::runtime().map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async {
        let server = config.build().await.map_err(|e| e.to_string())?;
        command(&server).await
    })
}

/// `invite <email> [--organization <slug>] [--role <role>]... [--config <file>]`: an
/// invitation made as the operator, mailed where the configuration mails, its link printed.
fn invite() -> ExitCode {
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("authcore-server invite: {e}");
        ExitCode::FAILURE
    };
    let mut args = match CommandArgs::parse(std::env::args().skip(2), &["organization"], &["role"])
    {
        Ok(a) => a,
        Err(e) => return fail(&format!("{e}\n\n{USAGE}")),
    };
    let email = match args.only_positional("invite needs the address to invite") {
        Ok(e) => e,
        Err(e) => return fail(&format!("{e}\n\n{USAGE}")),
    };
    let organization = args.option("organization");
    let roles: Vec<String> = args.values("role").collect();
    let config = match command_config(args.config.take()) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    if config.public_url().is_none() {
        return fail(
            &"the invitation's link is on the server's public URL: set AUTH_URL (or [auth] url)",
        );
    }
    if organization.is_none() && config.sign_up == SignUpPolicy::Closed {
        return fail(
            &"sign-up is closed, so an invitation to sign up would let nobody in: set [auth] sign_up = \"invite\" (AUTHCORE_SIGN_UP=invite), or invite to an organization with --organization",
        );
    }
    let smtp = matches!(config.email, authcore_server::EmailDelivery::Smtp(_));
    let sent = on_server(config, async |server| {
        server
            .invite(&email, organization.as_deref(), &roles)
            .await
            .map_err(|e| e.to_string())
    });
    let sent = match sent {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let invitation = &sent.invitation;
    let to = match &organization {
        Some(slug) => format!("to {slug} as {}", invitation.roles.join(", ")),
        None => "to sign up".to_owned(),
    };
    let expires = invitation
        .expires
        .replace_nanosecond(0)
        .unwrap_or(invitation.expires)
        .format(&authcore::time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let mailed = if smtp && sent.mailed {
        "mailed"
    } else {
        "not mailed (no SMTP_URL)"
    };
    println!(
        "{}: invited {to} until {expires}, {mailed}; its link, for that address only:",
        invitation.email
    );
    println!("{}", sent.link);
    ExitCode::SUCCESS
}

/// `create-organization <name> --owner <email> [--slug <slug>] [--config <file>]`: an
/// organization owned by an existing user, made as the operator.
fn create_organization() -> ExitCode {
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("authcore-server create-organization: {e}");
        ExitCode::FAILURE
    };
    let mut args = match CommandArgs::parse(std::env::args().skip(2), &["owner", "slug"], &[]) {
        Ok(a) => a,
        Err(e) => return fail(&format!("{e}\n\n{USAGE}")),
    };
    let name = match args.only_positional("create-organization needs the organization's name") {
        Ok(n) => n,
        Err(e) => return fail(&format!("{e}\n\n{USAGE}")),
    };
    let Some(owner) = args.option("owner") else {
        return fail(&format!(
            "create-organization needs --owner <email>: the user who owns it\n\n{USAGE}"
        ));
    };
    let slug = args.option("slug");
    let config = match command_config(args.config.take()) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let made = on_server(config, async |server| {
        server
            .create_organization(&name, &owner, slug.as_deref())
            .await
            .map_err(|e| e.to_string())
    });
    match made {
        Ok(org) => {
            println!(
                "organization {:?} made: slug {}, id {}, owned by {owner}",
                org.name, org.slug, org.id
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

/// `audit-check [--config <file>]`: the stored audit log's chain checked
/// ([`authcore::Auth::check_audit_log`]), the report printed; exit 1 on a fault.
fn audit_check() -> ExitCode {
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("authcore-server audit-check: {e}");
        ExitCode::from(2)
    };
    let mut args = match CommandArgs::parse(std::env::args().skip(2), &[], &[]) {
        Ok(a) => a,
        Err(e) => return fail(&format!("{e}\n\n{USAGE}")),
    };
    if let Some(extra) = args.positional.first() {
        return fail(&format!("unexpected argument {extra:?}\n\n{USAGE}"));
    }
    let mut config = match command_config(args.config.take()) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    if config.database_url.is_none() {
        return fail(
            &"there is no database whose audit log to check: set AUTHCORE_DATABASE_URL (or [server] database_url)",
        );
    }
    // The check reads the stored log (whether the server is set to append to it or not),
    // and sends nothing to the JSON lines or the webhooks.
    config.audit.store = Some(true);
    config.audit.json_lines = None;
    config.audit.webhooks.clear();
    let report = on_server(config, async |server| {
        server
            .auth()
            .check_audit_log()
            .await
            .map_err(|e| e.to_string())
    });
    let report = match report {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    print!("{}", audit_report(&report));
    if report.faults.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The words of an audit check's report.
fn audit_report(report: &authcore::audit::ChainReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "records checked: {}", report.checked);
    if let (Some(first), Some(last)) = (report.first, report.last) {
        let _ = writeln!(out, "first record: {first}");
        let _ = writeln!(out, "last record: {last}");
    }
    if let Some(hash) = &report.last_hash {
        let _ = writeln!(
            out,
            "last hash: {hash} (note it elsewhere: a later check that ends before it shows records removed from the end)"
        );
    }
    if report.faults.is_empty() {
        out.push_str("the chain is whole: no record was altered or removed\n");
    } else {
        let _ = writeln!(out, "faults: {}", report.faults.len());
        for fault in &report.faults {
            let _ = writeln!(out, "  {fault}");
        }
    }
    out
}

/// `import-keycloak <realm.json> [--config <file>]`: the users of a Keycloak realm export
/// brought into the configured database.
fn import_keycloak() -> ExitCode {
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("authcore-server import-keycloak: {e}");
        ExitCode::FAILURE
    };
    let mut args = match CommandArgs::parse(std::env::args().skip(2), &[], &[]) {
        Ok(a) => a,
        Err(e) => return fail(&format!("{e}\n\n{USAGE}")),
    };
    let path = match args.only_positional("import-keycloak needs the realm export's file") {
        Ok(p) => p,
        Err(e) => return fail(&format!("{e}\n\n{USAGE}")),
    };
    let realm: serde_json::Value = match std::fs::read(&path)
        .map_err(|e| e.to_string())
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => return fail(&format!("{path}: {e}")),
    };
    let config = match command_config(args.config.take()) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    let report = on_server(config, async |server| {
        let db = server.database().ok_or(
            "there is no database to import into: set AUTHCORE_DATABASE_URL (or [server] database_url)",
        )?;
        authcore_server::keycloak_import::import_realm(db, &realm)
            .await
            .map_err(|e| e.to_string())
    });
    match report {
        Ok(r) => {
            println!(
                "{path}: {} users made, {} matched by address, {} passwords imported, {} skipped",
                r.created,
                r.matched,
                r.passwords,
                r.skipped.len()
            );
            for (user, why) in &r.skipped {
                println!("  skipped {user}: {why}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

/// Opens the database at `url` (migrated), finds or makes the user of `email`, and sets its
/// password: whether the user was made.
async fn give_password(
    url: &str,
    pool: authcore_sqlx::PoolSettings,
    email: &str,
    name: Option<String>,
    password: &str,
) -> Result<bool, String> {
    use authcore::adapter::{Adapter, NewUser};
    let shown = authcore_server::redact_url_password(url);
    let db = authcore_sqlx::SqlxAdapter::connect_with(url, pool)
        .await
        .map_err(|e| format!("cannot open the database {shown}: {e}"))?;
    db.migrate()
        .await
        .map_err(|e| format!("cannot migrate the database {shown}: {e}"))?;
    let existing = db
        .get_user_by_email(email)
        .await
        .map_err(|e| e.to_string())?;
    let made = existing.is_none();
    let user = match existing {
        Some(u) => u,
        None => db
            .create_user(NewUser {
                name,
                email: Some(email.to_owned()),
                email_verified: Some(authcore::time::OffsetDateTime::now_utc()),
                ..NewUser::default()
            })
            .await
            .map_err(|e| e.to_string())?,
    };
    authcore_server::password_accounts(&db)
        .map_err(|e| e.to_string())?
        .set_password(&user.id, password)
        .await
        .map_err(|e| e.to_string())?;
    Ok(made)
}

/// The password: one line of standard input; on a terminal, asked for twice with the echo
/// off.
fn read_password() -> Result<String, String> {
    let stdin = std::io::stdin();
    let password = if stdin.is_terminal() {
        let first = prompt_hidden("Password: ")?;
        let again = prompt_hidden("Again: ")?;
        if first != again {
            return Err("the two passwords differ".to_owned());
        }
        first
    } else {
        let mut line = String::new();
        stdin
            .lock()
            .read_line(&mut line)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        strip_line_end(line)
    };
    if password.is_empty() {
        return Err("the password is empty".to_owned());
    }
    Ok(password)
}

/// `line` without its `\n` or `\r\n`.
fn strip_line_end(mut line: String) -> String {
    if line.ends_with('\n') {
        line.pop();
        if line.ends_with('\r') {
            line.pop();
        }
    }
    line
}

/// Writes `prompt` to standard error and reads a line from the terminal with its echo off
/// (put back afterwards).
fn prompt_hidden(prompt: &str) -> Result<String, String> {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let mut stderr = std::io::stderr();
    let _ = write!(stderr, "{prompt}");
    let _ = stderr.flush();
    let saved = tcgetattr(&stdin).ok();
    if let Some(saved) = &saved {
        let mut quiet = saved.clone();
        quiet.local_modes.remove(LocalModes::ECHO);
        let _ = tcsetattr(&stdin, OptionalActions::Now, &quiet);
    }
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    if let Some(saved) = &saved {
        let _ = tcsetattr(&stdin, OptionalActions::Now, saved);
    }
    let _ = writeln!(stderr);
    read.map_err(|e| format!("cannot read the password: {e}"))?;
    Ok(strip_line_end(line))
}

/// `--config <path>` (or `--config=<path>`), else `AUTHCORE_CONFIG`.
fn config_path() -> Result<Option<std::path::PathBuf>, String> {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            "-c" | "--config" => {
                path = Some(args.next().ok_or("--config needs a file path")?.into());
            }
            other => match other.strip_prefix("--config=") {
                Some(p) => path = Some(p.into()),
                None => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
            },
        }
    }
    Ok(path.or_else(|| std::env::var_os("AUTHCORE_CONFIG").map(Into::into)))
}

fn read_config(path: Option<&std::path::Path>) -> Result<ServerConfig, String> {
    match path {
        Some(path) => {
            let config =
                ServerConfig::from_file(path, Env::from_process()).map_err(|e| e.to_string())?;
            println!("configuration: {}", path.display());
            Ok(config)
        }
        None => ServerConfig::from_env(Env::from_process()).map_err(|e| e.to_string()),
    }
}

async fn run(config: ServerConfig) -> Result<(), Box<dyn std::error::Error>> {
    let metrics = match config.metrics_addr {
        Some(addr) => {
            let handle = ops::install_prometheus()?;
            ops::spawn_upkeep(handle.clone());
            let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
                format!("cannot listen on {addr} for metrics: {e} (set AUTHCORE_METRICS_ADDR)")
            })?;
            let local = listener.local_addr()?;
            tokio::spawn(async move {
                if let Err(e) = axum::serve(listener, ops::metrics_router(handle)).await {
                    tracing::error!(error = %e, "metrics listener failed");
                }
            });
            Some(local)
        }
        None => None,
    };
    let addr = config.addr;
    let limits = config.limits;
    let workers = config.workers;
    let demo_password = config
        .demo_user_enabled()
        .then(|| config.demo_password.clone());
    let users_file = config
        .users_file
        .as_ref()
        .map(|f| (f.path().display().to_string(), f.len()));
    let sign_up = match &config.sign_up {
        SignUpPolicy::Open => "open: any new address or provider account becomes a user".to_owned(),
        SignUpPolicy::Domains(d) => format!("addresses of {} only", d.join(", ")),
        SignUpPolicy::Invite => {
            "by invitation: only invited addresses become users (`authcore-server invite <email>`)"
                .to_owned()
        }
        _ => {
            "closed: only existing users sign in (set AUTHCORE_SIGN_UP to open or to email domains)"
                .to_owned()
        }
    };
    let passwords = config.passwords;
    let organizations = config.organizations.as_ref().map(|o| {
        let roles = o
            .roles()
            .map(|r| r.names().collect::<Vec<_>>().join(", "))
            .unwrap_or_default();
        let who = if o.users_may_create() {
            "users make their own"
        } else {
            "made by the operator (`authcore-server create-organization`)"
        };
        format!("{who}; roles {roles}")
    });
    let (email_sign_in, passkeys) = (config.email_sign_in, config.passkeys);
    let ephemeral = config.secret_is_ephemeral;
    let public_url = config.public_url().map(str::to_owned);
    let database = config.database_url.clone();
    let smtp = match &config.email {
        authcore_server::EmailDelivery::Smtp(sender) => Some(format!("{sender:?}")),
        _ => None,
    };
    let trusted_hosts = match authcore_server::host_trust(&config) {
        HostTrust::AllowList(hosts) => format!("{} (set AUTHCORE_ALLOWED_HOSTS)", hosts.join(", ")),
        _ if config.public_url().is_some() => "the host of AUTH_URL".to_owned(),
        _ if config.trust_host_setting().is_some() => "as AUTH_TRUST_HOST says".to_owned(),
        _ => "none: every request answers UntrustedHost; set AUTH_URL or AUTHCORE_ALLOWED_HOSTS"
            .to_owned(),
    };
    let audit = audit_summary(&config.audit, config.database_url.is_some());
    let prune_audit = config.audit.retention.is_some();
    let server = config.build().await?;
    if prune_audit {
        ops::spawn_audit_pruning(server.auth());
    }
    let app = server.into_service();

    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e} (set AUTHCORE_ADDR)"))?;
    let local = listener.local_addr()?;
    let kind = if demo_password.is_some() {
        "authcore demo server"
    } else {
        "authcore-server"
    };
    println!("{kind} listening on http://{local}/");
    match &database {
        Some(url) => println!(
            "  database: {} (set AUTHCORE_DATABASE_URL, or `none` for JWT sessions only)",
            authcore_server::redact_url_password(url)
        ),
        None => println!("  database: none (JWT sessions)"),
    }
    if database.is_some() {
        match (smtp, email_sign_in) {
            (Some(sender), true) => println!("  email sign-in: magic links sent through {sender}"),
            (None, true) => println!(
                "  email sign-in: magic links are printed here (set SMTP_URL to send real mail)"
            ),
            (Some(sender), false) => println!(
                "  email sign-in: off (AUTHCORE_EMAIL_SIGN_IN); other mails sent through {sender}"
            ),
            (None, false) => println!(
                "  email sign-in: off (AUTHCORE_EMAIL_SIGN_IN); other mails are printed here"
            ),
        }
        if !passkeys {
            println!("  passkeys: off (AUTHCORE_PASSKEYS)");
        }
    }
    if database.is_some() {
        println!("  sign-up: {sign_up}");
    }
    println!(
        "  probes: http://{local}{} (alive), http://{local}{} (database reachable)",
        ops::HEALTHZ_PATH,
        ops::READYZ_PATH
    );
    if let Some(metrics) = metrics {
        println!(
            "  metrics: http://{metrics}{} (Prometheus)",
            ops::METRICS_PATH
        );
    }
    println!("  request hosts: {trusted_hosts}");
    if let Some(url) = public_url {
        println!("  public URL (AUTH_URL): {url}");
    }
    if passwords {
        println!(
            "  password accounts: sign in at /auth/callback/password (`authcore-server add-user <email>` gives one)"
        );
    }
    if let Some(organizations) = organizations {
        println!("  organizations: {organizations}");
    }
    if let Some(audit) = audit {
        println!("  audit log: {audit}");
    }
    if let Some((path, count)) = users_file {
        let plural = if count == 1 { "" } else { "s" };
        println!("  users file: {path} ({count} user{plural})");
    }
    if let Some(password) = demo_password {
        println!(
            "  demo user: {DEMO_USERNAME} / {password}  (set AUTHCORE_DEMO_PASSWORD to change the password, or AUTHCORE_USERS_FILE for real users)"
        );
    }
    if ephemeral {
        println!(
            "  AUTH_SECRET is not set: using a random secret, so sessions will not survive a restart. \
             Set AUTH_SECRET (e.g. `openssl rand -hex 32`) to keep them."
        );
    }
    tracing::info!(%local, "listening");

    authcore_server::serve::serve_workers(listener, app, limits, workers, shutdown_signal()).await;
    tracing::info!("shut down");
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
    tracing::info!("shutdown signal received, finishing open requests");
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use authcore::audit::{ChainFault, ChainReport};

    #[test]
    fn the_audit_report_names_each_fault() {
        let whole = ChainReport {
            checked: 3,
            first: Some(1),
            last: Some(3),
            last_hash: Some("ab12".into()),
            faults: vec![],
        };
        let text = audit_report(&whole);
        for line in [
            "records checked: 3\n",
            "first record: 1\n",
            "last record: 3\n",
            "last hash: ab12 ",
            "the chain is whole",
        ] {
            assert!(text.contains(line), "{text}");
        }
        let broken = ChainReport {
            faults: vec![
                ChainFault::Unanchored { seq: 2 },
                ChainFault::Altered { seq: 3 },
            ],
            ..whole
        };
        let text = audit_report(&broken);
        assert!(text.contains("faults: 2\n"), "{text}");
        assert!(text.contains("  record 3 was altered\n"), "{text}");
        assert!(text.contains("  the log starts at record 2"), "{text}");
        assert!(!text.contains("whole"), "{text}");
        let empty = audit_report(&ChainReport {
            checked: 0,
            first: None,
            last: None,
            last_hash: None,
            faults: vec![],
        });
        assert_eq!(
            empty,
            "records checked: 0\nthe chain is whole: no record was altered or removed\n"
        );
    }
}
