"""A webhook receiver for the tests: a real HTTP server that checks each delivery's signature
with Python's own hmac module and appends what it got, one JSON line per request, to a file.
    webhook_receiver.py PORT SECRET LOG"""
import hashlib
import hmac
import http.server
import json
import sys

port, secret, log_path = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3]


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        record = {
            "path": self.path,
            "event": self.headers.get("X-FaceRelay-Event"),
            "content_type": self.headers.get("Content-Type"),
            "signature_valid": hmac.compare_digest(expected, self.headers.get("X-FaceRelay-Signature", "")),
            "body": json.loads(body),
        }
        with open(log_path, "a") as log:
            log.write(json.dumps(record) + "\n")
        self.send_response(204)
        self.end_headers()

    def log_message(self, *arguments):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Receiver).serve_forever()
