/// The sticker studio (`/studio`): make a sticker package from your own pictures in the browser. One
/// page with its style and script inline, like the dashboard. It speaks only documented APIs: the
/// control protocol over `/api/control` (streams, stickers, set-sticker), `/api/streams/ID/face`
/// and `thumbnail.jpg`, `/api/studio/portrait.*`, `/api/stickers/NAME/files/FILE` and
/// `POST /api/stickers`.
///
/// A picture is placed the way FaceRelay places it: a design point pinned to the followed landmarks,
/// scaled and turned by the outer eye corners (36, 45), so what the page shows on a face is what a
/// stream shows.
enum StudioPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>FaceRelay studio</title>
<style>
  :root { color-scheme: dark; --bg: #14161a; --card: #1f2329; --line: #2f353d; --text: #e8eaed; --dim: #9aa0a6; --accent: #f5b700; --bad: #ff8a80; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.4 system-ui, sans-serif; background: var(--bg); color: var(--text); }
  header { display: flex; align-items: baseline; gap: 1rem; padding: .8rem 1rem; border-bottom: 1px solid var(--line); }
  header h1 { margin: 0; font-size: 1.2rem; } header a { color: var(--dim); }
  main { display: grid; grid-template-columns: minmax(320px, 640px) minmax(300px, 1fr); gap: 1rem; padding: 1rem; }
  @media (max-width: 900px) { main { grid-template-columns: 1fr; } }
  #stage { width: 100%; aspect-ratio: 1; background: #000; border-radius: 10px; touch-action: none; cursor: grab; }
  section { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: .6rem .8rem; margin-bottom: .8rem; }
  h2 { font-size: 1rem; margin: 0 0 .4rem; }
  label { display: block; margin: .25rem 0; color: var(--dim); font-size: .9rem; }
  select, input, button { font: inherit; color: var(--text); background: #262b32; border: 1px solid var(--line); border-radius: 6px; padding: .2rem .4rem; }
  button { cursor: pointer; } button.primary { background: var(--accent); color: #111; border-color: var(--accent); font-weight: 600; }
  #items { list-style: none; margin: 0; padding: 0; }
  #items li { display: flex; align-items: center; gap: .4rem; padding: .2rem; border-radius: 6px; cursor: pointer; }
  #items li.selected { outline: 2px solid var(--accent); }
  #items li img { width: 36px; height: 36px; object-fit: contain; background: #111; border-radius: 4px; }
  #items li span { flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  .row { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; }
  #result { white-space: pre-wrap; font-size: .85rem; } #result.bad { color: var(--bad); }
  .hint { color: var(--dim); font-size: .8rem; }
</style>
</head>
<body>
<header><h1>FaceRelay studio</h1><a id="dashboard" href="/">dashboard</a><span id="status" class="hint"></span></header>
<main>
<div>
  <canvas id="stage" width="640" height="640"></canvas>
  <div class="row">
    <label>Face <select id="face"><option value="">built-in portrait</option></select></label>
    <label><input type="checkbox" id="show-landmarks"> landmarks</label>
  </div>
  <p class="hint">Drag a picture to place it; the wheel scales it, shift and the wheel turn it.</p>
</div>
<div>
  <section>
    <h2>Add a picture</h2>
    <label>Your picture (PNG, APNG, GIF, WebP, SVG) <input type="file" id="picture-file" accept=".png,.apng,.gif,.webp,.svg,image/png,image/gif,image/webp,image/svg+xml"></label>
    <div class="row"><label>or from a package <select id="package"><option value="">…</option></select></label>
      <select id="package-picture"></select><button type="button" id="add-package-picture">add</button></div>
  </section>
  <section>
    <h2>Items <span class="hint">(top of the list is drawn first)</span></h2>
    <ul id="items"></ul>
    <div id="item-settings" hidden>
      <div class="row">
        <button type="button" id="item-up">up</button><button type="button" id="item-down">down</button><button type="button" id="item-remove">remove</button>
      </div>
      <label>Follows <select id="follows">
        <option value="eyes">eyes</option><option value="nose">nose</option><option value="mouth">mouth</option>
        <option value="forehead">forehead</option><option value="chin">chin</option><option value="ears">ears</option>
      </select></label>
      <label><input type="checkbox" id="follow3d"> turns with the head in 3D</label>
      <label>Size <input type="range" id="size" min="0.25" max="4" step="0.01"></label>
      <label>Turn <input type="range" id="turn" min="-180" max="180" step="1"></label>
      <label>Shows <select id="begin"></select></label>
      <label>Until <select id="end">
        <option value="">it is switched off</option><option value="expression">the expression ends</option><option value="duration">a time has passed</option>
      </select> <input type="number" id="duration" min="0.1" max="3600" step="0.1" value="2" hidden> </label>
      <label><input type="checkbox" id="loop" checked> an animation loops (off: it plays once, then the item completes)</label>
    </div>
  </section>
  <section>
    <h2>Save</h2>
    <div class="row"><label>Name <input id="name" placeholder="my-sticker" pattern="[A-Za-z0-9._-]+"></label>
      <label><input type="checkbox" id="replace"> replace</label><button type="button" class="primary" id="save">Save</button></div>
    <div class="row"><label>Wear it on <select id="wear-stream"></select></label><button type="button" id="wear">Wear</button></div>
    <div id="result"></div>
  </section>
</div>
</main>
<script>
"use strict";
const $ = id => document.getElementById(id);
const stage = $("stage"), context = stage.getContext("2d");
const query = location.search;
const expressions = ["mouthOpen", "smile", "browRaise", "blinkLeft", "blinkRight", "nod", "shake"];
// Where each choice of "follows" pins the picture's design point (iBUG 68 indices); size and turn
// always come from the outer eye corners, the steadiest pair.
const anchors = { eyes: [36, 39, 42, 45], nose: [30], mouth: [51, 57], forehead: [19, 24], chin: [8], ears: [0, 16] };
const eyeA = 36, eyeB = 45;
let face = null;          // { image, width, height, landmarks, source }
let portrait = null;
let items = [];           // { id, file: {name, blob}, image, width, height, follows, follow3D, designX, designY, size, turn, begin, end, duration, loop }
let selected = -1;
let socket, nextId = 1;
const pending = new Map();
let streamTimer = null;
let animating = false;

function request(command, fields = {}) {
  const id = nextId++;
  socket.send(JSON.stringify(Object.assign({ id, command }, fields)));
  return new Promise(resolve => pending.set(id, resolve));
}

function say(text, bad = false) { $("result").textContent = text; $("result").className = bad ? "bad" : ""; }

function connect() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  socket = new WebSocket(`${scheme}//${location.host}/api/control${query}`);
  socket.onopen = async () => { $("status").textContent = "connected"; await refreshLists(); };
  socket.onclose = () => { $("status").textContent = "disconnected, retrying…"; setTimeout(connect, 2000); };
  socket.onmessage = message => {
    const data = JSON.parse(message.data);
    if (data.id !== undefined && pending.has(data.id)) { pending.get(data.id)(data); pending.delete(data.id); }
  };
}

async function refreshLists() {
  const streams = await request("streams");
  const names = streams.ok ? streams.result.streams.map(s => s.stream) : [];
  for (const select of [$("face"), $("wear-stream")]) {
    const keep = select.value;
    select.replaceChildren(...(select.id === "face" ? [new Option("built-in portrait", "")] : []), ...names.map(n => new Option(n, n)));
    if ([...select.options].some(o => o.value === keep)) select.value = keep;
  }
  const stickers = await request("stickers");
  if (stickers.ok) {
    const keep = $("package").value;
    $("package").replaceChildren(new Option("…", ""), ...stickers.result.stickers.map(s => new Option(s.title + " (" + s.name + ")", s.name)));
    $("package").value = keep;
  }
}

function loadImage(url) {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => resolve(image);
    image.onerror = () => reject(new Error("the browser cannot show " + url));
    image.src = url;
  });
}

