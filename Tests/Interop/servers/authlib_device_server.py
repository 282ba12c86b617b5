#!/usr/bin/env python3
"""An independent OAuth 2.0 Device Authorization Grant peer (RFC 8628) for AuthKit's interop suite.

Flask + Authlib's own RFC 8628 code (authlib.oauth2.rfc8628:
DeviceAuthorizationEndpoint, DeviceCodeGrant), with in-memory storage:

  POST /device_authorization   RFC 8628 §3.1/3.2: device_code, user_code,
                               verification_uri (http://127.0.0.1:PORT/device),
                               verification_uri_complete, expires_in, interval (1 s)
  POST /token                  grant_type=urn:ietf:params:oauth:grant-type:device_code
                               (Authlib's DeviceCodeGrant): authorization_pending until
                               the user acts, access_denied once denied, expired_token
                               after expires_in, slow_down (§3.5) when a poll comes
                               sooner than the interval (which grows by 5 s with every
                               slow_down); then the token once, the device code is spent.
  GET  /device                 the verification page (a form; ?user_code= prefills it)
  POST /device/approve         the user: form user_code (RFC 8628 §6.1: case and dashes
  POST /device/deny            do not matter) -> 200; 404 unknown, 400 expired or decided
  GET  /api/me                 a protected resource (Bearer, RFC 6750) -> {"user": "alice", ...}
  GET  /_test/device           ?user_code= (or ?device_code=): one authorization as the
                               suite sees it: expires_in, interval, decision, and every
                               poll as {"at": seconds after the device authorization
                               response, "answer": "authorization_pending" | "slow_down" |
                               "access_denied" | "expired_token" | "token" | other error}
  GET  /_test/stats            counters (device authorizations, tokens issued, answers)

Clients (public, RFC 8628 §3.1 client_id only, token endpoint auth `none`):
  device-client         expires_in 600
  device-client-short   expires_in 3, so the code expires while the client polls
  device-client-slow    its second poll, the one after the first authorization_pending,
                        is answered slow_down whatever its timing (exactly one forced)

Why a server of its own rather than more of authlib_server.py: the device peer
carries test-only behaviour (codes that expire in 3 s, a forced slow_down, a
poll log) that the authorization-code peer, on whose exact behaviour the other
authlib.* and attack.* scenarios depend, should not grow; and a peer that only speaks
RFC 8628 shows that AuthKit's device sign-in needs nothing else from a server
(no /authorize, no redirect, no metadata).

    python3 authlib_device_server.py

The first line on stdout is the port. It stops when stdin closes or on SIGTERM.

Needs: Flask, Authlib (tested with Flask 3.1.3, Authlib 1.9.8).
"""
import argparse
import html
import logging
import os
import re
import threading
import time

from flask import Flask, g, jsonify, request

from werkzeug.serving import make_server

from authlib.common.security import generate_token
from authlib.integrations.flask_oauth2 import AuthorizationServer, ResourceProtector, current_token
from authlib.oauth2.rfc6749.models import ClientMixin
from authlib.oauth2.rfc6750 import BearerTokenGenerator, BearerTokenValidator
from authlib.oauth2.rfc8628 import (DEVICE_CODE_GRANT_TYPE, DeviceAuthorizationEndpoint, DeviceCodeGrant,
                                    DeviceCredentialDict)

from authlib_models import ALICE, Token
from lifecycle import serve_until_stdin_closes

INTERVAL = 1         # seconds between polls, announced in every device authorization response
SLOW_DOWN_STEP = 5   # RFC 8628 §3.5: each slow_down adds 5 s "for this and all subsequent requests"
JITTER = 0.2         # a poll this much early is timing noise, not a client polling too fast
LOCK = threading.RLock()


