//! The standalone server as an OpenID Provider with organizations, configured with the
//! `[organizations]` section and the `acme-admin` client of `docs/identity-provider.md` as
//! written (its secret filled in): the Rust `openidconnect` crate as the relying party signs
//! in acme's admin and reads `organizations` in the ID token and at userinfo; acme's member,
//! its owner and globex's admin get `access_denied` at the redirect and no code, whatever
//! else the relying party sends; once the admin is removed from acme (the library's
//! `Auth::remove_member` on the server's handler) the relying party's refresh is refused
//! with `invalid_grant`. A client whose scopes leave out `organizations` gets no claim by
//! asking for it, and `invalid_scope` by widening a refresh to it.

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreAuthenticationFlow, CoreErrorResponseType,
    CoreGenderClaim, CoreJsonWebKey, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm,
    CoreProviderMetadata, CoreRevocableToken, CoreRevocationErrorResponse,
    CoreTokenIntrospectionResponse, CoreTokenType,
};
use openidconnect::{
    AuthorizationCode, Client, ClientId, ClientSecret, CsrfToken, EmptyExtraTokenFields,
    EndpointMaybeSet, EndpointNotSet, EndpointSet, IdTokenFields, IssuerUrl, Nonce,
    OAuth2TokenResponse as _, PkceCodeChallenge, RedirectUrl, RequestTokenError, Scope,
    StandardErrorResponse, StandardTokenResponse, TokenResponse as _, UserInfoClaims,
};
use serde_json::{Value, json};

use crate::openid_provider::{
    CB, CHALLENGE, Op, RP_SECRET, VERIFIER, authorize_as, fresh_dir, grant, location, payload,
    query, relying_party_http, sign_in_at_as, start_with, token, userinfo_status,
};
use crate::support;

/// The documented client's registered redirect URI (never reached: the test's browsers
/// follow no redirects).
const ADMIN_CB: &str = "https://admin.acme.example.com/callback";
const ADMIN_SECRET: &str = "acme-admin-secret-0123456789abcdef0123";

/// The claims the relying party reads beyond the standard ones.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct OrganizationClaims {
    organizations: Option<Value>,
}
impl openidconnect::AdditionalClaims for OrganizationClaims {}

type OrganizationTokenResponse = StandardTokenResponse<
    IdTokenFields<
        OrganizationClaims,
        EmptyExtraTokenFields,
        CoreGenderClaim,
        CoreJweContentEncryptionAlgorithm,
        CoreJwsSigningAlgorithm,
    >,
    CoreTokenType,
>;

/// The `openidconnect` crate's client, reading [`OrganizationClaims`], as discovery makes it.
type RelyingParty = Client<
    OrganizationClaims,
    CoreAuthDisplay,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJsonWebKey,
    CoreAuthPrompt,
    StandardErrorResponse<CoreErrorResponseType>,
    OrganizationTokenResponse,
    CoreTokenIntrospectionResponse,
    CoreRevocableToken,
    CoreRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// The users of the users file: each signs in with `<name>-pw`. `alice` (whom the
/// provider's harness signs in first) is acme's admin, `bob` a member of acme, `carol`
/// globex's admin, `olga` the owner of both.
const USERS: [&str; 4] = ["alice", "bob", "carol", "olga"];

/// The provider with the documented configuration, a client `no-orgs` whose scopes leave
/// out `organizations`, and the users file of [`USERS`].
async fn start(files: &std::path::Path) -> Op {
    let hashing = authcore::passwords::PasswordHashing::argon2id(64, 1, 1).unwrap();
    let mut users = String::from("users:\n");
    for name in USERS {
        let hash = hashing.hash(&format!("{name}-pw")).unwrap();
        users.push_str(&format!(
            "  {name}:\n    password: \"{hash}\"\n    email: {name}@example.com\n"
        ));
    }
    let path = files.join("users.yml");
    std::fs::write(&path, users).unwrap();
    let documented =
        support::documented("identity-provider.md", "oidc-provider-test: organizations")
            .replace("\"…\"", &format!("\"{ADMIN_SECRET}\""));
    start_with(&format!(
        r#"{documented}
[[oidc_provider.clients]]
id = "no-orgs"
secret = "{RP_SECRET}"
redirect_uris = ["{CB}"]
scopes = ["openid", "email", "offline_access"]
grant_types = ["authorization_code", "refresh_token"]

[users_file]
path = "{}"
"#,
        path.display()
    ))
    .await
}

/// A browser of its own signed in as `name` of [`USERS`], and the user's id.
async fn signed_in(op: &Op, name: &str) -> (reqwest::Client, String) {
    use authcore::adapter::Adapter as _;
    let password = format!("{name}-pw");
    let (browser, _) = sign_in_at_as(&op.base, ("users-file", name, &password)).await;
    let user = op
        .database
        .get_user_by_email(&format!("{name}@example.com"))
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{name} has no account after signing in"));
    (browser, user.id)
}

