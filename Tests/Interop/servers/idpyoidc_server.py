#!/usr/bin/env python3
"""An OAuth 2.0 authorization server that REQUIRES pushed authorization
requests (RFC 9126) and DPoP (RFC 9449), for AuthKit's interop suite.

Flask around idpyoidc's server (idpyoidc.server.Server: its oauth2 endpoints
PushedAuthorization, Authorization and Token, the PKCE and DPoP add-ons, JWT
access tokens), in memory:

  GET  /.well-known/oauth-authorization-server  RFC 8414 metadata, the same JSON
  GET  /.well-known/openid-configuration   at both: idpyoidc's endpoints, jwks_uri,
                      code_challenge_methods ["S256"], dpop_signing_alg_values
                      ["ES256"]; the wrapper's require_pushed_authorization_requests
                      true, token_endpoint_auth_methods_supported, grant types,
                      scopes, authorization_response_iss_parameter_supported.
  GET  /jwks          the public ES256 key that signs the access tokens.
  POST /par           RFC 9126 §2: authorization parameters + client authentication
                      (client_secret_basic; a public client sends client_id only)
                      -> 201 {request_uri, expires_in: 60}. Redirect URI and PKCE
                      S256 are checked here. A `dpop_jkt` (RFC 9449 §10) is kept
                      with the request; a DPoP header, if sent, is checked as at
                      /token and its key becomes dpop_jkt (if both: must agree).
  GET  /authorize     client_id + request_uri (RFC 9126 §4): the request pushed by
                      that client, used once, within 60 s. alice is signed in and
                      consents: 302 to redirect_uri?state&scope&code&iss&client_id.
  POST /token         authorization_code (PKCE) and refresh_token grants, a DPoP
                      proof REQUIRED on each: token_type "DPoP", the access token a
                      JWT with cnf.jkt (RFC 9449 §6). A code pushed with dpop_jkt
                      needs a proof by that key (§10); the public client's refresh
                      token needs the key it was issued to (§5); the confidential
                      client may refresh with a new key (rebound). No rotation.
  GET  /api/me        RFC 9449 §7: Authorization: DPoP <token> + a proof with ath,
                      by the token's cnf.jkt key -> 200 {sub, client_id, jkt}.
  GET  /_test/stats   counts; lists of PAR, authorization, token and resource
                      requests (proof jti/htm/htu/nonce/jkt, outcome); nonces issued.

DPoP-Nonce (RFC 9449 §8, §9): one for the authorization server (/par, /token),
another for the resource server (/api/me), sent on every answer of /token and
/api/me (and of /par when it got a DPoP header). --nonce-mode:
  fixed       one nonce per server role for the server's life (default)
  rotate      and a new one after every successful answer
  always-new  hostile: every answer names a fresh nonce and every proof is
              refused as stale (use_dpop_nonce): a client must give up.
--answer-bearer: hostile: /token answers token_type "Bearer" (the token is
still DPoP-bound).

Refusals: JSON {"error", "error_description"}, Cache-Control: no-store.
  /par        400 invalid_request (bad parameter, redirect URI or PKCE; a
              request_uri; response_mode not query); 401 invalid_client with
              WWW-Authenticate: Basic; for a DPoP header there: as /token.
  /authorize  400 JSON, never a redirect: invalid_request (no request_uri;
              another client's), invalid_request_uri (unknown, used, expired).
  /token      400 invalid_dpop_proof (no or bad proof, replayed jti, not the
              key of the code's dpop_jkt or of the public client's refresh
              token); 400 use_dpop_nonce; 401 invalid_client (WWW-Authenticate:
              Basic); idpyoidc's own 400s (e.g. invalid_grant "Unknown code").
  /api/me     401 WWW-Authenticate: DPoP error="E", error_description="..",
              algs="ES256": invalid_token (unknown or expired token; Bearer
              scheme), invalid_dpop_proof (bad proof or ath; key not cnf.jkt),
              use_dpop_nonce. No Authorization: 401 WWW-Authenticate: DPoP algs="ES256".

Who checks what:
  idpyoidc   client authentication; redirect URIs (LoopbackRedirect below);
             storing pushed requests, resolving a request_uri once; PKCE; codes
             and refresh tokens; the access token's signature, expiry, cnf.jkt
             and token_type DPoP; `iss` in the authorization response; at
             /token, add_on.dpop.token_post_parse_request with DPoPProof: the
             proof's signature by its jwk, htm, htu (exact: an htu with a query
             is refused), the key thumbprint.
  wrapper    the rest of a proof (check_proof): one DPoP header, typ dpop+jwt,
             alg ES256 only, a public jwk, htu without query/fragment, iat
             within 60 s, unseen jti, ath, nonce; the nonces; binding a code to
             dpop_jkt and the public client's refresh token to its key (idpyoidc
             checks neither, and rebinds a grant to whichever key refreshes);
             /api/me (idpyoidc's resource-side check hashes ath as hex, not
             base64url, and ignores cnf.jkt: unused, so no userinfo endpoint);
             PAR expiry; refusing /authorize without a request_uri.

Clients, with redirect URIs http://127.0.0.1:PORT/callback and
http://localhost:PORT/callback for any PORT (RFC 8252 §7.3):
  par-dpop-client        public (token_endpoint_auth_method none), PKCE S256 required
  par-dpop-confidential  secret par-dpop-secret, client_secret_basic (PKCE checked if sent)

    python3 idpyoidc_server.py [--nonce-mode fixed|rotate|always-new] [--answer-bearer] [--verbose]

The first line on stdout is the port. It stops when stdin closes or on SIGTERM.
The issuer is http://127.0.0.1:PORT.

Needs: Flask, idpyoidc (tested with Flask 3.1.3, idpyoidc 5.0.0, cryptojwt 1.11.0).
"""
import argparse
import hashlib
import json
import logging
import secrets
import threading
import time
from urllib.parse import urlsplit