async function usePortrait() {
  if (!portrait) {
    const [image, data] = await Promise.all([loadImage("/api/studio/portrait.jpg" + query), fetch("/api/studio/portrait.json" + query).then(r => r.json())]);
    portrait = { image, width: data.width, height: data.height, landmarks: data.landmarks, source: "portrait" };
  }
  face = portrait;
  draw();
}

// A live stream: its thumbnail and its face, four times a second while chosen.
async function followStream(name) {
  clearInterval(streamTimer);
  const refresh = async () => {
    try {
      const response = await fetch(`/api/streams/${encodeURIComponent(name)}/face${query}`);
      const image = await loadImage(`/api/streams/${encodeURIComponent(name)}/thumbnail.jpg${query}${query ? "&" : "?"}t=${Date.now()}`);
      const data = response.ok ? await response.json() : null;
      const scale = data ? image.naturalWidth / data.width : 1;
      face = { image, width: image.naturalWidth, height: image.naturalHeight, source: name,
               landmarks: data ? data.landmarks.map(([x, y]) => [x * scale, y * scale]) : (face && face.source === name ? face.landmarks : null) };
      draw();
    } catch (error) { say(String(error), true); }
  };
  await refresh();
  streamTimer = setInterval(refresh, 250);
}

function mean(indices) {
  let x = 0, y = 0;
  for (const i of indices) { x += face.landmarks[i][0]; y += face.landmarks[i][1]; }
  return [x / indices.length, y / indices.length];
}

