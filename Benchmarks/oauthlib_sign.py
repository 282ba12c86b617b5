#!/usr/bin/env python3
"""oauthlib's OAuth 1.0a HMAC-SHA1 signing rate: the Python peer of
`AuthKitBenchmark sign` and liboauth-sign in Benchmarks/run-benchmarks.

    oauthlib_sign.py fixed|live SECONDS

Signs Twitter's "Creating a signature" example request with Client.sign.
fixed: the example's published nonce and timestamp; checked first to give
       the published signature hCtSmYh+iHYCEqBWrE7C7hYmtUk=.
live:  oauthlib draws a nonce and reads the clock on every signature, as a
       real client does; checked first by re-signing one live header's nonce
       and timestamp as fixed values and comparing.
Prints one JSON line {"ops": N, "seconds": S} after a 0.2 s warm-up;
diagnostics on stderr; exits 1 on failure. Needs: oauthlib.
"""
import json
import re
import sys
import time

from oauthlib.oauth1 import Client

URL = "https://api.twitter.com/1.1/statuses/update.json?include_entities=true"
BODY = "status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21"
HEADERS = {"Content-Type": "application/x-www-form-urlencoded"}
KEYS = dict(
    client_key="xvz1evFS4wEEPTGEFPHBog",
    client_secret="kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
    resource_owner_key="370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb",
    resource_owner_secret="LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE",
)
EXAMPLE_NONCE = "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg"
EXAMPLE_TIMESTAMP = "1318622958"
EXAMPLE_SIGNATURE = 'oauth_signature="hCtSmYh%2BiHYCEqBWrE7C7hYmtUk%3D"'

# Signatures between clock reads: ~10 ms of work, so reading the clock is noise.
BATCH = 100


def make_client(nonce=None, timestamp=None):
    """A client with a fixed nonce and timestamp, or (None) live ones: oauthlib
    generates both in Client.sign when they are not given."""
    return Client(**KEYS, nonce=nonce, timestamp=timestamp)


def authorization(client):
    """One signature: the Authorization header value of the example request."""
    _, headers, _ = client.sign(URL, http_method="POST", body=BODY, headers=HEADERS)
    return headers["Authorization"]


def check(live):
    """The correctness check run before any timing; exits on failure."""
    fixed = authorization(make_client(EXAMPLE_NONCE, EXAMPLE_TIMESTAMP))
    if EXAMPLE_SIGNATURE not in fixed:
        sys.exit("oauthlib_sign: unexpected fixed signature: " + fixed)
    if not live:
        return
    client = make_client()
    first, second = authorization(client), authorization(client)
    nonce = re.search(r'oauth_nonce="([^"]*)"', first).group(1)
    timestamp = re.search(r'oauth_timestamp="([^"]*)"', first).group(1)
    if nonce in second or authorization(make_client(nonce, timestamp)) != first:
        sys.exit("oauthlib_sign: live header does not verify: " + first)


def run(client, seconds):
    """Signs until `seconds` have passed; returns (signatures, elapsed)."""
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(BATCH):
            authorization(client)
        count += BATCH
        now = time.perf_counter()
        if now >= deadline:
            return count, now - start


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("fixed", "live"):
        sys.exit("usage: oauthlib_sign.py fixed|live SECONDS")
    live = sys.argv[1] == "live"
    seconds = float(sys.argv[2])
    check(live)
    client = make_client() if live else make_client(EXAMPLE_NONCE, EXAMPLE_TIMESTAMP)
    run(client, 0.2)  # warm-up
    count, elapsed = run(client, seconds)
    sys.stderr.write("oauthlib_sign: %d signatures in %.2f s\n" % (count, elapsed))
    print(json.dumps({"ops": count, "seconds": round(elapsed, 6)}))


if __name__ == "__main__":
    main()
