#!/usr/bin/env python3
"""Turns the interop suite's output into a Markdown table: feature x peer -> result.

    Tests/Interop/run --no-table | python3 Tests/Interop/table.py

Reads `PASS name`, `FAIL name: reason` and `SKIP name: reason` lines (anything
else is ignored). Each scenario proves one or more (peer, feature) cells, listed
in CELLS; a scenario not listed there is shown as peer.feature from its name.
A cell is "pass" when every scenario behind it passed, "**FAIL**" when one
failed, "skipped" when all were skipped, and empty where the peer has no such
feature or it is not tested.
"""
import sys

PEERS = ["Authlib", "pyop (OpenID)", "idpyoidc", "Qiita-like", "Instagram-like", "oauthlib (1.0a)"]

LISTENER = "sign-in through the loopback listener (curl as browser)"
CHROMIUM = "sign-in with headless Chromium"
MANUAL = "sign-in with --manual (pasted URL / PIN)"
REQUEST = "authenticated request (`authkit request`)"
OPENID = "OpenID Connect: ID token verified (nonce, keys from jwks_uri), user named"
PYOP = "pyop (OpenID)"

CELLS = {
    "authlib.basic-auth-pkce-iss": [("Authlib", LISTENER), ("Authlib", "client_secret_basic, id/secret needing form-encoding"),
                                    ("Authlib", "PKCE S256 verified by the server"), ("Authlib", "RFC 9207 `iss` checked"),
                                    ("Authlib", REQUEST)],
    "authlib.client-secret-post": [("Authlib", "client_secret_post")],
    "authlib.openid-id-token": [("Authlib", OPENID)],
    "authlib.openid-wrong-audience-refused": [("Authlib", "OpenID Connect: ID token for another audience refused")],
    "authlib.openid-forged-refused": [("Authlib", "OpenID Connect: ID token signed by an unpublished key, or of another issuer, refused")],
    "pyop.openid-sign-in": [(PYOP, LISTENER), (PYOP, "client_secret_basic"), (PYOP, "PKCE S256 verified by the server"), (PYOP, OPENID),
                            (PYOP, "OpenID Connect without RFC 9207 `iss` in the redirect")],
    "pyop.discovery-openid": [(PYOP, "OpenID Connect discovery: `providers add --issuer` writes the openid part, then sign-in")],
    "pyop.userinfo": [(PYOP, "OpenID Connect UserInfo (`token userinfo`)")],
    "pyop.revoke-names-end-session": [(PYOP, "no revocation endpoint: `token revoke` names the end-session URL")],
    "pyop.openid-algorithm-not-allowed": [(PYOP, "OpenID Connect: ID token in an algorithm the descriptor does not allow refused")],
    "authlib.public-client": [("Authlib", "public client (`none`)")],
    "authlib.refresh-rotation": [("Authlib", "refresh before a request, rotated refresh token saved")],
    "authlib.invalid-token-refreshed-and-retried": [("Authlib", "401 `invalid_token`: refreshed once, request sent again")],
    "authlib.revocation": [("Authlib", "revocation (`token revoke`)")],
    "authlib.consent-denied": [("Authlib", "denied consent: exit 3, nothing stored")],
    "authlib.metadata-rfc8414": [("Authlib", "RFC 8414 metadata agrees with the descriptor")],
    "authlib.discovery-add": [("Authlib", "RFC 8414 discovery: `providers add --issuer`, then sign-in")],
    "authlib.discovery-refuses-wrong-issuer": [("Authlib", "discovery: metadata naming another issuer refused")],
    "authlib.discovery-no-overwrite": [("Authlib", "discovery: never overwrites without --force")],
    "attack.wrong-state-then-genuine": [("Authlib", "attack: forged `state` ignored, genuine redirect completes")],
    "attack.missing-state-then-genuine": [("Authlib", "attack: redirect without `state` ignored")],
    "attack.error-with-wrong-state": [("Authlib", "attack: error redirect with forged `state` ignored")],
    "attack.iss-of-another-server": [("Authlib", "attack: `iss` of another server rejected")],
    "attack.replayed-redirect": [("Authlib", "attack: replayed redirect after success")],
    "attack.code-from-another-attempt": [("Authlib", "attack: code or redirect of another attempt")],
    "quirks.qiita": [("Qiita-like", LISTENER), ("Qiita-like", "non-RFC token step (JSON body, 201, `token`)"),
                     ("Qiita-like", REQUEST), ("Qiita-like", "revocation (`token revoke`)")],
    "quirks.instagram-manual": [("Instagram-like", MANUAL), ("Instagram-like", "follow-up exchange (long-lived token)"),
                                ("Instagram-like", REQUEST), ("Instagram-like", "custom refresh (`token refresh`)")],
    "oauthlib.callback": [("oauthlib (1.0a)", LISTENER), ("oauthlib (1.0a)", REQUEST)],
    "oauthlib.pin": [("oauthlib (1.0a)", MANUAL), ("oauthlib (1.0a)", REQUEST)],
    "authlib.device-approve": [("Authlib", "device grant (RFC 8628): approve, polls keep `interval`"),
                               ("Authlib", "device grant: token stored and used by `authkit request`")],
    "authlib.device-deny": [("Authlib", "device grant: denied (exit 3, nothing stored)")],
    "authlib.device-expire": [("Authlib", "device grant: code expires (nothing stored)")],
    "authlib.device-slow-down": [("Authlib", "device grant: slow_down honoured (+5 s)")],
    "authlib.device-only": [("Authlib", "device-only provider (no authorization endpoint): code without --device")],
    "authlib-machine.client-credentials": [("Authlib", "client credentials grant (`authorize --client-credentials`), renewed by asking again")],
    "authlib-machine.private-key-jwt-es256-pem": [("Authlib", "private_key_jwt, ES256 key in PEM: fresh jti, aud = token endpoint")],
    "authlib-machine.private-key-jwt-rs256-pem": [("Authlib", "private_key_jwt, RS256 key in PEM")],
    "authlib-machine.private-key-jwt-jwk": [("Authlib", "private_key_jwt, JWK file with kid (flag and environment)")],
    "authlib-machine.client-secret-jwt": [("Authlib", "client_secret_jwt (HS256)")],
    "authlib-machine.key-readable-by-others-refused": [("Authlib", "private key readable by others: refused before any request")],
    "authlib-machine.token-exchange": [("Authlib", "token exchange (RFC 8693, `token exchange`), stored under a new label and used")],
    "authlib-machine.wrong-key-refused": [("Authlib", "private_key_jwt with another client's key: refused, nothing stored")],
    "idpyoidc.par-dpop-discovered": [("idpyoidc", "PAR + DPoP required: discovered, signed in (nonce answered), `request`, `token refresh`, `token header`")],
    "idpyoidc.nonce-every-answer-bounded": [("idpyoidc", "DPoP nonce that changes at every answer: one retry, then refused")],
    "idpyoidc.bearer-answer-refused": [("idpyoidc", "Bearer answer to a DPoP request: refused, nothing stored")],
    "chromium.oauth2": [("Authlib", CHROMIUM)],
    "chromium.oauth1": [("oauthlib (1.0a)", CHROMIUM)],
    "chromium.openid": [(PYOP, CHROMIUM)],
}

WORDS = {"PASS", "FAIL", "SKIP"}


def parse(lines):
    results = []
    for line in lines:
        word, _, rest = line.strip().partition(" ")
        if word in WORDS and rest:
            results.append((rest.split(":", 1)[0].strip(), word))
    return results


def render(lines):
    cells, features, peers = {}, [], list(PEERS)
    for name, word in parse(lines):
        peer, _, feature = name.partition(".")
        for cell in CELLS.get(name, [(peer, feature or peer)]):
            if cell[0] not in peers:
                peers.append(cell[0])
            if cell[1] not in features:
                features.append(cell[1])
            cells.setdefault(cell, []).append(word)

    def show(words):
        if not words:
            return ""
        if "FAIL" in words:
            return "**FAIL**"
        if all(w == "SKIP" for w in words):
            return "skipped"
        return "pass"

    used = [p for p in peers if any(c[0] == p for c in cells)]
    out = ["| feature | " + " | ".join(used) + " |", "|---|" + "---|" * len(used)]
    for feature in features:
        out.append("| %s | " % feature + " | ".join(show(cells.get((p, feature), [])) for p in used) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    print(render(sys.stdin.read().splitlines()))
