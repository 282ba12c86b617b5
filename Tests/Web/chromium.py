"""Headless Chromium driven over the DevTools protocol, with the standard
library only: open a page, wait for a URL, click, read the page. Enough for a
sign-in through a real consent page, which `--dump-dom` cannot click.
"""
import base64
import json
import os
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from urllib.parse import urlsplit


class Chromium:
    def __init__(self, binary):
        self.profile = tempfile.mkdtemp(prefix="authkit-web-chromium-")
        self.process = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--remote-debugging-port=0", "--user-data-dir=" + self.profile, "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        end = time.time() + 30
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            if time.time() > end or self.process.poll() is not None:
                raise RuntimeError("Chromium did not open its DevTools port")
            time.sleep(0.1)
        self.port = int(open(port_file).read().split()[0])
        pages = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % self.port, timeout=10))
        page = next(p for p in pages if p.get("type") == "page")
        self.socket = self._connect(page["webSocketDebuggerUrl"])
        self.next_id = 0

    # -- a WebSocket client (RFC 6455), text frames only, as DevTools speaks

    def _connect(self, url):
        parts = urlsplit(url)
        sock = socket.create_connection((parts.hostname, parts.port), 10)
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                      % (parts.path, parts.hostname, parts.port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(1)
            if not chunk:
                raise RuntimeError("DevTools closed the connection")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("DevTools refused the WebSocket: %r" % head[:100])
        return sock

    def _send(self, text):
        payload = text.encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
        self.socket.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _exactly(self, count):
        data = b""
        while len(data) < count:
            chunk = self.socket.recv(count - len(data))
            if not chunk:
                raise RuntimeError("DevTools closed the connection")
            data += chunk
        return data

    def _receive(self):
        message = b""
        while True:
            first, second = self._exactly(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._exactly(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._exactly(8))[0]
            message += self._exactly(length)
            if first & 0x80:
                return json.loads(message.decode())

    def call(self, method, **params):
        self.next_id += 1
        self._send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            answer = self._receive()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError("%s: %s" % (method, answer["error"]))
                return answer.get("result", {})

    # -- what a test does

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def open(self, url):
        self.call("Page.navigate", url=url)

    def wait_for(self, predicate, timeout=30):
        """Polls the page's URL and text until `predicate(url, text)` holds."""
        end = time.time() + timeout
        url = text = None
        while time.time() < end:
            try:
                url = self.evaluate("location.href")
                text = self.evaluate("document.body ? document.body.innerText : ''")
            except RuntimeError:
                url = text = None  # between two documents
            if url and predicate(url, text or ""):
                return url, text
            time.sleep(0.2)
        raise TimeoutError("the page stayed at %s: %r" % (url, (text or "")[:400]))

    def close(self):
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
