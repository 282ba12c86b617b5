"""The web rows: AuthKit's example web app (Examples/WebApp,
`authkit-web-example`, Hummingbird 2) beside a Go app doing the same work
with net/http, golang.org/x/oauth2 and lib/pq (peers/webapp), both driven by
the same load generator (peers/webload) against the run's tokenserver.

web-signin  sign-ins per second, 16 browsers at once: start (302 to the
            provider, binding cookie), then the callback (attempt read, the
            browser checked, then taken,
            code exchanged, who-am-I asked, credential and session saved,
            302 with the session cookie). Two rows: every store in memory,
            and every store in PostgreSQL (a throwaway cluster, a fresh
            database for each side in each round, tokens sealed with
            AES-256-GCM on both sides).
web-memory  the app's peak resident memory (VmHWM) after 1,000 sign-ins
            whose sessions 100 clients then request (GET /, looked up)
            for S seconds. Stores in memory: "1,000 sessions" are then the
            app's own memory, not the database's. A second line, without a
            target, gives the same runs' anonymous memory at the end.

Every round starts each app afresh (a new process on a free port, waited
for until GET / answers) and stops it after, so no round inherits another's
sessions or heap. `WebRows` owns the PostgreSQL cluster: use it as a context
manager around the rounds."""
import base64
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from .builds import SWIFT_BUILD, forget_build_plan, links_swift_runtime
from .descriptor import bench_descriptor
from .programs import ProgramFailed, child_environment, measure
from .rows import Row
from .sides import Side
from .summary import Target

# The names --only takes, in table order (rows.py's ROW_NAMES ends with them).
WEB_ROW_NAMES = ("web-signin", "web-memory")

WEB_PRODUCT = "authkit-web-example"
WEB_FLOOR_PRODUCT = "web-stack-floor"
# The peer's name in the table. The PostgreSQL row's differs: table.py
# keys a row's target text on (row name, peer), and both sign-in rows are
# named web-signin.
PEER = "Go net/http + x/oauth2"
PEER_POSTGRES = "Go net/http + x/oauth2 + lib/pq"
# The floor beside them (Benchmarks/Sources/WebStackFloor): the example's
# HTTP work on the same stack, Hummingbird and AsyncHTTPClient, without
# AuthKit. AuthKit ÷ it is what AuthKit adds; it ÷ Go, what the stack costs.
FLOOR = "Hummingbird + AsyncHTTPClient alone"
# Browsers signing in at once: as many as the exchanges-16 row's exchanges,
# enough to keep both cores busy through every wait on the provider and the
# database.
SIGNIN_CONCURRENCY = 16
MEMORY_SESSIONS = 1000
MEMORY_CONCURRENCY = 100

# urllib would honour $http_proxy even for 127.0.0.1: an opener with no proxies.
_direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _build_product(root, package, product):
    """Builds `product` of the nested `package` (Examples/, Benchmarks/) as
    builds.py builds the other Swift products; its output goes to stderr.
    Returns the built binary's path, or None when the build failed."""
    command = SWIFT_BUILD + ["--package-path", package, "--product", product]
    forget_build_plan(package)
    print("$ " + " ".join(command), file=sys.stderr, flush=True)
    try:
        if subprocess.run(command, cwd=root, stdout=sys.stderr).returncode != 0:
            return None
    except OSError as e:
        print("cannot run swift: %s" % e, file=sys.stderr)
        return None
    shown = subprocess.run(command[:-2] + ["--show-bin-path"], cwd=root, capture_output=True, text=True)
    directory = shown.stdout.strip() if shown.returncode == 0 else ""
    return os.path.join(directory or os.path.join(package, ".build", "release"), product)


