"""Reducing rounds to numbers: min/median/max per side, ratio of medians."""
import statistics


class Spread:
    def __init__(self, values):
        self.min, self.median, self.max = min(values), statistics.median(values), max(values)


def verdict(authkit, peer, better):
    """AuthKit's median over the peer's (the ratio printed), and what it
    means in words: "1.8× faster" whichever direction the unit goes."""
    ratio = authkit / peer
    faster = ratio >= 1 if better == "higher" else ratio <= 1
    factor = max(ratio, 1 / ratio)
    if factor < 1.02:
        return ratio, "same"
    return ratio, "AuthKit %.2f× %s" % (factor, "faster" if faster else "slower")
