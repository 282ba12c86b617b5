#!/usr/bin/env python3
"""A second, independent OpenID Provider for AuthKit's interop suite.

Flask around pyop's Provider (pyop.provider.Provider, built on the oic
library), with pyop's in-memory storage (AuthorizationState over plain dicts):

  GET  /.well-known/openid-configuration   OpenID Connect Discovery 1.0 §4: pyop's
                      provider configuration (§3), with end_session_endpoint.
  GET  /authorize     the authorization code flow (Core §3.1.2); the user 'alice'
                      is signed in and consents at once. PKCE (RFC 7636) is
                      checked by pyop when the request has a code_challenge.
                      No RFC 9207 `iss` in the response: pyop does not send it.
  POST /token         Core §3.1.3: code -> access token, refresh token and an ID
                      token signed RS256 (at_hash, nonce from the request); the
                      claims the granted scope names (email, profile) are in the
                      ID token too. refresh_token grant (no rotation).
  GET  /jwks          the public half of the signing key (RS256, made at start).
  GET|POST /userinfo  Core §5.3: the claims of the access token's scope (Bearer,
                      RFC 6750 §2.1); 401 invalid_token otherwise (RFC 6750 §3.1).
  GET  /logout        RP-Initiated Logout 1.0 §2: ends alice's session (pyop
                      deletes her codes and access tokens), then redirects to a
                      registered post_logout_redirect_uri (§3) or shows a page.
  GET  /_test/stats   counters for the suite: authorization requests, ID tokens
                      issued (and the claims of the last), userinfo calls, nonce
                      values seen, sessions ended.

Subject identifiers are pyop's HashBasedSubjectIdentifierFactory, type public
(Core §8): the same sub for alice whatever the client or redirect port.

One client, confidential (Core §9 client_secret_basic, as pyop checks it):
  pyop-client   secret pyop-secret
Its redirect URIs are loopback ones on any port (RFC 8252 §7.3):
http://127.0.0.1:PORT/callback. pyop looks a redirect_uri up with `in` on the
client's registered redirect_uris; here that collection is LoopbackURIs, which
answers for any port, so pyop's own check does the matching. Its
post_logout_redirect_uris are the same.

    python3 pyop_server.py [--verbose]

The first line on stdout is the port. It stops when stdin closes or on SIGTERM.
The issuer is http://127.0.0.1:PORT.

Needs: Flask, pyop (tested with Flask 3.1.3, pyop 3.5.0, oic 1.7.0).
"""
import argparse
import json
import logging
import threading
from urllib.parse import parse_qsl, urlencode, urlsplit

from Cryptodome.PublicKey import RSA
from flask import Flask, jsonify, make_response, redirect, request
from jwkest import b64d
from jwkest.jwk import RSAKey
from oic.oic import scope2claims
from oic.oic.message import EndSessionRequest, EndSessionResponse, TokenErrorResponse, UserInfoErrorResponse
from pyop.access_token import AccessToken
from pyop.authz_state import AuthorizationState
from pyop.exceptions import (BearerTokenError, InvalidAccessToken, InvalidAuthenticationRequest,
                             InvalidClientAuthentication, InvalidSubjectIdentifier, OAuthError)
from pyop.provider import Provider
from pyop.subject_identifier import HashBasedSubjectIdentifierFactory
from pyop.userinfo import Userinfo
from pyop.util import should_fragment_encode
from werkzeug.serving import make_server

from lifecycle import serve_until_stdin_closes

LOCK = threading.RLock()  # pyop's dict storage is not thread-safe; Flask serves in threads

CLIENT_ID, CLIENT_SECRET = "pyop-client", "pyop-secret"
USER = "alice"
USERS = {USER: {"email": "alice@pyop.example", "email_verified": True, "name": "Alice",
                "preferred_username": "alice"}}
SCOPES = ["openid", "email", "profile"]

# The OpenID Provider's signing key; /jwks publishes its public half.
SIGNING_KEY = RSAKey(key=RSA.generate(2048), alg="RS256", use="sig", kid="pyop-rs256")

STATS = {"authorizations": 0, "pkce_s256": 0, "id_tokens": 0, "userinfo": 0, "nonces": [],
         "last_id_token": None, "end_session": 0, "end_session_requests": [], "token_errors": [],
         "metadata": 0}


