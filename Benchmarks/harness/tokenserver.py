"""The loopback provider (peers/tokenserver) shared by the whole run."""
import json
import select
import subprocess
import urllib.request

from .programs import ProgramFailed, child_environment

# urllib would honour $http_proxy even for 127.0.0.1: an opener with no proxies.
_direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class TokenServer:
    """Starts tokenserver, learns its ports from its first line, stops it on
    exit. ca_file: where it writes the certificate of the throwaway
    authority its TLS port's certificate comes from (the TLS rows trust it
    through SSL_CERT_FILE)."""

    def __init__(self, binary, ca_file):
        self.ca_file = ca_file
        self.process = subprocess.Popen([binary, "-tls-ca", ca_file], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, env=child_environment())
        ready, _, _ = select.select([self.process.stdout], [], [], 10)
        line = self.process.stdout.readline() if ready else b""
        try:
            announced = json.loads(line)
            self.port, self.tls_port = int(announced["port"]), int(announced["tls_port"])
        except (ValueError, KeyError, TypeError):
            self.stop()
            raise ProgramFailed("tokenserver did not announce its port (got %r)" % line) from None
        self.base = "http://127.0.0.1:%d" % self.port
        self.authorize_url = self.base + "/authorize"
        self.token_url = self.base + "/token"
        self.tls_base = "https://127.0.0.1:%d" % self.tls_port

    def stats(self):
        with _direct.open(self.base + "/stats", timeout=10) as answer:
            return json.load(answer)

    def handler_ns(self):
        """Total nanoseconds spent so far inside the /authorize, /token and /me handlers."""
        return int(self.stats()["handler_ns"])

    def tls_connections(self):
        """Connections the TLS port has accepted so far."""
        return int(self.stats()["tls_connections"])

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
