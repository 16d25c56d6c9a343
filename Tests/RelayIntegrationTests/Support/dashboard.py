#!/usr/bin/env python3
"""Drives the dashboard in a real headless Chromium over the DevTools protocol.

  dashboard.py URL STREAMS CLICK_STREAM CLICK_STICKER SCREENSHOT.png

Waits (bounded) until the page shows every stream of STREAMS (comma-separated) with a loaded
thumbnail and the sticker picker, takes a screenshot, clicks CLICK_STICKER in CLICK_STREAM's picker,
waits until the page marks it as that stream's sticker, and prints what it saw as one JSON line.
Exits 1 with the page's state when a step times out.
"""
import json
import sys
import time

from chromium import Chromium, fail

url, streams, click_stream, click_sticker, screenshot = sys.argv[1:6]
streams = streams.split(",")

with Chromium(window="1280,900") as page:
    page.call("Page.navigate", url=url)
    cards = json.dumps(streams)
    seen = page.wait("every stream with its thumbnail and picker", f"""(() => {{
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
                outputs: found.map(card => [...card.querySelectorAll('table.outputs tr')].map(row => row.dataset.state)),
                ingest: found.map(card => [...card.querySelectorAll('.figures span')].find(span => span.textContent.startsWith('ingest '))?.querySelector('b').textContent ?? '')}};
    }})()""", 60)
    # Let a few seconds of figures draw the CPU charts before the picture is taken.
    time.sleep(4)
    page.screenshot(screenshot)
    clicked = page.evaluate(f"""(() => {{
        const button = document.querySelector(`article.stream[data-stream="{click_stream}"] .picker button[data-sticker="{click_sticker}"]`);
        if (!button) return false;
        button.click();
        return true;
    }})()""")
    if not clicked:
        fail(f"no {click_sticker} button for {click_stream}")
    clicked_at = time.time()
    page.wait("the page to show the new sticker", f"""(() => {{
        const button = document.querySelector(`article.stream[data-stream="{click_stream}"] .picker button.current`);
        return button && button.dataset.sticker === "{click_sticker}";
    }})()""", 15)
    seen["clicked_at"] = clicked_at
    seen["shown_after_s"] = round(time.time() - clicked_at, 2)
    print(json.dumps(seen))
