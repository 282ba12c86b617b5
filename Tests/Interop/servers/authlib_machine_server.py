#!/usr/bin/env python3
"""An independent OAuth 2.0 authorization server for machines, for AuthKit's interop suite.

Flask + Authlib's AuthorizationServer, with in-memory storage:

  POST /token         grant_type=client_credentials (RFC 6749 §4.4; no refresh token,
                      §4.4.3) and grant_type=urn:ietf:params:oauth:grant-type:token-exchange
                      (RFC 8693 §2.1: subject_token, an access token of this server, with
                      subject_token_type ...:token-type:access_token; optional audience,
                      resource, scope, requested_token_type (access_token only)); an
                      unknown, expired or revoked subject_token -> 400 invalid_request
                      (RFC 8693 §2.2.2 "MUST"). Tokens are opaque Bearer, expires_in 3600.
  POST /introspect    RFC 7662, for any authenticated client: active, scope, client_id,
                      token_type, exp, iat, sub, aud, iss; {"active": false} for an unknown,
                      expired or revoked token.
  POST /revoke        RFC 7009 (a client revokes only its own tokens).
  GET  /.well-known/oauth-authorization-server   RFC 8414 metadata (all URLs on the issuer;
                      response_types_supported is [], there is no authorization endpoint).
  GET  /api/whoami    Bearer (RFC 6750) -> {"client_id", "scope"}; no credentials -> 401
                      `WWW-Authenticate: Bearer realm="authlib-machine"` (§3.1: no error code);
                      unknown, expired or revoked -> 401 `Bearer error="invalid_token", ...`.
  GET  /_test/stats   counters, and every request to /token, /introspect and /revoke as
                      {endpoint, grant_type, auth_method (as Authlib authenticated it, or
                      null), client_id, assertion: {header: {alg, kid, typ}, claims: {iss,
                      sub, aud, jti, exp, iat}} or null, audience, resource, scope,
                      requested_token_type, subject_token_type (token exchange only),
                      status, outcome ("ok" or the error code), error_description}.

Clients (each may use client_credentials and token exchange, scopes "read write",
the default when no scope is asked), each with exactly one auth method, which it
uses at /token, /introspect and /revoke alike:
  machine-basic   secret machine-secret                 client_secret_basic
  machine-post    secret machine-post-secret            client_secret_post
  machine-hs256   secret machine-jwt-secret-that-is-at-least-32-bytes   client_secret_jwt, HS256
  machine-es256   EC P-256 key, kid machine-es256-key   private_key_jwt, ES256
  machine-rs256   RSA 2048 key, kid machine-rs256-key   private_key_jwt, RS256
The key pairs are made at start; the private halves go to --key-dir as
machine-es256.pem, machine-rs256.pem (PKCS#8 PEM) and machine-es256.jwk.json (the
private JWK with kid and alg), all mode 0600.

Client assertions (RFC 7523 §3): `aud` must be, or (as an array) contain, the issuer
http://127.0.0.1:PORT or the token endpoint http://127.0.0.1:PORT/token, whichever
endpoint is called; iss = sub = the client's id (and = client_id if that is sent);
exp required, at most 5 s of leeway; a jti is accepted once per client; the header
alg must be the client's own (above), and a kid, if sent, must be the client's.

What is Authlib's: the AuthorizationServer, client_secret_basic/_post, the RFC 7523
assertion check (JWTBearerClientAssertion: signature, iss/sub/aud/exp claims, the
call to validate_jti), ClientCredentialsGrant, BearerTokenGenerator,
IntrospectionEndpoint, RevocationEndpoint, BearerTokenValidator, the metadata
validation. The file's own: the storage (clients, keys, tokens, used jti set), the
hooks Authlib asks for (audiences, client keys, validate_jti, query_token, ...), the
per-client alg and client_id checks on assertions, the RFC 8693 token exchange
grant (a BaseGrant + TokenEndpointMixin registered with register_grant, so client
authentication stays Authlib's), /api/whoami's answers and the /_test recording.

    python3 authlib_machine_server.py --key-dir DIR

The first line on stdout is the port. It stops when stdin closes or on SIGTERM.
The issuer is http://127.0.0.1:PORT.

Needs: Flask, Authlib (tested with Flask 3.1.3, Authlib 1.9.8).
"""
import argparse
import json
import logging
import os
import threading
from urllib.parse import urlsplit

