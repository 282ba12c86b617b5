"""The rows of the report: what is compared, in which unit, and the command
each side runs. `make_rows` returns them in table order."""
import os
import shutil
import subprocess
import sys

from .programs import ProgramFailed, describe
from .sides import (Side, connections_opened, cpu_micros_per_op, micros_per_op, ops_per_second, process_millis,
                    ratio_value, signin_millis)
from .summary import Target


def make_fixture(command):
    """Runs a program that writes a fixture file (`oidcverify make`)."""
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True)
    if done.returncode != 0:
        raise ProgramFailed(describe(command, "exit status %d" % done.returncode, done.stderr))

# Every name --only accepts, in table order.
ROW_NAMES = ("exchange-library", "refresh-library", "exchanges-sequential", "exchanges-16",
             "exchanges-ahc-sequential", "exchanges-ahc-16", "tls-requests-sequential", "tls-requests-16", "signin", "floor", "token-print", "id-token-rs256",
             "id-token-es256", "dpop-request", "sign-fixed", "sign-live", "sign-ratio", "web-signin", "web-memory")


class Row:
    """One measured row. better: "lower" (a time) or "higher" (a rate). The
    first side is AuthKit's unless the run is --peers-only."""

    def __init__(self, name, title, unit, better, sides, targets=None):
        self.name, self.title, self.unit, self.better, self.sides = name, title, unit, better, sides
        # {peer name: Target} on AuthKit ÷ that peer (medians); {None: Target}
        # on AuthKit's own value for a row without a peer.
        self.targets = targets or {}


class Context:
    """Everything the commands need: binaries, the server, the settings."""

    def __init__(self, swift, peers_bin, benchmarks, server, home, scratch, python, seconds, signins,
                 print_homes=(None, None)):
        self.swift = swift            # builds.SwiftSide, or None with --peers-only
        self.peers_bin = peers_bin
        self.benchmarks = benchmarks
        self.server = server          # tokenserver.TokenServer
        self.home = home              # AUTHKIT_HOME with providers/bench.json
        self.scratch = scratch        # where the x/oauth2 sign-in writes its token
        self.python = python
        self.seconds = seconds
        self.signins = signins
        # token-print's AUTHKIT_HOME holding an unexpired credential, and its
        # GH_CONFIG_DIR whose hosts.yml holds a token (descriptor.make_print_homes).
        self.print_home, self.gh_config = print_homes

    def peer(self, name):
        return os.path.join(self.peers_bin, name)


