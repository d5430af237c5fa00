// The chat page's script, first half; page-widgets.js is the second.
// page.html puts both into its one inline <script>: the function opened
// here closes at the end of page-widgets.js.
"use strict";
(function () {
  // The token comes from the page's address (?token=) or from an
  // earlier visit; the browser keeps it (localStorage, which only this
  // origin reads: a cookie would also go to every other port of the
  // host) once it works. It leaves the address bar and the history at
  // once.
  var store = { get: function (k) { try { return localStorage.getItem(k) || ""; } catch (e) { return ""; } },
    set: function (k, v) { try { localStorage.setItem(k, v); } catch (e) { /* storage off */ } } };
  var query = new URLSearchParams(location.search);
  var token = query.get("token") || store.get("acpgw.token");
  if (query.has("token")) {
    query.delete("token");
    var rest = query.toString();
    history.replaceState(history.state, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
  }
  var maxText = 65536; // bytes of a message's text (API.md)
  var $ = function (sel) { return document.querySelector(sel); };
  var el = {
    threads: $("#threads"), newThread: $("#new-thread"), author: $("#author"), title: $("#thread-title"),
    conn: $("#conn"), error: $("#error"),
    messages: $("#messages"), empty: $("#empty"), typing: $("#typing"), busy: $("#typing .dots"), form: $("#composer"),
    prompt: $("#prompt"), send: $("#send"), stop: $("#stop"),
    files: $("#files"), fileInput: $("#file-input"), attach: $("#attach"),
    app: $("#app"), main: $("#main"), menu: $("#menu"), scrim: $("#scrim"), jump: $("#jump"),
    rename: $("#rename"), renameInput: $("#rename-input"), renameBtn: $("#rename-btn"), deleteBtn: $("#delete-btn"),
    confirm: $("#confirm"), agent: $("#thread-agent"), pick: $("#pick-agent"), pickLabel: $("#pick"),
    offline: $("#offline"), auth: $("#auth"), authWhy: $("#auth-why"), token: $("#token"), ask: $("#ask"), askName: $("#ask-name"),
    session: $("#session"), palette: $("#palette")
  };
  var pending = []; // files to send with the next message: {name, type, data (base64)}
  // follow: the list keeps to its newest message (until the reader
  // scrolls up).
  // stopping: a stop was asked and the turn has not ended yet; stopNote
  // is the session's "Stopping…" notice; waiting holds the ids of
  // messages sent meanwhile.
  var state = { thread: "", threads: [], source: null, nodes: new Map(), planID: "", lastUser: null, follow: true,
    typing: false, stopping: false, stopNote: "", waiting: new Set() };

  // ---- HTTP API ----
  function withToken(path) {
    return token ? path + (path.indexOf("?") < 0 ? "?" : "&") + "token=" + encodeURIComponent(token) : path;
  }
  function api(method, path, body) {
    var opts = { method: method, headers: {} };
    if (token) opts.headers["Authorization"] = "Bearer " + token;
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    return fetch(path, opts).then(function (res) {
      return res.text().then(function (txt) {
        var data = {};
        try { data = txt ? JSON.parse(txt) : {}; } catch (e) { data = { error: txt }; }
        if (res.status === 401) { askToken(data.error); throw new Error("a valid access token is needed"); }
        if (!res.ok) throw new Error(data.error || res.status + " " + res.statusText);
        if (token) store.set("acpgw.token", token); // it worked: keep it
        return data;
      });
    }, function () {
      offline(true);
      throw new Error("the gateway cannot be reached");
    });
  }
  // Errors in words: what went wrong and what to do.
  function showError(err) {
    var text = err ? String(err.message || err) : "";
    if (/"text" has \d+ bytes/.test(text)) text = tooLong;
    if (/cannot be reached/.test(text)) text = ""; // the banner says so
    el.error.textContent = text;
    el.error.hidden = !text;
  }
  var tooLong = "This text is too long for one message — attach it as a file instead (up to 256 KiB).";
  // offline shows that the gateway cannot be reached; what it said was
  // running may no longer be (the snapshot after reconnecting tells).
  function offline(on) {
    el.offline.hidden = !on;
    if (!on) return;
    state.threads.forEach(function (t) { t.typing = false; });
    renderThreads();
    state.stopping = state.typing = false;
    busy();
  }
  function askToken(why) {
    if (!el.auth.hidden) return;
    if (why) el.authWhy.textContent = why.charAt(0).toUpperCase() + why.slice(1) + ".";
    el.auth.hidden = false;
    el.token.value = "";
    el.token.focus();
  }
  el.auth.addEventListener("submit", function (e) {
    e.preventDefault();
    token = el.token.value.trim();
    el.auth.hidden = true;
    showError(null);
    if (state.source) { state.source.onclose = null; state.source.close(); state.source = null; }
    start();
  });
  // Who the token says this person is (GET /api/me). A named token's
  // name is fixed; otherwise the name field is a label.
  var me = { id: "", name: "guest", fixed: false };
  function author() { return me.fixed ? me.name : el.author.value.trim() || me.name; }

  // ---- Markdown: rendered by the gateway (a message's html, safe to
  // insert as it is); the page patches a message block by block ----
  // render shows text, or html when the gateway rendered it. Only the
  // top-level blocks that changed are replaced, so a streamed reply keeps
  // its earlier blocks (and a selection in them) as it grows.
  function render(node, text, html) {
    if (typeof html !== "string" || !html) {
      node.classList.add("plain");
      node.textContent = text;
      return;
    }
    node.classList.remove("plain");
    var tpl = document.createElement("template");
    tpl.innerHTML = html;
    var next = Array.prototype.filter.call(tpl.content.childNodes, function (n) {
      return n.nodeType === Node.ELEMENT_NODE || n.textContent.trim() !== "";
    });
    var old = Array.prototype.slice.call(node.childNodes);
    for (var i = 0; i < next.length; i++) {
      var src = next[i].nodeType === Node.ELEMENT_NODE ? next[i].outerHTML : "#text " + next[i].textContent;
      if (old[i] && old[i].mdSource === src) continue;
      next[i].mdSource = src;
      if (old[i] && morph(old[i], next[i])) { old[i].mdSource = src; continue; }
      if (old[i]) node.replaceChild(next[i], old[i]); else node.appendChild(next[i]);
    }
    for (; i < old.length; i++) node.removeChild(old[i]);
  }
  // morph brings the live node a up to b in place where they have the
  // same shape (the paragraph being written grows by text appended to
  // its text nodes), so that a reader's selection in it stays; false when
  // a must be replaced.
  function morph(a, b) {
    if (a.nodeType !== b.nodeType || a.nodeName !== b.nodeName) return false;
    if (a.nodeType === Node.TEXT_NODE) {
      if (a.data === b.data) return true;
      if (b.data.indexOf(a.data) === 0) a.appendData(b.data.slice(a.data.length));
      else a.data = b.data;
      return true;
    }
    if (a.nodeType !== Node.ELEMENT_NODE || a.attributes.length !== b.attributes.length) return false;
    for (var k = 0; k < b.attributes.length; k++) {
      if (a.getAttribute(b.attributes[k].name) !== b.attributes[k].value) return false;
    }
    var ac = Array.prototype.slice.call(a.childNodes), bc = Array.prototype.slice.call(b.childNodes), i;
    for (i = 0; i < bc.length; i++) {
      if (ac[i] && (ac[i].isEqualNode(bc[i]) || morph(ac[i], bc[i]))) continue;
      if (ac[i]) a.replaceChild(bc[i], ac[i]); else a.appendChild(bc[i]);
    }
    for (; i < ac.length; i++) a.removeChild(ac[i]);
    return true;
  }
  // Code blocks' copy buttons.
  function copyText(s) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(s);
    return new Promise(function (ok, fail) { // plain http from another host
      var ta = document.createElement("textarea");
      ta.className = "sr-only";
      ta.value = s;
      document.body.appendChild(ta);
      ta.select();
      var done = false;
      try { done = document.execCommand("copy"); } catch (e) { /* refused */ }
      ta.remove();
      if (done) ok(); else fail(new Error("copy refused"));
    });
  }
  document.addEventListener("click", function (e) {
    var b = e.target.closest ? e.target.closest(".code-copy") : null;
    if (!b) return;
    var pre = b.closest(".code").querySelector("pre");
    copyText(pre.textContent).then(function () { b.textContent = "Copied"; }, function () { b.textContent = "Copy failed"; })
      .then(function () { setTimeout(function () { b.textContent = "Copy"; }, 1500); });
  });

  // ---- Threads ----
  function renderThreads() {
    // The list is drawn anew: a thread that had the focus keeps it.
    var had = el.threads.contains(document.activeElement) ? document.activeElement.dataset.thread : null;
    el.threads.replaceChildren();
    state.threads.forEach(function (t) {
      var li = document.createElement("li"), b = document.createElement("button");
      b.type = "button";
      var name = document.createElement("span");
      name.className = "name";
      name.textContent = t.title || "New thread";
      b.appendChild(name);
      b.title = (t.title || "New thread") + (t.agent ? " · " + t.agent : "");
      if (t.agent) {
        var ag = document.createElement("span");
        ag.className = "agent";
        ag.textContent = t.agent;
        b.appendChild(ag);
      }
      b.dataset.thread = t.id;
      if (t.typing) { b.classList.add("busy"); b.setAttribute("aria-description", "the agent is working"); }
      b.setAttribute("aria-current", t.id === state.thread ? "true" : "false");
      b.addEventListener("click", function () { go(t.id); menu(false); });
      li.appendChild(b); el.threads.appendChild(li);
      if (t.id === had) b.focus({ preventScroll: true });
    });
    if (had && !el.threads.contains(document.activeElement)) el.newThread.focus();
    var cur = state.threads.find(function (t) { return t.id === state.thread; });
    el.title.textContent = cur ? (cur.title || "New thread") : "New thread";
    el.renameBtn.hidden = el.deleteBtn.hidden = !cur;
    el.agent.textContent = cur && cur.agent || "";
    el.agent.hidden = !(cur && cur.agent);
    // A new thread may pick its agent (GET /api/me's agents, the default
    // first); the choice goes with its first message.
    el.pick.hidden = el.pickLabel.hidden = !!cur || el.pick.options.length < 2;
    document.title = (cur ? (cur.title || "New thread") + " · " : "") + "ACP gateway · web chat";
  }
  // go opens thread id as a step of the browser's history (back and
  // forward switch threads; "" is a new thread, created by its first
  // message).
  function go(id) {
    if (id !== state.thread) history.pushState(null, "", withToken("/") + (id ? "#" + encodeURIComponent(id) : ""));
    select(id);
  }
  function fromAddress() {
    var want = decodeURIComponent(location.hash.slice(1));
    if (want !== state.thread && (!want || state.threads.some(function (t) { return t.id === want; }))) select(want);
  }
  window.addEventListener("popstate", fromAddress);
  window.addEventListener("hashchange", fromAddress);
  // Rename in place; delete after asking.
  el.renameBtn.addEventListener("click", function () {
    el.renameInput.value = el.title.textContent;
    el.title.hidden = el.renameBtn.hidden = true;
    el.rename.hidden = false;
    el.renameInput.select();
    el.renameInput.focus();
  });
  function endRename() { el.rename.hidden = true; el.title.hidden = false; renderThreads(); }
  el.rename.addEventListener("submit", function (e) {
    e.preventDefault();
    var id = state.thread, title = el.renameInput.value.trim();
    endRename();
    if (!title || !id) return;
    el.title.textContent = title;
    api("PATCH", "/api/threads/" + encodeURIComponent(id), { title: title }).then(null, showError);
  });
  el.renameInput.addEventListener("keydown", function (e) { if (e.key === "Escape") { e.preventDefault(); endRename(); el.renameBtn.focus(); } });
  el.renameInput.addEventListener("blur", function () { if (!el.rename.hidden) el.rename.requestSubmit(); });
  el.deleteBtn.addEventListener("click", function () { el.confirm.hidden = false; $("#confirm-no").focus(); });
  $("#confirm-no").addEventListener("click", function () { el.confirm.hidden = true; el.deleteBtn.focus(); });
  el.confirm.addEventListener("keydown", function (e) { if (e.key === "Escape") { e.preventDefault(); $("#confirm-no").click(); } });
  $("#confirm-yes").addEventListener("click", function () {
    var id = state.thread;
    el.confirm.hidden = true;
    api("DELETE", "/api/threads/" + encodeURIComponent(id)).then(function () {
      state.threads = state.threads.filter(function (t) { return t.id !== id; });
      if (state.thread === id) go(state.threads.length ? state.threads[0].id : "");
    }, showError);
  });
  function select(id) {
    if (id === state.thread && state.source) return;
    var again = id && id === state.thread; // reconnecting: the snapshot updates what is shown
    state.thread = id;
    if (id && location.hash.slice(1) !== encodeURIComponent(id)) history.replaceState(null, "", withToken("/") + "#" + encodeURIComponent(id));
    el.confirm.hidden = true;
    if (again) { connect(); return; }
    queued.clear(); // the other thread's
    state.nodes.clear();
    state.planID = "";
    state.lastUser = null;
    state.session = null;
    renderSession();
    el.messages.replaceChildren(el.empty);
    el.empty.hidden = false;
    state.follow = true;
    el.jump.hidden = true;
    setTyping(false);
    stopping(false);
    renderThreads();
    connect();
    if (id || !state.threads.length) el.prompt.focus();
  }
  // newThread creates the thread a first message goes to.
  function newThread() {
    return api("POST", "/api/threads", {}).then(function (t) {
      if (!state.threads.some(function (x) { return x.id === t.id; })) state.threads.unshift(t);
      go(t.id);
      return t.id;
    });
  }

  // ---- Live events ----
  // A streamed reply comes as an edit per piece of text: the messages
  // are shown once per animation frame, each in its latest state, in the
  // order they first came.
  // (A hidden tab gets no frames: a timer stands in.)
  var queued = new Map(), frame = 0, timer = 0;
  function later(msg) {
    queued.set(msg.id, msg); // one already queued keeps its place
    if (!frame) frame = requestAnimationFrame(flush);
    if (!timer) timer = setTimeout(flush, 200);
  }
  function flush() {
    if (frame) { cancelAnimationFrame(frame); frame = 0; }
    if (timer) { clearTimeout(timer); timer = 0; }
    var ms = Array.from(queued.values());
    queued.clear();
    ms.forEach(upsert);
  }
  // One WebSocket per tab: unlike event streams, WebSockets do not count
  // against the browser's six HTTP/1.1 connections per host, so ten tabs
  // stay live and their requests still go out.
  function connect() {
    if (state.source) { state.source.onclose = null; state.source.close(); }
    var path = state.thread ? "/api/threads/" + encodeURIComponent(state.thread) + "/socket" : "/api/socket";
    var ws = new WebSocket(location.origin.replace(/^http/, "ws") + withToken(path)), opened = false;
    state.source = ws;
    ws.onopen = function () { opened = true; offline(false); };
    ws.onmessage = function (e) {
      var m = JSON.parse(e.data), d = m.data;
      if (m.event === "message") { later(d); return; }
      flush(); // what came before is shown first
      if (m.event === "threads") { state.threads = d.threads || []; renderThreads(); }
      else if (m.event === "thread") { putThread(d); renderThreads(); }
      else if (m.event === "threadRemoved") { state.threads = state.threads.filter(function (t) { return t.id !== d.id; }); renderThreads(); }
      else if (m.event === "typing") setTyping(d.typing);
      else if (m.event === "session") { state.session = d; renderSession(); }
    };
    ws.onclose = function () {
      if (state.source !== ws) return;
      state.source = null;
      reconnect(opened ? 500 : 1000);
    };
  }
  // reconnect looks at the thread list again (the thread may be gone)
  // and opens its socket, backing off while the gateway cannot be
  // reached; what the page shows stays meanwhile.
  function reconnect(wait) {
    setTimeout(function () {
      refreshThreads().then(function () {
        if (!state.source) select(chooseThread(state.thread));
      }, function () { reconnect(Math.min(30000, wait * 2)); });
    }, wait);
  }
  // putThread applies a "thread" event, the one entry that changed: it
  // replaces or adds it and keeps the list in the server's order, the
  // highest activity first.
  function putThread(d) {
    var i = state.threads.findIndex(function (t) { return t.id === d.id; });
    if (i >= 0) state.threads[i] = d; else state.threads.push(d);
    state.threads.sort(function (a, b) { return (b.activity || 0) - (a.activity || 0); });
  }
  function refreshThreads() {
    return api("GET", "/api/threads").then(function (d) {
      state.threads = d.threads || [];
      renderThreads();
    }, function (err) { showError(err); throw err; });
  }
  function chooseThread(want) {
    if (want && state.threads.some(function (t) { return t.id === want; })) return want;
    return state.threads.length ? state.threads[0].id : "";
  }

  // ---- Messages ----
  function nearBottom() {
    var m = el.messages;
    return m.scrollHeight - m.scrollTop - m.clientHeight < 80;
  }
  // toEnd keeps the list at its newest message while it follows; a
  // reader who scrolled up is told that more came instead.
  function toEnd(added) {
    if (state.follow) el.messages.scrollTop = el.messages.scrollHeight;
    else if (added) el.jump.hidden = false;
  }
  el.messages.addEventListener("scroll", function () {
    state.follow = nearBottom();
    if (state.follow) el.jump.hidden = true;
  });
  el.jump.addEventListener("click", function () { state.follow = true; el.jump.hidden = true; toEnd(); });
  // The list's own box shrinks when a line above or below it appears
  // (the session line, typing, a growing composer): while it follows,
  // it stays at its newest message.
  new ResizeObserver(function () { if (state.follow) el.messages.scrollTop = el.messages.scrollHeight; }).observe(el.messages);
  function menu(open) {
    el.app.classList.toggle("menu", open);
    el.menu.setAttribute("aria-expanded", String(open));
    if (open) (el.threads.querySelector("button") || el.newThread).focus();
  }
  el.menu.addEventListener("click", function () { menu(!el.app.classList.contains("menu")); });
  el.scrim.addEventListener("click", function () { menu(false); });
  // On a phone the open list covers the thread: Tab out of it closes it.
  $("#sidebar").addEventListener("focusout", function (e) {
    if (el.app.classList.contains("menu") && e.relatedTarget && !e.currentTarget.contains(e.relatedTarget)) menu(false);
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && el.app.classList.contains("menu")) { menu(false); el.menu.focus(); }
  });
  function upsert(msg) {
    var node = state.nodes.get(msg.id), added = !node, height = el.messages.scrollHeight;
    if (!node) {
      node = document.createElement("article");
      node.className = "msg";
      node.dataset.id = msg.id;
      var meta = document.createElement("div");
      meta.className = "meta";
      node.appendChild(meta);
      state.nodes.set(msg.id, node);
      el.empty.hidden = true;
      node.dataset.who = msg.role + ":" + msg.author;
      node.dataset.at = Date.parse(msg.time) || 0;
      var prev = el.messages.lastElementChild;
      if (prev && prev.dataset.who === node.dataset.who && node.dataset.at - prev.dataset.at < 600000) node.classList.add("cont");
      el.messages.appendChild(node);
      if (msg.role === "user") {
        // A new turn: the pinned plan was the last one's (it stays in
        // the history); a plan of this turn pins itself again.
        state.lastUser = node;
        pin(null);
      }
    }
    fill(node, msg);
    waiting(node);
    noticed(msg);
    if (msg.kind === "plan" && !(state.lastUser && state.lastUser.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_PRECEDING)) {
      if (state.planID !== msg.id) pin(node); // a late edit of an earlier turn's plan does not pin it again
    }
    // A reply growing below a reader who scrolled up is news too.
    toEnd(added || el.messages.scrollHeight > height);
  }
  // fill brings node up to date with msg, keeping the node (and its
  // text container) so a message changes in place.
  function fill(node, msg) {
    node.dataset.kind = msg.kind;
    node.dataset.role = msg.role;
    node.setAttribute("aria-label", label(msg));
    var meta = node.querySelector(".meta");
    if (!meta.firstChild) {
      // One header per run of messages from the same sender: who and
      // when. Streamed text and tool updates are not marked as edits.
      var t = new Date(msg.time), time = document.createElement("time");
      time.dateTime = msg.time;
      time.textContent = isNaN(t) ? "" : t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      meta.append(msg.role === "user" ? msg.author : msg.role === "system" ? "Gateway" : "Agent", " ", time);
    }
    var body = bodyFor(node, msg.kind);
    var text = body.querySelector(".text");
    if (text.dataset.src !== msg.text) {
      text.dataset.src = msg.text;
      if (msg.role === "user") { text.textContent = msg.text; thumbs(body, msg.files); }
      else if (msg.kind === "notice" && failure(text, msg.text)) { /* shown */ }
      else if (msg.kind === "plan") render(text, msg.text.replace(/^📋 Plan\n/u, "")); // a checklist: plain lines
      else if (msg.card) permission(node, text, msg);
      else render(text, msg.text, msg.html);
      if (msg.role !== "user") attachments(body, msg.files);
    }
    node.classList.toggle("failed", msg.kind === "tool" && /· failed\s*$/.test(msg.text));
    // A picker (/model, /effort: buttons without a permission card) and
    // an answered question look apart from prompts and notices.
    node.classList.toggle("choice", msg.kind === "permission" && !msg.card);
    node.classList.toggle("answer", !!msg.asked);
    text.querySelectorAll("input[type=checkbox]:not([aria-label])").forEach(function (c) { c.setAttribute("aria-label", c.checked ? "done" : "not done"); });
    if (msg.kind === "plan") planSummary(node, msg.text);
    if (msg.kind === "tool") toolDetail(body, text, msg.tool);
    var qf = node.querySelector(".qform");
    if (msg.form && !qf) body.appendChild(questionForm(node, msg));
    else if (!msg.form && qf) qf.remove(); // answered: the edited text says how
    var rs = node.querySelector(".reactions"), list = (msg.reactions || []).join(" ");
    if (list && !rs) { rs = document.createElement("div"); rs.className = "reactions"; node.appendChild(rs); }
    if (rs) { rs.textContent = list; rs.setAttribute("aria-label", "Reactions: " + list); rs.hidden = !list; }
    var opts = node.querySelector(".options");
    var has = msg.options && msg.options.length;
    if (has && !opts) {
      opts = document.createElement("div");
      opts.className = "options";
      opts.setAttribute("role", "group");
      opts.setAttribute("aria-label", "Answer");
      var first = true; // one primary button: the first allow option
      msg.options.forEach(function (o) {
        var b = document.createElement("button"), main = o.style === "primary" && first;
        if (main) first = false;
        b.type = "button";
        b.className = "btn" + (main ? " primary" : o.style === "danger" ? " danger" : "");
        b.dataset.option = o.id;
        b.textContent = o.label || o.id;
        b.addEventListener("click", function () { answer(node, msg.id, o.id, b); });
        opts.appendChild(b);
      });
      body.appendChild(opts);
    } else if (!has && opts) {
      opts.remove(); // answered: the edited text says how
    }
  }
  // bodyFor returns the element holding .text for a kind, rebuilding it
  // only when the kind changes between a card and a collapsed thought.
  function bodyFor(node, kind) {
    var want = kind === "thought" || kind === "plan" ? "details" : kind === "permission" ? "card" : "plain";
    var body = node.querySelector(".body");
    if (body && body.dataset.shape === want) return body;
    var text = body ? body.querySelector(".text") : null;
    var old = body;
    if (want === "details") {
      body = document.createElement("details");
      var s = document.createElement("summary");
      s.textContent = "Thought";
      body.open = kind === "plan";
      body.appendChild(s);
    } else {
      body = document.createElement("div");
      if (want === "card") body.className = "card";
    }
    body.classList.add("body");
    body.dataset.shape = want;
    if (!text) { text = document.createElement("div"); text.className = "text"; }
    body.appendChild(text);
    var opts = old ? old.querySelector(".options") : null;
    if (opts) body.appendChild(opts);
    if (old) old.replaceWith(body); else node.appendChild(body);
    return body;
  }
  // toolDetail makes a tool line open on click to show what the tool
  // showed: its input, output, diffs (coloured) and locations.
  function toolDetail(body, text, d) {
    var panel = body.querySelector(".tool-detail");
    if (!d) { if (panel) panel.remove(); text.removeAttribute("role"); return; }
    var open = panel ? !panel.hidden : false;
    var fresh = document.createElement("div");
    fresh.className = "tool-detail";
    fresh.hidden = !open;
    var part = function (name, value) {
      if (!value) return;
      var h = document.createElement("div"), pre = document.createElement("pre");
      h.className = "tool-part";
      h.textContent = name;
      pre.textContent = value;
      fresh.append(h, pre);
    };
    part("Input", d.input);
    (d.diffs || []).forEach(function (df) {
      var h = document.createElement("div"), pre = document.createElement("pre"), code = document.createElement("code");
      h.className = "tool-part";
      h.textContent = "Diff · " + df.path;
      pre.className = "chroma";
      var lines = function (s, mark, cls) {
        if (!s) return;
        s.replace(/\n$/, "").split("\n").forEach(function (l) {
          var sp = document.createElement("span");
          sp.className = cls;
          sp.textContent = mark + l + "\n";
          code.appendChild(sp);
        });
      };
      lines(df.old, "- ", "gd");
      lines(df.new, "+ ", "gi");
      pre.appendChild(code);
      fresh.append(h, pre);
    });
    part("Output", d.output);
    part("Locations", (d.locations || []).join("\n"));
    if (panel) panel.replaceWith(fresh); else body.appendChild(fresh);
    if (text.getAttribute("role") !== "button") {
      text.setAttribute("role", "button");
      text.tabIndex = 0;
      text.title = "Show the details";
      var toggle = function () {
        var p = body.querySelector(".tool-detail");
        p.hidden = !p.hidden;
        text.setAttribute("aria-expanded", String(!p.hidden));
      };
      text.addEventListener("click", function (e) { if (!e.target.closest("a")) toggle(); });
      text.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); } });
    }
    text.setAttribute("aria-expanded", String(open));
  }
