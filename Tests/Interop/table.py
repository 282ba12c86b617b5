#!/usr/bin/env python3
"""Turns the interop suite's output into a Markdown table: peer x feature -> result.

    Tests/Interop/run --no-table | python3 Tests/Interop/table.py

Reads `PASS peer.feature`, `FAIL peer.feature: reason` and `SKIP peer.feature: reason`
lines (anything else is ignored). Rows are features, columns are peers; a cell is
"pass", "**FAIL**", "skipped" or empty where the peer does not take part.
"""
import sys

PEERS = {
    "authlib": "Authlib (OAuth 2.0 AS)",
    "attack": "Authlib, attacked",
    "quirks": "Qiita / Instagram quirks",
    "oauthlib": "oauthlib (OAuth 1.0a)",
    "chromium": "headless Chromium",
}
CELL = {"PASS": "pass", "FAIL": "**FAIL**", "SKIP": "skipped"}


def parse(lines):
    results = []
    for line in lines:
        word, _, rest = line.strip().partition(" ")
        if word not in CELL or not rest:
            continue
        name = rest.split(":", 1)[0].strip()
        peer, _, feature = name.partition(".")
        results.append((peer, feature or peer, word))
    return results


def render(lines):
    results = parse(lines)
    peers = [p for p in PEERS if any(r[0] == p for r in results)]
    peers += sorted({r[0] for r in results} - set(peers))
    features = []
    for _, feature, _ in results:
        if feature not in features:
            features.append(feature)
    cells = {(peer, feature): CELL[word] for peer, feature, word in results}
    out = ["| feature | " + " | ".join(PEERS.get(p, p) for p in peers) + " |",
           "|---|" + "---|" * len(peers)]
    for feature in features:
        out.append("| %s | " % feature + " | ".join(cells.get((p, feature), "") for p in peers) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    print(render(sys.stdin.read().splitlines()))