class LoopbackURIs:
    """A client's registered redirect URIs as pyop sees them (`uri in ...`):
    any port on http://127.0.0.1 with path /callback, RFC 8252 §7.3 ("the
    authorization server MUST allow any port to be specified at the time of
    the request for loopback IP redirect URIs")."""

    def __contains__(self, uri):
        if not isinstance(uri, str):
            return False
        parts = urlsplit(uri)
        try:
            port = parts.port
        except ValueError:
            return False
        return (parts.scheme == "http" and parts.hostname == "127.0.0.1" and port is not None
                and parts.path == "/callback" and not parts.fragment and "@" not in parts.netloc)

    def __iter__(self):
        return iter(())

    def __repr__(self):
        return "LoopbackURIs(http://127.0.0.1:*/callback)"


CLIENTS = {
    CLIENT_ID: {
        "client_secret": CLIENT_SECRET,
        "token_endpoint_auth_method": "client_secret_basic",
        "response_types": ["code"],
        "redirect_uris": LoopbackURIs(),
        "post_logout_redirect_uris": LoopbackURIs(),
        "subject_type": "public",
        "id_token_signed_response_alg": "RS256",
    },
}


def jwt_claims(token):
    """The header and payload of a JWT this server just signed (not verified: it is ours)."""
    header, payload = token.split(".")[:2]
    return json.loads(b64d(header.encode())), json.loads(b64d(payload.encode()))


def make_provider(issuer):
    """pyop's Provider for `issuer`, its endpoints under the same origin."""
    configuration = {
        # oic checks the configuration as Discovery §3 says: an https issuer.
        # This test server is on http://127.0.0.1, so the issuer is set after
        # that check (the ID tokens' iss is read from it when they are signed).
        "issuer": "https://pyop.invalid",
        "authorization_endpoint": issuer + "/authorize",
        "token_endpoint": issuer + "/token",
        "userinfo_endpoint": issuer + "/userinfo",
        "jwks_uri": issuer + "/jwks",
        "end_session_endpoint": issuer + "/logout",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        "scopes_supported": SCOPES,
        "claims_supported": ["sub", "email", "email_verified", "name", "preferred_username"],
        "code_challenge_methods_supported": ["S256"],
    }
    state = AuthorizationState(HashBasedSubjectIdentifierFactory("authkit-interop-salt"),
                               refresh_token_lifetime=86400)
    provider = Provider(SIGNING_KEY, configuration, state, CLIENTS, Userinfo(USERS))
    provider.configuration_information["issuer"] = issuer
    return provider


def token_error(error, description, status=400):
    """RFC 6749 §5.2 (401 with WWW-Authenticate for invalid_client)."""
    response = make_response(TokenErrorResponse(error=error, error_description=description).to_json(), status)
    response.headers["Content-Type"] = "application/json"
    response.headers["Cache-Control"] = "no-store"
    if status == 401:
        response.headers["WWW-Authenticate"] = 'Basic realm="pyop"'
    return response