// The item's design-to-face transform, as FaceRelay computes it: [a, b, c, d, e, f] with
// x' = a x + c y + e, y' = b x + d y + f (canvas order).
function placement(item) {
  const a = face.landmarks[eyeA], b = face.landmarks[eyeB];
  const eyeAngle = Math.atan2(b[1] - a[1], b[0] - a[0]), eyeDistance = Math.hypot(b[0] - a[0], b[1] - a[1]);
  const angle = eyeAngle + item.turn * Math.PI / 180, scale = eyeDistance * item.size / item.width;
  const [px, py] = mean(anchors[item.follows]);
  const cos = Math.cos(angle) * scale, sin = Math.sin(angle) * scale;
  return [cos, sin, -sin, cos, px - cos * item.designX + sin * item.designY, py - sin * item.designX - cos * item.designY];
}

function draw(target = context, width = stage.width, height = stage.height, showSelection = true) {
  target.setTransform(1, 0, 0, 1, 0, 0);
  target.fillStyle = "#000";
  target.fillRect(0, 0, width, height);
  if (!face) return;
  const fit = Math.min(width / face.width, height / face.height);
  const ox = (width - face.width * fit) / 2, oy = (height - face.height * fit) / 2;
  target.setTransform(fit, 0, 0, fit, ox, oy);
  target.drawImage(face.image, 0, 0, face.width, face.height);
  if (!face.landmarks) return;
  items.forEach((item, index) => {
    const [a, b, c, d, e, f] = placement(item);
    target.setTransform(fit * a, fit * b, fit * c, fit * d, fit * e + ox, fit * f + oy);
    target.drawImage(item.image, 0, 0, item.width, item.height);
    if (showSelection && index === selected) {
      target.strokeStyle = "#f5b700"; target.lineWidth = 2 / (fit * Math.hypot(a, b)); target.setLineDash([8 / (fit * Math.hypot(a, b))]);
      target.strokeRect(0, 0, item.width, item.height); target.setLineDash([]);
    }
  });
  if (showSelection && $("show-landmarks").checked) {
    target.setTransform(fit, 0, 0, fit, ox, oy);
    target.fillStyle = "#4cf";
    for (const [x, y] of face.landmarks) { target.beginPath(); target.arc(x, y, 2 / fit, 0, 2 * Math.PI); target.fill(); }
  }
  // Animated pictures keep moving: one redraw a display frame, however often draw() is called.
  if (target === context && items.some(item => item.animated) && !animating) {
    animating = true;
    requestAnimationFrame(() => { animating = false; draw(); });
  }
}


