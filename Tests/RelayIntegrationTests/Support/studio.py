#!/usr/bin/env python3
"""Makes a sticker in the studio with a real headless Chromium, as a streamer would, over the
DevTools protocol.

  studio.py URL PICTURE NAME STREAM SCREENSHOT.png

Opens the studio on its built-in portrait, uploads PICTURE through the file input, makes it follow
the nose, drags it with the mouse so that its centre sits on the nose tip (landmark 30), saves it as
NAME, takes a screenshot, wears it on STREAM, and prints one JSON line: the sticker.json the page
sent, the result line, and where the picture's centre ended up against the nose tip (face pixels).
Exits 1 with the page's state when a step times out.
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

url, picture, name, stream, screenshot = sys.argv[1:6]
browser = shutil.which("chromium") or shutil.which("chromium-browser")
if browser is None:
    sys.exit("chromium is not installed: apt-get install chromium (deploy/install-deps.sh installs it)")
profile = tempfile.mkdtemp(prefix="facerelay-chromium-")
port_file = os.path.join(profile, "DevToolsActivePort")
chromium = subprocess.Popen(
    [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-port=0",
     f"--user-data-dir={profile}", "--window-size=1280,1000", "about:blank"],
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
        result = call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    def wait(description, expression, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            value = evaluate(expression)
            if value:
                return value
            time.sleep(0.25)
        fail(f"timed out waiting for {description}; page: " + str(evaluate("document.body.innerText.slice(0, 1500)")))

    def mouse(kind, x, y):
        call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", buttons=1 if kind != "mouseReleased" else 0, clickCount=1)

    call("Page.enable")
    call("Page.navigate", url=url)
    wait("the portrait with its landmarks", "typeof face !== 'undefined' && face !== null && face.landmarks !== null && face.landmarks.length === 68", 60)
    wait("the stream in the wear list", f"[...document.getElementById('wear-stream').options].some(o => o.value === {json.dumps(stream)})", 30)

    document = call("DOM.getDocument")
    node = call("DOM.querySelector", nodeId=document["root"]["nodeId"], selector="#picture-file")
    call("DOM.setFileInputFiles", files=[picture], nodeId=node["nodeId"])
    wait("the picture in the item list", "items.length === 1 && items[0].image.complete", 30)
    evaluate("(() => { const f = document.getElementById('follows'); f.value = 'nose'; f.dispatchEvent(new Event('input')); })()")

    # Screen points (CSS pixels) of a face point, and the picture's centre and the nose tip.
    to_screen = """(point => { const box = stage.getBoundingClientRect();
        const fit = Math.min(stage.width / face.width, stage.height / face.height);
        const x = point[0] * fit + (stage.width - face.width * fit) / 2, y = point[1] * fit + (stage.height - face.height * fit) / 2;
        return [box.left + x * box.width / stage.width, box.top + y * box.height / stage.height]; })"""
    centre = """(() => { const m = placement(items[0]), u = items[0].width / 2, v = items[0].height / 2;
        return [m[0] * u + m[2] * v + m[4], m[1] * u + m[3] * v + m[5]]; })()"""
    start = evaluate(f"{to_screen}({centre})")
    target = evaluate(f"{to_screen}(face.landmarks[30])")
    mouse("mousePressed", start[0], start[1])
    steps = 12
    for step in range(1, steps + 1):
        mouse("mouseMoved", start[0] + (target[0] - start[0]) * step / steps, start[1] + (target[1] - start[1]) * step / steps)
        time.sleep(0.02)
    mouse("mouseReleased", target[0], target[1])
    placed = evaluate(f"(() => {{ const c = {centre}, n = face.landmarks[30]; return [c[0] - n[0], c[1] - n[1]]; }})()")

    evaluate(f"document.getElementById('name').value = {json.dumps(name)}")
    sent = evaluate("JSON.stringify(stickerJSON())")
    evaluate("document.getElementById('save').click()")
    result = wait("the save's result", "(() => { const t = document.getElementById('result').textContent; return t && t !== 'saving…' ? t : null; })()", 60)
    if not result.startswith("saved"):
        fail(f"not saved: {result}")
    evaluate("document.getElementById('show-landmarks').checked = true; draw()")
    shot = call("Page.captureScreenshot", format="png")
    with open(screenshot, "wb") as out:
        out.write(base64.b64decode(shot["data"]))
    evaluate(f"document.getElementById('wear-stream').value = {json.dumps(stream)}")
    evaluate("document.getElementById('wear').click()")
    worn = wait("the stream to wear it", f"(() => {{ const t = document.getElementById('result').textContent; return t.includes('now wears') || t.startsWith('cannot') ? t : null; }})()", 30)
    print(json.dumps({"sticker": json.loads(sent), "saved": result, "worn": worn, "worn_at": time.time(), "offset": placed}))
finally:
    chromium.terminate()
    try:
        chromium.wait(10)
    except subprocess.TimeoutExpired:
        chromium.kill()
    shutil.rmtree(profile, ignore_errors=True)