class Client(ClientMixin):
    def __init__(self, client_id, expires_in=600, force_slow_down=False):
        self.client_id = client_id
        self.expires_in = expires_in
        self.force_slow_down = force_slow_down

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        return scope or ""

    def check_redirect_uri(self, redirect_uri):
        return False  # no redirects in this grant

    def check_client_secret(self, client_secret):
        return False  # public clients

    def check_endpoint_auth_method(self, method, endpoint):
        return method == "none"

    def check_response_type(self, response_type):
        return False

    def check_grant_type(self, grant_type):
        return grant_type == DEVICE_CODE_GRANT_TYPE  # no refresh_token: no refresh token issued


CLIENTS = {c.client_id: c for c in [
    Client("device-client"),
    Client("device-client-short", expires_in=3),
    Client("device-client-slow", force_slow_down=True),
]}


class DeviceCredential(DeviceCredentialDict):
    """Authlib's dict credential (client_id, scope, user_code, expires_at) plus
    what the suite asks about: the decision, the polls, the current interval."""

    def describe(self):
        return {k: self[k] for k in ("client_id", "scope", "device_code", "user_code", "verification_uri",
                                     "verification_uri_complete", "expires_in", "interval", "current_interval",
                                     "decision", "slow_downs", "used", "polls")}


DEVICES = {}   # device_code -> DeviceCredential
USER_CODES = {}  # normalized user code -> device_code
TOKENS = []    # every Token issued
STATS = {"device_authorization": 0, "tokens": 0, "answers": {}}


def normalize(user_code):
    """RFC 8628 §6.1: what the user types is compared without case or punctuation."""
    return re.sub(r"[^0-9A-Z]", "", (user_code or "").upper())


class DeviceAuthorization(DeviceAuthorizationEndpoint):
    CLIENT_AUTH_METHODS = ["none"]
    INTERVAL = INTERVAL

    def __init__(self, server, base_holder):
        super().__init__(server)
        self.base_holder = base_holder

    def authenticate_client(self, request):
        client = super().authenticate_client(request)
        g.device_client = client  # EXPIRES_IN below is per client
        return client

    @property
    def EXPIRES_IN(self):
        return g.device_client.expires_in

    def get_verification_uri(self):
        return self.base_holder[0] + "/device"

    def save_device_credential(self, client_id, scope, data):
        with LOCK:
            credential = DeviceCredential(client_id=client_id, scope=scope, **data)
            credential.update(expires_at=time.time() + data["expires_in"], issued=time.monotonic(),
                              current_interval=data["interval"], decision=None, slow_downs=0, used=False, polls=[])
            DEVICES[data["device_code"]] = credential
            USER_CODES[normalize(data["user_code"])] = data["device_code"]
            STATS["device_authorization"] += 1


class DeviceGrant(DeviceCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]

    def query_device_credential(self, device_code):
        credential = DEVICES.get(device_code)
        return None if credential is None or credential["used"] else credential

    def query_user_grant(self, user_code):
        credential = DEVICES.get(USER_CODES.get(normalize(user_code)))
        if credential is None or credential["decision"] is None:
            return None
        return ALICE, credential["decision"] == "approved"

    def should_slow_down(self, credential):
        """RFC 8628 §3.5 slow_down, the hook Authlib leaves to the server.
        Asked only while the authorization is pending (not after a decision
        or expiry). Answers slow_down when this poll came sooner than the
        current interval after the previous one, and, for device-client-slow,
        once to the poll after the first authorization_pending."""
        polls = credential["polls"]  # the earlier polls; this one is g.poll_at
        client = CLIENTS[credential["client_id"]]
        forced = (client.force_slow_down and credential["slow_downs"] == 0
                  and [p["answer"] for p in polls] == ["authorization_pending"])
        too_soon = bool(polls) and g.poll_at - polls[-1]["at"] < credential["current_interval"] - JITTER
        if forced or too_soon:
            credential["slow_downs"] += 1
            credential["current_interval"] += SLOW_DOWN_STEP
            return True
        return False


