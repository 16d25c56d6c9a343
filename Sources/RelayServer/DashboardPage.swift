/// The dashboard: one page with its style and script inline (no build step, no external assets,
/// works offline, readable on a phone). It speaks the control protocol over `/api/control`.
enum DashboardPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>FaceRelay</title>
<style>
  :root { color-scheme: dark; --bg: #14161a; --card: #1f2329; --line: #2f353d; --text: #e8eaed; --dim: #9aa0a6; --accent: #f5b700; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.4 system-ui, sans-serif; background: var(--bg); color: var(--text); }
  header { display: flex; align-items: baseline; gap: 1rem; padding: .8rem 1rem; border-bottom: 1px solid var(--line); }
  header h1 { margin: 0; font-size: 1.2rem; }
  #connection { color: var(--dim); font-size: .9rem; }
  main { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); gap: 1rem; padding: 1rem; }
  .stream { background: var(--card); border: 1px solid var(--line); border-radius: 10px; overflow: hidden; }
  .stream img.thumb { display: block; width: 100%; aspect-ratio: 16 / 9; object-fit: contain; background: #000; }
  .stream .body { padding: .6rem .8rem; }
  .stream h2 { margin: 0 0 .3rem; font-size: 1.05rem; display: flex; justify-content: space-between; }
  .state { font-size: .8rem; padding: .1rem .45rem; border-radius: 6px; background: var(--line); }
  .state.relaying { background: #1e5631; } .state.reconnecting, .state.starting, .state.awaiting_input { background: #6b4f00; } .state.failed { background: #7a1f1f; }
  .figures { display: grid; grid-template-columns: repeat(3, 1fr); gap: .2rem .6rem; font-size: .85rem; color: var(--dim); }
  .figures b { color: var(--text); font-weight: 600; }
  canvas.cpu { width: 100%; height: 60px; margin-top: .4rem; background: #181b20; border-radius: 6px; }
  .stages { width: 100%; font-size: .78rem; color: var(--dim); border-collapse: collapse; margin-top: .3rem; }
  .stages td { text-align: right; padding: 0 .2rem; } .stages td:first-child { text-align: left; }
  .outputs { width: 100%; font-size: .78rem; border-collapse: collapse; margin-top: .3rem; } .outputs td { padding: .1rem .2rem; } .outputs td:first-child { color: var(--dim); word-break: break-all; }
  .picker { display: flex; flex-wrap: wrap; gap: .35rem; margin-top: .5rem; }
  .picker button { background: #262b32; border: 2px solid transparent; border-radius: 8px; color: var(--text); padding: .2rem; cursor: pointer; display: flex; flex-direction: column; align-items: center; font-size: .7rem; min-width: 58px; }
  .picker button img { width: 48px; height: 48px; object-fit: contain; }
  .picker button.current { border-color: var(--accent); }
  .picker button.builtin { justify-content: center; height: 70px; }
  #events { margin: 0 1rem 1rem; background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: .5rem .8rem; max-height: 220px; overflow-y: auto; font: 12px/1.5 ui-monospace, monospace; color: var(--dim); }
  #events div b { color: var(--text); }
  .empty { color: var(--dim); padding: 2rem 1rem; }
</style>
</head>
<body>
<header><h1>FaceRelay</h1><span id="connection">connecting…</span></header>
<main id="streams"><p class="empty">No stream yet: publish to nginx-rtmp, or start one with <code>facerelay ctl start</code>.</p></main>
<section id="events" aria-label="events"></section>
<script>
"use strict";
const streamsBox = document.getElementById("streams");
const eventsBox = document.getElementById("events");
const connection = document.getElementById("connection");
const cards = new Map();
let stickers = [];
let socket;
let nextId = 1;
const pending = new Map();

function element(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "text") node.textContent = value; else node.setAttribute(key, value);
  }
  for (const child of children) node.appendChild(child);
  return node;
}

function request(command, fields = {}) {
  const id = nextId++;
  socket.send(JSON.stringify(Object.assign({ id, command }, fields)));
  return new Promise(resolve => pending.set(id, resolve));
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  socket = new WebSocket(`${scheme}//${location.host}/api/control${location.search}`);
  socket.onopen = async () => {
    connection.textContent = "live";
    const reply = await request("stickers");
    if (reply.ok) { stickers = reply.result.stickers.map(s => s.name); cards.forEach(card => buildPicker(card)); }
  };
  socket.onclose = () => { connection.textContent = "disconnected, retrying…"; setTimeout(connect, 2000); };
  socket.onmessage = message => {
    const data = JSON.parse(message.data);
    if (data.id === "figures" && data.ok) return showFigures(data.result);
    if (data.id !== undefined && pending.has(data.id)) { pending.get(data.id)(data); pending.delete(data.id); return; }
    if (data.event) showEvent(data);
  };
}

function showEvent(event) {
  if (event.event === "stats") return;
  const text = event.event === "expression" ? `${event.stream} face ${event.face}: ${event.expression} ${event.state || (event.started ? "start" : "end")}`
    : event.event === "sticker" ? `${event.stream}: sticker ${event.sticker}`
    : event.event === "stream" ? `${event.stream}: ${event.state}${event.reason ? " (" + event.reason + ")" : ""}`
    : event.event === "output" ? `${event.stream} output ${event.output} (${event.address}): ${event.state}${event.reason ? " (" + event.reason + ")" : ""}`
    : JSON.stringify(event);
  const line = element("div", {}, [element("b", { text: new Date().toLocaleTimeString() + " " }), document.createTextNode(text)]);
  eventsBox.prepend(line);
  while (eventsBox.childElementCount > 100) eventsBox.lastElementChild.remove();
}

function buildPicker(card) {
  const picker = card.picker;
  picker.replaceChildren();
  for (const name of ["none", "landmarks", ...stickers]) {
    const builtin = name === "none" || name === "landmarks";
    const button = element("button", { type: "button", "data-sticker": name, title: name, class: builtin ? "builtin" : "" },
      builtin ? [document.createTextNode(name)] : [element("img", { src: `/api/stickers/${encodeURIComponent(name)}/preview.png${location.search}`, alt: name }), element("span", { text: name })]);
    button.addEventListener("click", async () => {
      const reply = await request("set-sticker", { stream: card.id, sticker: name });
      if (!reply.ok) showEvent({ event: "error", text: reply.error.message });
    });
    picker.appendChild(button);
  }
  markSticker(card);
}

function markSticker(card) {
  for (const button of card.picker.querySelectorAll("button")) button.classList.toggle("current", button.dataset.sticker === card.sticker);
}

function makeCard(id) {
  const thumb = element("img", { class: "thumb", alt: `${id} output` });
  const state = element("span", { class: "state" });
  const figures = element("div", { class: "figures" });
  const chart = element("canvas", { class: "cpu", width: 320, height: 60 });
  const stages = element("table", { class: "stages" });
  const outputs = element("table", { class: "outputs" });
  const picker = element("div", { class: "picker" });
  const root = element("article", { class: "stream", "data-stream": id }, [thumb, element("div", { class: "body" }, [
    element("h2", {}, [element("span", { text: id }), state]), figures, chart, stages, outputs, picker])]);
  const card = { id, root, thumb, state, figures, chart, stages, outputs, picker, history: [], previous: null, sticker: null, loading: false };
  thumb.addEventListener("load", () => { card.loading = false; });
  thumb.addEventListener("error", () => { card.loading = false; });
  buildPicker(card);
  return card;
}

function refreshThumbnail(card) {
  if (card.loading || document.hidden) return;
  card.loading = true;
  const query = new URLSearchParams(location.search);
  query.set("n", Date.now());
  card.thumb.src = `/api/streams/${encodeURIComponent(card.id)}/thumbnail.jpg?${query}`;
}

const stageNames = ["decode", "track", "composite", "relay", "encode", "mux"];

function showFigures(result) {
  const seen = new Set();
  for (const stream of result.streams) {
    seen.add(stream.stream);
    let card = cards.get(stream.stream);
    if (!card) {
      card = makeCard(stream.stream);
      cards.set(stream.stream, card);
      if (cards.size === 1) streamsBox.replaceChildren();
      streamsBox.appendChild(card.root);
    }
    card.state.textContent = stream.state;
    card.state.className = "state " + stream.state;
    if (card.sticker !== stream.sticker) { card.sticker = stream.sticker; markSticker(card); }
    const overhead = stream.sticker_overhead || {};
    const cells = [["fps", stream.fps.toFixed(1)], ["faces", stream.faces ?? "-"], ["dropped", stream.frames_dropped],
      ["ingest", `${(stream.ingest_bitrate_kbps ?? 0).toFixed(0)} kbit/s`],
      ["stickers", `${(overhead.percent_of_core ?? 0).toFixed(1)}% core`], ["vs transcode", `${(overhead.ratio_to_decode_encode ?? 0).toFixed(2)}×`],
      ["memory", `${(stream.stream_memory_mb ?? 0).toFixed(0)} MB`]];
    card.figures.replaceChildren(...cells.map(([label, value]) => element("span", {}, [document.createTextNode(label + " "), element("b", { text: String(value) })])));
    const stages = stream.stages || {};
    card.stages.replaceChildren(
      element("tr", {}, [element("td", { text: "ms/frame" }), ...stageNames.map(name => element("td", { text: name }))]),
      element("tr", {}, [element("td", { text: "" }), ...stageNames.map(name => element("td", { text: (stages[name]?.ms_per_frame ?? 0).toFixed(2) }))]));
    // One row per output: where it goes (masked), its state, its bitrate since the stream began, what it missed.
    card.outputs.replaceChildren(...(stream.outputs || []).map(output => element("tr", { "data-state": output.state }, [
      element("td", { text: output.address }), element("td", { class: "state " + (output.state === "sending" ? "relaying" : output.state), text: output.state }),
      element("td", { text: `${(output.bitrate_kbps ?? 0).toFixed(0)} kbit/s` }), element("td", { text: `${output.frames_missed ?? 0} missed` })])));
    const total = stageNames.reduce((sum, name) => sum + (stages[name]?.cpu_s ?? 0), 0);
    const now = performance.now() / 1000;
    if (card.previous) card.history.push(Math.max(0, (total - card.previous.total) / (now - card.previous.at) * 100));
    card.previous = { total, at: now };
    if (card.history.length > 120) card.history.shift();
    drawChart(card);
    refreshThumbnail(card);
  }
  for (const [id, card] of cards) if (!seen.has(id)) { card.root.remove(); cards.delete(id); }
}

function drawChart(card) {
  const context = card.chart.getContext("2d");
  const { width, height } = card.chart;
  context.clearRect(0, 0, width, height);
  const top = Math.max(100, ...card.history);
  context.strokeStyle = "#f5b700";
  context.beginPath();
  card.history.forEach((value, index) => {
    const x = width - (card.history.length - 1 - index) * (width / 120);
    const y = height - value / top * (height - 4) - 2;
    index === 0 ? context.moveTo(x, y) : context.lineTo(x, y);
  });
  context.stroke();
  context.fillStyle = "#9aa0a6";
  context.font = "11px sans-serif";
  context.fillText(`CPU ${(card.history.at(-1) ?? 0).toFixed(0)}% of a core`, 6, 13);
}

connect();
</script>
</body>
</html>
"""#

    static func login(failed: Bool) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>FaceRelay: log in</title><style>body{font:16px system-ui,sans-serif;background:#14161a;color:#e8eaed;display:grid;place-items:center;min-height:90vh}
        form{display:flex;flex-direction:column;gap:.6rem;min-width:260px}input,button{font:inherit;padding:.5rem}</style></head>
        <body><form method="post" action="/login"><h1>FaceRelay</h1>
        \(failed ? "<p>That token is not this relay's.</p>" : "<p>This relay needs its dashboard token.</p>")
        <input type="password" name="token" placeholder="token" autofocus required><button>Log in</button></form></body></html>
        """
    }
}