// Canvas pixels to face pixels.
function facePoint(event) {
  const box = stage.getBoundingClientRect();
  const x = (event.clientX - box.left) * stage.width / box.width, y = (event.clientY - box.top) * stage.height / box.height;
  const fit = Math.min(stage.width / face.width, stage.height / face.height);
  return [(x - (stage.width - face.width * fit) / 2) / fit, (y - (stage.height - face.height * fit) / 2) / fit];
}

function itemAt(point) {
  for (let index = items.length - 1; index >= 0; index--) {
    const [a, b, c, d, e, f] = placement(items[index]);
    const det = a * d - b * c, x = point[0] - e, y = point[1] - f;
    const u = (d * x - c * y) / det, v = (-b * x + a * y) / det;
    if (u >= 0 && v >= 0 && u <= items[index].width && v <= items[index].height) return index;
  }
  return -1;
}

let dragging = null;
stage.addEventListener("pointerdown", event => {
  if (!face || !face.landmarks) return;
  const point = facePoint(event), index = itemAt(point);
  if (index < 0) return;
  select(index);
  dragging = { point, pointer: event.pointerId };
  stage.setPointerCapture(event.pointerId);
  stage.style.cursor = "grabbing";
});
stage.addEventListener("pointermove", event => {
  if (!dragging || selected < 0) return;
  const point = facePoint(event), item = items[selected];
  const [a, b, c, d] = placement(item), det = a * d - b * c;
  const dx = point[0] - dragging.point[0], dy = point[1] - dragging.point[1];
  // The followed landmark stays put: another design point comes to sit on it.
  item.designX -= (d * dx - c * dy) / det;
  item.designY -= (-b * dx + a * dy) / det;
  dragging.point = point;
  draw();
});
stage.addEventListener("pointerup", () => { dragging = null; stage.style.cursor = "grab"; });
stage.addEventListener("wheel", event => {
  if (selected < 0) return;
  event.preventDefault();
  const item = items[selected];
  if (event.shiftKey) item.turn = Math.max(-180, Math.min(180, item.turn + Math.sign(event.deltaY) * 3));
  else item.size = Math.max(0.25, Math.min(4, item.size * (event.deltaY < 0 ? 1.05 : 1 / 1.05)));
  showSettings();
  draw();
}, { passive: false });

async function addPicture(name, blob) {
  const url = URL.createObjectURL(blob);
  let image;
  try { image = await loadImage(url); } catch (error) { say(`${name}: ${error.message}`, true); return; }
  const id = uniqueId(name.replace(/\.[^.]*$/, "").replace(/[^A-Za-z0-9_-]/g, "_") || "item");
  const width = image.naturalWidth || 200, height = image.naturalHeight || 200;
  const animated = /\.(gif|webp|apng)$/i.test(name) || (/\.png$/i.test(name) && await isAnimatedPNG(blob));
  items.push({ id, file: { name: uniqueFileName(name), blob }, image, width, height, animated, follows: "eyes", follow3D: false,
               designX: width / 2, designY: height / 2, size: 1.6, turn: 0, begin: "always", end: "", duration: 2, loop: true });
  select(items.length - 1);
  listItems();
  draw();
}

async function isAnimatedPNG(blob) {
  const bytes = new Uint8Array(await blob.slice(0, 4096).arrayBuffer());
  for (let i = 8; i + 8 < bytes.length; i++) if (bytes[i] === 0x61 && bytes[i + 1] === 0x63 && bytes[i + 2] === 0x54 && bytes[i + 3] === 0x4c) return true;
  return false;
}