def create_app(provider):
    app = Flask(__name__)

    @app.get("/.well-known/openid-configuration")
    def configuration():
        """OpenID Connect Discovery 1.0 §4.2: the provider configuration."""
        with LOCK:
            STATS["metadata"] += 1
        return jsonify(provider.provider_configuration.to_dict())

    @app.get("/jwks")
    def jwks():
        """The JWK Set at jwks_uri (Discovery §3): public keys only."""
        return jsonify(provider.jwks)

    @app.get("/authorize")
    def authorize():
        """Core §3.1.2: pyop parses and checks the authentication request
        (client, redirect URI, response type), then alice is authenticated and
        consents at once (§3.1.2.3-4) and pyop answers with a code (§3.1.2.5)."""
        with LOCK:
            try:
                auth_request = provider.parse_authentication_request(urlencode(list(request.args.items(multi=True))),
                                                                     request.headers)
            except InvalidAuthenticationRequest as error:
                # §3.1.2.6 to the redirect URI when it is the client's;
                # an unknown client or redirect URI gets no redirect (RFC 6749 §4.1.2.1).
                url = error.to_error_url()
                if url:
                    return redirect(url, 303)
                return jsonify(error=error.oauth_error or "invalid_request", error_description=str(error)), 400
            STATS["authorizations"] += 1
            if auth_request.get("code_challenge_method") == "S256":
                STATS["pkce_s256"] += 1
            if "nonce" in auth_request:
                STATS["nonces"].append(auth_request["nonce"])
            response = provider.authorize(auth_request, USER)
        return redirect(response.request(auth_request["redirect_uri"], should_fragment_encode(auth_request)), 303)

    def scope_claims(body):
        """The claims the granted scope names (Core §5.4), for the ID token too:
        pyop puts them in the UserInfo response only."""
        form = dict(parse_qsl(body))
        if form.get("grant_type") != "authorization_code" or form.get("code") not in provider.authz_state.authorization_codes:
            return {}
        scope = provider.authz_state.authorization_codes[form["code"]]["granted_scope"].split()
        return provider.userinfo.get_claims_for(USER, scope2claims(scope))

    @app.post("/token")
    def token():
        """Core §3.1.3: pyop authenticates the client (client_secret_basic),
        checks the code, its redirect_uri and PKCE verifier, and signs the ID
        token (§3.1.3.6: iss, sub, aud, exp, iat, nonce, at_hash)."""
        body = request.get_data().decode("utf-8")
        with LOCK:
            try:
                answer = provider.handle_token_request(body, request.headers, extra_id_token_claims=scope_claims(body))
            except InvalidClientAuthentication as error:
                STATS["token_errors"].append("invalid_client: %s" % error)
                return token_error("invalid_client", str(error), 401)
            except OAuthError as error:
                STATS["token_errors"].append("%s: %s" % (error.oauth_error, error))
                return token_error(error.oauth_error, str(error))
            data = answer.to_dict()
            if "id_token" in data:
                header, claims = jwt_claims(data["id_token"])
                STATS["id_tokens"] += 1
                STATS["last_id_token"] = dict(alg=header.get("alg"), kid=header.get("kid"),
                                              **{k: claims.get(k) for k in ("iss", "sub", "aud", "nonce", "email")})
        response = jsonify(data)
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.route("/userinfo", methods=["GET", "POST"])
    def userinfo():
        """Core §5.3: the claims of the access token's scope, as JSON (§5.3.2)."""
        with LOCK:
            STATS["userinfo"] += 1
            try:
                answer = provider.handle_userinfo_request(request.get_data().decode("utf-8") or None, request.headers)
            except (BearerTokenError, InvalidAccessToken) as error:
                response = make_response(UserInfoErrorResponse(error="invalid_token", error_description=str(error)).to_json(), 401)
                response.headers["Content-Type"] = "application/json"
                response.headers["WWW-Authenticate"] = '%s error="invalid_token"' % AccessToken.BEARER_TOKEN_TYPE
                return response
        return jsonify(answer.to_dict())

    @app.get("/logout")
    def logout():
        """RP-Initiated Logout 1.0 §2: id_token_hint, client_id,
        post_logout_redirect_uri, state. pyop ends the session of the ID
        token's subject; without a hint, of alice (the only user here). It
        redirects (§3) only to a post_logout_redirect_uri registered for the
        client the hint or client_id names."""
        end = EndSessionRequest().deserialize(urlencode(list(request.args.items(multi=True))))
        client_id = end.get("client_id")
        with LOCK:
            STATS["end_session"] += 1
            STATS["end_session_requests"].append({"client_id": client_id, "id_token_hint": "id_token_hint" in end,
                                                  "post_logout_redirect_uri": end.get("post_logout_redirect_uri"),
                                                  "state": end.get("state")})
            if client_id is not None and client_id not in CLIENTS:
                return jsonify(error="invalid_request", error_description="unknown client_id"), 400
            try:
                if "id_token_hint" in end:
                    provider.logout_user(end_session_request=end)
                else:
                    sub = provider.authz_state.subject_identifiers.get(USER, {}).get("public")
                    if sub:
                        provider.logout_user(subject_identifier=sub)
            except (InvalidSubjectIdentifier, ValueError) as error:
                return jsonify(error="invalid_request", error_description=str(error)), 400
            target = provider.do_post_logout_redirect(end)
            if target is None and "id_token_hint" not in end and client_id in CLIENTS \
                    and end.get("post_logout_redirect_uri") in CLIENTS[client_id]["post_logout_redirect_uris"]:
                # pyop knows the client only from id_token_hint; client_id names it here (§2).
                answer = EndSessionResponse(**({"state": end["state"]} if "state" in end else {}))
                target = answer.request(end["post_logout_redirect_uri"])
        if target:
            return redirect(target, 303)
        return make_response("<!doctype html><title>Signed out</title><p>alice is signed out of pyop.</p>")

    @app.get("/_test/stats")
    def stats():
        with LOCK:
            return jsonify(STATS)

    return app


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if not args.verbose:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
    else:
        logging.basicConfig(level=logging.DEBUG)

    # The issuer names the port, known once the socket is bound: the app is made then.
    app = []
    server = make_server("127.0.0.1", 0, lambda environ, start: app[0](environ, start), threaded=True)
    port = server.server_port
    app.append(create_app(make_provider("http://127.0.0.1:%d" % port)))
    serve_until_stdin_closes(server, port)


if __name__ == "__main__":
    main()