from cryptojwt.jwk.jwk import key_from_jwk_dict
from cryptojwt.utils import as_unicode, b64d, b64e
from flask import Flask, jsonify, make_response, request
from idpyoidc.message.oidc import TokenErrorResponse
from idpyoidc.server import Server
from idpyoidc.server.configure import ASConfiguration
from idpyoidc.server.exception import ClientAuthenticationError
from idpyoidc.server.oauth2.add_on import pkce
from idpyoidc.server.oauth2.add_on.dpop import DPoPProof, token_post_parse_request
from werkzeug.serving import make_server

from lifecycle import serve_until_stdin_closes

LOCK = threading.RLock()  # idpyoidc's in-memory state is not thread-safe; Flask serves in threads

USER = "alice"
PUBLIC_CLIENT = "par-dpop-client"
CONFIDENTIAL_CLIENT, CONFIDENTIAL_SECRET = "par-dpop-confidential", "par-dpop-secret"
DPOP_ALGS = ["ES256"]
INVALID_PROOF = "invalid_dpop_proof"  # RFC 9449 §5, §7.1
PROOF_WINDOW = 60  # seconds a proof's iat may be off the server's clock
PAR_LIFETIME = 60  # seconds a request_uri lives
SCOPES = ["profile", "email", "offline_access", "read", "write"]

STATS = {"metadata": {}, "par_requests": [], "authorization_requests": [], "token_requests": [],
         "resource_requests": [], "nonces_issued": {"authorization_server": [], "resource_server": []},
         "replays_refused": 0}
SEEN_JTI = set()   # every proof jti that passed its signature check
PUSHED_AT = {}     # request_uri -> time pushed (idpyoidc keeps no expiry)


class LoopbackRedirect(str):
    """A registered redirect URI as idpyoidc compares it (`requested == registered`,
    on scheme://host:port/path): http://HOST:ANY-PORT/callback, RFC 8252 §7.3."""

    def __new__(cls, host):
        uri = str.__new__(cls, "http://%s:*/callback" % host)
        uri.host = host
        return uri

    def __eq__(self, other):
        if not isinstance(other, str):
            return False
        parts = urlsplit(other)
        try:
            port = parts.port
        except ValueError:
            return False
        return (parts.scheme == "http" and parts.hostname == self.host and port is not None
                and parts.path == "/callback" and "@" not in parts.netloc)

    __hash__ = str.__hash__


