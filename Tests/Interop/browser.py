#!/usr/bin/env python3
"""A scripted "browser" for the interop suite: `$BROWSER` = "python3 browser.py MODE LOG".

authkit runs it with the authorization URL as the last argument. It asks the
provider for the authorization page without following redirects, reads where
the provider sends the user (the Location: the loopback listener), and then,
depending on MODE, first plays an attacker against the listener before
delivering the genuine redirect:

  follow        deliver the genuine redirect (and record it in LOG for a replay)
  wrong-state   first the redirect with state replaced by a forged one
  no-state      first the redirect without state
  error-state   first an error redirect (access_denied) with a forged state

Each request and the listener's status are appended to LOG as JSON lines.
Only the standard library.
"""
import json
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def get(url):
    try:
        with OPENER.open(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode("utf-8", "replace")


def with_query(url, pairs):
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(pairs), parts.fragment))


def main():
    mode, log, url = sys.argv[1], sys.argv[2], sys.argv[-1]

    def record(kind, target, status, body=""):
        with open(log, "a") as f:
            f.write(json.dumps({"kind": kind, "url": target, "status": status, "body": body[:300]}) + "\n")

    status, headers, _ = get(url)
    location = headers.get("Location") or headers.get("location")
    record("authorize", url, status)
    if not location:
        return 1
    pairs = parse_qsl(urlsplit(location).query, keep_blank_values=True)
    attack = None
    if mode == "wrong-state":
        attack = with_query(location, [(k, "forged-" + v[:8] if k == "state" else v) for k, v in pairs])
    elif mode == "no-state":
        attack = with_query(location, [(k, v) for k, v in pairs if k != "state"])
    elif mode == "error-state":
        iss = [(k, v) for k, v in pairs if k == "iss"]
        attack = with_query(location, [("error", "access_denied"), ("state", "forged-state")] + iss)
    if attack:
        try:
            status, _, body = get(attack)
        except OSError as error:
            status, body = -1, str(error)
        record("attack", attack, status, body)
        time.sleep(0.3)
    try:
        status, _, body = get(location)
    except OSError as error:
        status, body = -1, str(error)
    record("genuine", location, status, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
