// The kiosk page: full-bleed content that follows /feed. Nothing is drawn over or around
// content in normal play; the pairing code and diagnostics appear only when there is
// nothing to play, or always with `?debug=1`. Plays images, video (muted autoplay, looped
// when alone, `ended` advances a playlist; the next video of a playlist is loaded in a
// second, hidden element while the current item plays, and the item before stays on screen
// until the new one has presented its first frame, so a switch shows no black frame),
// playlists with per-item durations, web/app
// pages, and layouts (one region per zone). Each item is fit `contain` (default) or
// `cover` (its own, else its playlist's). A playlist with `transition: "fade"` fades each
// item in over the last (`transitionMs`, default 500 ms); otherwise items cut. An emergency
// shows its message in a large band above everything: over its own content (full screen),
// or over the content running beneath it (`presentation: "banner"`, a lower band of at most
// a third of the screen), or alone filling the screen when the emergency has no content
// (`presentation: "message"`, black beneath, larger text). A CAP alert's message is laid out from its fields: the severity
// (and TEST) on top, the headline, the description, the instruction on its own line, the
// sender and the time it was sent, on the severity's colours (each pair meets WCAG AA
// contrast); the text is sized in vmin and shrunk until it fits (the description gives way
// first), so it reads from across a room in landscape and portrait. An item that
// fails to load is reported and skipped. The page reports what it actually showed over
// the same WebSocket: `{type:"play", event:"start"|"end"|"error", slot, …}`, from the
// elements' own `load` / `playing` / `ended` / `error` events, and `{type:"alive"}` every 10 s,
// with `{type:"frames", decoded, dropped}`: the video frames decoded and dropped since the
// page loaded (getVideoPlaybackQuality of every video element it played), also sent when a
// video ends.
// It also sends its console's messages (console.debug/log/info/warn/error, uncaught errors
// and unhandled rejections) as `{type:"console", level, message}`, each cut to 2000
// characters, at most 100 a minute (then one line saying how many were dropped), the last
// 50 kept while the feed is down: the agent keeps them for the cloud's `logs` jobs. Web
// content in frames of other origins has its own console, which the page cannot see.
export const PLAYER_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc player</title>
<style>
  html, body { margin: 0; height: 100%; background: #000; color: #eee; font-family: system-ui, sans-serif; overflow: hidden; cursor: none; }
  #stage { position: absolute; inset: 0; }
  .slot { position: absolute; overflow: hidden; background: #000; }
  .slot > img, .slot > video, .slot > iframe { position: absolute; inset: 0; width: 100%; height: 100%; border: 0; display: block; object-fit: contain; }
  .slot > .cover { object-fit: cover; }
  .diag { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center; text-align: center; background: #111; }
  .code { font-size: 14vw; letter-spacing: 0.15em; font-weight: 700; font-family: ui-monospace, monospace; }
  .hint { font-size: 2.2vw; opacity: 0.8; }
  .name { font-size: 4vw; }
  #band { position: absolute; left: 0; right: 0; bottom: 0; z-index: 100; display: none; box-sizing: border-box; overflow: hidden;
          background: #c00; color: #fff; font-size: calc(var(--s, 1) * 8.5vmin); font-weight: 800; line-height: 1.15; text-align: center;
          padding: 2.5vmin 3.5vmin; overflow-wrap: anywhere; max-height: 62vh; }
  #band.on { display: flex; flex-direction: column; gap: 1.4vmin; }
  #band.banner { max-height: 34vh; }
  #band.full { top: 0; max-height: none; justify-content: center; padding: 5vmin 6vmin; gap: 2.4vmin; }
  #band.full.cap { font-size: calc(var(--s, 1) * 6.5vmin); }
  #band.cap { text-align: left; font-size: calc(var(--s, 1) * 5vmin); }
  #band .sev { font-size: 0.62em; letter-spacing: 0.08em; text-transform: uppercase; font-weight: 800; }
  #band .head { font-size: 1.2em; font-weight: 800; line-height: 1.1; }
  #band .desc { font-size: 0.72em; font-weight: 500; line-height: 1.25; }
  #band .instr { font-size: 0.92em; font-weight: 800; line-height: 1.15; border-left: 0.9vmin solid currentColor; padding-left: 1.6vmin; }
  #band .meta { font-size: 0.56em; font-weight: 600; }
  #band.sev-Extreme { background: #8b0000; color: #fff; }
  #band.sev-Severe { background: #c2410c; color: #fff; }
  #band.sev-Moderate { background: #facc15; color: #111; }
  #band.sev-Minor { background: #1d4ed8; color: #fff; }
  #band.sev-Unknown { background: #374151; color: #fff; }
  #debug { position: absolute; left: 0; top: 0; z-index: 200; font: 14px ui-monospace, monospace; background: rgba(0,0,0,.7); color: #0f0; padding: 6px 10px; white-space: pre; display: none; }
</style>
</head>
<body>
<div id="stage" class="slot"><div class="diag"><div class="hint">starting…</div></div></div>
<div id="band" role="alert"></div>
<div id="debug"></div>
<script>
(function () {
  var DEFAULT_MS = 10000, RETRY_MS = 30000;
  var debug = /(^|[?&])debug=1(&|$)/.test(location.search.slice(1));
  // A screenshot capture: shows the same view, reports nothing (not a play).
  var capture = /(^|[?&])capture=1(&|$)/.test(location.search.slice(1));
  var stage = document.getElementById('stage');
  var band = document.getElementById('band');
  var dbg = document.getElementById('debug');
  var ws = null, shown = '', view = null, gen = 0, timers = [], open = {}, outbox = [];

  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e; }
  // data-ready="1" once content (or a diagnostic) is on screen: a capture waits for it.
  function ready() { document.documentElement.dataset.ready = '1'; }
  function send(m) {
    if (capture) return;
    var text = JSON.stringify(m);
    if (ws && ws.readyState === 1) ws.send(text); else outbox.push(text);
  }
  // The console, to the agent (not from a capture): bounded in length, rate and backlog.
  var CONSOLE_MAX = 2000, CONSOLE_PER_MINUTE = 100, CONSOLE_BACKLOG = 50;
  var consoleOut = [], consoleWindow = 0, consoleCount = 0, consoleDropped = 0;
  function consoleText(args) {
    var parts = [];
    for (var i = 0; i < args.length; i++) {
      var a = args[i];
      if (typeof a === 'string') parts.push(a);
      else if (a instanceof Error) parts.push(a.stack || (a.name + ': ' + a.message));
      else { try { var j = JSON.stringify(a); parts.push(j === undefined ? String(a) : j); } catch (err) { parts.push(String(a)); } }
    }
    var text = parts.join(' ');
    return text.length > CONSOLE_MAX ? text.slice(0, CONSOLE_MAX - 1) + '…' : text;
  }
  function consoleSend(level, message) {
    if (capture) return;
    var now = Date.now();
    if (now - consoleWindow >= 60000) {
      var dropped = consoleDropped;
      consoleWindow = now; consoleCount = 0; consoleDropped = 0;
      if (dropped) consoleSend('warn', dropped + ' console messages dropped (over ' + CONSOLE_PER_MINUTE + ' a minute)');
    }
    if (++consoleCount > CONSOLE_PER_MINUTE) { consoleDropped++; return; }
    var text = JSON.stringify({ type: 'console', level: level, message: message });
    if (ws && ws.readyState === 1) ws.send(text);
    else { consoleOut.push(text); if (consoleOut.length > CONSOLE_BACKLOG) consoleOut.shift(); }
  }
  ['debug', 'log', 'info', 'warn', 'error'].forEach(function (level) {
    var original = console[level];
    console[level] = function () {
      if (original) original.apply(console, arguments);
      try { consoleSend(level, consoleText(arguments)); } catch (err) { /* never break the caller */ }
    };
  });
  window.addEventListener('error', function (e) {
    var where = e.filename ? ' (' + e.filename + ':' + e.lineno + ')' : '';
    consoleSend('error', consoleText(['Uncaught ' + (e.error && e.error.stack ? e.error.stack : e.message) + where]));
  });
  window.addEventListener('unhandledrejection', function (e) { consoleSend('error', consoleText(['Unhandled rejection:', e.reason])); });
  function later(fn, ms) { var g = gen; timers.push(setTimeout(function () { if (g === gen) fn(); }, ms)); }
  function origin(v) { return { source: v.source, contentKind: v.contentKind, contentId: v.contentId, castId: v.castId || null, emergencyId: v.emergencyId || null }; }
  function started(slot, item) {
    if (open[slot]) ended(slot);
    var m = origin(view); m.type = 'play'; m.event = 'start'; m.slot = slot; m.itemKind = item.kind; m.itemId = item.id;
    open[slot] = m;
    send(m);
    ready();
  }
  function ended(slot) { if (!open[slot]) return; delete open[slot]; send({ type: 'play', event: 'end', slot: slot }); }
  function failed(slot, item) {
    if (open[slot]) ended(slot);
    var m = origin(view); m.type = 'play'; m.event = 'error'; m.slot = slot; m.itemKind = item.kind; m.itemId = item.id; m.url = item.url || null;
    send(m);
  }
  function kindOf(mime, kind, url) {
    if (!url) return 'none';
    if (/^image\\//.test(mime)) return 'image';
    if (/^video\\//.test(mime)) return 'video';
    if (kind === 'app' || /^text\\/html/.test(mime) || !mime) return 'web';
    return 'none';
  }
  // Video frames decoded and dropped by the elements already let go of; frames() adds the live ones.
  var framesGone = { decoded: 0, dropped: 0 };
  function quality(v) {
    var q = v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality() : null;
    return q ? { decoded: q.totalVideoFrames || 0, dropped: q.droppedVideoFrames || 0 } : { decoded: 0, dropped: 0 };
  }
  function frames() {
    var out = { type: 'frames', decoded: framesGone.decoded, dropped: framesGone.dropped };
    var live = document.querySelectorAll('video');
    for (var i = 0; i < live.length; i++) { var q = quality(live[i]); out.decoded += q.decoded; out.dropped += q.dropped; }
    return out;
  }
  function sendFrames() { if (!capture && ws && ws.readyState === 1) ws.send(JSON.stringify(frames())); }
  // Stops and drops what a slot showed (a video lets go of its file).
  function drop(e) {
    if (e.tagName === 'VIDEO') {
      var q = quality(e); framesGone.decoded += q.decoded; framesGone.dropped += q.dropped;
      e.pause(); e.removeAttribute('src'); e.load();
    }
    if (e.parentNode) e.parentNode.removeChild(e);
  }
  function video(item, single) {
    var v = el('video', item.fit === 'cover' ? 'cover' : ''); v.muted = true; v.playsInline = true; v.loop = single; v.preload = 'auto';
    return v;
  }
  // Loads a video in the box, hidden, to be shown next (showItem takes it as 'pre').
  function preload(box, item) {
    var v = video(item, false); v.style.visibility = 'hidden'; v.dataset.pre = '1';
    v.src = item.url; box.appendChild(v);
    return v;
  }
  // Calls fn once the video has presented a frame (requestVideoFrameCallback where there is one).
  function firstFrame(v, fn) {
    var called = false;
    function once() { if (!called) { called = true; fn(); } }
    if (v.requestVideoFrameCallback) v.requestVideoFrameCallback(once);
    else v.addEventListener('playing', function () { requestAnimationFrame(function () { requestAnimationFrame(once); }); });
  }
  // A video cut: shown on top (a video without a frame paints nothing), what was there goes
  // once it has presented its first frame: never a black frame between two items.
  function cutTo(box, v) {
    v.style.visibility = ''; delete v.dataset.pre;
    if (v.parentNode !== box) box.appendChild(v);
    firstFrame(v, function () {
      if (v.parentNode !== box) return;
      var old = [].slice.call(box.childNodes);
      for (var i = 0; i < old.length; i++) if (old[i] !== v && !(old[i].dataset && old[i].dataset.pre)) drop(old[i]);
    });
  }
  // Puts an item's element in its box: a cut, or with a transition (fadeMs > 0) the new
  // element fades in over what was there, which goes once it is covered.
  function put(box, e, fadeMs) {
    var old = [].slice.call(box.childNodes).filter(function (o) { return o !== e && !(o.dataset && o.dataset.pre); });
    e.style.visibility = ''; if (e.dataset) delete e.dataset.pre;
    if (!fadeMs || !old.length) { for (var i = 0; i < old.length; i++) drop(old[i]); if (e.parentNode !== box) box.appendChild(e); return; }
    e.style.opacity = '0';
    e.style.transition = 'opacity ' + fadeMs + 'ms linear';
    if (e.parentNode !== box) box.appendChild(e);
    void e.offsetWidth; // the start state is on screen before the change
    e.style.opacity = '1';
    setTimeout(function () { for (var i = 0; i < old.length; i++) if (old[i].parentNode === box) drop(old[i]); }, fadeMs + 50);
  }
  function diag(box, title, lines) {
    var d = el('div', 'diag'), c = el('div');
    c.appendChild(el('div', 'name', title));
    for (var i = 0; i < lines.length; i++) if (lines[i]) c.appendChild(el('div', 'hint', lines[i]));
    d.appendChild(c); box.appendChild(d);
    ready();
  }

  // Shows one item in a slot box; calls done() when it should move on (duration or
  // 'ended'), or bad() when it cannot load. single = the only item (video loops); pre = its
  // video element, already loading (preload); shown() once it is on screen.
  function showItem(box, slot, item, single, done, bad, pre, shown) {
    var what = kindOf(item.mimeType || '', item.kind, item.url), fit = item.fit === 'cover' ? 'cover' : '';
    var fade = item.transition === 'fade' ? (item.transitionMs != null ? item.transitionMs : 500) : 0;
    var finished = false;
    function fin(ok) { if (finished) return; finished = true; if (ok) done(); else { failed(slot, item); bad(); } }
    if (what === 'image') {
      var img = new Image();
      img.className = fit;
      img.onload = function () {
        if (img.dataset.gone) return;
        put(box, img, fade); started(slot, item); shown();
        if (!single) later(function () { fin(true); }, item.durationMs || DEFAULT_MS);
      };
      img.onerror = function () { fin(false); };
      img.src = item.url;
      return function () { finished = true; img.dataset.gone = '1'; };
    }
    if (what === 'video') {
      var v = pre || video(item, single); v.autoplay = true;
      v.addEventListener('playing', function () { if (!open[slot]) { started(slot, item); shown(); } });
      v.addEventListener('ended', function () { sendFrames(); fin(true); });
      v.addEventListener('error', function () { fin(false); });
      if (v.error) later(function () { fin(false); }, 0);
      if (!pre) v.src = item.url;
      if (fade) put(box, v, fade); else cutTo(box, v);
      var p = v.play(); if (p && p.catch) p.catch(function () {});
      if (!single && item.durationMs) later(function () { fin(true); }, item.durationMs);
      // Paused now, kept on screen until the next item covers it (put drops it then).
      return function () { finished = true; v.pause(); };
    }
    if (what === 'web') {
      var f = el('iframe', fit); f.setAttribute('allow', 'autoplay; fullscreen');
      f.onload = function () { if (!open[slot]) { started(slot, item); shown(); } };
      f.src = item.url;
      put(box, f, fade);
      if (!single) later(function () { fin(true); }, item.durationMs || DEFAULT_MS);
      return function () {};
    }
    later(function () { fin(false); }, 0);
    return function () {};
  }

  // Plays a content (one item, a playlist, a layout) into a box, looping a playlist and
  // skipping items that fail; when everything failed, a diagnostic and a retry later.
  function play(box, slot, kind, id, c) {
    c = c || {};
    var zones = c.config && c.config.zones;
    if (kind === 'layout' && zones && zones.length) {
      var W = c.config.width || 1920, H = c.config.height || 1080;
      for (var z = 0; z < zones.length; z++) {
        var zn = zones[z]; if (!zn || !zn.content) continue;
        var zb = el('div', 'slot');
        zb.style.left = (100 * zn.x / W) + '%'; zb.style.top = (100 * zn.y / H) + '%';
        zb.style.width = (100 * zn.width / W) + '%'; zb.style.height = (100 * zn.height / H) + '%';
        box.appendChild(zb);
        var zc = zn.content; if (zn.fit && !zc.fit) zc.fit = zn.fit;
        play(zb, slot + '/' + zn.id, zc.kind, zc.id, zc);
      }
      return;
    }
    var items = [];
    if (c.items && c.items.length) {
      for (var i = 0; i < c.items.length; i++) {
        var it = c.items[i];
        items.push({ kind: it.contentKind, id: it.contentId, url: it.url, mimeType: it.mimeType, durationMs: it.durationMs, fit: it.fit || c.fit, name: it.name,
          transition: it.transition || c.transition, transitionMs: it.transitionMs != null ? it.transitionMs : c.transitionMs });
      }
    } else {
      items.push({ kind: kind, id: id, url: c.url, mimeType: c.mimeType, durationMs: c.durationMs, fit: c.fit, name: c.name });
    }
    var at = -1, failures = 0, cancel = null, pre = null;
    // Once an item is on screen, the next one (a video of a playlist) starts loading.
    function preloadNext() {
      if (items.length < 2 || pre) return;
      var n = (at + 1) % items.length, it = items[n];
      if (kindOf(it.mimeType || '', it.kind, it.url) === 'video') pre = { at: n, el: preload(box, it) };
    }
    function next() {
      if (cancel) cancel();
      at = (at + 1) % items.length;
      var item = items[at];
      var ready = pre && pre.at === at ? pre.el : null;
      if (pre && !ready) drop(pre.el);
      pre = null;
      cancel = showItem(box, slot, item, items.length === 1,
        function () { failures = 0; ended(slot); next(); },
        function () {
          failures++;
          if (failures >= items.length) {
            box.textContent = '';
            if (debug || box === stage) diag(box, 'cannot play ' + (c.name || id || ''), ['retrying in ' + RETRY_MS / 1000 + ' s']);
            failures = 0;
            later(next, RETRY_MS);
          } else next();
        }, ready, preloadNext);
    }
    next();
  }

  function endAll() { for (var s in open) ended(s); }

  // The emergency's message: one text, or a CAP alert's fields; then fitted to the screen.
  var bandKey = '';
  var SEVERITIES = { Extreme: 1, Severe: 1, Moderate: 1, Minor: 1, Unknown: 1 };
  function sentText(s) {
    var m = /^(\\d{4}-\\d\\d-\\d\\d)T(\\d\\d:\\d\\d)(?::\\d\\d(?:\\.\\d+)?)?(Z|[+-]\\d\\d:\\d\\d)?$/.exec(s || '');
    if (!m) return s || '';
    return m[1] + ' ' + m[2] + (m[3] ? (m[3] === 'Z' ? ' UTC' : ' (UTC' + m[3] + ')') : '');
  }
  function showBand(v) {
    var key = v ? JSON.stringify([v.message, v.presentation || '', v.alert || null]) : '';
    if (key === bandKey) return;
    bandKey = key;
    band.textContent = '';
    band.style.removeProperty('--s');
    delete document.documentElement.dataset.alertFit;
    if (!v) { band.className = ''; return; }
    var a = v.alert, cls = 'on' + (v.presentation === 'banner' ? ' banner' : v.presentation === 'message' ? ' full' : '');
    if (a) {
      cls += ' cap sev-' + (SEVERITIES[a.severity] ? a.severity : 'Unknown');
      band.appendChild(el('div', 'sev', (a.test ? 'TEST · ' : '') + (a.severity || 'Alert')));
      band.appendChild(el('div', 'head', a.headline));
      if (a.description) band.appendChild(el('div', 'desc', a.description));
      if (a.instruction) band.appendChild(el('div', 'instr', a.instruction));
      band.appendChild(el('div', 'meta', a.senderName + ' · ' + sentText(a.sent)));
    } else {
      band.textContent = v.message;
    }
    band.className = cls;
    fitBand();
  }
  // Shrinks the text (down to 0.55 of its size) until the band holds it; then drops the
  // description; what still does not fit is marked clipped (data-alert-fit).
  function fits() { return band.scrollHeight <= band.clientHeight + 1 && band.scrollWidth <= band.clientWidth + 1; }
  function fitBand() {
    if (!bandKey) return;
    var desc = band.querySelector('.desc');
    if (desc) desc.style.display = '';
    for (var pass = 0; pass < 2; pass++) {
      for (var s = 1; s >= 0.549; s -= 0.05) {
        band.style.setProperty('--s', s.toFixed(2));
        if (fits()) { document.documentElement.dataset.alertFit = pass ? 'short' : 'ok'; return; }
      }
      if (!desc) break;
      desc.style.display = 'none';
    }
    document.documentElement.dataset.alertFit = 'clipped';
  }
  window.addEventListener('resize', fitBand);

  function render(v) {
    view = v;
    if (debug) {
      dbg.style.display = 'block';
      dbg.textContent = [v.type, v.screenId ? 'screen ' + v.screenId : '', v.type === 'playing' ? (v.connected ? 'online' : 'OFFLINE') + ' · v' + v.version : '',
        v.source ? v.source + ' ' + (v.contentKind || '') + ' ' + (v.contentId || '') : ''].filter(Boolean).join('\\n');
    }
    showBand(v.type === 'playing' && v.emergencyId && v.message ? v : null);
    var key = JSON.stringify([v.type, v.pairingCode, v.source, v.contentKind, v.contentId, v.castId, v.emergencyId, v.content]);
    if (key === shown) return;
    shown = key;
    endAll();
    gen++;
    for (var t = 0; t < timers.length; t++) clearTimeout(timers[t]);
    timers = [];
    var old = stage.querySelectorAll('video');
    for (var o = 0; o < old.length; o++) { old[o].pause(); old[o].removeAttribute('src'); }
    stage.textContent = '';
    if (v.type === 'pairing') {
      diag(stage, 'Pair this screen with code', []);
      var card = stage.firstChild.firstChild;
      card.appendChild(el('div', 'code', v.pairingCode));
      card.appendChild(el('div', 'hint', 'valid until ' + new Date(v.expiresAt).toLocaleTimeString()));
    } else if (v.type === 'playing' && v.contentKind && v.source !== 'none') {
      play(stage, 'main', v.contentKind, v.contentId, v.content);
    } else if (v.type === 'playing' && v.emergencyId && v.message) {
      // An emergency without content: its message is all there is (black beneath the band).
    } else if (v.type === 'playing') {
      diag(stage, 'Nothing to play', ['screen ' + v.screenId, v.connected ? 'connected' : 'offline — waiting for the cloud']);
    } else {
      diag(stage, 'starting…', []);
    }
  }

  function connect() {
    ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/feed' + (capture ? '?capture=1' : ''));
    // A new connection (the agent may have restarted) learns what is on screen now.
    ws.onopen = function () {
      outbox = [];
      for (var s in open) ws.send(JSON.stringify(open[s]));
      // Console messages from while the feed was down (page start, an agent restart).
      var held = consoleOut; consoleOut = [];
      for (var c = 0; c < held.length; c++) ws.send(held[c]);
    };
    ws.onmessage = function (e) { var v; try { v = JSON.parse(e.data); } catch (err) { return; } render(v); };
    ws.onclose = function () { setTimeout(connect, 2000); };
  }
  connect();
  // A sign of life from the page's main thread: a hung page goes quiet (the watchdog restarts the browser).
  if (!capture) setInterval(function () { if (ws && ws.readyState === 1) { ws.send('{"type":"alive"}'); sendFrames(); } }, 10000);
})();
</script>
</body>
</html>
`
