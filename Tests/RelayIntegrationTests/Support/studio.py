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
import json
import sys
import time

from chromium import Chromium, fail

url, picture, name, stream, screenshot = sys.argv[1:6]

with Chromium(window="1280,1000") as page:
    def mouse(kind, x, y):
        page.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", buttons=1 if kind != "mouseReleased" else 0, clickCount=1)

    page.call("Page.navigate", url=url)
    page.wait("the portrait with its landmarks", "typeof face !== 'undefined' && face !== null && face.landmarks !== null && face.landmarks.length === 68", 60)
    page.wait("the stream in the wear list", f"[...document.getElementById('wear-stream').options].some(o => o.value === {json.dumps(stream)})", 30)

    document = page.call("DOM.getDocument")
    node = page.call("DOM.querySelector", nodeId=document["root"]["nodeId"], selector="#picture-file")
    page.call("DOM.setFileInputFiles", files=[picture], nodeId=node["nodeId"])
    page.wait("the picture in the item list", "items.length === 1 && items[0].image.complete", 30)
    page.evaluate("(() => { const f = document.getElementById('follows'); f.value = 'nose'; f.dispatchEvent(new Event('input')); })()")

    # Screen points (CSS pixels) of a face point, and the picture's centre and the nose tip.
    to_screen = """(point => { const box = stage.getBoundingClientRect();
        const fit = Math.min(stage.width / face.width, stage.height / face.height);
        const x = point[0] * fit + (stage.width - face.width * fit) / 2, y = point[1] * fit + (stage.height - face.height * fit) / 2;
        return [box.left + x * box.width / stage.width, box.top + y * box.height / stage.height]; })"""
    centre = """(() => { const m = placement(items[0]), u = items[0].width / 2, v = items[0].height / 2;
        return [m[0] * u + m[2] * v + m[4], m[1] * u + m[3] * v + m[5]]; })()"""
    start = page.evaluate(f"{to_screen}({centre})")
    target = page.evaluate(f"{to_screen}(face.landmarks[30])")
    mouse("mousePressed", start[0], start[1])
    steps = 12
    for step in range(1, steps + 1):
        mouse("mouseMoved", start[0] + (target[0] - start[0]) * step / steps, start[1] + (target[1] - start[1]) * step / steps)
        time.sleep(0.02)
    mouse("mouseReleased", target[0], target[1])
    placed = page.evaluate(f"(() => {{ const c = {centre}, n = face.landmarks[30]; return [c[0] - n[0], c[1] - n[1]]; }})()")

    page.evaluate(f"document.getElementById('name').value = {json.dumps(name)}")
    sent = page.evaluate("JSON.stringify(stickerJSON())")
    page.evaluate("document.getElementById('save').click()")
    result = page.wait("the save's result", "(() => { const t = document.getElementById('result').textContent; return t && t !== 'saving…' ? t : null; })()", 60)
    if not result.startswith("saved"):
        fail(f"not saved: {result}")
    page.evaluate("document.getElementById('show-landmarks').checked = true; draw()")
    page.screenshot(screenshot)
    page.evaluate(f"document.getElementById('wear-stream').value = {json.dumps(stream)}")
    page.evaluate("document.getElementById('wear').click()")
    worn = page.wait("the stream to wear it", f"(() => {{ const t = document.getElementById('result').textContent; return t.includes('now wears') || t.startsWith('cannot') ? t : null; }})()", 30)
    print(json.dumps({"sticker": json.loads(sent), "saved": result, "worn": worn, "worn_at": time.time(), "offset": placed}))