function uniqueId(base) {
  let id = base, n = 2;
  while (items.some(item => item.id === id)) id = `${base}${n++}`;
  return id;
}

function uniqueFileName(name) {
  const clean = name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "");
  let file = clean, n = 2;
  while (items.some(item => item.file.name === file) || file === "preview.png") file = clean.replace(/(\.[^.]*)$/, `-${n++}$1`);
  return file;
}

function listItems() {
  $("items").replaceChildren(...items.map((item, index) => {
    const row = document.createElement("li");
    if (index === selected) row.className = "selected";
    const thumb = document.createElement("img"); thumb.src = item.image.src; thumb.alt = "";
    const label = document.createElement("span"); label.textContent = `${item.id} · ${item.follows} · ${item.begin}`;
    row.append(thumb, label);
    row.addEventListener("click", () => select(index));
    return row;
  }));
}

function select(index) {
  selected = index;
  $("item-settings").hidden = index < 0;
  listItems();
  showSettings();
  draw();
}

function showSettings() {
  if (selected < 0) return;
  const item = items[selected];
  $("follows").value = item.follows;
  $("follow3d").checked = item.follow3D;
  $("size").value = item.size;
  $("turn").value = item.turn;
  $("begin").replaceChildren(new Option("always", "always"), ...expressions.map(e => new Option("on " + e, e)),
    ...items.filter(other => other !== item).map(other => new Option("after " + other.id + " completes", other.id + ".complete")));
  $("begin").value = item.begin;
  $("end").value = item.end;
  $("end").querySelector('[value="expression"]').disabled = !expressions.includes(item.begin);
  $("duration").hidden = item.end !== "duration";
  $("duration").value = item.duration;
  $("loop").checked = item.loop;
}

function changed(field, read) {
  $(field).addEventListener("input", () => { if (selected >= 0) { read(items[selected]); listItems(); showSettings(); draw(); } });
}
changed("follows", item => {
  if (!face || !face.landmarks) { item.follows = $("follows").value; return; }
  // Keep the picture where it is on this face: the design point under the new landmark changes.
  const [a, b, c, d, e, f] = placement(item);
  item.follows = $("follows").value;
  const [px, py] = mean(anchors[item.follows]), det = a * d - b * c, x = px - e, y = py - f;
  item.designX = (d * x - c * y) / det; item.designY = (-b * x + a * y) / det;
});
changed("follow3d", item => { item.follow3D = $("follow3d").checked; });
changed("size", item => { item.size = Number($("size").value); });
changed("turn", item => { item.turn = Number($("turn").value); });
changed("begin", item => { item.begin = $("begin").value; if (!expressions.includes(item.begin) && item.end === "expression") item.end = ""; });
changed("end", item => { item.end = $("end").value; });
changed("duration", item => { item.duration = Number($("duration").value); });
changed("loop", item => { item.loop = $("loop").checked; });
$("item-up").addEventListener("click", () => move(-1));
$("item-down").addEventListener("click", () => move(1));
$("item-remove").addEventListener("click", () => {
  const removed = items.splice(selected, 1)[0];
  for (const item of items) if (item.begin === removed.id + ".complete") item.begin = "always";
  select(Math.min(selected, items.length - 1));
});
function move(step) {
  const to = selected + step;
  if (to < 0 || to >= items.length) return;
  [items[selected], items[to]] = [items[to], items[selected]];
  select(to);
}

