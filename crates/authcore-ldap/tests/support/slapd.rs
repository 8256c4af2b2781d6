//! A real OpenLDAP `slapd`, started by the test on free loopback ports (plain/StartTLS and
//! LDAPS) in a temporary directory: an `mdb` database with the `memberof` overlay when
//! the module is installed, TLS from a CA made with rcgen, seeded with `ldapadd` as the
//! root DN. Killed when the [`Slapd`] is dropped.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

pub const BASE_DN: &str = "dc=example,dc=org";
pub const PEOPLE_DN: &str = "ou=people,dc=example,dc=org";
pub const GROUPS_DN: &str = "ou=groups,dc=example,dc=org";
pub const SERVICE_DN: &str = "cn=authcore,ou=services,dc=example,dc=org";
pub const SERVICE_PASSWORD: &str = "service-password";
const ROOT_DN: &str = "cn=admin,dc=example,dc=org";
const ROOT_PASSWORD: &str = "root-password";
/// slapd closes connections idle for longer (seconds).
pub const IDLE_TIMEOUT_SECONDS: u64 = 2;
/// The user whose uid holds filter syntax.
pub const STAR_UID: &str = "st*r (1)";

/// The directory's entries: people (alice in admins and dev, bob in no group, `st*r (1)`
/// in dev, victim in admins), the service account and the groups.
const SEED: &str = r"dn: dc=example,dc=org
objectClass: dcObject
objectClass: organization
o: Example
dc: example

dn: ou=people,dc=example,dc=org
objectClass: organizationalUnit
ou: people

dn: ou=groups,dc=example,dc=org
objectClass: organizationalUnit
ou: groups

dn: ou=services,dc=example,dc=org
objectClass: organizationalUnit
ou: services

dn: cn=authcore,ou=services,dc=example,dc=org
objectClass: organizationalRole
objectClass: simpleSecurityObject
cn: authcore
userPassword: service-password

dn: uid=alice,ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: alice
cn: Alice Liddell
sn: Liddell
displayName: Alice L.
mail: alice@example.org
userPassword: alice-password

dn: uid=bob,ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: bob
cn: Bob Builder
sn: Builder
mail: bob@example.org
userPassword: bob-password

dn: uid=st*r (1),ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: st*r (1)
cn: Star (One)
sn: Star
mail: star@example.org
userPassword: star-password

dn: uid=victim,ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: victim
cn: Victor Tim
sn: Tim
mail: victim@example.org
userPassword: victim-password

dn: cn=admins,ou=groups,dc=example,dc=org
objectClass: groupOfNames
cn: admins
member: uid=alice,ou=people,dc=example,dc=org
member: uid=victim,ou=people,dc=example,dc=org

dn: cn=dev,ou=groups,dc=example,dc=org
objectClass: groupOfNames
cn: dev
member: uid=alice,ou=people,dc=example,dc=org
member: uid=st*r (1),ou=people,dc=example,dc=org
";

/// A running `slapd`.
pub struct Slapd {
    child: Child,
    dir: tempfile::TempDir,
    /// Plain LDAP (and StartTLS).
    pub port: u16,
    /// LDAPS.
    pub tls_port: u16,
    /// The PEM of the CA that signed the server's certificate.
    pub ca_file: PathBuf,
    /// Whether the `memberof` overlay runs (the module is installed).
    pub memberof: bool,
}

impl Drop for Slapd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Slapd {
    /// Starts and seeds a directory; panics with slapd's log when it cannot.
    pub fn start() -> Slapd {
        let mut last = String::new();
        // A port found free may be taken before slapd binds it: try again on new ones.
        for _ in 0..3 {
            match Slapd::try_start() {
                Ok(slapd) => return slapd,
                Err(e) => last = e,
            }
        }
        panic!("slapd did not start: {last}");
    }

    pub fn ldap_url(&self) -> String {
        format!("ldap://127.0.0.1:{}", self.port)
    }

