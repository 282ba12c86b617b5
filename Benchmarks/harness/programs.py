"""Running the benchmark's programs: a measuring program's one JSON line, or
the wall time of a whole process (a sign-in, a floor program)."""
import json
import os
import subprocess
import sys
import time


class ProgramFailed(Exception):
    """A program exited non-zero or printed something unexpected; the message
    carries its command line and standard error, so the run can show why."""


# Proxy settings would send loopback requests of some clients (curl, urllib)
# to a proxy; the benchmark talks to 127.0.0.1 only.
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


# A token in these makes `gh auth token` print it without reading its
# hosts.yml: the peer would do less work than `authkit token print`.
_TOKEN_VARIABLES = ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")


def child_environment(extra=None):
    env = {k: v for k, v in os.environ.items()
           if k.lower() not in _PROXY_VARIABLES and k not in _TOKEN_VARIABLES}
    env.update(extra or {})
    return env


def describe(command, result_or_error, stderr):
    text = stderr.decode(errors="replace").strip() if stderr else ""
    return "%s: %s%s" % (" ".join(command), result_or_error, ("\n" + text) if text else "")


def measure(command, seconds, env=None):
    """Runs a program that prints {"ops": N, "seconds": S}; returns (ops, seconds)."""
    result, done = run_json(command, seconds, env)
    try:
        ops, elapsed = int(result["ops"]), float(result["seconds"])
    except (ValueError, KeyError, TypeError):
        raise ProgramFailed(describe(command, "no {\"ops\", \"seconds\"} line on stdout: %r" % done.stdout[-200:],
                                      done.stderr)) from None
    if ops <= 0 or elapsed <= 0:
        raise ProgramFailed(describe(command, "measured nothing: %r" % result, done.stderr))
    return ops, elapsed


def run_json(command, seconds, env=None):
    """Runs a timed program whose last line on stdout is a JSON object;
    returns (that object, the finished process)."""
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                              env=child_environment(env), timeout=seconds * 3 + 60)
    except subprocess.TimeoutExpired as e:
        raise ProgramFailed(describe(command, "timed out", e.stderr)) from None
    except OSError as e:
        raise ProgramFailed("%s: %s" % (" ".join(command), e)) from None
    if done.returncode != 0:
        raise ProgramFailed(describe(command, "exit status %d" % done.returncode, done.stderr))
    lines = done.stdout.decode(errors="replace").strip().splitlines()
    try:
        result = json.loads(lines[-1])
    except (IndexError, ValueError):
        raise ProgramFailed(describe(command, "no JSON line on stdout: %r" % done.stdout[-200:], done.stderr)) from None
    if not isinstance(result, dict):
        raise ProgramFailed(describe(command, "its last line is not a JSON object: %r" % lines[-1][:200], done.stderr))
    if len(lines) != 1:
        sys.stderr.write("note: %s printed %d lines on stdout; used the last\n" % (command[0], len(lines)))
    return result, done


def wall_time(command, env=None, timeout=60):
    """Runs a whole process and returns its wall time in seconds, from just
    before the fork to the moment it has been reaped. The timing includes
    this script's own fork/exec (~1 ms), the same for every side."""
    env = child_environment(env)
    start = time.perf_counter()
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise ProgramFailed(describe(command, "timed out after %d s" % timeout, e.stderr)) from None
    except OSError as e:
        raise ProgramFailed("%s: %s" % (" ".join(command), e)) from None
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise ProgramFailed(describe(command, "exit status %d" % done.returncode, done.stderr))
    return elapsed