def client(client_id, authn_method, pkce_essential, **more):
    """A client as idpyoidc's client database holds it; idpyoidc's `authn_method` ("public":
    client_id only) at /par and /token, none at /authorize (the client pushed the request)."""
    return dict(client_id=client_id, response_types_supported=["code"], allowed_scopes=SCOPES,
                redirect_uris=[(LoopbackRedirect("127.0.0.1"), {}), (LoopbackRedirect("localhost"), {})],
                grant_types_supported=["authorization_code", "refresh_token"], pkce_essential=pkce_essential,
                pushed_authorization_request_endpoint_client_authn_method=[authn_method],
                token_endpoint_client_authn_method=[authn_method], **more)


def idpyoidc_configuration(issuer):
    """idpyoidc's configuration: every key made in memory, nothing written to disk."""
    crypt = {"kwargs": {"keys": {"key_defs": [{"type": "OCT", "use": ["enc"], "kid": "password"},
                                              {"type": "OCT", "use": ["enc"], "kid": "salt"}]}, "iterations": 1}}
    helpers = "idpyoidc.server.oauth2.token_helper."
    return {
        "issuer": issuer,
        "keys": {"key_defs": [{"type": "EC", "crv": "P-256", "use": ["sig"]}], "uri_path": "jwks"},
        "cookie_handler": {"class": "idpyoidc.server.cookie_handler.CookieHandler",
                           "kwargs": {"keys": {"key_defs": [{"type": "OCT", "use": ["enc"], "kid": "enc"},
                                                            {"type": "OCT", "use": ["sig"], "kid": "sig"}]},
                                      "name": {"session": "idpy_session", "register": "idpy_register",
                                               "session_management": "idpy_sman"}}},
        "session_params": {"encrypter": crypt},
        "token_handler_args": {
            "code": {"lifetime": 120, "kwargs": {"crypt_conf": crypt}},
            "token": {"class": "idpyoidc.server.token.jwt_token.JWTToken",
                      "kwargs": {"lifetime": 3600, "alg": "ES256"}},
            "refresh": {"lifetime": 86400, "kwargs": {"crypt_conf": crypt}},
        },
        "endpoint": {
            "provider_info": {"path": ".well-known/oauth-authorization-server",
                              "class": "idpyoidc.server.oauth2.server_metadata.ServerMetadata", "kwargs": {}},
            "pushed_authorization": {"path": "par",
                                     "class": "idpyoidc.server.oauth2.pushed_authorization.PushedAuthorization",
                                     "kwargs": {"client_authn_method": ["client_secret_basic", "public"],
                                                "ttl": PAR_LIFETIME}},
            # "pushed_authz": the client is known only by a request_uri it pushed.
            "authorization": {"path": "authorize", "class": "idpyoidc.server.oauth2.authorization.Authorization",
                              "kwargs": {"client_authn_method": ["pushed_authz"]}},
            "token": {"path": "token", "class": "idpyoidc.server.oauth2.token.Token",
                      "kwargs": {"client_authn_method": ["client_secret_basic", "public"],
                                 "grant_types_helpers": {
                                     "authorization_code": {"class": helpers + "access_token.AccessTokenHelper"},
                                     "refresh_token": {"class": helpers + "refresh_token.RefreshTokenHelper"}}}},
        },
        "authentication": {"anon": {"acr": "urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified",
                                    "class": "idpyoidc.server.user_authn.user.NoAuthn", "kwargs": {"user": USER}}},
        "add_on": {
            "pkce": {"function": "idpyoidc.server.oauth2.add_on.pkce.add_support",
                     "kwargs": {"essential": True, "code_challenge_methods": {"S256": pkce.CC_METHOD["S256"]}}},
            "dpop": {"function": "idpyoidc.server.oauth2.add_on.dpop.add_support",
                     "kwargs": {"dpop_signing_alg_values_supported": DPOP_ALGS, "dpop_endpoints": ["token"]}},
        },
    }


def idpyoidc_dpop_check(request, client_id, context, **kwargs):
    """idpyoidc's own proof check at the token endpoint, its failure as a token error."""
    try:
        return token_post_parse_request(request, client_id, context, **kwargs)
    except Exception as error:  # idpyoidc raises ValueError, or a bare Exception without jwk
        return TokenErrorResponse(error=INVALID_PROOF, error_description="idpyoidc: %s" % (str(error) or "no jwk"))


