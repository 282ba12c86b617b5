"""How every interop peer runs: announce its port, serve, stop with its test.

The test that starts a peer reads the port from its first stdout line and
holds its stdin open; when stdin closes (the test ended or crashed) the peer
exits, so no server outlives the test that started it.
"""
import os
import sys
import threading


def serve_until_stdin_closes(server, port):
    """Prints `port`, then runs `server.serve_forever()` until stdin closes."""
    print(port, flush=True)

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever()