$("picture-file").addEventListener("change", async () => {
  for (const file of $("picture-file").files) await addPicture(file.name, file);
  $("picture-file").value = "";
});
$("package").addEventListener("change", async () => {
  const name = $("package").value;
  $("package-picture").replaceChildren();
  if (!name) return;
  const json = await fetch(`/api/stickers/${encodeURIComponent(name)}/files/sticker.json${query}`).then(r => r.json());
  const files = [...new Set(json.items.flatMap(item => item.frames))];
  $("package-picture").replaceChildren(...files.map(f => new Option(f, f)));
});
$("add-package-picture").addEventListener("click", async () => {
  const name = $("package").value, file = $("package-picture").value;
  if (!name || !file) return;
  const response = await fetch(`/api/stickers/${encodeURIComponent(name)}/files/${encodeURIComponent(file)}${query}`);
  await addPicture(file, await response.blob());
});
$("face").addEventListener("change", () => { clearInterval(streamTimer); $("face").value ? followStream($("face").value) : usePortrait(); });
$("show-landmarks").addEventListener("change", () => draw());

// sticker.json as the loader reads it: the followed landmarks pin the design point; the eye
// corners carry size and turn, as two design points around it.
function stickerJSON() {
  return {
    title: $("name").value || "My sticker", version: 1, description: "Made in the FaceRelay studio.",
    items: items.map((item, z) => {
      const angle = -item.turn * Math.PI / 180, length = item.width / item.size;
      const dx = Math.cos(angle) * length / 2, dy = Math.sin(angle) * length / 2;
      const round = value => Math.round(value * 100) / 100;
      const entry = { id: item.id, frames: [item.file.name], z,
        position: { flag: anchors[item.follows], x: round(item.designX), y: round(item.designY) },
        scale: { pointA: { flag: eyeA, x: round(item.designX - dx), y: round(item.designY - dy) },
                 pointB: { flag: eyeB, x: round(item.designX + dx), y: round(item.designY + dy) } },
        begin: item.begin, loop: item.loop, follow3D: item.follow3D };
      if (item.end === "expression") entry.end = item.begin + ".end";
      if (item.end === "duration") entry.duration = item.duration;
      if (!item.loop && !item.animated && item.end !== "duration") entry.duration = 2;
      return entry;
    }),
  };
}

async function previewPNG() {
  const saved = face;
  if (!portrait) await usePortrait();
  face = portrait;
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 320;
  draw(canvas.getContext("2d"), 320, 320, false);
  face = saved;
  draw();
  return new Promise(resolve => canvas.toBlob(resolve, "image/png"));
}

$("save").addEventListener("click", async () => {
  const name = $("name").value.trim();
  if (!items.length) return say("add a picture first", true);
  if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/.test(name)) return say("give the sticker a name: letters, digits, - _ .", true);
  const form = new FormData();
  form.append("name", name);
  if ($("replace").checked) form.append("replace", "1");
  form.append("file", new Blob([JSON.stringify(stickerJSON(), null, 2)], { type: "application/json" }), "sticker.json");
  for (const item of items) form.append("file", item.file.blob, item.file.name);
  form.append("file", await previewPNG(), "preview.png");
  say("saving…");
  const response = await fetch("/api/stickers" + query, { method: "POST", body: form });
  const reply = await response.json().catch(() => ({ error: "http-" + response.status, message: response.statusText, problems: [] }));
  if (response.ok) {
    say(`saved '${reply.sticker}'${reply.replaced ? " (replaced)" : ""}: wear it on a stream below.`);
    await refreshLists();
  } else {
    say(`not saved (${reply.error}): ${reply.message}` + (reply.problems || []).map(p => `\n- ${p.field ? p.field + ": " : ""}${p.message}`).join(""), true);
  }
});

$("wear").addEventListener("click", async () => {
  const stream = $("wear-stream").value, sticker = $("name").value.trim();
  if (!stream) return say("no stream to wear it on: start or publish one", true);
  const reply = await request("set-sticker", { stream, sticker });
  say(reply.ok ? `${stream} now wears ${sticker}` : `cannot wear it: ${reply.error.message}`, !reply.ok);
});

connect();
usePortrait();
</script>
</body>
</html>
"""#
}
