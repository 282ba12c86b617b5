"""The loopback provider (peers/tokenserver) shared by the whole run."""
import json
import select
import subprocess
import urllib.request

from .programs import ProgramFailed, child_environment

# urllib would honour $http_proxy even for 127.0.0.1: an opener with no proxies.
_direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class TokenServer:
    """Starts tokenserver, learns its port from its first line, stops it on exit."""

    def __init__(self, binary):
        self.process = subprocess.Popen([binary], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        env=child_environment())
        ready, _, _ = select.select([self.process.stdout], [], [], 10)
        line = self.process.stdout.readline() if ready else b""
        try:
            self.port = int(json.loads(line)["port"])
        except (ValueError, KeyError, TypeError):
            self.stop()
            raise ProgramFailed("tokenserver did not announce its port (got %r)" % line) from None
        self.base = "http://127.0.0.1:%d" % self.port
        self.authorize_url = self.base + "/authorize"
        self.token_url = self.base + "/token"

    def handler_ns(self):
        """Total nanoseconds spent so far inside the /authorize and /token handlers."""
        with _direct.open(self.base + "/stats", timeout=10) as answer:
            return int(json.load(answer)["handler_ns"])

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
