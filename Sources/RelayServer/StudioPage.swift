/// The sticker studio (`/studio`): make a sticker package from your own pictures in the browser. One
/// page with its style and script inline (the script in StudioPage+Script.swift), like the
/// dashboard. It speaks only documented APIs: the control protocol over `/api/control` (streams,
/// stickers, set-sticker), `/api/streams/ID/face` and `thumbnail.jpg`, `/api/studio/portrait.*`,
/// `/api/stickers/NAME/files/FILE` and `POST /api/stickers`.
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
"""# + "\n" + script + "\n" + #"""
</script>
</body>
</html>
"""#
}
