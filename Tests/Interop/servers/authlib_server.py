#!/usr/bin/env python3
"""An independent OAuth 2.0 authorization server for AuthKit's interop suite.

Flask + Authlib's AuthorizationServer, with in-memory storage:

  GET  /authorize     authorization code grant; consent is approved at once as
                      user 'alice' (?deny=1 in the request, or a client whose
                      id starts with 'deny-', answers error=access_denied).
                      PKCE S256 is required (CodeChallenge(required=True)).
                      Every redirect, success or error, carries RFC 9207 `iss`.
  POST /token         authorization_code and refresh_token grants; refresh
                      tokens rotate (the old one is revoked on use).
  POST /revoke        RFC 7009 revocation.
  GET  /.well-known/oauth-authorization-server   RFC 8414 metadata; its `issuer`
                      is the issuer below, the endpoints are on the host asked.
  GET  /.well-known/openid-configuration   the same metadata where OpenID Connect
                      Discovery puts it (RFC 8414 §5).
  GET  /jwks          the key ID tokens are signed with (RS256, made at start).
                      A grant with the openid scope gets an ID token from
                      Authlib's OpenIDCode extension (nonce required, at_hash);
                      the client aud-client gets tokens addressed to another
                      audience, correctly signed: a relying party must refuse them.
  GET  /api/me        a protected resource (Bearer, RFC 6750).
  GET  /_test/stats   counters for the suite (grants issued by type, revocations,
                      metadata documents served by path).

Clients (all may use redirect URIs on http://127.0.0.1 with any port, RFC 8252 §7.3):
  0!1*$$            secret 1/2_3+4   client_secret_basic  (needs form-encoding in Basic)
  post-client       secret post-secret  client_secret_post
  public-client     no secret        none (public)
  short-client      secret short-secret client_secret_basic, access tokens live 5 s
  deny-client       secret deny-secret  client_secret_basic, consent always denied
  aud-client        secret aud-secret   client_secret_basic, ID tokens for another audience
  badkey-client     secret badkey-secret client_secret_basic, ID tokens signed by a key not
                    published (same kid as the published one)
  iss-client        secret iss-secret   client_secret_basic, ID tokens naming another issuer

    python3 authlib_server.py [--issuer URL]

The first line on stdout is the port. It stops when stdin closes or on SIGTERM.
The issuer defaults to http://127.0.0.1:PORT.

Needs: Flask, Authlib (tested with Flask 3.1.3, Authlib 1.9.8).
"""
import argparse
import logging
import os
import socket
import sys
import threading
import time
from urllib.parse import urlsplit

from flask import Flask, jsonify, request
from werkzeug.serving import make_server

from authlib.common.security import generate_token
from authlib.common.urls import add_params_to_uri
from authlib.integrations.flask_oauth2 import AuthorizationServer, ResourceProtector, current_token
from authlib.oauth2.rfc6749 import InvalidRequestError, OAuth2Error, grants
from authlib.oauth2.rfc6749.models import AuthorizationCodeMixin, ClientMixin
from authlib.oauth2.rfc6750 import BearerTokenGenerator, BearerTokenValidator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from joserfc.jwk import RSAKey

from authlib_models import ALICE, Token
from lifecycle import serve_until_stdin_closes

AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]
LOCK = threading.RLock()


class Client(ClientMixin):
    def __init__(self, client_id, secret, method, lifetime=3600, deny=False):
        self.client_id = client_id
        self.client_secret = secret
        self.method = method
        self.lifetime = lifetime
        self.deny = deny

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        allowed = {"read", "write", "profile", "openid", "email"}
        return " ".join(s for s in (scope or "").split() if s in allowed)

    def check_redirect_uri(self, redirect_uri):
        # RFC 8252 §7.3: a loopback redirect with any port.
        parts = urlsplit(redirect_uri or "")
        return parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.path == "/callback"

    def check_client_secret(self, client_secret):
        return self.client_secret is not None and client_secret == self.client_secret

    def check_endpoint_auth_method(self, method, endpoint):
        return method == self.method

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type in ("authorization_code", "refresh_token")


CLIENTS = {c.client_id: c for c in [
    Client("0!1*$$", "1/2_3+4", "client_secret_basic"),
    Client("post-client", "post-secret", "client_secret_post"),
    Client("public-client", None, "none"),
    Client("short-client", "short-secret", "client_secret_basic", lifetime=5),
    Client("deny-client", "deny-secret", "client_secret_basic", deny=True),
    Client("aud-client", "aud-secret", "client_secret_basic"),
    Client("badkey-client", "badkey-secret", "client_secret_basic"),
    Client("iss-client", "iss-secret", "client_secret_basic"),
]}