class Validator(BearerTokenValidator):
    def authenticate_token(self, token_string):
        for token in TOKENS:
            if token.access_token == token_string:
                return token
        return None


VERIFICATION_PAGE = """<!doctype html>
<title>Device sign-in</title>
<h1>Enter the code shown on your device</h1>
<form method="post"><input name="user_code" value="%s" autofocus>
<button formaction="/device/approve">Approve</button>
<button formaction="/device/deny">Deny</button></form>
"""


def create_app(base_holder):
    app = Flask(__name__)

    def query_client(client_id):
        return CLIENTS.get(client_id)

    def save_token(data, req):
        with LOCK:
            TOKENS.append(Token(req.client, req.user, data))
            STATS["tokens"] += 1

    server = AuthorizationServer(app, query_client=query_client, save_token=save_token)
    server.register_token_generator("default", BearerTokenGenerator(
        access_token_generator=lambda **kw: generate_token(40),
        expires_generator=lambda client, grant_type: 3600))
    server.register_grant(DeviceGrant)
    server.register_endpoint(DeviceAuthorization(server, base_holder))
    require_oauth = ResourceProtector()
    require_oauth.register_token_validator(Validator())

    def find(args):
        with LOCK:
            code = args.get("device_code") or USER_CODES.get(normalize(args.get("user_code")))
            return DEVICES.get(code)

    @app.post("/device_authorization")
    def device_authorization():
        return server.create_endpoint_response(DeviceAuthorization.ENDPOINT_NAME)

    @app.post("/token")
    def token():
        # One poll at a time, timed on arrival; the answer is logged with it.
        with LOCK:
            g.poll_at = None
            credential = None
            if request.form.get("grant_type") == DEVICE_CODE_GRANT_TYPE:
                credential = DEVICES.get(request.form.get("device_code", ""))
                if credential is not None:
                    g.poll_at = round(time.monotonic() - credential["issued"], 3)
            response = server.create_token_response()
            body = response.get_json(silent=True) or {}
            answer = "token" if response.status_code == 200 else body.get("error", "HTTP %d" % response.status_code)
            STATS["answers"][answer] = STATS["answers"].get(answer, 0) + 1
            if credential is not None:
                credential["polls"].append({"at": g.poll_at, "answer": answer})
                if answer == "token":
                    credential["used"] = True  # a device code yields one token
            return response

    def decide(decision):
        credential = find(request.form)
        if credential is None:
            return jsonify(error="invalid_user_code", error_description="no such code"), 404
        with LOCK:
            if credential.is_expired():
                return jsonify(error="expired_token", error_description="the code has expired"), 400
            if credential["decision"] is not None:
                return jsonify(error="invalid_request", error_description="already " + credential["decision"]), 400
            credential["decision"] = decision
            return jsonify(user_code=credential["user_code"], decision=decision)

    @app.get("/device")
    def verification_page():
        return VERIFICATION_PAGE % html.escape(request.args.get("user_code", ""), quote=True)

    @app.post("/device/approve")
    def approve():
        return decide("approved")

    @app.post("/device/deny")
    def deny():
        return decide("denied")

    @app.get("/api/me")
    @require_oauth()
    def me():
        token = current_token
        return jsonify(user=token.user.name, client_id=token.client_id, scope=token.scope)

    @app.get("/_test/device")
    def test_device():
        credential = find(request.args)
        if credential is None:
            return jsonify(error="not_found"), 404
        with LOCK:
            return jsonify(credential.describe())

    @app.get("/_test/stats")
    def stats():
        with LOCK:
            return jsonify(STATS)

    return app


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # plain http on 127.0.0.1 only
    if not args.verbose:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)

    base_holder = [None]
    app = create_app(base_holder)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    port = server.server_port
    base_holder[0] = "http://127.0.0.1:%d" % port
    serve_until_stdin_closes(server, port)


if __name__ == "__main__":
    main()