from flask import Flask, g, jsonify, request
from werkzeug.serving import make_server

from authlib.common.encoding import json_loads
from authlib.common.security import generate_token
from authlib.integrations.flask_oauth2 import AuthorizationServer, ResourceProtector
from authlib.oauth2.rfc6749 import (InvalidClientError, InvalidRequestError, InvalidScopeError, OAuth2Error,
                                    UnauthorizedClientError, grants)
from authlib.oauth2.rfc6749.errors import MissingAuthorizationError, UnsupportedTokenTypeError
from authlib.oauth2.rfc6749.models import ClientMixin
from authlib.oauth2.rfc6750 import BearerTokenGenerator, BearerTokenValidator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7523 import JWTBearerClientAssertion
from authlib.oauth2.rfc7523.client import ASSERTION_TYPE
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata
from joserfc import jws
from joserfc.jwk import ECKey, KeySet, OctKey, RSAKey

from authlib_models import Token
from lifecycle import serve_until_stdin_closes

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
AUTH_METHODS = ["client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt"]
SCOPES = ["read", "write"]
LIFETIME = 3600
LEEWAY = 5  # seconds of clock skew allowed on an assertion's exp/iat (Authlib's default is 60)
LOCK = threading.RLock()
ISSUER = [None]  # set once the port is known


class Client(ClientMixin):
    def __init__(self, client_id, method, secret=None, alg=None, key=None):
        self.client_id = client_id
        self.client_secret = secret
        self.method = method
        self.alg = alg  # the one JWS alg its assertions may use
        self.public_keys = KeySet([key]) if key is not None else None

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        if scope is None:  # RFC 6749 §3.3: no scope asked, the pre-defined default
            return " ".join(SCOPES)
        return " ".join(s for s in scope.split() if s in SCOPES)

    def check_redirect_uri(self, redirect_uri):
        return False

    def check_client_secret(self, client_secret):
        return self.method in ("client_secret_basic", "client_secret_post") and client_secret == self.client_secret

    def check_endpoint_auth_method(self, method, endpoint):
        return method == self.method

    def check_response_type(self, response_type):
        return False

    def check_grant_type(self, grant_type):
        return grant_type in ("client_credentials", TOKEN_EXCHANGE)


ES256_KEY = ECKey.generate_key("P-256", parameters={"kid": "machine-es256-key", "alg": "ES256", "use": "sig"})
RS256_KEY = RSAKey.generate_key(2048, parameters={"kid": "machine-rs256-key", "alg": "RS256", "use": "sig"})

CLIENTS = {c.client_id: c for c in [
    Client("machine-basic", "client_secret_basic", secret="machine-secret"),
    Client("machine-post", "client_secret_post", secret="machine-post-secret"),
    Client("machine-hs256", "client_secret_jwt", secret="machine-jwt-secret-that-is-at-least-32-bytes", alg="HS256"),
    Client("machine-es256", "private_key_jwt", alg="ES256",
           key=ECKey.import_key(ES256_KEY.as_dict(private=False))),
    Client("machine-rs256", "private_key_jwt", alg="RS256",
           key=RSAKey.import_key(RS256_KEY.as_dict(private=False))),
]}