# The OpenID Provider's signing key, published at /jwks (public half only).
SIGNING_KEY = RSAKey.generate_key(2048, parameters={"kid": "authlib-rs256", "use": "sig", "alg": "RS256"})
# Another key under the same kid, never published: what badkey-client's ID
# tokens are signed with (a relying party must refuse them).
UNPUBLISHED_KEY = RSAKey.generate_key(2048, parameters={"kid": "authlib-rs256", "use": "sig", "alg": "RS256"})


class AuthorizationCode(AuthorizationCodeMixin):
    def __init__(self, code, client_id, redirect_uri, scope, user, challenge, method, nonce=None):
        self.nonce = nonce
        self.code = code
        self.client_id = client_id
        self.redirect_uri = redirect_uri
        self.scope = scope
        self.user = user
        self.code_challenge = challenge
        self.code_challenge_method = method
        self.issued = time.time()

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    def get_nonce(self):
        return self.nonce

    def get_auth_time(self):
        return int(self.issued)

    def get_acr(self):
        return None

    def get_amr(self):
        return None


CODES = {}    # code -> AuthorizationCode
TOKENS = []   # every Token issued
NONCES = set()  # every nonce an authorization request carried (OpenIDCode refuses a replay)
STATS = {"authorization_code": 0, "refresh_token": 0, "revoked": 0, "rejected_refresh": 0, "id_tokens": 0,
         "pkce_s256_verified": 0, "auth_method": {}, "metadata": {}}


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS

    def save_authorization_code(self, code, req):
        with LOCK:
            CODES[code] = AuthorizationCode(
                code, req.client.get_client_id(), req.payload.redirect_uri, req.payload.scope,
                req.user, req.payload.data.get("code_challenge"),
                req.payload.data.get("code_challenge_method"), req.payload.data.get("nonce"))
            if req.payload.data.get("nonce"):
                NONCES.add(req.payload.data["nonce"])

    def query_authorization_code(self, code, client):
        item = CODES.get(code)
        if item and item.client_id == client.get_client_id() and time.time() - item.issued < 600:
            return item
        return None

    def delete_authorization_code(self, authorization_code):
        with LOCK:
            CODES.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code):
        return authorization_code.user


class RefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True  # rotation

    def authenticate_refresh_token(self, refresh_token):
        for token in TOKENS:
            if token.refresh_token == refresh_token:
                if token.revoked:
                    STATS["rejected_refresh"] += 1
                    return None
                return token
        STATS["rejected_refresh"] += 1
        return None

    def authenticate_user(self, credential):
        return credential.user

    def revoke_old_credential(self, refresh_token):
        with LOCK:
            refresh_token.revoked = True


class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = AUTH_METHODS

    def query_token(self, token_string, token_type_hint):
        for token in TOKENS:
            if token_type_hint != "refresh_token" and token.access_token == token_string:
                return token
            if token_type_hint != "access_token" and token.refresh_token == token_string:
                return token
        return None

    def revoke_token(self, token, req):
        with LOCK:
            token.revoked = True
            STATS["revoked"] += 1


class StrictCodeChallenge(CodeChallenge):
    """CodeChallenge(required=True) only forces PKCE on public clients; this
    peer demands S256 from every client (OAuth 2.1, RFC 9700 §2.1.1)."""

    def validate_code_challenge(self, grant, redirect_uri):
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("Missing 'code_challenge'", redirect_uri=redirect_uri)
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method must be S256", redirect_uri=redirect_uri)
        return super().validate_code_challenge(grant, redirect_uri)

    def validate_code_verifier(self, grant, result):
        if not grant.request.form.get("code_verifier"):
            raise InvalidRequestError("Missing 'code_verifier'")
        super().validate_code_verifier(grant, result)
        with LOCK:
            STATS["pkce_s256_verified"] += 1


class OpenID(OpenIDCode):
    """Authlib's OpenID Connect extension of the code grant (Core §3.1)."""

    def __init__(self, issuer_holder):
        super().__init__(require_nonce=True)
        self.issuer_holder = issuer_holder

    def exists_nonce(self, nonce, request):
        with LOCK:
            return nonce in NONCES

    def resolve_client_private_key(self, client):
        return UNPUBLISHED_KEY if client.get_client_id() == "badkey-client" else SIGNING_KEY

    def get_client_algorithm(self, client):
        return "RS256"

    def get_encode_header(self, client):
        return {"alg": "RS256", "kid": "authlib-rs256"}

    def get_client_claims(self, client):
        audience = "someone-else" if client.get_client_id() == "aud-client" else client.get_client_id()
        issuer = "https://another-issuer.example" if client.get_client_id() == "iss-client" else self.issuer_holder[0]
        return {"iss": issuer, "aud": [audience]}

    def generate_user_info(self, user, scope):
        info = UserInfo(sub=str(user.id), name=user.name.capitalize(), preferred_username=user.name)
        if "email" in (scope or "").split():
            info["email"] = "%s@authlib.example" % user.name
            info["email_verified"] = True
        return info

    def process_token(self, grant, response):
        token = super().process_token(grant, response)
        if "id_token" in token:
            with LOCK:
                STATS["id_tokens"] += 1
        return token


