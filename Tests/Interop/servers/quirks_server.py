#!/usr/bin/env python3
"""Providers that are not RFC 6749 at the token step, for AuthKit's interop suite.

Stands in for Qiita and Instagram at the paths of their real endpoints, so the
bundled descriptors work unchanged once their hosts point here (every host of
a descriptor maps to this one server). Written from the providers' public
documentation; only the Python standard library.

Qiita (https://qiita.com/api/v2/docs):
  GET    /api/v2/oauth/authorize        client_id, scope, state; no redirect_uri or
                                        response_type: redirects to the client's
                                        registered callback (--qiita-callback) with code, state
  POST   /api/v2/access_tokens          JSON {client_id, client_secret, code}
                                        -> 201 {"token", "scopes", "client_id"};
                                        errors as {"message", "type"}
  DELETE /api/v2/access_tokens/TOKEN    -> 204
  GET    /api/v2/authenticated_user     Bearer -> {"id": ...}

Instagram (Instagram API with Instagram Login):
  GET  /oauth/authorize                 redirects to redirect_uri (must be the registered
                                        https://localhost/callback) with code, state and #_
  POST /oauth/access_token              form {client_id, client_secret, grant_type,
                                        redirect_uri, code} -> {access_token, user_id, permissions}
  GET  /access_token                    grant_type=ig_exchange_token, client_secret,
                                        access_token -> {access_token, token_type, expires_in}
  GET  /refresh_access_token            grant_type=ig_refresh_token, access_token
  GET  /me                              Bearer (long-lived token) -> {"user_id": ...}

  GET  /_test/stats                     what was seen, for the suite

    python3 quirks_server.py --qiita-callback URL

The first line on stdout is the port. It stops when stdin closes or on SIGTERM.
"""
import argparse
import json
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

from lifecycle import serve_until_stdin_closes

QIITA_CLIENT = ("qiita-client-id", "qiita-client-secret")
IG_CLIENT = ("990602627938098", "ig-app-secret")
IG_REDIRECT = "https://localhost/callback"


class State:
    def __init__(self, qiita_callback):
        self.lock = threading.Lock()
        self.qiita_callback = qiita_callback
        self.codes = {}          # code -> (provider, scope)
        self.qiita_tokens = {}   # token -> scopes
        self.ig_short = {}       # short-lived token -> user_id
        self.ig_long = {}        # long-lived token -> user_id
        self.stats = {"qiita_token": 0, "qiita_revoked": 0, "ig_token": 0, "ig_exchange": 0,
                      "ig_refresh": 0, "errors": []}


def one(query, name):
    values = query.get(name) or []
    return values[0] if len(values) == 1 else None