def make_idpyoidc(issuer):
    server = Server(ASConfiguration(idpyoidc_configuration(issuer)))
    context = server.context
    context.cdb[PUBLIC_CLIENT] = client(PUBLIC_CLIENT, "public", True, token_endpoint_auth_method="none")
    context.cdb[CONFIDENTIAL_CLIENT] = client(CONFIDENTIAL_CLIENT, "client_secret_basic", False,
                                              token_endpoint_auth_method="client_secret_basic",
                                              client_secret=CONFIDENTIAL_SECRET)
    # idpyoidc's dpop add_support hooks its resource-side check (userinfo_post_parse_request)
    # on the endpoints it is given; the token endpoint's own check is token_post_parse_request.
    token = server.get_endpoint("token")
    token.post_parse_request = [idpyoidc_dpop_check if getattr(hook, "__name__", "") == "userinfo_post_parse_request"
                                else hook for hook in token.post_parse_request]
    # idpyoidc checks PKCE at the authorization endpoint only; at /par a bad request is refused at once.
    server.get_endpoint("pushed_authorization").post_parse_request.append(pkce.post_authn_parse)
    # The dpop add-on's metadata member is lost when idpyoidc rebuilds provider_info after its
    # add-ons; RefreshTokenHelper answers DPoP (not Bearer) only when that member is there.
    context.provider_info["dpop_signing_alg_values_supported"] = context.add_on["dpop"]["algs_supported"]
    return server


def metadata_document(server):
    """RFC 8414 §2: the members of idpyoidc's provider_info that apply here, and the wrapper's."""
    info = server.context.provider_info
    keep = ["issuer", "authorization_endpoint", "token_endpoint", "pushed_authorization_request_endpoint", "jwks_uri",
            "response_types_supported", "code_challenge_methods_supported", "dpop_signing_alg_values_supported"]
    document = {name: info[name] for name in keep if name in info}
    document.update({
        "require_pushed_authorization_requests": True,               # RFC 9126 §5
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "response_modes_supported": ["query"],
        "scopes_supported": SCOPES,
        "authorization_response_iss_parameter_supported": True,      # RFC 9207 §3
    })
    return document


class Nonces:
    """The DPoP-Nonce of one server role (RFC 9449 §8 authorization server, §9 resource server)."""

    def __init__(self, role, mode):
        self.role, self.mode = role, mode
        self.current = self.new()

    def new(self):
        value = secrets.token_urlsafe(18)
        STATS["nonces_issued"][self.role].append(value)
        return value

    def accepts(self, nonce):
        return self.mode != "always-new" and nonce == self.current

    def for_answer(self, success):
        """The value of the DPoP-Nonce header of an answer."""
        if self.mode == "always-new" or (self.mode == "rotate" and success):
            self.current = self.new()
        return self.current


class ProofError(Exception):
    def __init__(self, error, description):
        Exception.__init__(self, description)
        self.error, self.description = error, description


def peek(proof):
    """The header and claims of a proof, unverified (for the stats)."""
    try:
        header, claims = (json.loads(b64d(part.encode())) for part in proof.split(".")[:2])
        return (header, claims) if isinstance(header, dict) and isinstance(claims, dict) else ({}, {})
    except Exception:
        return {}, {}


def without_query(url):
    parts = urlsplit(url)
    return "%s://%s%s" % (parts.scheme.lower(), parts.netloc.lower(), parts.path)