    pub fn ldaps_url(&self) -> String {
        format!("ldaps://127.0.0.1:{}", self.tls_port)
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn try_start() -> Result<Slapd, String> {
        let slapd = slapd_binary().ok_or("no slapd (apt-get install slapd ldap-utils)")?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let (port, tls_port) = (free_port(), free_port());
        let ca_file = write_certificates(dir.path());
        let modules = module_dir();
        let memberof = modules
            .as_ref()
            .is_some_and(|m| m.join("memberof.so").exists() || m.join("memberof.la").exists());
        let config = dir.path().join("slapd.conf");
        std::fs::write(
            &config,
            slapd_conf(dir.path(), modules.as_deref(), memberof),
        )
        .map_err(|e| e.to_string())?;
        std::fs::create_dir(dir.path().join("db")).map_err(|e| e.to_string())?;
        let log = std::fs::File::create(dir.path().join("slapd.log")).map_err(|e| e.to_string())?;
        let child = Command::new(slapd)
            .arg("-f")
            .arg(&config)
            .arg("-h")
            .arg(format!(
                "ldap://127.0.0.1:{port}/ ldaps://127.0.0.1:{tls_port}/"
            ))
            // In the foreground (a debug level keeps slapd attached), its log in the file.
            .args(["-d", "0"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot run slapd: {e}"))?;
        let mut slapd = Slapd {
            child,
            dir,
            port,
            tls_port,
            ca_file,
            memberof,
        };
        slapd.wait_listening()?;
        slapd.seed()?;
        Ok(slapd)
    }

    fn log(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(self.dir.path().join("slapd.log")) {
            let _ = f.read_to_string(&mut text);
        }
        text
    }

    fn wait_listening(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("slapd exited ({status}): {}", self.log()));
            }
            let up = |port| TcpStream::connect(("127.0.0.1", port)).is_ok();
            if up(self.port) && up(self.tls_port) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("slapd is not listening: {}", self.log()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn seed(&self) -> Result<(), String> {
        let ldif = self.dir.path().join("seed.ldif");
        std::fs::write(&ldif, SEED).map_err(|e| e.to_string())?;
        self.ldap_tool("ldapadd", &[Path::new("-f"), &ldif])
    }

    /// Runs `tool` of ldap-utils as the root DN against the plain port.
    pub fn ldap_tool(&self, tool: &str, args: &[&Path]) -> Result<(), String> {
        let out = Command::new(tool)
            .args([
                "-x",
                "-H",
                &self.ldap_url(),
                "-D",
                ROOT_DN,
                "-w",
                ROOT_PASSWORD,
            ])
            .args(args)
            .output()
            .map_err(|e| format!("cannot run {tool} (apt-get install ldap-utils): {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{tool}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    /// Adds the entries of `ldif` as the root DN.
    pub fn add(&self, ldif: &str) {
        let path = self.dir.path().join("more.ldif");
        std::fs::write(&path, ldif).unwrap();
        self.ldap_tool("ldapadd", &[Path::new("-f"), &path])
            .unwrap();
    }
}

fn slapd_binary() -> Option<PathBuf> {
    [
        "/usr/sbin/slapd",
        "/usr/local/sbin/slapd",
        "/usr/libexec/slapd",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// Where the back-end and overlay modules are (none: built in).
fn module_dir() -> Option<PathBuf> {
    [
        "/usr/lib/ldap",
        "/usr/lib64/openldap",
        "/usr/lib/openldap",
        "/usr/libexec/openldap",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.join("back_mdb.so").exists() || p.join("back_mdb.la").exists())
}

fn schema_dir() -> PathBuf {
    ["/etc/ldap/schema", "/etc/openldap/schema"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.join("core.schema").exists())
        .expect("OpenLDAP's schema files (core.schema)")
}

fn slapd_conf(dir: &Path, modules: Option<&Path>, memberof: bool) -> String {
    let schema = schema_dir();
    let mut conf = String::new();
    for name in ["core", "cosine", "inetorgperson", "nis"] {
        conf += &format!(
            "include {}\n",
            schema.join(format!("{name}.schema")).display()
        );
    }
    if let Some(modules) = modules {
        conf += &format!("modulepath {}\nmoduleload back_mdb\n", modules.display());
        if memberof {
            conf += "moduleload memberof\n";
        }
    }
    let d = dir.display();
    // `allow bind_anon_dn`: a bind with a DN and an empty password succeeds as an
    // unauthenticated bind (RFC 4513 §5.1.2), as many directories allow; the source must
    // refuse such a sign-in by itself.
    conf += &format!(
        "allow bind_anon_dn
idletimeout {IDLE_TIMEOUT_SECONDS}
pidfile {d}/slapd.pid
TLSCACertificateFile {d}/ca.pem
TLSCertificateFile {d}/server.pem
TLSCertificateKeyFile {d}/server.key
database mdb
maxsize 10485760
suffix \"{BASE_DN}\"
rootdn \"{ROOT_DN}\"
rootpw {ROOT_PASSWORD}
directory {d}/db
"
    );
    if memberof {
        conf += "overlay memberof\n";
    }
    // Passwords are only ever compared by a bind; everything else is readable.
    conf += "access to attrs=userPassword
  by anonymous auth
  by * none
access to *
  by * read
";
    conf
}

/// A CA and the server's certificate for 127.0.0.1 and localhost; the CA's PEM path.
pub fn write_certificates(dir: &Path) -> PathBuf {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "authcore-ldap test CA");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let server_key = KeyPair::generate().unwrap();
    let mut server =
        CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    server
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server_cert = server.signed_by(&server_key, &issuer).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca_cert.pem()).unwrap();
    std::fs::write(dir.join("server.pem"), server_cert.pem()).unwrap();
    std::fs::write(dir.join("server.key"), server_key.serialize_pem()).unwrap();
    ca_file
}

/// A loopback port nobody listens on (now).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