def make_handler(state, verbose):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):
            if verbose:
                sys.stderr.write("quirks_server: " + (format % args) + "\n")

        def reply(self, status, body=None, headers=None):
            data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = True

        def fail(self, status, body, why):
            with state.lock:
                state.stats["errors"].append(why)
            self.reply(status, body)

        def body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def bearer(self):
            auth = self.headers.get("Authorization") or ""
            return auth[7:] if auth.startswith("Bearer ") else None

        def do_GET(self):
            self.route("GET")

        def do_POST(self):
            self.route("POST")

        def do_DELETE(self):
            self.route("DELETE")

        def route(self, method):
            parts = urlsplit(self.path)
            path, query = parts.path, parse_qs(parts.query, keep_blank_values=True)
            body = self.body()
            if method == "GET" and path == "/api/v2/oauth/authorize":
                return self.qiita_authorize(query)
            if method == "POST" and path == "/api/v2/access_tokens":
                return self.qiita_token(body)
            if method == "DELETE" and path.startswith("/api/v2/access_tokens/"):
                return self.qiita_revoke(path.rsplit("/", 1)[1])
            if method == "GET" and path == "/api/v2/authenticated_user":
                if self.bearer() in state.qiita_tokens:
                    return self.reply(200, {"id": "alice", "permanent_id": 42})
                return self.reply(401, {"message": "Unauthorized", "type": "unauthorized"})
            if method == "GET" and path == "/oauth/authorize":
                return self.ig_authorize(query)
            if method == "POST" and path == "/oauth/access_token":
                return self.ig_token(body)
            if method == "GET" and path == "/access_token":
                return self.ig_exchange(query)
            if method == "GET" and path == "/refresh_access_token":
                return self.ig_refresh(query)
            if method == "GET" and path == "/me":
                if self.bearer() in state.ig_long:
                    return self.reply(200, {"user_id": state.ig_long[self.bearer()], "username": "alice"})
                return self.reply(400, {"error": {"message": "Invalid OAuth access token", "type": "OAuthException", "code": 190}})
            if method == "GET" and path == "/_test/stats":
                with state.lock:
                    return self.reply(200, state.stats)
            self.reply(404, {"message": "no route for %s %s" % (method, path), "type": "not_found"})

        # Qiita ------------------------------------------------------------
        def qiita_authorize(self, query):
            # Qiita takes neither redirect_uri nor response_type.
            if "redirect_uri" in query or "response_type" in query:
                return self.fail(400, {"message": "unexpected parameter", "type": "bad_request"},
                                 "qiita authorize: redirect_uri/response_type sent")
            if one(query, "client_id") != QIITA_CLIENT[0] or not one(query, "state"):
                return self.fail(400, {"message": "bad client_id or state", "type": "bad_request"},
                                 "qiita authorize: client_id/state")
            code = secrets.token_hex(20)
            with state.lock:
                state.codes[code] = ("qiita", (one(query, "scope") or "").split(" "))
            location = state.qiita_callback + "?" + urlencode({"code": code, "state": one(query, "state")})
            self.reply(302, None, {"Location": location})

        def qiita_token(self, body):
            if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
                return self.fail(415, {"message": "JSON body expected", "type": "bad_request"}, "qiita token: not JSON")
            try:
                data = json.loads(body)
            except ValueError:
                return self.fail(400, {"message": "Bad JSON", "type": "bad_request"}, "qiita token: bad JSON")
            if set(data) != {"client_id", "client_secret", "code"}:
                return self.fail(400, {"message": "unexpected fields %s" % sorted(data), "type": "bad_request"},
                                 "qiita token: fields %s" % sorted(data))
            with state.lock:
                entry = state.codes.pop(data["code"], None)
            if (data["client_id"], data["client_secret"]) != QIITA_CLIENT or not entry or entry[0] != "qiita":
                return self.fail(400, {"message": "Bad code or client", "type": "bad_request"}, "qiita token: bad code/client")
            token = secrets.token_hex(20)
            with state.lock:
                state.qiita_tokens[token] = entry[1]
                state.stats["qiita_token"] += 1
            self.reply(201, {"client_id": data["client_id"], "scopes": entry[1], "token": token})

        def qiita_revoke(self, token):
            with state.lock:
                found = state.qiita_tokens.pop(token, None) is not None
                if found:
                    state.stats["qiita_revoked"] += 1
            if found:
                self.reply(204)
            else:
                self.fail(404, {"message": "Not found", "type": "not_found"}, "qiita revoke: unknown token")

        # Instagram --------------------------------------------------------
        def ig_authorize(self, query):
            if one(query, "client_id") != IG_CLIENT[0] or one(query, "redirect_uri") != IG_REDIRECT \
                    or one(query, "response_type") != "code" or not one(query, "state"):
                return self.fail(400, {"error_type": "OAuthException", "code": 400,
                                       "error_message": "Invalid platform app"}, "ig authorize: bad parameters")
            code = secrets.token_urlsafe(30)
            with state.lock:
                state.codes[code] = ("instagram", (one(query, "scope") or "").split(","))
            location = IG_REDIRECT + "?" + urlencode({"code": code, "state": one(query, "state")}) + "#_"
            self.reply(302, None, {"Location": location})

        def ig_token(self, body):
            form = parse_qs(body.decode(), keep_blank_values=True)
            client = (one(form, "client_id"), one(form, "client_secret"))
            with state.lock:
                entry = state.codes.pop(one(form, "code") or "", None)
            if client != IG_CLIENT or one(form, "grant_type") != "authorization_code" \
                    or one(form, "redirect_uri") != IG_REDIRECT or not entry or entry[0] != "instagram":
                return self.fail(400, {"error_type": "OAuthException", "code": 400,
                                       "error_message": "Invalid authorization code"}, "ig token: %s" % sorted(form))
            token = "IGQ" + secrets.token_urlsafe(40)
            with state.lock:
                state.ig_short[token] = "17841400000000001"
                state.stats["ig_token"] += 1
            # user_id is a number in Instagram's answer.
            self.reply(200, {"access_token": token, "user_id": 17841400000000001, "permissions": entry[1]})

        def ig_exchange(self, query):
            short = one(query, "access_token")
            if one(query, "grant_type") != "ig_exchange_token" or one(query, "client_secret") != IG_CLIENT[1] \
                    or short not in state.ig_short:
                return self.fail(400, {"error": {"message": "Invalid OAuth access token", "type": "OAuthException",
                                                 "code": 190}}, "ig exchange: bad parameters")
            long_token = "IGQL" + secrets.token_urlsafe(60)
            with state.lock:
                state.ig_long[long_token] = state.ig_short.pop(short)
                state.stats["ig_exchange"] += 1
            self.reply(200, {"access_token": long_token, "token_type": "bearer", "expires_in": 5183944})

        def ig_refresh(self, query):
            old = one(query, "access_token")
            if one(query, "grant_type") != "ig_refresh_token" or old not in state.ig_long:
                return self.fail(400, {"error": {"message": "Invalid OAuth access token", "type": "OAuthException",
                                                 "code": 190}}, "ig refresh: bad parameters")
            new = "IGQL" + secrets.token_urlsafe(60)
            with state.lock:
                state.ig_long[new] = state.ig_long.pop(old)
                state.stats["ig_refresh"] += 1
            self.reply(200, {"access_token": new, "token_type": "bearer", "expires_in": 5183944})

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--qiita-callback", default="http://127.0.0.1:8765/callback")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(State(args.qiita_callback), args.verbose))
    server.daemon_threads = True
    serve_until_stdin_closes(server, server.server_address[1])


if __name__ == "__main__":
    main()
