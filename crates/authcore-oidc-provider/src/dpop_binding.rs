//! What the endpoints do with DPoP proofs (RFC 9449): the token endpoint takes a proof with
//! a nonce of this provider and binds the tokens to its key (§5, §8); userinfo takes a
//! bound token only with a proof of that key carrying a nonce of this provider (§7, §9).
//! Each proof's `jti` is used once, in the
//! handler's single-use store (shared by instances). The nonces are stateless: sealed under
//! the auth secret with a salt of their own (the JWE every sealed token here is), valid for
//! [`NONCE_TTL_SECS`], so any instance takes any instance's.
//!
//! A request without a `DPoP` header reads no store and allocates nothing here.

use authcore_keys::unix_time;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::ProviderState;
use crate::client_auth::ClientForm;
use crate::clients::Client;
use crate::dpop::{self, Confirmation, Proof};
use crate::grant::AccessTokenClaims;
use crate::responses::{no_store, token_error, unavailable};
use crate::single_use::client_key;

/// The request header of a proof (§4.1).
pub(crate) const DPOP: HeaderName = HeaderName::from_static("dpop");

/// The response header of a nonce (§8.1).
pub(crate) const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// The salt of sealed nonces.
const NONCE_SALT: &str = "authcore.oidc-provider.dpop-nonce";

/// How long a nonce is taken (seconds).
pub(crate) const NONCE_TTL_SECS: u64 = 300;

/// The kind of the single-use marks of proofs (by key thumbprint and `jti`).
const USED_PROOF: &str = "oidc-provider-dpop-proof";

/// How a request presented its access token (RFC 6750 §2.1, RFC 9449 §7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// `Authorization: Bearer`.
    Bearer,
    /// `Authorization: DPoP`, with a proof.
    DPoP,
}

impl Scheme {
    /// The scheme of an `Authorization` header (case-insensitive, RFC 9110 §11.1).
    pub(crate) fn parse(name: &str) -> Option<Scheme> {
        if name.eq_ignore_ascii_case("bearer") {
            Some(Scheme::Bearer)
        } else if name.eq_ignore_ascii_case("dpop") {
            Some(Scheme::DPoP)
        } else {
            None
        }
    }

    /// A `401` with the challenge of this scheme (RFC 6750 §3, RFC 9449 §7.1).
    pub(crate) fn refusal(self, error: &str) -> Response {
        match self {
            Scheme::Bearer => crate::responses::bearer_error(error),
            Scheme::DPoP => dpop_challenge(error),
        }
    }
}

/// A `401` with a `DPoP` challenge naming the algorithms taken (§7.1).
fn dpop_challenge(error: &str) -> Response {
    let mut r = StatusCode::UNAUTHORIZED.into_response();
    let challenge = format!("DPoP error=\"{error}\", algs=\"{}\"", dpop::ALGS.join(" "));
    if let Ok(v) = HeaderValue::try_from(challenge) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    no_store(r)
}

/// The token or PAR endpoint's refusal of a proof (§5, §10.1).
pub(crate) fn invalid_proof(description: &str) -> Box<Response> {
    Box::new(token_error(
        StatusCode::BAD_REQUEST,
        "invalid_dpop_proof",
        description,
    ))
}

/// The one `DPoP` header of a request: `Ok(None)` without one, `Err` for more than one or
/// one that is not text (§4.3 item 1).
fn proof_header(headers: &HeaderMap) -> Result<Option<&str>, ()> {
    let mut values = headers.get_all(DPOP).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(());
    }
    value.to_str().map(Some).map_err(|_| ())
}

impl ClientForm {
    /// The key the refresh tokens of this request are bound to: the proof's, for a public
    /// client (§5: a confidential client's refresh tokens are bound to its authentication).
    pub(crate) fn refresh_token_key(&self) -> Option<String> {
        self.dpop_jkt.clone().filter(|_| self.client.is_public())
    }
}

