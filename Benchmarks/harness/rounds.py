"""Side-by-side measurement: every round runs each side once, back to back,
so a slow patch of the machine (another process, thermal throttling) hits
both sides alike instead of one whole row."""
import sys


def run_rounds(row, rounds):
    """Returns {side name: [one value per round]}. The side that goes first
    rotates every round, so neither always runs on a warmer (or busier)
    machine."""
    values = {side.name: [] for side in row.sides}
    for r in range(rounds):
        shift = r % len(row.sides)
        for side in row.sides[shift:] + row.sides[:shift]:
            print("  %s: round %d/%d, %s…" % (row.name, r + 1, rounds, side.name), file=sys.stderr, flush=True)
            values[side.name].append(side.run())
    return values