def build_web_app(root, names, build=True, bin_dir=None):
    """The path of AuthKit's example web app when a web row is selected,
    else None. Built as builds.py builds the other Swift products (release,
    --static-swift-stdlib --disable-local-rpath), from the Examples package,
    unless build is False: then it is taken from bin_dir (--swift-bin) when
    there, else from Examples/.build/release."""
    if not set(WEB_ROW_NAMES) & set(names):
        return None
    examples = os.path.join(root, "Examples")
    command = SWIFT_BUILD + ["--package-path", examples, "--product", WEB_PRODUCT]
    found = os.path.join(examples, ".build", "release", WEB_PRODUCT)
    if build:
        found = _build_product(root, examples, WEB_PRODUCT)
        if not found:
            raise ProgramFailed("swift build --product %s failed (its output is above); the web rows' AuthKit side "
                                "cannot run. --peers-only measures the peers alone." % WEB_PRODUCT)
    elif bin_dir and os.access(os.path.join(bin_dir, WEB_PRODUCT), os.X_OK):
        found = os.path.join(os.path.abspath(bin_dir), WEB_PRODUCT)
    if not os.access(found, os.X_OK):
        raise ProgramFailed("the example web app is not built: no %s. Build it with `%s` (or drop "
                            "--no-swift-build / --swift-bin), or pass --peers-only to measure the peers alone."
                            % (found, " ".join(command)))
    if not build and links_swift_runtime(found):
        print("note: %s links the Swift runtime dynamically (built without --static-swift-stdlib); rebuild it with "
              "`%s` for the build the web rows describe." % (found, " ".join(command)), file=sys.stderr)
    return found


def build_web_floor(root, names, build=True, bin_dir=None):
    """The path of web-stack-floor (Benchmarks/Sources/WebStackFloor) when a
    web row is selected and it is there, else None: the rows then go without
    their floor, with a note. Built like the example app, from the
    Benchmarks package; found as build_web_app finds the app."""
    if not set(WEB_ROW_NAMES) & set(names):
        return None
    benchmarks = os.path.join(root, "Benchmarks")
    command = SWIFT_BUILD + ["--package-path", benchmarks, "--product", WEB_FLOOR_PRODUCT]
    found = os.path.join(bin_dir or os.path.join(benchmarks, ".build", "release"), WEB_FLOOR_PRODUCT)
    if build:
        found = _build_product(root, benchmarks, WEB_FLOOR_PRODUCT) or found
    if not os.access(found, os.X_OK):
        print("note: %s is not built (`%s`); the web rows are measured without their floor"
              % (WEB_FLOOR_PRODUCT, " ".join(command)), file=sys.stderr)
        return None
    return os.path.abspath(found)


def web_descriptor(base_url):
    """bench.json for the web app: the sign-in's descriptor (descriptor.py),
    and the provider's who-am-I call, which tells a web sign-in without an
    ID token who signed in (the tokenserver's /me: {"sub", "name"})."""
    descriptor = dict(bench_descriptor(base_url))
    descriptor["whoAmI"] = {"url": base_url + "/me", "subject": "sub", "name": "name"}
    return descriptor


def free_port():
    """A loopback port nothing listens on now (the app binds it a moment later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def resident_kib(pid):
    """A running process's memory from /proc/PID/status, in KiB: VmHWM (its
    peak resident set), VmRSS (the present one) and what the present one is
    made of: RssAnon (heap, stacks) and RssFile (pages of the executable and
    libraries, clean and shared with other processes running them)."""
    fields = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                fields[name] = int(value.split()[0])
    return fields


class RunningApp:
    """One web app process on a free port, its output in a log file; started
    by `with`, stopped (SIGTERM, then SIGKILL) on the way out."""

    def __init__(self, name, command, port, env, log_dir):
        self.name, self.command, self.port, self.env = name, command, port, env
        self.base = "http://127.0.0.1:%d" % port
        self.log_path = os.path.join(log_dir, "%s-%d.log" % (name, port))
        self.process = None

    def __enter__(self):
        with open(self.log_path, "wb") as log:
            try:
                self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                                env=child_environment(self.env))
            except OSError as e:
                raise ProgramFailed("%s: %s" % (" ".join(self.command), e)) from None
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _wait_until_ready(self, timeout=60):
        """Until GET / answers 200 (the app listens, and with PostgreSQL has
        made its tables)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise ProgramFailed(self.failure("exited with status %d before answering" % self.process.returncode))
            try:
                with _direct.open(self.base + "/", timeout=5) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise ProgramFailed(self.failure("did not answer GET / within %d s" % timeout))
            time.sleep(0.05)

    def failure(self, what):
        """A message naming the command, what went wrong, and its log's end."""
        try:
            with open(self.log_path, "rb") as f:
                tail = f.read()[-2000:].decode(errors="replace").strip()
        except OSError:
            tail = ""
        return "%s: %s%s" % (" ".join(self.command), what, ("\n" + tail) if tail else "")

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