def write_private_keys(directory):
    os.makedirs(directory, exist_ok=True)
    files = {"machine-es256.pem": ES256_KEY.as_pem(private=True),
             "machine-rs256.pem": RS256_KEY.as_pem(private=True),
             "machine-es256.jwk.json": json.dumps(ES256_KEY.as_dict(private=True), indent=2).encode()}
    for name, data in files.items():
        path = os.path.join(directory, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.fchmod(fd, 0o600)  # also when the file was there before
        with os.fdopen(fd, "wb") as f:
            f.write(data)


TOKENS = {}       # access token -> MachineToken
USED_JTI = set()  # (client_id, jti) of every accepted assertion
STATS = {"issued": {"client_credentials": 0, TOKEN_EXCHANGE: 0}, "refused": 0, "introspected": 0,
         "revoked": 0, "replayed_jti": 0, "whoami": {"200": 0, "401": 0}, "metadata": 0,
         "auth_method": {}, "requests": []}


class MachineToken(Token):
    def __init__(self, client, data, grant_type, sub, aud):
        super().__init__(client, None, data)
        self.grant_type = grant_type
        self.sub = sub
        self.aud = aud

    def is_live(self):
        return not self.is_expired() and not self.is_revoked()


class ClientAssertion(JWTBearerClientAssertion):
    """Authlib's RFC 7523 client authentication (client_secret_jwt or
    private_key_jwt, one instance each), given what Authlib asks for."""

    def __init__(self, method):
        super().__init__(validate_jti=True, leeway=LEEWAY)
        self.CLIENT_AUTH_METHOD = method

    def __call__(self, query_client, request):
        form = request.form
        if form.get("client_assertion_type") == ASSERTION_TYPE and form.get("client_assertion"):
            header, claims = self.extract_assertion(form["client_assertion"])
            client = query_client(claims["sub"]) if isinstance(claims.get("sub"), str) else None
            if client is not None and client.method != self.CLIENT_AUTH_METHOD:
                return None  # the other assertion method's client
            if client is not None:
                if form.get("client_id") and form["client_id"] != claims["sub"]:
                    raise InvalidClientError(description="client_id does not match the assertion's sub.")
                if header.get("alg") != client.alg:
                    raise InvalidClientError(description="This client signs its assertions with %s." % client.alg)
                if client.public_keys is not None and header.get("kid") not in (None, client.public_keys.keys[0].kid):
                    raise InvalidClientError(description="Unknown kid for this client.")
        return super().__call__(query_client, request)

    def get_audiences(self):
        return [ISSUER[0], ISSUER[0] + "/token"]

    def resolve_client_public_key(self, client):
        if self.CLIENT_AUTH_METHOD == "client_secret_jwt":
            return OctKey.import_key(client.client_secret)
        return client.public_keys

    def validate_jti(self, claims, jti):
        with LOCK:
            if (claims["sub"], jti) in USED_JTI:
                STATS["replayed_jti"] += 1
                return False
            USED_JTI.add((claims["sub"], jti))
            return True


class InvalidTargetError(OAuth2Error):
    error = "invalid_target"  # RFC 8693 §2.2.2, RFC 8707 §2


class TokenExchangeGrant(grants.BaseGrant, grants.TokenEndpointMixin):
    """RFC 8693 token exchange for access tokens of this server (Authlib has none)."""

    GRANT_TYPE = TOKEN_EXCHANGE
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS

    def validate_token_request(self):
        client = self.authenticate_token_endpoint_client()
        if not client.check_grant_type(self.GRANT_TYPE):
            raise UnauthorizedClientError("The client may not use token exchange.")
        self.request.client = client
        form = self.request.form
        for name in ("subject_token", "subject_token_type"):
            if not form.get(name):
                raise InvalidRequestError("Missing '%s'." % name)
        if form["subject_token_type"] != ACCESS_TOKEN_TYPE:
            raise InvalidRequestError("Only access tokens of this server can be exchanged.")
        if form.get("requested_token_type", ACCESS_TOKEN_TYPE) != ACCESS_TOKEN_TYPE:
            raise InvalidRequestError("Only access tokens can be issued.")
        resources = form.getlist("resource")
        for resource in resources:
            parts = urlsplit(resource)
            if not parts.scheme or not parts.netloc or parts.fragment:
                raise InvalidTargetError("A resource must be an absolute URI without a fragment.")
        subject = TOKENS.get(form["subject_token"])
        if subject is None or not subject.is_live():
            # RFC 8693 §2.2.2: an invalid subject_token "MUST use the invalid_request error code".
            raise InvalidRequestError("The subject_token is unknown, expired or revoked.")
        asked = self.request.payload.scope
        if asked is not None and not set(asked.split()) <= set(subject.scope.split()):
            raise InvalidScopeError("The scope asked exceeds the subject token's.")
        self.validate_requested_scope()
        self.request.exchange = {"subject": subject, "aud": form.getlist("audience") + resources,
                                 "scope": asked if asked is not None else subject.scope}

    def create_token_response(self):
        exchange = self.request.exchange
        token = self.generate_token(scope=exchange["scope"], include_refresh_token=False)
        token["issued_token_type"] = ACCESS_TOKEN_TYPE
        self.save_token(token)
        return 200, token, self.TOKEN_RESPONSE_HEADER


class ClientCredentialsGrant(grants.ClientCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS


class Introspection(IntrospectionEndpoint):
    CLIENT_AUTH_METHODS = AUTH_METHODS

    def query_token(self, token_string, token_type_hint):
        return TOKENS.get(token_string)

    def check_permission(self, token, client, request):
        return True  # every machine client is also a resource server here

    def introspect_token(self, token):
        return {"active": True, "scope": token.scope, "client_id": token.client_id, "token_type": "Bearer",
                "exp": int(token.issued_at) + token.expires_in, "iat": int(token.issued_at),
                "sub": token.sub, "aud": token.aud, "iss": ISSUER[0]}


class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = AUTH_METHODS

    def query_token(self, token_string, token_type_hint):
        return TOKENS.get(token_string)

    def revoke_token(self, token, request):
        with LOCK:
            token.revoked = True
            STATS["revoked"] += 1


class Validator(BearerTokenValidator):
    def authenticate_token(self, token_string):
        return TOKENS.get(token_string)


class Server(AuthorizationServer):
    def authenticate_client(self, request, methods, endpoint="token"):
        client = super().authenticate_client(request, methods, endpoint)
        g.auth_method, g.client_id = request.auth_method, client.get_client_id()
        return client


class Metadata(AuthorizationServerMetadata):
    def validate_response_types_supported(self):
        """RFC 8414 makes it REQUIRED; with no authorization endpoint there is no
        response type to name, so the list is published empty."""


def assertion_record(form):
    """The client assertion as presented (not verified), for the suite to read."""
    if not form.get("client_assertion"):
        return None
    try:
        obj = jws.extract_compact(form["client_assertion"].encode())
        header, claims = obj.headers(), json_loads(obj.payload)
    except Exception:  # noqa: BLE001 - a malformed assertion is recorded as such
        return {"malformed": True}
    return {"header": {k: header.get(k) for k in ("alg", "kid", "typ")},
            "claims": {k: claims.get(k) for k in ("iss", "sub", "aud", "jti", "exp", "iat")}}


def recorded(endpoint, respond):
    form = request.form
    entry = {"endpoint": endpoint, "grant_type": form.get("grant_type"), "assertion": assertion_record(form)}
    if form.get("grant_type") == TOKEN_EXCHANGE:
        entry.update(audience=form.getlist("audience"), resource=form.getlist("resource"),
                     scope=form.get("scope"), requested_token_type=form.get("requested_token_type"),
                     subject_token_type=form.get("subject_token_type"))
    response = respond()
    body = response.get_json(silent=True) or {}
    entry.update(auth_method=g.get("auth_method"), client_id=g.get("client_id"), status=response.status_code,
                 outcome=body.get("error", "ok"), error_description=body.get("error_description"))
    with LOCK:
        STATS["requests"].append(entry)
        if endpoint == "token" and response.status_code != 200:
            STATS["refused"] += 1
        if endpoint == "introspection" and response.status_code == 200:
            STATS["introspected"] += 1
        if entry["auth_method"]:
            STATS["auth_method"][entry["client_id"]] = entry["auth_method"]
    return response


def create_app():
    app = Flask(__name__)
    app.config["OAUTH2_SCOPES_SUPPORTED"] = SCOPES

    def save_token(data, req):
        exchange = getattr(req, "exchange", None)
        client_id = req.client.get_client_id()
        sub = exchange["subject"].sub if exchange else client_id
        aud = (exchange and exchange["aud"]) or [ISSUER[0]]
        with LOCK:
            TOKENS[data["access_token"]] = MachineToken(req.client, data, req.payload.grant_type, sub, aud)
            STATS["issued"][req.payload.grant_type] += 1

    server = Server(app, query_client=CLIENTS.get, save_token=save_token)
    server.register_token_generator("default", BearerTokenGenerator(
        access_token_generator=lambda **kw: generate_token(40), expires_generator=LIFETIME))
    for method in ("client_secret_jwt", "private_key_jwt"):
        server.register_client_auth_method(method, ClientAssertion(method))
    server.register_grant(ClientCredentialsGrant)
    server.register_grant(TokenExchangeGrant)
    server.register_endpoint(Introspection)
    server.register_endpoint(Revocation)
    require_oauth = ResourceProtector()
    require_oauth.register_token_validator(Validator())

    @app.post("/token")
    def token():
        return recorded("token", server.create_token_response)

    @app.post("/introspect")
    def introspect():
        return recorded("introspection", lambda: server.create_endpoint_response(Introspection.ENDPOINT_NAME))

    @app.post("/revoke")
    def revoke():
        return recorded("revocation", lambda: server.create_endpoint_response(Revocation.ENDPOINT_NAME))

    @app.get("/.well-known/oauth-authorization-server")
    def metadata():
        with LOCK:
            STATS["metadata"] += 1
        issuer = ISSUER[0]
        algs = ["ES256", "RS256", "HS256"]
        data = Metadata({
            "issuer": issuer,
            "token_endpoint": issuer + "/token",
            "introspection_endpoint": issuer + "/introspect",
            "revocation_endpoint": issuer + "/revoke",
            "response_types_supported": [],
            "grant_types_supported": ["client_credentials", TOKEN_EXCHANGE],
            "scopes_supported": SCOPES,
            "token_endpoint_auth_methods_supported": AUTH_METHODS,
            "token_endpoint_auth_signing_alg_values_supported": algs,
            "introspection_endpoint_auth_methods_supported": AUTH_METHODS,
            "introspection_endpoint_auth_signing_alg_values_supported": algs,
            "revocation_endpoint_auth_methods_supported": AUTH_METHODS,
            "revocation_endpoint_auth_signing_alg_values_supported": algs,
        })
        data.validate()
        return jsonify(dict(data))

    @app.get("/api/whoami")
    def whoami():
        try:
            token = require_oauth.acquire_token()
        except (MissingAuthorizationError, UnsupportedTokenTypeError):  # RFC 6750 §3.1: no error code
            status, body, headers = 401, {}, {"WWW-Authenticate": 'Bearer realm="authlib-machine"'}
        except OAuth2Error as error:  # Authlib's InvalidTokenError: Bearer error="invalid_token"
            status, body, headers = error.status_code, dict(error.get_body()), dict(error.get_headers())
        else:
            status, body, headers = 200, {"client_id": token.client_id, "scope": token.scope}, {}
        with LOCK:
            STATS["whoami"][str(status)] = STATS["whoami"].get(str(status), 0) + 1
        return jsonify(body), status, headers

    @app.get("/_test/stats")
    def stats():
        with LOCK:
            return jsonify(STATS)

    return app


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--key-dir", required=True, help="where the clients' private keys are written")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # plain http on 127.0.0.1 only
    if not args.verbose:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)

    write_private_keys(args.key_dir)
    app = create_app()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    ISSUER[0] = "http://127.0.0.1:%d" % server.server_port
    serve_until_stdin_closes(server, server.server_port)


if __name__ == "__main__":
    main()
