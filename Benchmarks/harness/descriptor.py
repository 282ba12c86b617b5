"""The AUTHKIT_HOME that `authkit authorize --provider bench` signs in with:
providers/bench.json, an OAuth 2.0 descriptor (docs/providers.md;
providers/schema.json) for the tokenserver."""
import json
import os
import tempfile


def bench_descriptor(base_url):
    """Written out with the same choices the x/oauth2 peer is configured with."""
    return {
        "id": "bench",
        "name": "Benchmark tokenserver",
        "protocol": "oauth2",
        "_comment": "Written by Benchmarks/run-benchmarks for Benchmarks/peers/tokenserver.",
        # No port: the loopback listener picks any free one (RFC 8252 §7.3),
        # as the x/oauth2 peer's does.
        "redirect": {"host": "127.0.0.1", "path": "/callback"},
        "authorization": {"url": base_url + "/authorize"},
        # client_secret_post, as x/oauth2's AuthStyleInParams.
        "token": {"url": base_url + "/token", "clientAuthentication": "post"},
        "scopes": {"default": ["read", "write"]},
        "pkce": "S256",
    }


def make_home(base_url):
    """A fresh AUTHKIT_HOME directory containing providers/bench.json; the
    caller removes it. Credentials the sign-ins store land here too."""
    home = tempfile.mkdtemp(prefix="authkit-bench-home-")
    os.makedirs(os.path.join(home, "providers"), mode=0o700)
    with open(os.path.join(home, "providers", "bench.json"), "w") as f:
        json.dump(bench_descriptor(base_url), f, indent=2)
        f.write("\n")
    return home


def make_print_homes(base_url):
    """For token-print: an AUTHKIT_HOME holding one unexpired credential for
    bench, and a GH_CONFIG_DIR whose hosts.yml holds a token, as each tool
    keeps one after a sign-in. Returns (authkit_home, gh_config); the caller
    removes both."""
    home = make_home(base_url)
    credential = {"providerID": "bench", "kind": "oauth2", "accessToken": "bench-print-token", "tokenType": "Bearer",
                  "expiresAt": "2099-01-01T00:00:00Z", "scopes": ["read"], "obtainedAt": "2026-01-01T00:00:00Z",
                  "rawFields": {}}
    path = os.path.join(home, "credentials.json")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
        json.dump({"version": 1, "credentials": [credential]}, f)
    gh = tempfile.mkdtemp(prefix="authkit-bench-gh-")
    with open(os.open(os.path.join(gh, "hosts.yml"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
        f.write("github.com:\n    oauth_token: gho_benchprinttoken\n    user: bench\n    git_protocol: https\n")
    return home, gh
