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
