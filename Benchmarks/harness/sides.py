"""What each side runs: one function per kind of measurement, returning the
round's value in the row's unit."""
import statistics

from .programs import ProgramFailed, describe, measure, run_json, wall_time


class Side:
    """One column of a row: a name shown in the table and a measuring function."""

    def __init__(self, name, run):
        self.name = name
        self.run = run


def micros_per_op(command, seconds, env=None, scale=1e6):
    """Library rows: µs per operation over the program's timed loop (ms
    with scale=1e3)."""
    def run():
        ops, elapsed = measure(command + ["-seconds", str(seconds)], seconds, env)
        return elapsed / ops * scale
    return run


def cpu_micros_per_op(command, seconds, env=None, scale=1e6):
    """CPU rows: the program's own CPU time (user + system, every thread)
    over its timed loop, per operation: what an operation cost the machine,
    beside what it took the clock (ms with scale=1e3)."""
    def run():
        result, done = run_json(command + ["-seconds", str(seconds)], seconds, env)
        ops, cpu = result.get("ops"), result.get("cpu_seconds")
        if not isinstance(ops, (int, float)) or ops <= 0 or not isinstance(cpu, (int, float)) or cpu <= 0:
            raise ProgramFailed(describe(command, "no positive \"ops\" and \"cpu_seconds\" in %r" % result,
                                         done.stderr))
        return cpu / ops * scale
    return run


def connections_opened(command, seconds, env, counter):
    """Connection rows: how many connections the server accepted while the
    program ran (its warm-up included), read from the server's own count
    (counter: a function returning it) before and after."""
    def run():
        before = counter()
        measure(command + ["-seconds", str(seconds)], seconds, env)
        return counter() - before
    return run


def ops_per_second(command, seconds, seconds_flag=("-seconds",)):
    """Throughput rows. seconds_flag: how the program takes its duration
    (flag name, or () when it is a positional argument)."""
    def run():
        ops, elapsed = measure(command + list(seconds_flag) + [str(seconds)], seconds)
        return ops / elapsed
    return run


def signin_millis(command, env, server, count):
    """Sign-in rows: the median, over `count` sign-ins run one after another,
    of each one's wall time minus the time the tokenserver spent inside its
    handlers meanwhile (its /stats before and after), in ms."""
    def run():
        values = []
        for _ in range(count):
            before = server.handler_ns()
            wall = wall_time(command, env)
            values.append((wall - (server.handler_ns() - before) / 1e9) * 1e3)
        return statistics.median(values)
    return run


def process_millis(command, count, env=None):
    """Floor rows: median wall time of `count` runs of a program, in ms."""
    def run():
        return statistics.median(wall_time(command, env) * 1e3 for _ in range(count))
    return run


def ratio_value(command, seconds):
    """Ratio rows: a program that measures both parts itself and prints
    {"ratio": R, …}; the round's value is R."""
    def run():
        result, done = run_json(command + ["-seconds", str(seconds)], seconds)
        ratio = result.get("ratio")
        if not isinstance(ratio, (int, float)) or ratio <= 0:
            raise ProgramFailed(describe(command, "no positive \"ratio\" in %r" % result, done.stderr))
        return float(ratio)
    return run