class Validator(BearerTokenValidator):
    def authenticate_token(self, token_string):
        for token in TOKENS:
            if token.access_token == token_string:
                return token
        return None


def create_app(issuer_holder):
    app = Flask(__name__)

    def query_client(client_id):
        return CLIENTS.get(client_id)

    def save_token(data, req):
        with LOCK:
            TOKENS.append(Token(req.client, req.user, data))
            STATS[req.payload.grant_type] += 1
            STATS["auth_method"][req.client.get_client_id()] = req.auth_method

    server = AuthorizationServer(app, query_client=query_client, save_token=save_token)
    server.register_token_generator("default", BearerTokenGenerator(
        access_token_generator=lambda **kw: generate_token(40),
        refresh_token_generator=lambda **kw: generate_token(48),
        expires_generator=lambda client, grant_type: client.lifetime))
    server.register_grant(AuthorizationCodeGrant, [StrictCodeChallenge(required=True), OpenID(issuer_holder)])
    server.register_grant(RefreshTokenGrant)
    server.register_endpoint(Revocation)
    require_oauth = ResourceProtector()
    require_oauth.register_token_validator(Validator())

    def with_issuer(response):
        # RFC 9207 §2: every authorization response, success or error, names
        # the issuer. (Authlib's IssuerParameter extension hooks an event that
        # 1.9's create_authorization_response does not fire, so add it here.)
        if response.status_code in (301, 302, 303) and response.location:
            response.location = add_params_to_uri(response.location, {"iss": issuer_holder[0]})
            response.headers["Location"] = response.location
        return response

    @app.get("/authorize")
    def authorize():
        client = CLIENTS.get(request.args.get("client_id", ""))
        denied = request.args.get("deny") == "1" or (client is not None and client.deny)
        try:
            grant = server.get_consent_grant(end_user=ALICE)
        except OAuth2Error as error:
            if getattr(error, "redirect_uri", None):  # e.g. no code_challenge: redirect with the error
                return with_issuer(server.handle_error_response(None, error))
            # invalid client or redirect_uri: no redirect (RFC 6749 §4.1.2.1)
            return jsonify(error=getattr(error, "error", "invalid_request"),
                           error_description=getattr(error, "description", str(error))), 400
        return with_issuer(server.create_authorization_response(grant_user=None if denied else ALICE, grant=grant))

    @app.post("/token")
    def token():
        return server.create_token_response()

    @app.post("/revoke")
    def revoke():
        return server.create_endpoint_response(Revocation.ENDPOINT_NAME)

    @app.get("/.well-known/oauth-authorization-server")
    @app.get("/.well-known/openid-configuration")
    def metadata():
        with LOCK:
            STATS["metadata"][request.path] = STATS["metadata"].get(request.path, 0) + 1
        issuer = issuer_holder[0]
        base = "http://%s" % request.host
        data = AuthorizationServerMetadata({
            "issuer": issuer,
            "authorization_endpoint": base + "/authorize",
            "token_endpoint": base + "/token",
            "revocation_endpoint": base + "/revoke",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": AUTH_METHODS,
            "revocation_endpoint_auth_methods_supported": AUTH_METHODS,
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["read", "write", "profile", "openid", "email"],
            "authorization_response_iss_parameter_supported": True,
            "jwks_uri": base + "/jwks",
            "id_token_signing_alg_values_supported": ["RS256"],
            "subject_types_supported": ["public"],
        })
        data.validate()
        return jsonify(dict(data))

    @app.get("/jwks")
    def jwks():
        return jsonify(keys=[SIGNING_KEY.as_dict(private=False)])

    @app.get("/api/me")
    @require_oauth()
    def me():
        token = current_token
        return jsonify(user=token.user.name, client_id=token.client_id, scope=token.scope)

    @app.get("/_test/stats")
    def stats():
        return jsonify(STATS)

    return app


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--issuer", default=None)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # plain http on 127.0.0.1 only
    if not args.verbose:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)

    issuer_holder = [None]
    app = create_app(issuer_holder)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    port = server.server_port
    issuer_holder[0] = args.issuer or "http://127.0.0.1:%d" % port
    serve_until_stdin_closes(server, port)


if __name__ == "__main__":
    main()
