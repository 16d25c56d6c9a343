"""A real headless Chromium driven over the DevTools protocol, for the page tests (dashboard.py,
studio.py): started with a profile of its own, one page, and the few calls the tests make.

    with Chromium(window="1280,900") as page:
        page.call("Page.navigate", url=url)
        page.wait("the page", "document.readyState === 'complete'", 30)

A step that fails or times out prints {"error": ...} as one JSON line and exits 1 with the page's
text, so that the Swift test shows what the page showed.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket  # Debian's python3-websocket


def fail(message):
    print(json.dumps({"error": message}))
    sys.exit(1)


class Chromium:
    def __init__(self, window="1280,900"):
        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        if browser is None:
            sys.exit("chromium is not installed: apt-get install chromium (deploy/install-deps.sh installs it)")
        self.profile = tempfile.mkdtemp(prefix="facerelay-chromium-")
        self.process = subprocess.Popen(
            [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", f"--window-size={window}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.counter = 0

    def __enter__(self):
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 60
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            if time.time() > deadline or self.process.poll() is not None:
                fail("chromium did not start")
            time.sleep(0.1)
        port = open(port_file).read().split()[0]
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
        page = next(target for target in targets if target["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30)
        self.call("Page.enable")
        return self

    def __exit__(self, *error):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.profile, ignore_errors=True)
        return False

    def call(self, method, **params):
        self.counter += 1
        self.socket.send(json.dumps({"id": self.counter, "method": method, "params": params}))
        while True:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == self.counter:
                if "error" in reply:
                    fail(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    def wait(self, description, expression, seconds):
        """The expression's value once it is truthy, checked four times a second."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.25)
        fail(f"timed out waiting for {description}; page: " + str(self.evaluate("document.body.innerText.slice(0, 1500)")))

    def screenshot(self, path):
        with open(path, "wb") as out:
            out.write(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))