def make_rows(ctx, names):
    """The selected rows. AuthKit sides are included when ctx.swift is set."""
    s, server = ctx.seconds, ctx.server
    xo = ctx.peer("xoauth2peer")
    ak = ctx.swift.benchmark if ctx.swift else None
    browser = {"BROWSER": ctx.peer("browser")}
    rows = []

    def add(name, title, unit, better, authkit, *peers, targets=None):
        """authkit: a zero-argument factory of AuthKit's run function (called
        only when the AuthKit side exists); peers: (name, run) pairs;
        targets: {peer name: Target} (issue 50's table)."""
        if name not in names:
            return
        sides = [Side("AuthKit", authkit())] if ctx.swift and authkit else []
        rows.append(Row(name, title, unit, better, sides + [Side(n, run) for n, run in peers], targets))

    def handoff_floors(name, what, unit, better, run):
        """libcurl from C with the request handed to another thread: as
        AuthKit's transport does (a worker woken, then the caller), and
        through an event loop (the caller sends, a loop thread waits on the
        socket and wakes the caller): the floor of any design that does not
        block the caller's thread, which Swift's cooperative pool forbids."""
        add(name, "… libcurl from C, each %s handed to a thread and back (the transport's design)" % what, unit,
            better, None, ("libcurl (C)", run("thread")))
        add(name, "… libcurl from C through an event loop (one wake-up a %s: no thread per transfer)" % what, unit,
            better, None, ("libcurl (C)", run("event-loop")))

    def concurrent_floors(name, what, unit, better, run):
        """16 at once, libcurl from C, with nothing handed between threads:
        16 threads each blocking in its own transfer (the transport's
        workers without the tasks that hand them work), and one thread
        driving all 16 on a multi handle; x/oauth2 again in the same rounds."""
        add(name, "… libcurl from C, 16 threads each blocking in its own %s (the workers, no hand-off)" % what,
            unit, better, None, ("libcurl (C)", run([])), ("x/oauth2", run(None)))
        add(name, "… libcurl from C, one thread driving the 16 %ss on a multi handle" % what,
            unit, better, None, ("libcurl (C)", run(["-handoff", "event-loop"])), ("x/oauth2", run(None)))

    exchange_flags = ["-token-url", server.token_url]
    add("exchange-library", "library work per code exchange", "µs", "lower",
        lambda: micros_per_op([ak, "library-exchange"], s),
        ("x/oauth2", micros_per_op([xo, "library-exchange"], s)), targets={"x/oauth2": Target("<=", 1.0)})
    add("refresh-library", "library work per refresh", "µs", "lower",
        lambda: micros_per_op([ak, "library-refresh"], s),
        ("x/oauth2", micros_per_op([xo, "library-refresh"], s)), targets={"x/oauth2": Target("<=", 1.0)})
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
            ("x/oauth2", ops_per_second([xo, "exchanges"] + flags, s)), targets={"x/oauth2": Target(">=", 0.8)})
        if name == "exchanges-sequential":
            # Where an exchange's time goes: the same POST through AuthKit's
            # default transport alone (no OAuth work; `send` streams, so a
            # worker carries it, where a token call alone takes the event
            # loop), and libcurl alone from C; the whole exchange is the row above.
            add(name, "… its POST through AuthKit's default transport alone (streamed: a worker; no OAuth work)",
                "exchanges/s", "higher", lambda: ops_per_second([ak, "transport-exchanges", "-token-url", server.token_url], s),
                ("libcurl (C)", ops_per_second([ctx.peer("curlrequests"), "-exchange", server.token_url], s)))
            handoff_floors(name, "POST", "exchanges/s", "higher",
                           lambda h: ops_per_second([ctx.peer("curlrequests"), "-exchange", server.token_url,
                                                     "-handoff", h], s))
        if name == "exchanges-16":
            concurrent_floors(name, "POST", "exchanges/s", "higher",
                              lambda extra, flags=flags: ops_per_second(
                                  [xo, "exchanges"] + flags if extra is None else
                                  [ctx.peer("curlrequests"), "-exchange", server.token_url, "-concurrency", "16"] + extra,
                                  s))
        if transport == "ahc":
            # The floor: the exchange's POST through AsyncHTTPClient alone (run
            # by AuthKitBenchmark, without AuthKit), beside x/oauth2's whole
            # exchange measured again in the same rounds.
            if ak:
                add(name, "… its POST through AsyncHTTPClient alone (no AuthKit); x/oauth2's whole exchange",
                    "exchanges/s", "higher", None,
                    ("AsyncHTTPClient", ops_per_second([ak, "ahc-exchanges"] + flags, s)),
                    ("x/oauth2", ops_per_second([xo, "exchanges"] + flags, s)))

    # 200 authorized GETs over TLS (the tokenserver's /me on its TLS port,
    # a throwaway authority trusted through SSL_CERT_FILE on both sides),
    # through CredentialSource.send and x/oauth2's Client; then how many
    # connections each side opened for a run of them, counted by the server.
    tls_env = {"SSL_CERT_FILE": server.ca_file}
    for name, concurrency in (("tls-requests-sequential", 1), ("tls-requests-16", 16)):
        flags = ["-base", server.tls_base, "-concurrency", str(concurrency)]
        title = "200 authorized GETs over TLS, %s" % ("one at a time" if concurrency == 1 else "16 at once")
        add(name, title, "ms", "lower",
            lambda flags=flags: micros_per_op([ak, "tls-requests"] + flags, s, tls_env, scale=1e3),
            ("x/oauth2", micros_per_op([xo, "tls-requests"] + flags, s, tls_env, scale=1e3)),
            targets={"x/oauth2": Target("<=", 1.2)})
        if concurrency == 1:
            # The row's GETs cap each body at 64 KiB, within what the default
            # transport holds before streaming: read whole, through its event
            # loop. With send's default cap (100 MiB) a body could stream, and
            # goes through a worker.
            add(name, "… with send's default cap (100 MiB): streamable, through a worker", "ms", "lower",
                lambda flags=flags: micros_per_op([ak, "tls-requests", "-max-body", str(100 << 20)] + flags, s,
                                                  tls_env, scale=1e3),
                ("x/oauth2", micros_per_op([xo, "tls-requests"] + flags, s, tls_env, scale=1e3)))
            # The same GETs through the default transport alone (no
            # CredentialSource): what the transport costs above libcurl.
            add(name, "… through AuthKit's default transport alone (token set by hand)", "ms", "lower",
                lambda flags=flags: micros_per_op([ak, "tls-transport-requests"] + flags, s, tls_env, scale=1e3),
                ("x/oauth2", micros_per_op([xo, "tls-requests"] + flags, s, tls_env, scale=1e3)))
            # The floor: libcurl alone, from C, doing what AuthKit asks of it.
            add(name, "… of which libcurl alone (C, one handle, reset per GET)", "ms", "lower", None,
                ("libcurl (C)", micros_per_op([ctx.peer("curlrequests"), "-base", server.tls_base], s, tls_env,
                                              scale=1e3)))
            handoff_floors(name, "GET", "ms", "lower",
                           lambda h: micros_per_op([ctx.peer("curlrequests"), "-base", server.tls_base, "-handoff", h],
                                                   s, tls_env, scale=1e3))
            # What the same GETs cost the client's process in CPU (every
            # thread): with the server on the same two cores, a GET one at
            # a time takes about the CPU of both processes on its path, so
            # the client's CPU shows where the row's time goes.
            add(name, "… the client's CPU for them (user + system, every thread)", "ms", "lower",
                lambda flags=flags: cpu_micros_per_op([ak, "tls-requests"] + flags, s, tls_env, scale=1e3),
                ("x/oauth2", cpu_micros_per_op([xo, "tls-requests"] + flags, s, tls_env, scale=1e3)))
            add(name, "… the client's CPU: AuthKit's transport alone / libcurl (C), a thread hand-off / alone", "ms",
                "lower", lambda flags=flags: cpu_micros_per_op([ak, "tls-transport-requests"] + flags, s, tls_env,
                                                             scale=1e3),
                ("libcurl (C), hand-off", cpu_micros_per_op([ctx.peer("curlrequests"), "-base", server.tls_base,
                                                             "-handoff", "thread"], s, tls_env, scale=1e3)),
                ("libcurl (C)", cpu_micros_per_op([ctx.peer("curlrequests"), "-base", server.tls_base], s, tls_env,
                                                  scale=1e3)))
            # What each handoff between a task and a blocking worker costs.
            add(name, "… a task's round trip to a waiting thread and back, alone", "µs", "lower",
                lambda: micros_per_op([ak, "handoff"], s))
        else:
            concurrent_floors(name, "GET", "ms", "lower",
                              lambda extra, flags=flags: micros_per_op(
                                  [xo, "tls-requests"] + flags if extra is None else
                                  [ctx.peer("curlrequests"), "-base", server.tls_base, "-concurrency", "16"] + extra,
                                  s, tls_env, scale=1e3))
        short = min(s, 1.0)
        add(name, "… TLS connections opened in a %g s run (warm-up included)" % short, "connections", "lower",
            lambda flags=flags: connections_opened([ak, "tls-requests"] + flags, short, tls_env,
                                                   server.tls_connections),
            ("x/oauth2", connections_opened([xo, "tls-requests"] + flags, short, tls_env, server.tls_connections)))

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

    # What a script pays to get a token: a cold `authkit token print` of a
    # stored, unexpired credential, beside `gh auth token` (Debian's gh) of
    # a token it keeps in its own config file (no keyring, no network).
    if "token-print" in names:
        gh = shutil.which("gh")
        if gh is None:
            # peers/build installs it: a row without its peer would report
            # AuthKit's milliseconds where its ratio belongs.
            raise ProgramFailed("token-print's peer, gh, is not installed (apt-get install gh)")
        print_env = {"AUTHKIT_HOME": ctx.print_home}
        gh_env = {"GH_CONFIG_DIR": ctx.gh_config} if ctx.gh_config else {}
        add("token-print", "a stored token printed by a new process", "ms", "lower",
            lambda: process_millis([ctx.swift.authkit, "token", "print", "--provider", "bench"], ctx.signins,
                                   env=print_env),
            *([("gh auth token", process_millis([gh, "auth", "token"], ctx.signins, env=gh_env))] if gh else []),
            targets={"gh auth token": Target("<=", 0.5)})

    # ID token verification, keys cached: one fixture per algorithm (a key
    # set and a token signed with it, made by the Go peer), verified by both.
    for algorithm in ("rs256", "es256"):
        name = "id-token-" + algorithm
        if name not in names:
            continue
        fixture = os.path.join(ctx.scratch, name + ".json")
        make_fixture([ctx.peer("oidcverify"), "make", algorithm, fixture])
        add(name, "ID token verifications, %s, keys cached" % algorithm.upper(), "verifications/s", "higher",
            lambda fixture=fixture: ops_per_second([ak, "id-token", fixture], s),
            ("go-oidc", ops_per_second([ctx.peer("oidcverify"), "verify", fixture], s)),
            targets={"go-oidc": Target(">=", 1.0)})

    # A DPoP-bound request's client-side work (a proof per request) beside
    # the same request with a Bearer token: both AuthKit, in-memory transport.
    # Both sides are AuthKit's, so --peers-only has nothing to measure here.
    if ak:
        add("dpop-request", "client-side work per resource request, DPoP-bound", "µs", "lower",
            lambda: micros_per_op([ak, "request", "dpop"], s),
            ("same request, Bearer", micros_per_op([ak, "request", "bearer"], s)),
            targets={"same request, Bearer": Target("<=", 1.3)})
        # What no DPoP client can go below: the proof's one P-256 signature.
        add("dpop-request", "… of which one P-256 signature alone (swift-crypto)", "µs", "lower",
            lambda: micros_per_op([ak, "p256-sign"], s))

    oauthlib = [ctx.python, os.path.join(ctx.benchmarks, "oauthlib_sign.py")]
    for mode in ("fixed", "live"):
        add("sign-" + mode, "OAuth 1.0a HMAC-SHA1 signatures, %s nonce" % mode, "signatures/s", "higher",
            lambda mode=mode: ops_per_second([ak, "sign", mode], s),
            ("liboauth", ops_per_second([ctx.peer("liboauth-sign"), mode], s, seconds_flag=())),
            ("oauthlib", ops_per_second(oauthlib + [mode], s, seconds_flag=())), targets={"liboauth": Target(">=", 8.0)})
    # The target's own measure: both nonces in one process, alternating
    # batches, so the machine's drift between rounds does not decide it.
    add("sign-ratio", "live ÷ fixed nonce signing rate, alternating in one process (1 = a live nonce costs nothing)",
        "ratio", "higher", lambda: ratio_value([ak, "sign-ratio"], s), targets={None: Target(">=", 0.8)})
    return rows
