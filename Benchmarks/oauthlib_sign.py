#!/usr/bin/env python3
"""Measures oauthlib's Client.sign on Twitter's "Creating a signature" example,
the request AuthKitSignBenchmark signs, and prints signatures per second.

    python3 oauthlib_sign.py [seconds]      (default 3)

Checks first that it produces the published signature hCtSmYh+iHYCEqBWrE7C7hYmtUk=.
Needs: oauthlib.
"""
import sys
import time

from oauthlib.oauth1 import Client

URL = "https://api.twitter.com/1.1/statuses/update.json?include_entities=true"
BODY = "status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21"
HEADERS = {"Content-Type": "application/x-www-form-urlencoded"}

client = Client(
    "xvz1evFS4wEEPTGEFPHBog",
    client_secret="kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
    resource_owner_key="370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb",
    resource_owner_secret="LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE",
    nonce="kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg",
    timestamp="1318622958",
)


def sign():
    return client.sign(URL, http_method="POST", body=BODY, headers=HEADERS)


_, headers, _ = sign()
if 'oauth_signature="hCtSmYh%2BiHYCEqBWrE7C7hYmtUk%3D"' not in headers["Authorization"]:
    sys.exit("oauthlib produced an unexpected signature: " + headers["Authorization"])

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
count = 0
start = time.perf_counter()
deadline = start + seconds
while time.perf_counter() < deadline:
    for _ in range(100):
        sign()
    count += 100
elapsed = time.perf_counter() - start
print("%.0f" % (count / elapsed))
sys.stderr.write("oauthlib: %d signatures in %.2f s\n" % (count, elapsed))