def check_proof(method, url, nonces, access_token=None):
    """RFC 9449 §4.3 for the DPoP header of this request; the signature by idpyoidc's
    DPoPProof (cryptojwt). Returns the thumbprint of the proof key
    (RFC 7638), or raises ProofError: invalid_dpop_proof, or use_dpop_nonce last."""
    proofs = request.headers.getlist("DPoP")
    if len(proofs) != 1:
        raise ProofError(INVALID_PROOF, "exactly one DPoP header is required (RFC 9449 §4.3), got %d" % len(proofs))
    header, claims = peek(proofs[0])
    if header.get("typ") != "dpop+jwt":
        raise ProofError(INVALID_PROOF, "typ must be dpop+jwt")
    if header.get("alg") not in DPOP_ALGS:
        raise ProofError(INVALID_PROOF, "alg %r is not accepted (only %s)" % (header.get("alg"), " ".join(DPOP_ALGS)))
    jwk = header.get("jwk")
    if not isinstance(jwk, dict) or jwk.get("kty") == "oct" or set(jwk) & {"d", "p", "q", "dp", "dq", "qi", "k"}:
        raise ProofError(INVALID_PROOF, "jwk must be a public key")
    try:
        proof = DPoPProof().verify_header(proofs[0])  # idpyoidc: signature with the header's jwk
        proof.verify()                                 # idpyoidc: typ, alg not none, jti/htm/htu/iat present
    except Exception as error:
        raise ProofError(INVALID_PROOF, "signature or claims: %s" % (str(error) or type(error).__name__))
    if claims.get("htm") != method:
        raise ProofError(INVALID_PROOF, "htm %r is not %s" % (claims.get("htm"), method))
    # RFC 9449 §4.2: htu is the URI without query and fragment; a claim that
    # carries either is refused (only its scheme and host are case-folded).
    htu = claims.get("htu")
    if not isinstance(htu, str) or "?" in htu or "#" in htu or without_query(htu) != without_query(url):
        raise ProofError(INVALID_PROOF, "htu %r is not %s" % (claims.get("htu"), without_query(url)))
    if not isinstance(claims.get("iat"), (int, float)) or abs(time.time() - claims["iat"]) > PROOF_WINDOW:
        raise ProofError(INVALID_PROOF, "iat is not within %d s of now" % PROOF_WINDOW)
    if access_token is not None:
        if claims.get("ath") != token_hash(access_token):
            raise ProofError(INVALID_PROOF, "ath is not the token's hash" if "ath" in claims else "ath is missing")
    if not isinstance(claims.get("jti"), str) or not claims["jti"]:
        raise ProofError(INVALID_PROOF, "jti must be a non-empty string")
    if claims["jti"] in SEEN_JTI:
        STATS["replays_refused"] += 1
        raise ProofError(INVALID_PROOF, "jti %r was used before (replay)" % claims["jti"])
    SEEN_JTI.add(claims["jti"])
    if not nonces.accepts(claims.get("nonce")):
        raise ProofError("use_dpop_nonce", "the proof must carry the server's current DPoP-Nonce"
                         if "nonce" in claims else "the proof must carry the server's DPoP-Nonce")
    return thumbprint(jwk)


def token_hash(access_token):
    """ath: base64url(SHA-256(token)), RFC 9449 §4.2."""
    return as_unicode(b64e(hashlib.sha256(access_token.encode()).digest()))


def thumbprint(jwk):
    key = key_from_jwk_dict(jwk)
    return as_unicode(key.thumbprint("SHA-256"))


def proof_record():
    """What the stats keep of this request's proof, read unverified: jti, htm, htu, nonce, jkt."""
    header, claims = peek(request.headers.get("DPoP", ""))
    record = {name: claims.get(name) for name in ("jti", "htm", "htu", "nonce")}
    try:
        record["jkt"] = thumbprint(header["jwk"])
    except Exception:
        record["jkt"] = None
    return record


