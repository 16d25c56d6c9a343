extension StudioPage {
    /// The studio's script: the picture list, the stage that places a picture on a portrait or a
    /// stream's face as FaceRelay does, and the upload of the finished package.
    static let script = #"""
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
"""#
}
