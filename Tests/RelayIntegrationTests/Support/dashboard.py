#!/usr/bin/env python3
"""Drives the dashboard in a real headless Chromium over the DevTools protocol.

  dashboard.py URL STREAMS CLICK_STREAM CLICK_STICKER SCREENSHOT.png

Waits (bounded) until the page shows every stream of STREAMS (comma-separated) with a loaded
thumbnail and the sticker picker, takes a screenshot, clicks CLICK_STICKER in CLICK_STREAM's picker,
waits until the page marks it as that stream's sticker, and prints what it saw as one JSON line.
Exits 1 with the page's state when a step times out.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket  # Debian's python3-websocket

url, streams, click_stream, click_sticker, screenshot = sys.argv[1:6]
streams = streams.split(",")
browser = shutil.which("chromium") or shutil.which("chromium-browser")
if browser is None:
    sys.exit("chromium is not installed: apt-get install chromium (deploy/install-deps.sh installs it)")
profile = tempfile.mkdtemp(prefix="facerelay-chromium-")
port_file = os.path.join(profile, "DevToolsActivePort")
chromium = subprocess.Popen(
    [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-port=0",
     f"--user-data-dir={profile}", "--window-size=1280,900", "about:blank"],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def fail(message):
    print(json.dumps({"error": message}))
    sys.exit(1)


try:
    deadline = time.time() + 60
    while not os.path.exists(port_file) or not open(port_file).read().strip():
        if time.time() > deadline or chromium.poll() is not None:
            fail("chromium did not start")
        time.sleep(0.1)
    port = open(port_file).read().split()[0]
    targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
    page = next(target for target in targets if target["type"] == "page")
    socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30)
    counter = 0

    def call(method, **params):
        global counter
        counter += 1
        socket.send(json.dumps({"id": counter, "method": method, "params": params}))
        while True:
            reply = json.loads(socket.recv())
            if reply.get("id") == counter:
                if "error" in reply:
                    fail(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def evaluate(expression):
        result = call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def wait(description, expression, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            value = evaluate(expression)
            if value:
                return value
            time.sleep(0.25)
        fail(f"timed out waiting for {description}; page: " + str(evaluate("document.body.innerText.slice(0, 1500)")))

    call("Page.enable")
    call("Page.navigate", url=url)
    cards = json.dumps(streams)
    seen = wait("every stream with its thumbnail and picker", f"""(() => {{
        const wanted = {cards};
        const found = wanted.map(id => document.querySelector(`article.stream[data-stream="${{id}}"]`));
        if (found.some(card => !card)) return null;
        const thumbs = found.map(card => card.querySelector('img.thumb'));
        if (thumbs.some(img => !img.complete || img.naturalWidth === 0)) return null;
        if (found.some(card => card.querySelectorAll('.picker button img').length === 0)) return null;
        if (found.some(card => card.querySelectorAll('table.outputs tr').length === 0)) return null;
        if (found.some(card => card.querySelectorAll('.picker img').length !== [...card.querySelectorAll('.picker img')].filter(i => i.complete && i.naturalWidth > 0).length)) return null;
        return {{cards: document.querySelectorAll('article.stream').length,
                thumbnails: thumbs.map(img => [img.naturalWidth, img.naturalHeight]),
                stickers: [...found[0].querySelectorAll('.picker button')].map(b => b.dataset.sticker),
                outputs: found.map(card => [...card.querySelectorAll('table.outputs tr')].map(row => row.dataset.state))}};
    }})()""", 60)
    # Let a few seconds of figures draw the CPU charts before the picture is taken.
    time.sleep(4)
    shot = call("Page.captureScreenshot", format="png")
    import base64
    with open(screenshot, "wb") as out:
        out.write(base64.b64decode(shot["data"]))
    clicked = evaluate(f"""(() => {{
        const button = document.querySelector(`article.stream[data-stream="{click_stream}"] .picker button[data-sticker="{click_sticker}"]`);
        if (!button) return false;
        button.click();
        return true;
    }})()""")
    if not clicked:
        fail(f"no {click_sticker} button for {click_stream}")
    clicked_at = time.time()
    wait("the page to show the new sticker", f"""(() => {{
        const button = document.querySelector(`article.stream[data-stream="{click_stream}"] .picker button.current`);
        return button && button.dataset.sticker === "{click_sticker}";
    }})()""", 15)
    seen["clicked_at"] = clicked_at
    seen["shown_after_s"] = round(time.time() - clicked_at, 2)
    print(json.dumps(seen))
finally:
    chromium.terminate()
    try:
        chromium.wait(10)
    except subprocess.TimeoutExpired:
        chromium.kill()
    shutil.rmtree(profile, ignore_errors=True)
