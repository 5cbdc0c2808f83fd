// The kiosk page: a full-screen view that follows /feed. Plays images, video and web
// pages by URL; otherwise shows the content's name. Cast and emergency get a banner;
// while unpaired it shows the pairing code large enough to read across a room.
export const PLAYER_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc player</title>
<style>
  html, body { margin: 0; height: 100%; background: #000; color: #eee; font-family: system-ui, sans-serif; overflow: hidden; }
  #stage { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center; }
  #stage img, #stage video, #stage iframe { width: 100%; height: 100%; object-fit: contain; border: 0; }
  .card { text-align: center; }
  .code { font-size: 14vw; letter-spacing: 0.15em; font-weight: 700; font-family: ui-monospace, monospace; }
  .hint { font-size: 2.2vw; opacity: 0.8; }
  .name { font-size: 4vw; }
  #banner { position: absolute; left: 0; right: 0; top: 0; padding: 1.2vh 2vw; font-size: 2.4vw; font-weight: 600; display: none; }
  #banner.cast { display: block; background: rgba(20, 90, 200, 0.85); }
  #banner.emergency { display: block; background: #c00; font-size: 3.4vw; }
  #offline { position: absolute; right: 1vw; bottom: 1vh; font-size: 1.2vw; opacity: 0.6; display: none; }
</style>
</head>
<body>
<div id="stage"><div class="card"><div class="hint">starting…</div></div></div>
<div id="banner"></div>
<div id="offline">offline — playing the last known schedule</div>
<script>
(function () {
  var stage = document.getElementById('stage');
  var banner = document.getElementById('banner');
  var offline = document.getElementById('offline');
  var shown = '';
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e; }
  function media(v) {
    var c = v.content || {};
    var url = c.url || (c.items && c.items[0] && c.items[0].url);
    var mime = c.mimeType || (c.items && c.items[0] && c.items[0].mimeType) || '';
    if (url && /^image\\//.test(mime)) { var i = el('img'); i.src = url; return i; }
    if (url && /^video\\//.test(mime)) { var m = el('video'); m.src = url; m.autoplay = true; m.muted = true; m.loop = true; return m; }
    if (url && (v.contentKind === 'app' || /^text\\/html/.test(mime))) { var f = el('iframe'); f.src = url; return f; }
    var card = el('div', 'card');
    card.appendChild(el('div', 'name', c.name || (v.contentKind ? v.contentKind + ' ' + v.contentId : 'nothing to play')));
    if (url) card.appendChild(el('div', 'hint', url));
    return card;
  }
  function render(v) {
    var key = JSON.stringify([v.type, v.pairingCode, v.contentKind, v.contentId, v.content && v.content.url]);
    banner.className = ''; banner.textContent = '';
    offline.style.display = v.type === 'playing' && !v.connected ? 'block' : 'none';
    if (v.type === 'playing' && v.source === 'emergency') { banner.className = 'emergency'; banner.textContent = v.message || 'Emergency'; }
    else if (v.type === 'playing' && v.source === 'cast') { banner.className = 'cast'; banner.textContent = 'Cast: ' + ((v.content && v.content.name) || v.contentId); }
    if (key === shown) return;
    shown = key;
    stage.textContent = '';
    if (v.type === 'pairing') {
      var card = el('div', 'card');
      card.appendChild(el('div', 'hint', 'Pair this screen with code'));
      card.appendChild(el('div', 'code', v.pairingCode));
      card.appendChild(el('div', 'hint', 'valid until ' + new Date(v.expiresAt).toLocaleTimeString()));
      stage.appendChild(card);
    } else if (v.type === 'playing') {
      stage.appendChild(media(v));
    } else {
      stage.appendChild(el('div', 'hint', 'starting…'));
    }
  }
  function connect() {
    var ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/feed');
    ws.onmessage = function (e) { try { render(JSON.parse(e.data)); } catch (err) {} };
    ws.onclose = function () { setTimeout(connect, 2000); };
  }
  connect();
})();
</script>
</body>
</html>
`;
