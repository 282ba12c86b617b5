"""Reducing rounds to numbers: min/median/max per side, ratio of medians."""
import statistics


class Spread:
    def __init__(self, values):
        self.min, self.median, self.max = min(values), statistics.median(values), max(values)


def verdict(authkit, peer, better, name="AuthKit"):
    """AuthKit's median over the peer's (the ratio printed), and what it
    means in words: "1.8× faster" whichever direction the unit goes. `name`:
    the side in AuthKit's place (a floor's C program, beside x/oauth2)."""
    ratio = authkit / peer
    faster = ratio >= 1 if better == "higher" else ratio <= 1
    factor = max(ratio, 1 / ratio)
    if factor < 1.02:
        return ratio, "same"
    return ratio, "%s %.2f× %s" % (name, factor, "faster" if faster else "slower")


class Target:
    """What issue 50's table asks of a ratio: op is "<=" or ">=", on AuthKit ÷
    peer (medians) in the row's unit, or on AuthKit's own value for a row
    without a peer."""

    def __init__(self, op, value):
        assert op in ("<=", ">=")
        self.op, self.value = op, value

    def met(self, ratio):
        return ratio <= self.value if self.op == "<=" else ratio >= self.value

    def text(self):
        return "%s %.2f" % ("≤" if self.op == "<=" else "≥", self.value)


def round_ratios(authkit_values, peer_values):
    """AuthKit ÷ peer round by round (the sides of a round ran back to back),
    for the ratio's min and max beside the ratio of medians."""
    return [a / p for a, p in zip(authkit_values, peer_values) if p]