/// The confirmation of a token bound to the key `jkt`.
pub(crate) fn confirmation(jkt: Option<&str>) -> Option<Confirmation> {
    jkt.map(|jkt| Confirmation {
        jkt: jkt.to_owned(),
    })
}

impl ProviderState {
    /// The DPoP check of the token endpoint (§5) or the PAR endpoint (§10.1) at `path`,
    /// before the client authenticates: the proof, once it holds and carries a nonce of
    /// this provider (else `use_dpop_nonce` and a fresh one, §8); `None` without a `DPoP`
    /// header. It spends nothing, so a client that authenticates with a signed assertion
    /// (`private_key_jwt`, whose `jti` is used once) can send the same assertion again with
    /// the nonce; [`first_use_of`](Self::first_use_of) spends the proof.
    pub(crate) fn endpoint_proof(
        &self,
        headers: &HeaderMap,
        path: &str,
    ) -> Result<Option<Proof>, Box<Response>> {
        let proof = match proof_header(headers) {
            Ok(Some(proof)) => proof,
            Ok(None) => return Ok(None),
            Err(()) => return Err(invalid_proof("one DPoP header, of text")),
        };
        let url = self.endpoint(path)?;
        let request = dpop::Request {
            method: "POST",
            url: &url,
            access_token: None,
            now: unix_time(),
        };
        let proof = dpop::verify(proof, &request).map_err(|why| {
            tracing::info!(%why, path, "oidc provider: a DPoP proof was refused");
            invalid_proof("the DPoP proof does not hold")
        })?;
        if !self.carries_nonce(&proof) {
            return Err(self.nonce_asked(token_error(
                StatusCode::BAD_REQUEST,
                "use_dpop_nonce",
                "a DPoP proof with the server's nonce is needed (DPoP-Nonce)",
            )));
        }
        Ok(Some(proof))
    }

    /// The key the tokens of `client`'s request are bound to (§5): that of the
    /// [`endpoint_proof`](Self::endpoint_proof) `proof`
    /// ([`first_use_of`](Self::first_use_of)); `None` without a proof, unless `client`
    /// must bind its tokens (`dpop_bound_access_tokens`).
    pub(crate) async fn token_binding(
        &self,
        proof: Option<Proof>,
        client: &Client,
    ) -> Result<Option<String>, Box<Response>> {
        match proof {
            Some(proof) => self.first_use_of(proof, client).await.map(Some),
            None if client.requires_dpop() => Err(invalid_proof(
                "this client's tokens are DPoP-bound: send a DPoP proof",
            )),
            None => Ok(None),
        }
    }

    /// The thumbprint of the key of `proof`, sent by `client`, once its `jti` is used for
    /// the first time; `invalid_dpop_proof` for a replay.
    pub(crate) async fn first_use_of(
        &self,
        proof: Proof,
        client: &Client,
    ) -> Result<String, Box<Response>> {
        if !self.proof_first_use(&proof).await? {
            tracing::warn!(client = %client.id(), "oidc provider: a DPoP proof was replayed");
            return Err(invalid_proof("the DPoP proof was used already"));
        }
        Ok(proof.jkt)
    }