/// Adds `user_id` to `organization_id` with `roles`, in the server's database.
async fn add_member(op: &Op, organization_id: &str, user_id: &str, roles: &[&str]) {
    use authcore::adapter::OrganizationStore as _;
    let member = authcore::adapter::Member {
        organization_id: organization_id.to_owned(),
        user_id: user_id.to_owned(),
        roles: roles.iter().map(|r| (*r).to_owned()).collect(),
        teams: Vec::new(),
        created_at: time::OffsetDateTime::now_utc(),
    };
    assert!(op.database.add_member(&member).await.unwrap());
}

/// `GET /oidc/userinfo` with `access`: the claims.
async fn userinfo(op: &Op, access: &str) -> Value {
    let r = reqwest::Client::new()
        .get(format!("{}/oidc/userinfo", op.base))
        .bearer_auth(access)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

/// Things a relying party might send in the hope of being taken for an admin of acme: none
/// is an input to who is admitted.
const FORGED: [(&str, &str); 5] = [
    (
        "claims",
        r#"{"id_token":{"organizations":{"essential":true,"value":[{"slug":"acme","roles":["admin"]}]}}}"#,
    ),
    ("org", "acme"),
    ("organization", "acme"),
    ("roles", "admin"),
    ("organizations", "acme:admin"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_organizations_admin_signs_in_to_the_app_for_them_until_removed() {
    let files = fresh_dir();
    let op = start(&files).await;
    let mut browsers = std::collections::BTreeMap::new();
    let mut ids = std::collections::BTreeMap::new();
    for name in USERS {
        let (browser, id) = signed_in(&op, name).await;
        browsers.insert(name, browser);
        ids.insert(name, id);
    }
    let acme = op
        .auth
        .create_organization_for(&ids["olga"], "Acme", Some("acme"))
        .await
        .unwrap();
    let globex = op
        .auth
        .create_organization_for(&ids["olga"], "Globex", Some("globex"))
        .await
        .unwrap();
    add_member(&op, &acme.id, &ids["alice"], &["admin"]).await;
    add_member(&op, &acme.id, &ids["bob"], &["member"]).await;
    add_member(&op, &globex.id, &ids["carol"], &["admin"]).await;

    // The relying party: discovery offers the scope and the claim.
    let metadata = CoreProviderMetadata::discover_async(
        IssuerUrl::new(op.issuer.clone()).unwrap(),
        &relying_party_http,
    )
    .await
    .unwrap();
    let scopes = metadata.scopes_supported().unwrap();
    assert!(
        scopes.iter().any(|s| s.as_str() == "organizations"),
        "{scopes:?}"
    );
    let claims = metadata.claims_supported().unwrap();
    assert!(
        claims.iter().any(|c| c.as_str() == "organizations"),
        "{claims:?}"
    );
    let client: RelyingParty = Client::from_provider_metadata(
        metadata,
        ClientId::new("acme-admin".into()),
        Some(ClientSecret::new(ADMIN_SECRET.into())),
    )
    .set_redirect_uri(RedirectUrl::new(ADMIN_CB.into()).unwrap());
    // The authorization request the relying party makes, `extra` added, in `browser`: where
    // the browser is sent back to, the state, nonce and PKCE verifier.
    let sign_in = async |browser: &reqwest::Client, extra: &[(&str, &str)]| {
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scopes(["email", "organizations", "offline_access"].map(|s| Scope::new(s.into())))
            .set_pkce_challenge(challenge);
        for (k, v) in extra {
            request = request.add_extra_param(*k, *v);
        }
        let (url, state, nonce) = request.url();
        let r = browser.get(url.as_str()).send().await.unwrap();
        assert_eq!(r.status(), 302);
        let back = location(&r).unwrap();
        assert!(back.as_str().starts_with(ADMIN_CB), "{back}");
        assert_eq!(
            query(&back, "state").as_deref(),
            Some(state.secret().as_str())
        );
        assert_eq!(query(&back, "iss").as_deref(), Some(op.issuer.as_str()));
        (back, nonce, verifier)
    };

    // Acme's admin: a code, an ID token and userinfo naming acme and the role.
    let (back, nonce, verifier) = sign_in(&browsers["alice"], &[]).await;
    let code = query(&back, "code").unwrap_or_else(|| panic!("no code: {back}"));
    let tokens = client
        .exchange_code(AuthorizationCode::new(code))
        .unwrap()
        .set_pkce_verifier(verifier)
        .request_async(&relying_party_http)
        .await
        .unwrap();
    let id_verifier = client
        .id_token_verifier()
        .set_allowed_algs(vec![CoreJwsSigningAlgorithm::EdDsa]);
    let claims = tokens
        .id_token()
        .expect("an ID token")
        .claims(&id_verifier, &nonce)
        .unwrap();
    let acme_admin = json!([{"id": acme.id, "slug": "acme", "name": "Acme", "roles": ["admin"]}]);
    assert_eq!(
        claims.additional_claims().organizations.as_ref(),
        Some(&acme_admin)
    );
    assert_eq!(claims.subject().as_str(), ids["alice"]);
    let info: UserInfoClaims<OrganizationClaims, CoreGenderClaim> = client
        .user_info(
            tokens.access_token().clone(),
            Some(claims.subject().clone()),
        )
        .unwrap()
        .request_async(&relying_party_http)
        .await
        .unwrap();
    assert_eq!(
        info.additional_claims().organizations.as_ref(),
        Some(&acme_admin)
    );

    // Acme's member, acme's owner (not an admin) and globex's admin: `access_denied` at the
    // redirect, no code; so too with what a relying party might add to look like acme's.
    for who in ["bob", "olga", "carol"] {
        for extra in std::iter::once(&[][..]).chain(FORGED.iter().map(std::slice::from_ref)) {
            let (back, _, _) = sign_in(&browsers[who], extra).await;
            assert_eq!(
                query(&back, "error").as_deref(),
                Some("access_denied"),
                "{who} {extra:?}: {back}"
            );
            assert!(query(&back, "code").is_none(), "{who} {extra:?}: {back}");
        }
    }

    // A refresh while the admin is in acme works, with the claim.
    let refreshed = client
        .exchange_refresh_token(tokens.refresh_token().expect("a refresh token"))
        .unwrap()
        .request_async(&relying_party_http)
        .await
        .unwrap();
    let refreshed_claims = refreshed
        .id_token()
        .expect("a new ID token")
        .claims(&id_verifier, |_: Option<&Nonce>| Ok(()))
        .unwrap();
    assert_eq!(
        refreshed_claims.additional_claims().organizations.as_ref(),
        Some(&acme_admin)
    );

    // Removed from acme by its owner through the library: the next refresh is refused and
    // ends the grant (its access token dies at userinfo); a new sign-in is refused.
    op.auth
        .remove_member(&ids["olga"], &acme.id, &ids["alice"])
        .await
        .unwrap();
    let refused = client
        .exchange_refresh_token(refreshed.refresh_token().expect("a rotated refresh token"))
        .unwrap()
        .request_async(&relying_party_http)
        .await;
    match refused {
        Err(RequestTokenError::ServerResponse(e)) => {
            assert_eq!(e.error(), &CoreErrorResponseType::InvalidGrant, "{e:?}")
        }
        other => panic!("a refresh after leaving acme: {other:?}"),
    }
    assert_eq!(
        userinfo_status(&op, refreshed.access_token().secret()).await,
        401
    );
    let (back, _, _) = sign_in(&browsers["alice"], &[]).await;
    assert_eq!(
        query(&back, "error").as_deref(),
        Some("access_denied"),
        "{back}"
    );
    assert!(query(&back, "code").is_none(), "{back}");

    // The scope, asked for by a client allowed every scope (`rp`) and by one whose scopes
    // leave it out (`no-orgs`): the first gets the claim, the second none, at the token
    // endpoint or userinfo, and `invalid_scope` when widening a refresh to it.
    let globex_admin =
        json!([{"id": globex.id, "slug": "globex", "name": "Globex", "roles": ["admin"]}]);
    for (client, want) in [("rp", Some(&globex_admin)), ("no-orgs", None)] {
        let mut params = vec![
            ("client_id", client),
            ("redirect_uri", CB),
            ("response_type", "code"),
            ("scope", "openid email organizations offline_access"),
            ("state", "st"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ];
        params.extend(FORGED);
        let r = authorize_as(&op, &browsers["carol"], &params).await;
        let back = location(&r).unwrap();
        let code = query(&back, "code").unwrap_or_else(|| panic!("{client}: no code: {back}"));
        let (status, body) = token(
            &op,
            Some((client, RP_SECRET)),
            &grant(&code, Some(VERIFIER)),
        )
        .await;
        assert_eq!(status, 200, "{client}: {body}");
        let claims = payload(body["id_token"].as_str().unwrap());
        assert_eq!(claims.get("organizations"), want, "{client}: {claims}");
        let info = userinfo(&op, body["access_token"].as_str().unwrap()).await;
        assert_eq!(info.get("organizations"), want, "{client}: {info}");
        let scope = body["scope"].as_str().unwrap();
        assert_eq!(
            scope.split(' ').any(|s| s == "organizations"),
            want.is_some(),
            "{client}: {scope}"
        );
        if want.is_none() {
            let refresh = body["refresh_token"].as_str().unwrap();
            let (status, body) = token(
                &op,
                Some((client, RP_SECRET)),
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", refresh),
                    ("scope", "openid organizations"),
                ],
            )
            .await;
            assert_eq!(
                (status, &body["error"]),
                (400, &json!("invalid_scope")),
                "{body}"
            );
            assert!(body.get("access_token").is_none(), "{body}");
        }
    }
    let _ = std::fs::remove_dir_all(files);
}
