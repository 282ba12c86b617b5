"""The rows of the report: what is compared, in which unit, and the command
each side runs. `make_rows` returns them in table order."""
import os
import sys

from .sides import Side, micros_per_op, ops_per_second, process_millis, ratio_value, signin_millis

# Every name --only accepts, in table order.
ROW_NAMES = ("exchange-library", "refresh-library", "exchanges-sequential", "exchanges-16",
             "exchanges-ahc-sequential", "exchanges-ahc-16", "signin", "floor", "sign-fixed", "sign-live", "sign-ratio")


class Row:
    """One measured row. better: "lower" (a time) or "higher" (a rate). The
    first side is AuthKit's unless the run is --peers-only."""

    def __init__(self, name, title, unit, better, sides):
        self.name, self.title, self.unit, self.better, self.sides = name, title, unit, better, sides


class Context:
    """Everything the commands need: binaries, the server, the settings."""

    def __init__(self, swift, peers_bin, benchmarks, server, home, scratch, python, seconds, signins):
        self.swift = swift            # builds.SwiftSide, or None with --peers-only
        self.peers_bin = peers_bin
        self.benchmarks = benchmarks
        self.server = server          # tokenserver.TokenServer
        self.home = home              # AUTHKIT_HOME with providers/bench.json
        self.scratch = scratch        # where the x/oauth2 sign-in writes its token
        self.python = python
        self.seconds = seconds
        self.signins = signins

    def peer(self, name):
        return os.path.join(self.peers_bin, name)


def make_rows(ctx, names):
    """The selected rows. AuthKit sides are included when ctx.swift is set."""
    s, server = ctx.seconds, ctx.server
    xo = ctx.peer("xoauth2peer")
    ak = ctx.swift.benchmark if ctx.swift else None
    browser = {"BROWSER": ctx.peer("browser")}
    rows = []

    def add(name, title, unit, better, authkit, *peers):
        """authkit: a zero-argument factory of AuthKit's run function (called
        only when the AuthKit side exists); peers: (name, run) pairs."""
        if name not in names:
            return
        sides = [Side("AuthKit", authkit())] if ctx.swift and authkit else []
        rows.append(Row(name, title, unit, better, sides + [Side(n, run) for n, run in peers]))

    exchange_flags = ["-token-url", server.token_url]
    add("exchange-library", "library work per code exchange", "µs", "lower",
        lambda: micros_per_op([ak, "library-exchange"], s),
        ("x/oauth2", micros_per_op([xo, "library-exchange"], s)))
    add("refresh-library", "library work per refresh", "µs", "lower",
        lambda: micros_per_op([ak, "library-refresh"], s),
        ("x/oauth2", micros_per_op([xo, "library-refresh"], s)))
    # AuthKit's default transport (libcurl on Linux), then its AsyncHTTPClient
    # product (AuthKitAsyncHTTPClient), each against x/oauth2's net/http.
    for name, concurrency, transport, title in (
            ("exchanges-sequential", 1, "default", "loopback exchanges, one at a time"),
            ("exchanges-16", 16, "default", "loopback exchanges, 16 at once"),
            ("exchanges-ahc-sequential", 1, "ahc", "… with AuthKitAsyncHTTPClient, one at a time"),
            ("exchanges-ahc-16", 16, "ahc", "… with AuthKitAsyncHTTPClient, 16 at once")):
        flags = exchange_flags + ["-concurrency", str(concurrency)]
        add(name, title, "exchanges/s", "higher",
            lambda flags=flags, transport=transport: ops_per_second([ak, "exchanges"] + flags + ["-transport", transport], s),
            ("x/oauth2", ops_per_second([xo, "exchanges"] + flags, s)))

    authkit_env = dict(browser, AUTHKIT_HOME=ctx.home, AUTHKIT_BENCH_CLIENT_ID="bench-client",
                       AUTHKIT_BENCH_CLIENT_SECRET="bench-secret")
    xo_signin = [xo, "signin", "-authorize-url", server.authorize_url, "-token-url", server.token_url,
                 "-out", os.path.join(ctx.scratch, "xoauth2-token.json")]
    add("signin", "whole sign-in, minus the server's time", "ms", "lower",
        lambda: signin_millis([ctx.swift.authkit, "authorize", "--provider", "bench"], authkit_env, server,
                              ctx.signins),
        ("x/oauth2", signin_millis(xo_signin, browser, server, ctx.signins)))

    if "floor" in names:
        floor = ctx.swift.floor if ctx.swift else None
        foundation = ctx.swift.floor_foundation if ctx.swift else None
        if ctx.swift and not floor:
            print("skipping AuthKit's process floor: AuthKitFloor is not built", file=sys.stderr)
        add("floor", "process floor: start, link, exit", "ms", "lower",
            (lambda: process_millis([floor], ctx.signins)) if floor else None,
            ("x/oauth2", process_millis([xo, "floor"], ctx.signins)))
        if foundation:
            rows.append(Row("floor", "process floor, FoundationEssentials only", "ms", "lower",
                            [Side("AuthKit", process_millis([foundation], ctx.signins))]))
        elif ctx.swift:
            print("skipping the FoundationEssentials-only floor: AuthKitFloorFoundation is not built", file=sys.stderr)
        # What linking libcurl alone costs a process (Debian's, with its
        # dependencies). No longer in AuthKit's floor: AuthKit loads libcurl
        # with dlopen when a request is due (a sign-in, on a thread of its own).
        rows.append(Row("floor", "process floor, a C program linking libcurl", "ms", "lower",
                        [Side("C + libcurl", process_millis([ctx.peer("curlfloor")], ctx.signins))]))

    oauthlib = [ctx.python, os.path.join(ctx.benchmarks, "oauthlib_sign.py")]
    for mode in ("fixed", "live"):
        add("sign-" + mode, "OAuth 1.0a HMAC-SHA1 signatures, %s nonce" % mode, "signatures/s", "higher",
            lambda mode=mode: ops_per_second([ak, "sign", mode], s),
            ("liboauth", ops_per_second([ctx.peer("liboauth-sign"), mode], s, seconds_flag=())),
            ("oauthlib", ops_per_second(oauthlib + [mode], s, seconds_flag=())))
    # The target's own measure: both nonces in one process, alternating
    # batches, so the machine's drift between rounds does not decide it.
    add("sign-ratio", "live ÷ fixed nonce signing rate, alternating in one process (1 = a live nonce costs nothing)",
        "ratio", "higher", lambda: ratio_value([ak, "sign-ratio"], s))
    return rows
