// Pirate Table phone page: joins a seat with the token from the QR code (kept in localStorage), shows
// view_for(seat) from the server, sends answers. No external resources; text only via textContent.
"use strict";
(function () {
  var parts = location.pathname.split("/");          // ["", "t", TABLE, ""]
  var table = parts[2] || "";
  var key = "pirate-table:" + table;
  var token = null;
  var ws = null;
  var opened = false;
  var retry = 0;
  var stopped = false;
  var view = null;
  var $ = function (id) { return document.getElementById(id); };

  function store(t) { try { localStorage.setItem(key, t); } catch (e) { /* private mode: token lives in memory */ } }
  function forget() { try { localStorage.removeItem(key); } catch (e) {} token = null; }
  function load() { try { return localStorage.getItem(key); } catch (e) { return null; } }

  if (location.hash.length > 1) {
    token = location.hash.slice(1);
    store(token);
    history.replaceState(null, "", location.pathname);  // the token leaves the address bar
  } else {
    token = load();
  }

  function show(id, on) { $(id).hidden = !on; }
  function setConn(on, text) { var c = $("conn"); c.textContent = text; c.className = "conn " + (on ? "on" : "off"); }
  function error(text) { var e = $("error"); e.textContent = text || ""; e.hidden = !text; }

  function joinScreen(why) {
    stopped = true;
    show("me", false); show("question", false); show("reveal", false);
    $("join-why").textContent = why;
    show("join", true);
    setConn(false, "not joined");
  }

  function send(obj) {
    if (!ws || ws.readyState !== 1) { error("Not connected: trying again…"); return; }
    var text = JSON.stringify(obj);
    var pad = 96 - text.length;  // every answer the same size on the wire
    if (pad > 0) { obj.pad = new Array(pad).join(" "); text = JSON.stringify(obj); }
    ws.send(text);
  }

  function render(v) {
    view = v;
    show("join", false); show("me", true);
    $("game").textContent = v.game;
    $("seat").textContent = v.seat;
    $("score").textContent = v.me && v.me.score !== null ? String(v.me.score) : "";
    var unit = v.me && v.me.score !== null ? v.me.label : "";
    $("score-label").textContent = (v.me && v.me.score === 1 && /s$/.test(unit)) ? unit.slice(0, -1) : unit;
    $("phase").textContent = v.phase;
    $("turn").textContent = v.turn ? ("Turn: " + v.turn) : "";
    var q = v.question;
    if (q && q.mine && q.mine.asked) {
      show("question", true);
      $("prompt").textContent = (v.me && v.me.note) || ("Your " + q.kind);
      var box = $("choices");
      while (box.firstChild) box.removeChild(box.firstChild);
      var answered = q.mine.answered === 1;
      q.choices.forEach(function (label, i) {
        var b = document.createElement("button");
        b.type = "button";
        b.textContent = label;
        b.id = "choice-" + i;
        b.disabled = answered || q.phone !== 1;
        if (answered && q.mine.choice === ("00" + i).slice(-3)) b.className = "picked";
        b.addEventListener("click", function () {
          Array.prototype.forEach.call(box.querySelectorAll("button"), function (x) { x.disabled = true; });
          send({action: "answer", round: q.id, choice: i});
        });
        box.appendChild(b);
      });
      $("mine").textContent = answered ? ("Your answer: " + q.mine.label) : (q.phone === 1 ? "" : "Answer on the tablet");
      $("mine").id = "mine";
      $("waiting").textContent = q.waiting.length ? ("Waiting for " + q.waiting.join(", ")) : "";
    } else if (q) {
      show("question", true);
      $("prompt").textContent = "Others are answering (" + q.kind + ")";
      var c = $("choices"); while (c.firstChild) c.removeChild(c.firstChild);
      $("mine").textContent = "";
      $("waiting").textContent = q.waiting.length ? ("Waiting for " + q.waiting.join(", ")) : "";
    } else {
      show("question", false);
    }
    var r = v.reveal;
    if (r) {
      show("reveal", true);
      $("reveal-title").textContent = "Revealed: " + r.kind;
      var t = $("answers");
      while (t.firstChild) t.removeChild(t.firstChild);
      r.answers.forEach(function (a) {
        var tr = document.createElement("tr");
        var n = document.createElement("td"); n.textContent = a[0];
        var x = document.createElement("td"); x.textContent = a[1]; x.className = "answer";
        tr.appendChild(n); tr.appendChild(x); t.appendChild(tr);
      });
    } else {
      show("reveal", false);
    }
  }

  function check() {
    // the handshake was refused or never opened: ask why (401/403 = this token is no good any more)
    fetch("view", {headers: {"Authorization": "Bearer " + token}, cache: "no-store", referrerPolicy: "no-referrer"})
      .then(function (r) {
        if (r.status === 401 || r.status === 403) {
          forget();
          joinScreen("This seat's code is no longer valid (the seat was reset, or this is another table). Scan the new QR code on the tablet.");
        } else { later(); }
      }, later);
  }

  function later() {
    if (stopped) return;
    retry = Math.min(retry + 1, 6);
    setConn(false, "reconnecting…");
    setTimeout(connect, 500 * retry);
  }

  function connect() {
    if (stopped) return;
    opened = false;
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + location.pathname + "ws";
    ws = new WebSocket(url, ["pirate-table.v1", "token." + token]);
    ws.onopen = function () { opened = true; retry = 0; setConn(true, "connected"); error(""); };
    ws.onmessage = function (ev) {
      var m;
      try { m = JSON.parse(ev.data); } catch (e) { return; }
      if (m.type === "view") render(m);
      else if (m.type === "error") { error(m.error); if (view) render(view); }
    };
    ws.onclose = function (ev) {
      ws = null;
      if (ev.code === 4003) { forget(); joinScreen("This seat was reset on the tablet. Scan its new QR code."); return; }
      if (ev.code === 4000) { stopped = true; setConn(false, "opened on another phone"); return; }
      if (!opened) check(); else later();
    };
  }

  // a QR code scanned while this page is open (same page, new fragment): join with that token
  window.addEventListener("hashchange", function () {
    if (location.hash.length < 2) return;
    token = location.hash.slice(1);
    store(token);
    history.replaceState(null, "", location.pathname);
    stopped = false; retry = 0;
    if (ws) { var old = ws; ws = null; old.onclose = null; old.close(); }
    connect();
  });

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && !ws && !stopped) { retry = 0; connect(); }
  });

  if (!token || !/^[A-Za-z0-9_-]{16,64}$/.test(token)) {
    forget();
    joinScreen("Scan the QR code for your seat on the tablet to join.");
  } else {
    connect();
  }
})();