    /// A resource endpoint's DPoP step (§7): a token bound to a key (`cnf.jkt`) only as
    /// `DPoP` with a proof of that key for this request (`htm`, `htu` of `path`, `ath`),
    /// carrying a nonce of this provider (§9: else `use_dpop_nonce` and a nonce), used
    /// once; an unbound token only as `Bearer`. The refusal is a `401` with the challenge
    /// of `scheme`.
    pub(crate) async fn resource_proof(
        &self,
        scheme: Scheme,
        method: &Method,
        headers: &HeaderMap,
        path: &str,
        token: &str,
        claims: &AccessTokenClaims,
    ) -> Result<(), Box<Response>> {
        let bound = match (scheme, &claims.cnf) {
            (Scheme::Bearer, None) => return Ok(()),
            (Scheme::Bearer, Some(_)) => {
                tracing::warn!(client = %claims.client_id, "oidc provider: a DPoP-bound access token was presented as a bearer token");
                return Err(Box::new(dpop_challenge("invalid_token")));
            }
            (Scheme::DPoP, None) => return Err(Box::new(dpop_challenge("invalid_token"))),
            (Scheme::DPoP, Some(cnf)) => cnf,
        };
        let Ok(Some(proof)) = proof_header(headers) else {
            return Err(Box::new(dpop_challenge("invalid_dpop_proof")));
        };
        let url = self.endpoint(path)?;
        let request = dpop::Request {
            method: method.as_str(),
            url: &url,
            access_token: Some(token),
            now: unix_time(),
        };
        let proof = dpop::verify(proof, &request).map_err(|why| {
            tracing::info!(client = %claims.client_id, %why, "oidc provider: a DPoP proof was refused");
            Box::new(dpop_challenge("invalid_dpop_proof"))
        })?;
        if proof.jkt != bound.jkt {
            tracing::warn!(client = %claims.client_id, "oidc provider: a DPoP-bound access token was presented with another key");
            return Err(Box::new(dpop_challenge("invalid_token")));
        }
        // §9: the resource server's nonce too, so that a proof made ahead of time (by
        // whoever held the key then) opens nothing later; the client sends the same
        // request again with the nonce offered here (before the proof's `jti` is spent).
        if !self.carries_nonce(&proof) {
            return Err(self.nonce_asked(dpop_challenge("use_dpop_nonce")));
        }
        if !self.proof_first_use(&proof).await? {
            tracing::warn!(client = %claims.client_id, "oidc provider: a DPoP proof was replayed");
            return Err(Box::new(dpop_challenge("invalid_dpop_proof")));
        }
        Ok(())
    }

    /// Puts a fresh nonce in `r` (`DPoP-Nonce`, §8.1): clients send it in their next proofs.
    pub(crate) fn offer_nonce(&self, r: &mut Response) {
        let sealed = self.seal(&authcore::jwt::JwtClaims::new(), NONCE_SALT, NONCE_TTL_SECS);
        match sealed.and_then(|n| HeaderValue::try_from(n).ok()) {
            Some(v) => {
                r.headers_mut().insert(DPOP_NONCE, v);
            }
            None => tracing::error!("oidc provider: cannot seal a DPoP nonce"),
        }
    }

    /// Whether `proof` carries a nonce this provider (any instance) sealed, unexpired.
    fn carries_nonce(&self, proof: &Proof) -> bool {
        proof.nonce.as_deref().is_some_and(|nonce| {
            matches!(
                self.auth.config().jwt().decode(nonce, NONCE_SALT),
                Ok(Some(_))
            )
        })
    }

    /// `refusal` (`use_dpop_nonce`) with a nonce to send the request again with (§8, §9).
    fn nonce_asked(&self, mut refusal: Response) -> Box<Response> {
        self.offer_nonce(&mut refusal);
        Box::new(refusal)
    }

    /// Whether the proof's `jti` is used for the first time, with its key (remembered as
    /// long as its `iat` is taken); refused (`temporarily_unavailable`) when the single-use
    /// store cannot say.
    async fn proof_first_use(&self, proof: &Proof) -> Result<bool, Box<Response>> {
        let window = dpop::IAT_PAST_SECS + dpop::IAT_FUTURE_SECS + 60;
        let ttl = std::time::Duration::from_secs(window.unsigned_abs());
        self.first_use(USED_PROOF, &client_key(&proof.jti, &proof.jkt), ttl)
            .await
    }

    /// The URL of the provider's endpoint at `path` (a proof's `htu` must name it).
    fn endpoint(&self, path: &str) -> Result<url::Url, Box<Response>> {
        url::Url::parse(&self.provider.url(path)).map_err(|_| {
            tracing::error!("oidc provider: the issuer is no URL");
            unavailable("the issuer is no URL")
        })
    }
}
