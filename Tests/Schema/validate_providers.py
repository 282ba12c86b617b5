#!/usr/bin/env python3
"""Validates providers/*.json against providers/schema.json (JSON Schema 2020-12),
and checks the schema on the few rules no bundled file exercises.

The Swift loader is the authority on what AuthKit accepts; this check keeps the
published schema honest: every bundled descriptor must satisfy it, and the
schema itself must be a valid 2020-12 schema.
"""
import json
import pathlib
import sys

import jsonschema

root = pathlib.Path(__file__).resolve().parents[2] / "providers"


def unique_members(pairs):
    """Refuses a name given twice in one object, as AuthKit's loader does
    (RFC 8259 §4: readers disagree on which one counts)."""
    names = [name for name, _ in pairs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"{', '.join(repeated)} given twice in one object")
    return dict(pairs)


schema = json.loads((root / "schema.json").read_text(encoding="utf-8"), object_pairs_hook=unique_members)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

passed = failed = 0
for path in sorted(root.glob("*.json")):
    if path.name == "schema.json":
        continue
    try:
        document = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=unique_members)
    except ValueError as error:
        failed += 1
        print(f"FAIL {path.name}: {error}")
        continue
    errors = list(validator.iter_errors(document))
    if errors:
        failed += 1
        for error in errors:
            location = ".".join(str(p) for p in error.absolute_path) or "(document)"
            print(f"FAIL {path.name}: {location}: {error.message}")
    else:
        passed += 1
        print(f"PASS {path.name}")

# Rules no bundled file exercises, held to what the Swift loader accepts
# (DescriptorTests.authorizationMayBeLeftOutOnlyForADeviceOnlyProvider).
base = {"id": "x", "protocol": "oauth2", "token": {"url": "https://x.example/token"}}
cases = [
    ("a device-only OAuth 2.0 descriptor (device, no authorization)", {**base, "device": {"url": "https://x.example/device"}}, True),
    ("an OAuth 2.0 descriptor with neither authorization nor device", base, False),
    ("an OAuth 2.0 descriptor with authorization and no device", {**base, "authorization": {"url": "https://x.example/a"}}, True),
    # DescriptorTests.userInfoInAnEndpointIsRejected
    ("an endpoint with a user name and password", {**base, "token": {"url": "https://me:pw@x.example/token"}, "device": {"url": "https://x.example/d"}}, False),
    ("an endpoint with an @ in its query", {**base, "token": {"url": "https://x.example/token?u=@x"}, "device": {"url": "https://x.example/d"}}, True),
    # DescriptorTests.aHostIsWrittenAsTheNameRequestsGoTo
    ("a host with a look-alike letter", {**base, "token": {"url": "https://g\u0456thub.com/token"}, "device": {"url": "https://x.example/d"}}, False),
    ("a percent-encoded host", {**base, "token": {"url": "https://github.com%2eevil.example/token"}, "device": {"url": "https://x.example/d"}}, False),
    ("an IDNA host, a port, a placeholder, an IP literal", {**base, "token": {"url": "https://xn--bcher-kva.de:8443/t"}, "device": {"url": "https://{host}.x_y.example"}, "revocation": {"url": "https://[::1]:9/r"}}, True),
    # Corpus 56: a port no connection can use is refused when the file is read.
    ("an endpoint port above 65535", {**base, "token": {"url": "https://x.example:99999/t"}, "device": {"url": "https://x.example/d"}}, False),
    ("an endpoint port 0", {**base, "token": {"url": "https://x.example:0/t"}, "device": {"url": "https://x.example/d"}}, False),
    ("an endpoint port that is no number", {**base, "token": {"url": "https://x.example:ab/t"}, "device": {"url": "https://x.example/d"}}, False),
    ("a loopback port above 65535", {**base, "token": {"url": "http://127.0.0.1:70000/t"}, "device": {"url": "https://x.example/d"}}, False),
    ("the highest ports", {**base, "token": {"url": "https://x.example:65535/t"}, "device": {"url": "http://localhost:65535/d"}}, True),
    # ScopeTokenTests / DescriptorTests.scopesThatAreNotScopeTokensAreNamed (RFC 6749 §3.3)
    ("scopes that are scope tokens", {**base, "device": {"url": "https://x.example/d"}, "scopes": {"default": ["openid", "https://x.example/auth/read", "a!#$%&'()*+,-./[]^_`{|}~"], "known": ["read:user"]}}, True),
    ("a default scope holding a space", {**base, "device": {"url": "https://x.example/d"}, "scopes": {"default": ["openid profile"]}}, False),
    ("an empty known scope", {**base, "device": {"url": "https://x.example/d"}, "scopes": {"known": [""]}}, False),
    ("a scope with a quote", {**base, "device": {"url": "https://x.example/d"}, "scopes": {"known": ['a"b']}}, False),
    ("a scope with a non-ASCII letter", {**base, "device": {"url": "https://x.example/d"}, "scopes": {"known": ["caf\u00e9"]}}, False),
    # Corpus 48: a public client authenticates with its id alone or with Basic and an empty password.
    ("public clients sending basic", {**base, "device": {"url": "https://x.example/d"}, "token": {"url": "https://x.example/token", "publicClientAuthentication": "basic"}}, True),
    ("public clients sending post", {**base, "device": {"url": "https://x.example/d"}, "token": {"url": "https://x.example/token", "publicClientAuthentication": "post"}}, False),
    # Corpus 50, 52: the scopes' parameter is the provider's, never one AuthKit sets.
    ("scopes in user_scope, and in the device grant's scopes", {**base, "authorization": {"url": "https://x.example/a", "scopeParameter": "user_scope"}, "device": {"url": "https://x.example/d", "scopeParameter": "scopes", "sendScopesWhenPolling": True}}, True),
    ("scopes in the state parameter", {**base, "authorization": {"url": "https://x.example/a", "scopeParameter": "state"}}, False),
    ("device scopes in client_id", {**base, "device": {"url": "https://x.example/d", "scopeParameter": "client_id"}}, False),
    # Corpus 55: OAuth 1.0a token calls are POST (the default) or GET.
    ("oauth1 token calls by GET", {"id": "x", "name": "X", "protocol": "oauth1", "oauth1": {"requestTokenURL": "https://x.example/r", "authorizeURL": "https://x.example/a", "accessTokenURL": "https://x.example/t", "requestTokenMethod": "GET", "accessTokenMethod": "GET"}}, True),
    ("an oauth1 token call by PUT", {"id": "x", "name": "X", "protocol": "oauth1", "oauth1": {"requestTokenURL": "https://x.example/r", "authorizeURL": "https://x.example/a", "accessTokenURL": "https://x.example/t", "accessTokenMethod": "PUT"}}, False),
]
for name, document, valid in cases:
    if validator.is_valid(document) == valid:
        passed += 1
        print(f"PASS {name}: {'valid' if valid else 'invalid'}")
    else:
        failed += 1
        print(f"FAIL {name}: should be {'valid' if valid else 'invalid'}")
print(f"schema: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