def create_app(server, nonce_mode, answer_bearer):
    app = Flask(__name__)
    context = server.context
    as_nonces = Nonces("authorization_server", nonce_mode)
    rs_nonces = Nonces("resource_server", nonce_mode)
    algs = " ".join(DPOP_ALGS)

    def answer(record, status, body, nonces=None, headers=()):
        """A JSON answer, its outcome noted in `record`; with `nonces`, a DPoP-Nonce header."""
        record["outcome"] = body.get("error", "ok")
        if "error_description" in body:
            record["description"] = body["error_description"]
        response = make_response(jsonify(body), status)
        response.headers["Cache-Control"] = "no-store"
        if nonces is not None:
            response.headers["DPoP-Nonce"] = nonces.for_answer(status < 400)
        for name, value in headers:
            response.headers[name] = value
        return response

    def refuse(record, status, error, description, nonces=None, headers=()):
        return answer(record, status, {"error": error, "error_description": description}, nonces, headers)

    def refuse_client(record, error, nonces):
        """RFC 6749 §5.2 invalid_client, from idpyoidc's client authentication."""
        return refuse(record, 401, "invalid_client", str(error) or "client authentication failed", nonces,
                      [("WWW-Authenticate", 'Basic realm="idpyoidc"')])

    def refuse_exception(record, error, nonces=None):
        """idpyoidc raised where it did not answer with an error message."""
        return refuse(record, 400, "invalid_request", "%s: %s" % (type(error).__name__, error), nonces)

    def client_auth_headers():
        return {"authorization": request.headers["Authorization"]} if "Authorization" in request.headers else {}

    def metadata():
        with LOCK:
            STATS["metadata"][request.path] = STATS["metadata"].get(request.path, 0) + 1
            return jsonify(metadata_document(server))

    app.add_url_rule("/.well-known/oauth-authorization-server", "oauth_metadata", metadata)
    app.add_url_rule("/.well-known/openid-configuration", "openid_metadata", metadata)

    @app.get("/jwks")
    def jwks():
        return jsonify(server.keyjar.export_jwks())

    @app.post("/par")
    def pushed_authorization():
        """RFC 9126 §2: idpyoidc authenticates the client, checks the request as an
        authorization request (redirect URI, response type, PKCE) and stores it."""
        form = request.form.to_dict()
        with LOCK:
            record = {"client_id": form.get("client_id"), "params": sorted(request.form.keys()),
                      "dpop_jkt": form.get("dpop_jkt"), "dpop_proof": "DPoP" in request.headers}
            STATS["par_requests"].append(record)
            nonces = as_nonces if "DPoP" in request.headers else None
            if "request_uri" in form:
                return refuse(record, 400, "invalid_request",
                              "request_uri is not allowed in a pushed request (RFC 9126 §2.1)", nonces)
            if form.get("response_mode", "query") != "query":
                return refuse(record, 400, "invalid_request", "only response_mode query is supported", nonces)
            if nonces is not None:  # RFC 9449 §10.1: the proof's key is the code's key
                record.update(proof_record())
                try:
                    jkt = check_proof("POST", request.base_url, as_nonces)
                except ProofError as error:
                    return refuse(record, 400, error.error, error.description, nonces)
                if form.setdefault("dpop_jkt", jkt) != jkt:
                    return refuse(record, 400, "invalid_dpop_proof",
                                  "dpop_jkt is not the DPoP proof's key (RFC 9449 §10.1)", nonces)
                record["dpop_jkt"] = jkt
            pushed = server.get_endpoint("pushed_authorization")
            try:
                parsed = pushed.parse_request(form, http_info={"headers": client_auth_headers()})
            except ClientAuthenticationError as error:
                return refuse_client(record, error, nonces)
            except Exception as error:  # e.g. idpyoidc's ValueError for a redirect_uri with a query
                return refuse_exception(record, error, nonces)
            if "error" in parsed:
                return answer(record, 400, parsed.to_dict(), nonces)
            pushed_answer = pushed.process_request(parsed)["http_response"]
            PUSHED_AT[pushed_answer["request_uri"]] = time.time()
            record["request_uri"] = pushed_answer["request_uri"]
            return answer(record, 201, pushed_answer, nonces)

    @app.get("/authorize")
    def authorize():
        """RFC 9126 §4: only a request_uri pushed by this client, once and in time;
        idpyoidc resolves it, alice consents, and idpyoidc makes the code."""
        args = request.args.to_dict()
        with LOCK:
            request_uri = args.get("request_uri")
            record = {"with_request_uri": request_uri is not None, "client_id": args.get("client_id"),
                      "params": sorted(request.args.keys())}
            STATS["authorization_requests"].append(record)
            pushed = context.par_db.get(request_uri) if request_uri else None
            if request_uri is None:
                return refuse(record, 400, "invalid_request",
                              "this server requires pushed authorization requests (RFC 9126 §5): no request_uri")
            if pushed is None:
                return refuse(record, 400, "invalid_request_uri", "unknown or already used request_uri")
            if time.time() - PUSHED_AT.get(request_uri, 0) > PAR_LIFETIME:
                del context.par_db[request_uri]
                return refuse(record, 400, "invalid_request_uri", "request_uri expired")
            if args.get("client_id") != pushed.get("client_id"):
                return refuse(record, 400, "invalid_request", "client_id is not the client that pushed the request")
            # idpyoidc checks the front-channel request as a full one (response_type required)
            # before it swaps in the pushed request; RFC 9126 §4 needs client_id + request_uri only.
            args.setdefault("response_type", " ".join(pushed["response_type"]))
            endpoint = server.get_endpoint("authorization")
            http_info = {"headers": {}, "url": request.url}
            try:
                parsed = endpoint.parse_request(args, http_info=http_info)
            except Exception as error:
                return refuse_exception(record, error)
            if "error" in parsed:
                return answer(record, 400, parsed.to_dict())
            record["dpop_jkt"] = parsed.get("dpop_jkt")
            result = endpoint.process_request(parsed, http_info=http_info)
            response_args = result.get("response_args")
            if response_args is None or "error" in response_args:
                return answer(record, 400, dict(response_args or {"error": "server_error"}))
            if isinstance(response_args.get("scope"), list):  # else idpyoidc repeats the scope parameter
                response_args["scope"] = " ".join(response_args["scope"])
            record["outcome"] = "ok"
            return "", 302, {"Location": response_args.request(result["return_uri"]), "Cache-Control": "no-store"}

    def grant_of(token_value, handler_key):
        manager = context.session_manager
        return manager.get_session_info_by_token(token_value, grant=True, handler_key=handler_key)["grant"]

    def binding_refusal(parsed, jkt):
        """RFC 9449 §10 and §5: the keys a code and a public client's refresh token are bound to."""
        if parsed["grant_type"] == "authorization_code":
            pushed_jkt = grant_of(parsed["code"], "authorization_code").authorization_request.get("dpop_jkt")
            if pushed_jkt and pushed_jkt != jkt:
                return "the DPoP proof's key is not the dpop_jkt the authorization request named (RFC 9449 §10)"
        elif parsed["grant_type"] == "refresh_token" and parsed["client_id"] == PUBLIC_CLIENT:
            bound = grant_of(parsed["refresh_token"], "refresh_token").extra.get("dpop_jkt")
            if bound and bound != jkt:
                return "this refresh token is bound to another DPoP key (RFC 9449 §5)"
        return None

    @app.post("/token")
    def token():
        """The wrapper checks the proof and nonce; idpyoidc authenticates the client,
        checks the grant (and PKCE, and the proof again) and mints DPoP-bound tokens."""
        form = request.form.to_dict()
        with LOCK:
            record = {"grant_type": form.get("grant_type"), "client_id": form.get("client_id")}
            STATS["token_requests"].append(record)
            record.update(proof_record())
            try:
                jkt = check_proof("POST", request.base_url, as_nonces)
            except ProofError as error:
                return refuse(record, 400, error.error, error.description, as_nonces)
            endpoint = server.get_endpoint("token")
            http_info = {"headers": dict(client_auth_headers(), dpop=request.headers["DPoP"]),
                         "url": request.base_url, "method": "POST"}
            try:
                parsed = endpoint.parse_request(form, http_info=http_info)
            except ClientAuthenticationError as error:
                return refuse_client(record, error, as_nonces)
            except Exception as error:  # e.g. a refresh_token grant without refresh_token
                return refuse_exception(record, error, as_nonces)
            if "error" in parsed:
                return answer(record, 400, parsed.to_dict(), as_nonces)
            record["client_id"] = parsed["client_id"]
            refusal = binding_refusal(parsed, jkt)
            if refusal:
                return refuse(record, 400, "invalid_dpop_proof", refusal, as_nonces)
            result = endpoint.process_request(parsed, issue_refresh=parsed["grant_type"] == "authorization_code")
            if "error" in result:
                return answer(record, 400, result.to_dict(), as_nonces)
            body = dict(result["response_args"])
            if isinstance(body.get("scope"), list):  # idpyoidc answers a JSON list; RFC 6749 §5.1: a string
                body["scope"] = " ".join(body["scope"])
            if answer_bearer:
                body["token_type"] = "Bearer"
            record["token_type"] = body.get("token_type")
            return answer(record, 200, body, as_nonces)

    @app.get("/api/me")
    def api_me():
        """RFC 9449 §7: a DPoP-bound access token (idpyoidc verifies the JWT and finds its
        session) and a proof with ath by the token's cnf.jkt key (the wrapper)."""
        scheme, _, access_token = request.headers.get("Authorization", "").partition(" ")
        with LOCK:
            record = {"scheme": scheme or None, "ath_present": False, "ath_correct": False}
            record.update(proof_record())
            STATS["resource_requests"].append(record)

            def challenge(error, description):
                header = 'DPoP error="%s", error_description="%s", algs="%s"' % (error, description, algs)
                return refuse(record, 401, error, description, rs_nonces, [("WWW-Authenticate", header)])

            if scheme.lower() not in ("dpop", "bearer") or not access_token:  # RFC 6750 §3.1: no error code
                response = answer(record, 401, {"error_description": "a DPoP access token is required"}, rs_nonces,
                                  [("WWW-Authenticate", 'DPoP algs="%s"' % algs)])
                record["outcome"] = "no_token"
                return response
            manager = context.session_manager
            try:
                handler = manager.token_handler["access_token"]
                handler.info(access_token)                      # idpyoidc: signature, expiry, token class
                payload = handler.get_payload(access_token)
                session = manager.get_session_info_by_token(access_token, grant=True, handler_key="access_token")
                if not session["grant"].get_token(access_token).is_active():
                    raise ValueError("token revoked or used up")
            except Exception as error:
                return challenge("invalid_token", "unknown or expired access token (%s)" % type(error).__name__)
            bound_jkt = (payload.get("cnf") or {}).get("jkt")
            record.update(client_id=session["client_id"], bound_jkt=bound_jkt)
            if scheme.lower() == "bearer":
                return challenge("invalid_token", "this access token is DPoP-bound: use the DPoP scheme")
            sent_ath = peek(request.headers.get("DPoP", ""))[1].get("ath")
            record.update(ath_present=sent_ath is not None, ath_correct=sent_ath == token_hash(access_token))
            try:
                jkt = check_proof("GET", request.base_url, rs_nonces, access_token=access_token)
            except ProofError as error:
                return challenge(error.error, error.description)
            if jkt != bound_jkt:
                return challenge(INVALID_PROOF, "the proof's key is not the access token's cnf.jkt")
            return answer(record, 200, {"sub": session["user_id"], "client_id": session["client_id"], "jkt": jkt},
                          rs_nonces)

    @app.get("/_test/stats")
    def stats():
        """STATS with counts; each list entry's `outcome` is "ok" or the error code answered."""
        with LOCK:
            def ok(name):
                return sum(entry.get("outcome") == "ok" for entry in STATS[name])
            authorizations = STATS["authorization_requests"]
            everything = STATS["par_requests"] + STATS["token_requests"] + STATS["resource_requests"]
            with_request_uri = sum(entry["with_request_uri"] for entry in authorizations)
            counts = {"par_requests": len(STATS["par_requests"]), "par_created": ok("par_requests"),
                      "authorization_requests": len(authorizations),
                      "authorizations_ok": ok("authorization_requests"),
                      "authorization_with_request_uri": with_request_uri,
                      "authorization_without_request_uri": len(authorizations) - with_request_uri,
                      "token_requests": len(STATS["token_requests"]), "tokens_issued": ok("token_requests"),
                      "resource_requests": len(STATS["resource_requests"]), "resource_ok": ok("resource_requests"),
                      "use_dpop_nonce": sum(entry.get("outcome") == "use_dpop_nonce" for entry in everything),
                      "nonces_issued": {role: len(values) for role, values in STATS["nonces_issued"].items()},
                      "replays_refused": STATS["replays_refused"]}
            return jsonify(dict(STATS, counts=counts, nonce_mode=nonce_mode, answer_bearer=answer_bearer))

    return app


def main():
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--nonce-mode", choices=["fixed", "rotate", "always-new"], default="fixed")
    parser.add_argument("--answer-bearer", action="store_true", help="hostile: answer token_type Bearer")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if args.verbose:
        logging.basicConfig(level=logging.DEBUG)
    else:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)

    # The issuer names the port, known once the socket is bound: the app is made then.
    app = []
    http_server = make_server("127.0.0.1", 0, lambda environ, start: app[0](environ, start), threaded=True)
    port = http_server.server_port
    app.append(create_app(make_idpyoidc("http://127.0.0.1:%d" % port), args.nonce_mode, args.answer_bearer))
    serve_until_stdin_closes(http_server, port)


if __name__ == "__main__":
    main()
