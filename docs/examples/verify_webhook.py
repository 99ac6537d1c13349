"""A Tollgate webhook receiver that verifies every delivery (stdlib only).

Run: WEBHOOK_SECRET=whsec_... python3 verify_webhook.py 8000
"""
import hashlib
import hmac
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

SECRET = os.environ["WEBHOOK_SECRET"].encode()


def verify(secret: bytes, header: str | None, body: bytes) -> bool:
    """True when `header` is `sha256=<hex>` of HMAC-SHA256(secret, body)."""
    if header is None or not header.startswith("sha256="):
        return False  # unsigned, or a scheme this receiver does not accept
    expected = hmac.new(secret, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header[len("sha256="):])


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)  # the raw bytes, before any parsing
        if not verify(SECRET, self.headers.get("X-Service-Signature"), body):
            self.send_response(401)
            self.end_headers()
            return
        event = json.loads(body)  # parse only what was verified
        print(f"verified {event['event']} at {event['timestamp']}", flush=True)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    server = HTTPServer(("127.0.0.1", port), Handler)
    print(f"listening on {server.server_port}", flush=True)
    server.serve_forever()