class Cluster:
    """A throwaway PostgreSQL cluster (scripts/throwaway-postgres): started
    once for the run, a fresh database made per side and round, stopped and
    removed by stop()."""

    def __init__(self, root):
        self.script = os.path.join(root, "scripts", "throwaway-postgres")
        done = subprocess.run([self.script, "start"], stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if done.returncode != 0:
            raise OSError((done.stderr.strip().splitlines() or ["exit status %d" % done.returncode])[-1])
        exports = dict(line[len("export "):].split("=", 1) for line in done.stdout.splitlines()
                       if line.startswith("export ") and "=" in line)
        self.url, self.data = exports.get("AUTHKIT_TEST_DATABASE_URL"), exports.get("AUTHKIT_TEST_PGDATA")
        if not self.url or not self.data:
            if self.data:
                self.stop()
            raise OSError("throwaway-postgres start printed no database URL")
        self.psql = shutil.which("psql") or "psql"

    def fresh_database(self, name):
        """Drops and makes database `name` (empty); returns its URL."""
        for statement in ("DROP DATABASE IF EXISTS %s WITH (FORCE)" % name, "CREATE DATABASE %s" % name):
            done = subprocess.run([self.psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", self.url, "-c", statement],
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  env=child_environment())
            if done.returncode != 0:
                raise ProgramFailed("psql -c %r: exit status %d\n%s" % (statement, done.returncode, done.stderr))
        return self.url.rsplit("/", 1)[0] + "/" + name

    def stop(self):
        if self.data:
            subprocess.run([self.script, "stop", self.data], stdin=subprocess.DEVNULL, capture_output=True)
            self.data = None


class WebRows:
    """The web rows for `names`: `with WebRows(ctx, names, web_app) as web:
    … web.rows …`. web_app: the example app's path (build_web_app), or None
    for the Go app alone (--peers-only); web_floor: web-stack-floor's
    (build_web_floor), or None to go without it. The PostgreSQL row is left out,
    with a note, where no cluster starts."""

    def __init__(self, ctx, names, web_app, root=None, web_floor=None):
        self.ctx, self.web_app, self.web_floor = ctx, web_app, web_floor
        self.root = root or os.path.dirname(ctx.benchmarks)
        self.cluster = None
        self.rows = []
        self.dir = None
        if not set(WEB_ROW_NAMES) & set(names):
            return
        try:
            self._make_rows(ctx, names, web_app)
        except BaseException:
            self.close()  # no cluster or directory left behind
            raise

    def _make_rows(self, ctx, names, web_app):
        base = ctx.server.base
        # AUTHKIT_HOME with providers/bench.json for the example app.
        self.dir = tempfile.mkdtemp(prefix="authkit-bench-web-")
        home = os.path.join(self.dir, "home")
        os.makedirs(os.path.join(home, "providers"), mode=0o700)
        with open(os.path.join(home, "providers", "bench.json"), "w") as f:
            json.dump(web_descriptor(base), f, indent=2)
            f.write("\n")
        # One key for both apps' sealing, in the example app's format.
        keys = "bench:" + base64.b64encode(secrets.token_bytes(32)).decode()
        self.swift_env = {"AUTHKIT_HOME": home, "AUTHKIT_BENCH_CLIENT_ID": "bench-client",
                          "AUTHKIT_BENCH_CLIENT_SECRET": "bench-secret", "AUTHKIT_WEB_KEYS": keys}
        self.go_env = {"AUTHKIT_WEB_KEYS": keys}
        self.go_flags = ["-authorize-url", base + "/authorize", "-token-url", base + "/token", "-me-url", base + "/me"]
        self.floor_flags = ["--authorize-url", base + "/authorize", "--token-url", base + "/token",
                            "--me-url", base + "/me"]
        self.webload = ctx.peer("webload")

        def add(name, title, unit, better, authkit, peer, target, peer_name=PEER, floor_run=None):
            sides = ([Side("AuthKit", authkit)] if web_app else []) + [Side(peer_name, peer)]
            if self.web_floor and floor_run:
                sides.append(Side(FLOOR, floor_run))
            self.rows.append(Row(name, title, unit, better, sides, {peer_name: target}))

        if "web-signin" in names:
            title = "web sign-ins through the example app, %d at once, %s"
            add("web-signin", title % (SIGNIN_CONCURRENCY, "stores in memory"), "sign-ins/s", "higher",
                self.signin_rate("swift", None), self.signin_rate("go", None), Target(">=", 1.0),
                floor_run=self.signin_rate("floor", None))
            try:
                self.cluster = Cluster(self.root)
            except OSError as e:
                # The row is one the issue asks for: not skipped with a run that exits 0.
                raise ProgramFailed("the web-signin row on PostgreSQL: no throwaway cluster started (%s)" % e)
            if self.cluster:
                add("web-signin", title % (SIGNIN_CONCURRENCY, "on PostgreSQL"), "sign-ins/s", "higher",
                    self.signin_rate("swift", "authkit_web"), self.signin_rate("go", "go_web"), Target(">=", 1.0),
                    PEER_POSTGRES)
        if "web-memory" in names:
            # One run per side and round gives both lines: the peak resident
            # set the target is on (issue 50: "resident memory"), and, without
            # a target, the anonymous part at the end (heap and stacks: what
            # the sessions cost, without the executable's own pages, which a
            # 50 MB static Swift binary has many more of than Go's).
            runs = {side: self.memory_runs(side) for side in ("swift", "go", "floor")}
            add("web-memory", "the app's peak resident memory: %s sessions, %d requests at once, stores in memory"
                % ("{:,}".format(MEMORY_SESSIONS), MEMORY_CONCURRENCY), "MiB", "lower",
                runs["swift"][0], runs["go"][0], Target("<=", 1.5), floor_run=runs["floor"][0])
            add("web-memory", "the same runs' anonymous resident memory at the end (heap, stacks; no executable pages)",
                "MiB", "lower", runs["swift"][1], runs["go"][1], None, floor_run=runs["floor"][1])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.cluster:
            self.cluster.stop()
            self.cluster = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def app(self, side, database):
        """A RunningApp for side "swift", "go" or "floor" (memory only), on a
        fresh database named `database` (None: stores in memory)."""
        port = free_port()
        url = self.cluster.fresh_database(database) if database else None
        if side == "swift":
            command = [self.web_app, "--port", str(port), "--provider", "bench"]
            command += ["--database-url", url] if url else []
            return RunningApp("authkit-web", command, port, self.swift_env, self.dir)
        if side == "floor":
            command = [self.web_floor, "--port", str(port)] + self.floor_flags
            return RunningApp("web-stack-floor", command, port, {}, self.dir)
        command = [self.ctx.peer("webapp"), "-port", str(port)] + self.go_flags
        command += ["-database-url", url] if url else []
        return RunningApp("go-webapp", command, port, self.go_env, self.dir)

    def signin_rate(self, side, database):
        """web-signin: sign-ins per second, webload's count over its time."""
        def run():
            seconds = self.ctx.seconds
            with self.app(side, database) as app:
                ops, elapsed = self.load(app, ["signin", "-concurrency", str(SIGNIN_CONCURRENCY)], seconds)
            return ops / elapsed
        return run

    def memory_runs(self, side):
        """web-memory: (peak, anonymous), two callables over one run per
        round: `peak` runs the app (the sign-ins and the page requests) and
        returns VmHWM in MiB; `anonymous` returns the same run's RssAnon at
        the end, taken in the order the runs were made (the row of peaks
        runs all its rounds before the row of anonymous memory reads them).
        VmRSS and its file-backed part go to stderr too."""
        anonymous = []

        def peak():
            with self.app(side, None) as app:
                self.load(app, ["memory", "-sessions", str(MEMORY_SESSIONS), "-concurrency",
                                str(MEMORY_CONCURRENCY)], self.ctx.seconds)
                kib = resident_kib(app.process.pid)
            print("    %s: VmHWM %.1f MiB; VmRSS %.1f MiB = anonymous %.1f + file-backed %.1f"
                  % (app.name, kib["VmHWM"] / 1024, kib["VmRSS"] / 1024, kib["RssAnon"] / 1024, kib["RssFile"] / 1024),
                  file=sys.stderr)
            anonymous.append(kib["RssAnon"] / 1024)
            return kib["VmHWM"] / 1024

        return peak, lambda: anonymous.pop(0)

    def load(self, app, arguments, seconds):
        """Runs webload against app; a failure carries the app's log too."""
        command = [self.webload, arguments[0], "-base", app.base, "-provider", "bench",
                   "-seconds", str(seconds)] + arguments[1:]
        try:
            return measure(command, seconds)
        except ProgramFailed as failure:
            raise ProgramFailed("%s\n%s" % (failure, app.failure("its log"))) from None
