//! The manual's OpenLDAP configuration (docs/manual/ldap.md) works as written: its TOML,
//! with the test directory's address, CA and service password filled in, signs alice in
//! over StartTLS with her groups.

use std::path::Path;

use authcore::passwords::UserSource;
use authcore_ldap::LdapSettings;
use serde::Deserialize;

use crate::support::slapd::{GROUPS_DN, SERVICE_PASSWORD, write_certificates};
use crate::support::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    ldap: LdapSettings,
}

/// The first ```toml block after `heading` in the chapter.
fn toml_block(heading: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/manual/ldap.md");
    let chapter = std::fs::read_to_string(path).unwrap();
    let section = &chapter[chapter.find(heading).expect("the heading")..];
    let block = &section[section.find("```toml\n").expect("a toml block") + 8..];
    block[..block.find("```").unwrap()].to_owned()
}

#[tokio::test]
async fn the_openldap_example_signs_in_as_written() {
    let slapd = Slapd::start();
    let text = toml_block("## OpenLDAP")
        .replace("ldap.example.org:389", &format!("127.0.0.1:{}", slapd.port))
        .replace(
            "/etc/authcore/ldap-ca.pem",
            &slapd.ca_file.display().to_string(),
        )
        .replace("\"change me\"", &format!("{SERVICE_PASSWORD:?}"));
    let mut settings = toml::from_str::<ConfigFile>(&text).unwrap().ldap;
    assert!(settings.start_tls, "the example uses StartTLS");
    if !slapd.memberof {
        settings.group_base_dn = Some(GROUPS_DN.to_owned());
    }
    let found = source(settings)
        .authenticate("alice", ALICE_PASSWORD)
        .await
        .unwrap()
        .expect("alice signs in");
    assert_eq!(found.groups, ["admins", "dev"]);
    assert_eq!(found.email.as_deref(), Some("alice@example.org"));
}

#[test]
fn every_example_parses_and_validates() {
    let ca_dir = tempfile::tempdir().unwrap();
    let ca_file = write_certificates(ca_dir.path());
    let openldap = toml_block("## OpenLDAP");
    let active_directory = toml_block("## Active Directory");
    // The group fragments complete the section above them.
    let fragment = |after: &str| toml_block(after).replace("[ldap]\n", "");
    for (name, text) in [
        ("OpenLDAP", openldap.clone()),
        (
            "OpenLDAP, group search",
            openldap + &fragment("Without the overlay"),
        ),
        ("Active Directory", active_directory.clone()),
        (
            "Active Directory, nested groups",
            active_directory + &fragment("for nested groups"),
        ),
    ] {
        let mut settings = toml::from_str::<ConfigFile>(&text)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .ldap;
        // The examples' CA files are not on this machine.
        settings.ca_file = Some(ca_file.clone());
        if settings.bind_password.is_empty() {
            settings.bind_password = "from AUTHCORE_LDAP_BIND_PASSWORD".into();
        }
        if let Err(e) = authcore_ldap::LdapSource::new(settings) {
            panic!("{name}: {e}");
        }
    }
}
