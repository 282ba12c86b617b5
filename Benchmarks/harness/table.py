"""The Markdown report: one line per (row, peer) pair, plus the derived
lines (sign-in above the floor, live ÷ fixed signing)."""
from .summary import Spread, round_ratios, verdict


def number(value, unit):
    """Enough digits to compare, not more."""
    if unit in ("exchanges/s", "signatures/s", "verifications/s"):
        return "{:,.0f}".format(value)
    if value >= 100:
        return "%.0f" % value
    return "%.2f" % value if value < 10 else "%.1f" % value


def spread_text(spread, unit):
    return "%s / **%s** / %s" % (number(spread.min, unit), number(spread.median, unit), number(spread.max, unit))


HEADER = ("| what | unit | AuthKit min / **median** / max | peer | peer min / **median** / max | "
          "AuthKit ÷ peer (medians) | reading | target |\n|---|---|---|---|---|---|---|---|")


def records(results):
    """Every (row, peer) pair as a dict for `--json`: the sides' spreads, the
    ratio (of medians, with the min and max of the round-by-round ratios),
    the target and whether it was met (None where the row has none)."""
    out = []
    for row, values in results:
        spreads = {name: Spread(v) for name, v in values.items()}
        authkit = spreads.get("AuthKit")
        peers = [side.name for side in row.sides if side.name != "AuthKit"] or [None]
        for peer in peers:
            target = row.targets.get(peer)
            record = {"row": row.name, "title": row.title, "unit": row.unit, "better": row.better, "peer": peer,
                      "authkit": authkit and vars(authkit), "peerValues": peer and vars(spreads[peer]),
                      "ratio": None, "target": target and {"op": target.op, "value": target.value}, "met": None}
            floor = floor_side(row, peer)
            if (authkit or floor) and peer:
                # A floor row (a dependency alone beside x/oauth2, no AuthKit
                # side): that dependency ÷ x/oauth2, on x/oauth2's record.
                mine = authkit or spreads[floor]
                per_round = round_ratios(values["AuthKit" if authkit else floor], values[peer])
                record["ratio"] = {"median": mine.median / spreads[peer].median,
                                   "min": min(per_round), "max": max(per_round)}
                if floor:
                    record["ratioOf"] = floor
            elif authkit:
                # One side (a floor, a figure without a peer): its values, not a ratio.
                record["value"] = {"median": authkit.median, "min": authkit.min, "max": authkit.max}
            # A one-sided row with a target (live ÷ fixed nonce, in one process) is met by its value.
            measured = record["ratio"] or record.get("value")
            if target and measured:
                record["met"] = target.met(measured["median"])
            out.append(record)
    return out


def floor_side(row, peer):
    """In a row without an AuthKit side whose last side is x/oauth2 (a
    floor measured beside it in the same rounds), the side compared with
    x/oauth2 on x/oauth2's line; else None."""
    names = [side.name for side in row.sides]
    if "AuthKit" in names or len(names) != 2 or names[1] != "x/oauth2" or peer != "x/oauth2":
        return None
    return names[0]


def target_text(record):
    if record["target"] is None:
        return "—"
    op = "≤" if record["target"]["op"] == "<=" else "≥"
    mark = "" if record["met"] is None else (" met" if record["met"] else " **missed**")
    return "%s %.2f%s" % (op, record["target"]["value"], mark)


def render(results):
    """results: [(row, {side: [values]})] in table order; returns the table."""
    lines = [HEADER]
    medians = {}  # (row name, side) -> median, for the derived lines
    for row, values in results:
        # This row's own (a name can have two rows: a time and a count).
        targets = {r["peer"]: target_text(r) for r in records([(row, values)])}
        spreads = {name: Spread(v) for name, v in values.items()}
        for name, sp in spreads.items():
            medians.setdefault((row.name, name), sp.median)
        unit = "%s (%s is better)" % (row.unit, row.better)
        authkit = spreads.get("AuthKit")
        ak_text = spread_text(authkit, row.unit) if authkit else "—"
        peers = [side.name for side in row.sides if side.name != "AuthKit"] or [None]
        for peer in peers:
            if peer is None:
                lines.append("| %s | %s | %s | — | — | — | — | %s |" % (row.title, unit, ak_text, targets[None]))
                continue
            floor = floor_side(row, peer)
            if authkit or floor:
                mine = authkit or spreads[floor]
                ratio, words = verdict(mine.median, spreads[peer].median, row.better, name=floor or "AuthKit")
                ratio_text = "%.2f" % ratio if authkit else "(%s ÷ peer) %.2f" % (floor, ratio)
            else:
                ratio_text, words = "—", "—"
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |"
                         % (row.title, unit, ak_text, peer, spread_text(spreads[peer], row.unit), ratio_text, words,
                            targets[peer]))
    lines += derived(medians)
    return "\n".join(lines)


def derived(medians):
    """Lines computed from other rows' medians, when those rows ran."""
    lines = []
    signin, floor = medians.get(("signin", "AuthKit")), medians.get(("floor", "AuthKit"))
    go_signin, go_floor = medians.get(("signin", "x/oauth2")), medians.get(("floor", "x/oauth2"))
    if go_signin is not None and go_floor is not None:
        ak = "**%.2f**" % (signin - floor) if signin is not None and floor is not None else "—"
        go = go_signin - go_floor
        if signin is not None and floor is not None and go > 0:
            ratio, words = verdict(signin - floor, go, "lower")
            tail = "%.2f | %s" % (ratio, words)
        else:
            tail = "— | —"
        lines.append("| sign-in above its process floor (medians) | ms (lower is better) | %s | x/oauth2 | **%.2f** | %s | — |"
                     % (ak, go, tail))
    fixed = {side: m for (row, side), m in medians.items() if row == "sign-fixed"}
    live = {side: m for (row, side), m in medians.items() if row == "sign-live"}
    common = [side for side in ("AuthKit", "liboauth", "oauthlib") if side in fixed and side in live]
    if common:
        ratios = {side: live[side] / fixed[side] for side in common}
        ak = "**%.2f**" % ratios["AuthKit"] if "AuthKit" in ratios else "—"
        others = ", ".join("%s %.2f" % (side, ratios[side]) for side in common if side != "AuthKit")
        lines.append("| live ÷ fixed nonce signing rate, from the two rows above (separate runs) | ratio (higher is better) "
                     "| %s | %s | | — | — | — |" % (ak, others or "—"))
    return lines


LEGEND = """\
How to read it:
- Each side ran R rounds back to back with the other(s), the first side alternating; min / median / max are over rounds.
- "AuthKit ÷ peer" is AuthKit's median divided by the peer's, in the row's unit: for µs and ms (lower is better)
  below 1 means AuthKit is faster; for exchanges/s and signatures/s (higher is better) above 1 means AuthKit is faster.
  "reading" says it in words.
- library rows: in-process work per operation with an in-memory transport (no network).
- sign-in: each sign-in is a whole process (CLI start, listener, scripted browser, exchange, storing the token),
  wall time from fork to exit minus the tokenserver's time inside its handlers; a round's value is the median of K.
- process floor: a program that links the same libraries and exits at once; what start-up alone costs."""
