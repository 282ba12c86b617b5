#!/usr/bin/env python3
"""An independent OAuth 1.0a provider for AuthKit's interoperability tests.

oauthlib's endpoints check every signature AuthKit sends: request token,
authorization, access token and a protected resource, on plain HTTP on
127.0.0.1 (the test validator turns off oauthlib's TLS requirement and relaxes
its length limits, as shared/reference/security.md suggests; the 600-second
timestamp window and nonce uniqueness stay on, so the client must use a live
clock and fresh nonces).

    python3 oauth1_server.py [--consumer-key KEY] [--consumer-secret SECRET] [--verbose]

The first line on stdout is the port it listens on. It stops when stdin is
closed (so it never outlives the test that started it) or on SIGTERM.

Routes:
  POST /request_token   RFC 5849 §2.1 (RequestTokenEndpoint)
  GET  /authorize       §2.2, approves at once as user 'authkit-tester': redirects
                        to the callback, or shows the PIN (id="pin") for 'oob'
  GET  /deny            like /authorize, but the user declines (?denied=token)
  POST /access_token    §2.3 (AccessTokenEndpoint); adds user_id and screen_name
  GET|POST /resource    a protected resource (ResourceEndpoint); answers JSON
                        with the parameters it verified

Needs: oauthlib (tested with 4.0).
"""
import argparse
import html
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

from oauthlib.common import UNICODE_ASCII_CHARACTER_SET
from oauthlib.oauth1 import (
    AccessTokenEndpoint,
    AuthorizationEndpoint,
    RequestTokenEndpoint,
    RequestValidator,
    ResourceEndpoint,
)
from oauthlib.oauth1.rfc5849 import errors

from lifecycle import serve_until_stdin_closes

USER_ID = "4242"
SCREEN_NAME = "authkit-tester"


class Store:
    def __init__(self, consumer_key, consumer_secret):
        self.lock = threading.Lock()
        self.clients = {consumer_key: consumer_secret}
        self.request_tokens = {}  # token -> {"secret", "callback", "client", "verifier"}
        self.access_tokens = {}   # token -> {"secret", "client"}
        self.nonces = set()


class Validator(RequestValidator):
    """oauthlib's validator with an in-memory store and test-friendly limits."""

    def __init__(self, store):
        super().__init__()
        self.store = store

    # Plain HTTP on loopback, and lengths/charsets wide enough for any client
    # (oauthlib's defaults demand 20-30 alphanumerics for keys and nonces).
    enforce_ssl = False
    safe_characters = set(UNICODE_ASCII_CHARACTER_SET) | set("-_.~")
    client_key_length = (3, 128)
    request_token_length = (3, 128)
    access_token_length = (3, 128)
    nonce_length = (8, 128)
    verifier_length = (3, 128)
    allowed_signature_methods = ("HMAC-SHA1", "HMAC-SHA256", "PLAINTEXT")

    dummy_client = "dummy-client"
    dummy_request_token = "dummy-request-token"
    dummy_access_token = "dummy-access-token"

    def get_client_secret(self, client_key, request):
        return self.store.clients.get(client_key, "dummy-secret")

    def validate_client_key(self, client_key, request):
        return client_key in self.store.clients

    def validate_timestamp_and_nonce(self, client_key, timestamp, nonce, request,
                                     request_token=None, access_token=None):
        key = (client_key, timestamp, nonce, request_token or access_token)
        with self.store.lock:
            if key in self.store.nonces:
                return False
            self.store.nonces.add(key)
        return True

    def get_default_realms(self, client_key, request):
        return []

    def validate_requested_realms(self, client_key, realms, request):
        return True

    def validate_redirect_uri(self, client_key, redirect_uri, request):
        return True

    def save_request_token(self, token, request):
        with self.store.lock:
            self.store.request_tokens[token["oauth_token"]] = {
                "secret": token["oauth_token_secret"],
                "callback": request.redirect_uri,
                "client": request.client_key,
                "verifier": None,
            }

    def verify_request_token(self, token, request):
        return token in self.store.request_tokens

    def verify_realms(self, token, realms, request):
        return True

    def get_realms(self, token, request):
        return []

    def get_redirect_uri(self, token, request):
        return self.store.request_tokens[token]["callback"]

    def save_verifier(self, token, verifier, request):
        with self.store.lock:
            self.store.request_tokens[token]["verifier"] = verifier["oauth_verifier"]

    def validate_request_token(self, client_key, token, request):
        entry = self.store.request_tokens.get(token)
        return entry is not None and entry["client"] == client_key

    def get_request_token_secret(self, client_key, token, request):
        entry = self.store.request_tokens.get(token)
        return entry["secret"] if entry else "dummy-secret"

    def validate_verifier(self, client_key, token, verifier, request):
        entry = self.store.request_tokens.get(token)
        return entry is not None and entry["verifier"] == verifier

    def invalidate_request_token(self, client_key, request_token, request):
        with self.store.lock:
            self.store.request_tokens.pop(request_token, None)

    def save_access_token(self, token, request):
        with self.store.lock:
            self.store.access_tokens[token["oauth_token"]] = {
                "secret": token["oauth_token_secret"],
                "client": request.client_key,
            }

    def validate_access_token(self, client_key, token, request):
        entry = self.store.access_tokens.get(token)
        return entry is not None and entry["client"] == client_key

    def get_access_token_secret(self, client_key, token, request):
        entry = self.store.access_tokens.get(token)
        return entry["secret"] if entry else "dummy-secret"

    def validate_realms(self, client_key, token, request, uri=None, realms=None):
        return True


