"""A relying party from PyPI, Authlib (its requests client; joserfc, its JOSE library, checks
the ID token), signing in through
authcore as an OpenID Provider. Driven by crates/authcore-server/tests/openid_provider.rs:

    python authlib_rp.py <issuer> <client id> <client secret> <redirect URI> <cookie header> <post-logout redirect URI>
    python authlib_rp.py logout-token <issuer> <client id> <logout token>

The "browser" is requests with the signed-in user's cookie, following authcore's redirects
until the redirect URI. One JSON line per step; {"done": true} at the end; a failure prints
{"error": "..."} and exits 1.

With `logout-token`, the logout token authcore posted to the client's back-channel logout
URI is checked as OpenID Connect Back-Channel Logout 1.0 §2.6 asks, with joserfc: the
signature against the JWK Set, `typ` logout+jwt, `iss`, `aud`, `iat`, `exp`, `jti`, the
logout event, `sub` or `sid`, no `nonce`. Prints {"claims": {...}}, or {"refused": "..."}.
"""

import json
import sys
import time
from urllib.parse import parse_qs, urljoin, urlparse

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet


def say(obj):
    print(json.dumps(obj), flush=True)


def browse(url, cookie, redirect_uri):
    """Follows redirects like a browser until the redirect URI (not requested)."""
    for _ in range(10):
        if url.startswith(redirect_uri):
            return url
        res = requests.get(url, headers={"cookie": cookie}, allow_redirects=False, timeout=10)
        location = res.headers.get("location")
        if not location:
            raise RuntimeError(f"no redirect from {url}: {res.status_code} {res.text}")
        url = urljoin(url, location)
    raise RuntimeError("too many redirects")


BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout"
ALGORITHMS = ["EdDSA", "ES256", "RS256"]


def provider_keys(issuer):
    meta = requests.get(f"{issuer}/.well-known/openid-configuration", timeout=10).json()
    return KeySet.import_key_set(requests.get(meta["jwks_uri"], timeout=10).json())


def check_logout_token(issuer, client_id, token):
    """The logout token's claims, or an exception saying why it is refused (§2.6)."""
    decoded = jwt.decode(token, provider_keys(issuer), algorithms=ALGORITHMS)
    if decoded.header.get("typ") != "logout+jwt":
        raise ValueError(f"typ {decoded.header.get('typ')!r}")
    claims = decoded.claims
    jwt.JWTClaimsRegistry(
        now=int(time.time()),
        leeway=30,
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": client_id},
        iat={"essential": True},
        exp={"essential": True},
        jti={"essential": True},
    ).validate(claims)
    events = claims.get("events")
    if not isinstance(events, dict) or not isinstance(events.get(BACKCHANNEL_LOGOUT_EVENT), dict):
        raise ValueError("no back-channel logout event")
    if "nonce" in claims:
        raise ValueError("a logout token has no nonce")
    if not claims.get("sub") and not claims.get("sid"):
        raise ValueError("neither sub nor sid")
    return claims


def logout_token_mode(issuer, client_id, token):
    try:
        say({"claims": check_logout_token(issuer, client_id, token)})
    except Exception as e:  # the harness reads the reason
        say({"refused": f"{type(e).__name__}: {e}"})
    say({"done": True})


def main():
    if sys.argv[1:2] == ["logout-token"]:
        logout_token_mode(*sys.argv[2:5])
        return
    issuer, client_id, secret, redirect_uri, cookie, post_logout = sys.argv[1:7]
    meta = requests.get(f"{issuer}/.well-known/openid-configuration", timeout=10).json()
    if meta["issuer"] != issuer:
        raise RuntimeError(f"issuer mismatch: {meta['issuer']}")
    say({"step": "discovery", "issuer": meta["issuer"]})

    session = OAuth2Session(
        client_id,
        secret,
        scope="openid profile email offline_access",
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        token_endpoint_auth_method="client_secret_basic",
    )
    nonce = generate_token(20)
    verifier = generate_token(48)
    url, state = session.create_authorization_url(
        meta["authorization_endpoint"], nonce=nonce, code_verifier=verifier
    )
    callback = browse(url, cookie, redirect_uri)
    params = parse_qs(urlparse(callback).query)
    if params.get("iss") != [issuer]:
        raise RuntimeError(f"iss of the authorization response: {params.get('iss')}")
    token = session.fetch_token(
        meta["token_endpoint"],
        authorization_response=callback,
        state=state,
        code_verifier=verifier,
    )
    keys = KeySet.import_key_set(requests.get(meta["jwks_uri"], timeout=10).json())
    id_token = jwt.decode(token["id_token"], keys, algorithms=["EdDSA", "ES256"])
    jwt.JWTClaimsRegistry(
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": client_id},
        nonce={"essential": True, "value": nonce},
        sub={"essential": True},
        exp={"essential": True},
    ).validate(id_token.claims)
    userinfo = session.get(meta["userinfo_endpoint"]).json()
    say({"step": "signed-in", "claims": id_token.claims, "userinfo": userinfo, "alg": id_token.header["alg"]})
    # Refresh: Authlib's own refresh, a new access token that opens userinfo, a new refresh
    # token, and an ID token for the same user.
    first_refresh = token["refresh_token"]
    refreshed = session.refresh_token(meta["token_endpoint"], refresh_token=first_refresh)
    new_id = jwt.decode(refreshed["id_token"], keys, algorithms=["EdDSA", "ES256"])
    again = session.get(meta["userinfo_endpoint"]).json()
    say({
        "step": "refreshed",
        "sub": new_id.claims["sub"],
        "userinfo": again,
        "rotated": refreshed["refresh_token"] != first_refresh,
    })
    # RP-initiated logout: the end-session URL with the ID token as hint goes to authcore's
    # sign-out page.
    end = requests.get(
        meta["end_session_endpoint"],
        params={
            "id_token_hint": token["id_token"],
            "client_id": client_id,
            "post_logout_redirect_uri": post_logout,
            "state": "bye",
        },
        headers={"cookie": cookie},
        allow_redirects=False,
        timeout=10,
    )
    say({"step": "end-session", "status": end.status_code, "location": end.headers.get("location")})
    say({"done": True})


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the harness reads the reason
        say({"error": f"{type(e).__name__}: {e}"})
        sys.exit(1)