def make_handler(store, verbose):
    validator = Validator(store)
    request_token_endpoint = RequestTokenEndpoint(validator)
    authorization_endpoint = AuthorizationEndpoint(validator)
    access_token_endpoint = AccessTokenEndpoint(validator)
    resource_endpoint = ResourceEndpoint(validator)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):
            if verbose:
                sys.stderr.write("oauth1_server: " + (format % args) + "\n")

        def uri(self):
            host = self.headers.get("Host") or "127.0.0.1:%d" % self.server.server_address[1]
            return "http://%s%s" % (host, self.path)

        def body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length).decode("utf-8") if length else ""

        def reply(self, status, body="", headers=None):
            data = (body or "").encode("utf-8")
            self.send_response(status)
            for name, value in (headers or {}).items():
                if name.lower() != "content-length":
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

        def do_GET(self):
            self.dispatch("GET")

        def do_POST(self):
            self.dispatch("POST")

        def dispatch(self, method):
            path = urlsplit(self.path).path
            body = self.body()
            headers = dict(self.headers.items())
            try:
                if method == "POST" and path == "/request_token":
                    h, b, s = request_token_endpoint.create_request_token_response(
                        self.uri(), http_method=method, body=body, headers=headers)
                    self.reply(s, b, h)
                elif method == "POST" and path == "/access_token":
                    h, b, s = access_token_endpoint.create_access_token_response(
                        self.uri(), http_method=method, body=body, headers=headers,
                        credentials={"user_id": USER_ID, "screen_name": SCREEN_NAME})
                    self.reply(s, b, h)
                elif method == "GET" and path == "/authorize":
                    self.authorize()
                elif method == "GET" and path == "/deny":
                    self.deny()
                elif path == "/resource":
                    self.resource(method, body, headers)
                else:
                    self.reply(404, "no route for %s %s" % (method, path), {"Content-Type": "text/plain"})
            except errors.OAuth1Error as error:
                self.reply(error.status_code, error.urlencoded,
                           {"Content-Type": "application/x-www-form-urlencoded"})

        def authorize(self):
            # The user is signed in and approves at once.
            h, b, s = authorization_endpoint.create_authorization_response(self.uri(), http_method="GET")
            if s == 200:  # oob: show the verifier as a PIN
                verifier = dict(parse_qsl(b))["oauth_verifier"]
                page = ('<!doctype html><title>PIN</title><p>Enter this PIN in the application: '
                        '<code id="pin">%s</code></p>' % html.escape(verifier))
                self.reply(200, page, {"Content-Type": "text/html; charset=utf-8"})
            else:
                self.reply(s, b, h)

        def deny(self):
            token = dict(parse_qsl(urlsplit(self.path).query)).get("oauth_token", "")
            entry = store.request_tokens.get(token)
            if entry is None or entry["callback"] == "oob":
                self.reply(400, "unknown request token", {"Content-Type": "text/plain"})
                return
            separator = "&" if "?" in entry["callback"] else "?"
            self.reply(302, "", {"Location": entry["callback"] + separator + urlencode({"denied": token})})

        def resource(self, method, body, headers):
            valid, request = resource_endpoint.validate_protected_resource_request(
                self.uri(), http_method=method, body=body, headers=headers)
            if not valid:
                log = request.validator_log if request is not None else {}
                self.reply(401, json.dumps({"error": "invalid_signature", "validator": log}),
                           {"Content-Type": "application/json"})
                return
            params = [[k, v] for k, v in request.params if not k.startswith("oauth_")]
            # The signature method and nonce oauthlib verified: PLAINTEXT
            # (allowed above for other clients) signs no base string, and a
            # fixed nonce passes a replay check across seconds; the suite
            # asserts neither happened.
            self.reply(200, json.dumps({"ok": True, "method": method, "params": params,
                                        "token": request.resource_owner_key,
                                        "signature_method": request.signature_method,
                                        "nonce": request.nonce}),
                       {"Content-Type": "application/json"})

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--consumer-key", default="authkit-test-consumer")
    parser.add_argument("--consumer-secret", default="s3cr3t+/&=~consumer secret")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    store = Store(args.consumer_key, args.consumer_secret)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(store, args.verbose))
    server.daemon_threads = True
    serve_until_stdin_closes(server, server.server_address[1])


if __name__ == "__main__":
    main()
