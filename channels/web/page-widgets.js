  // The second half of the page's script (page-core.js is the first),
  // inside the function page-core.js opens: attachments, cards, forms,
  // the session header, the command palette, the composer, start.

  // attachments shows the files the gateway put into the thread: a
  // download link each, after an image's preview.
  function attachments(body, files) {
    var old = body.querySelector(".attachments");
    if (old) old.remove();
    var kept = (files || []).filter(function (f) { return f.url; });
    if (!kept.length) return;
    var box = document.createElement("div");
    box.className = "attachments";
    kept.forEach(function (f) {
      if (f.thumb) {
        var img = document.createElement("img");
        img.src = f.thumb;
        img.alt = f.name;
        img.title = f.name;
        // The preview opens the whole picture (lightbox).
        var open = document.createElement("button");
        open.type = "button";
        open.className = "open";
        open.setAttribute("aria-label", "Open " + f.name);
        open.appendChild(img);
        open.addEventListener("click", function () { lightbox(withToken(f.url), f.name); });
        box.appendChild(open);
      }
      var a = document.createElement("a");
      a.className = "download";
      a.href = withToken(f.url);
      a.download = f.name;
      a.textContent = "⬇ " + f.name + " (" + sizeText(f.size) + ")";
      box.appendChild(a);
    });
    body.appendChild(box);
  }
  // lightbox shows the picture at url over the page, as large as it
  // fits; a click on it, the × or outside it, or Escape closes it.
  function lightbox(url, name) {
    var d = document.getElementById("lightbox");
    if (!d) {
      d = document.createElement("dialog");
      d.id = "lightbox";
      var close = document.createElement("button");
      close.type = "button";
      close.className = "close";
      close.textContent = "×";
      close.setAttribute("aria-label", "Close");
      close.addEventListener("click", function () { d.close(); });
      d.append(document.createElement("img"), close);
      d.addEventListener("click", function (e) { if (e.target !== close) d.close(); });
      d.addEventListener("close", function () { d.querySelector("img").removeAttribute("src"); });
      document.body.appendChild(d);
    }
    var img = d.querySelector("img");
    img.src = url;
    img.alt = name;
    d.setAttribute("aria-label", name);
    d.showModal();
  }
  // sizeText writes a file's size for people.
  function sizeText(n) {
    if (n < 1024) return n + (n === 1 ? " byte" : " bytes");
    var units = ["KiB", "MiB", "GiB"], u = -1;
    do { n /= 1024; u++; } while (n >= 1024 && u < units.length - 1);
    return (Math.round(n * 10) / 10) + " " + units[u];
  }
  // thumbs shows previews of the images a person attached.
  function thumbs(body, files) {
    var old = body.querySelector(".thumbs");
    if (old) old.remove();
    var imgs = (files || []).filter(function (f) { return f.thumb; });
    if (!imgs.length) return;
    var box = document.createElement("div");
    box.className = "thumbs";
    imgs.forEach(function (f) {
      var img = document.createElement("img");
      img.src = f.thumb;
      img.alt = f.name;
      img.title = f.name;
      box.appendChild(img);
    });
    body.appendChild(box);
  }
  // permission shows a prompt's card (the text taken apart by the
  // gateway): the title with the kind's mark, the files, the input as
  // fields, the diff coloured; once answered, folded to its outcome.
  function permission(node, text, msg) {
    var c = msg.card, h = function (tag, cls, txt) {
      var e = document.createElement(tag);
      if (cls) e.className = cls;
      if (txt !== undefined) e.textContent = txt;
      return e;
    };
    var parts = [], title = h("div", "perm-title");
    title.append(h("span", "perm-mark", c.mark), " ", h("strong", "", c.title));
    if (c.kind) title.append(" ", h("span", "perm-kind", c.kind));
    parts.push(title);
    if (c.files && c.files.length) {
      var ul = h("ul", "perm-files");
      c.files.forEach(function (f) {
        var li = h("li");
        li.append(h("code", "", f.path));
        if (f.note) li.append(" ", h("span", /outside/.test(f.note) ? "perm-warn" : "", f.note));
        ul.appendChild(li);
      });
      parts.push(ul);
    }
    if (c.fields && c.fields.length) {
      var dl = h("dl", "perm-fields");
      c.fields.forEach(function (f) {
        var dd = h("dd"), lines = f.value.split("\n").length;
        if (lines > 1 || f.value.length > 160) {
          var d = h("details"), pre = h("pre", "", f.value);
          d.append(h("summary", "", lines > 1 ? lines + " lines" : f.value.length + " characters"), pre);
          dd.appendChild(d);
        } else dd.appendChild(h("code", "", f.value));
        dl.append(h("dt", "", f.name), dd);
      });
      parts.push(dl);
    } else if (c.input) {
      var p = h("p", "perm-input");
      p.append("Input: ", h("code", "", c.input));
      parts.push(p);
    }
    if (c.html) { var rest = h("div", "perm-rest"); render(rest, "", c.html); parts.push(rest); }
    node.classList.toggle("answered", !!c.outcome);
    if (!c.outcome) { text.replaceChildren.apply(text, parts); return; }
    var t = new Date(msg.updated || msg.time), fold = h("details", "perm-done"), s = h("summary");
    s.textContent = c.outcome + (isNaN(t) ? "" : " · " + t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }));
    fold.appendChild(s);
    fold.append.apply(fold, parts);
    text.replaceChildren(fold);
  }
  // failure shows an agent's error as its message, with the raw text
  // (often a JSON-RPC error) folded underneath.
  function failure(node, text) {
    var m = /^(\S*\s*The agent failed: )([\s\S]*)$/.exec(text);
    if (!m) return false;
    var raw = m[2], said = "", i = raw.indexOf("{");
    try { var j = JSON.parse(raw.slice(i)); said = [j.message, j.data && (j.data.message || j.data.details || (typeof j.data === "string" && j.data))].filter(Boolean).join(": "); } catch (e) {
      var q = /"message"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(raw);
      said = q ? q[1] : "";
    }
    if (i < 0 && !said) return false; // plain words already
    said = (i > 0 ? raw.slice(0, i).replace(/[\s:,(-]+$/, "") + (said ? ": " : "") : "") + said;
    var p = document.createElement("p"), d = document.createElement("details"), s = document.createElement("summary"), pre = document.createElement("pre");
    p.textContent = m[1] + (said || "see the details");
    s.textContent = "Details";
    pre.textContent = raw;
    d.className = "failed";
    d.append(s, pre);
    node.replaceChildren(p, d);
    return true;
  }
  function label(msg) {
    switch (msg.kind) {
      case "tool": return "Tool";
      case "status": return "Status";
      case "notice": return "Notice";
      case "plan": return "Plan";
      case "thought": return "Thought";
      case "permission": return "Permission request";
      case "file": return "File";
      default: return msg.role === "user" ? msg.author : "Agent";
    }
  }
  // The plan is shown once: its message, pinned at the top of the list
  // while its turn runs, folded to its summary once every entry is done.
  function pin(node) {
    var old = state.nodes.get(state.planID);
    if (old) old.classList.remove("pinned");
    state.planID = node ? node.dataset.id : "";
    if (node) node.classList.add("pinned");
  }
  function planSummary(node, text) {
    var all = text.match(/^(✅|🔄|⬜)/gmu) || [], done = text.match(/^✅/gmu) || [];
    var d = node.querySelector("details");
    d.querySelector("summary").textContent = "Plan · " + (all.length && done.length === all.length ? "all " + all.length + " done" : done.length + " of " + all.length + " done");
    if (!node.dataset.folded && all.length && done.length === all.length) { node.dataset.folded = "1"; d.open = false; }
  }
  function answer(node, msgID, optionID, button) {
    var buttons = node.querySelectorAll(".options button");
    buttons.forEach(function (b) { b.disabled = true; });
    button.setAttribute("aria-pressed", "true");
    var path = "/api/threads/" + encodeURIComponent(state.thread) + "/prompts/" + encodeURIComponent(msgID) + "/answer";
    api("POST", path, { author: author(), optionId: optionID }).then(function (res) {
      if (res.reply) note(node, res.reply);
    }, function (err) {
      note(node, err.message);
      if (!/no options/.test(err.message)) buttons.forEach(function (b) { b.disabled = false; });
    });
  }
  // ---- Forms: an agent's question, answered in the thread ----
  function questionForm(node, msg) {
    var f = document.createElement("form"), form = msg.form, mk = function (tag, cls, txt) {
      var e = document.createElement(tag);
      if (cls) e.className = cls;
      if (txt) e.textContent = txt;
      return e;
    };
    f.className = "qform";
    f.setAttribute("aria-label", form.title || "Question");
    var uid = "q" + msg.id + "-";
    if (form.url) {
      var a = mk("a", "", "Open " + form.url.replace(/^https?:\/\//, "").slice(0, 60));
      a.href = form.url; a.target = "_blank"; a.rel = "noopener noreferrer";
      f.appendChild(a);
    }
    (form.fields || []).forEach(function (fd) {
      var id = uid + fd.id, w, input, help;
      if (fd.kind === "choice" && fd.options.length <= 5 || fd.kind === "multi") {
        w = mk("fieldset");
        w.appendChild(mk("legend", "", fd.label + (fd.required ? " *" : "")));
        fd.options.forEach(function (o) {
          var l = mk("label", "opt"), i = document.createElement("input");
          i.type = fd.kind === "multi" ? "checkbox" : "radio";
          i.name = id; i.value = o.id;
          i.checked = (fd.default || "").split(",").indexOf(o.id) >= 0;
          if (fd.kind === "choice" && fd.required) i.required = true;
          l.append(i, " " + o.label);
          w.appendChild(l);
        });
      } else {
        w = mk("div");
        var l = mk("label", "lbl", fd.label + (fd.required ? " *" : ""));
        l.htmlFor = id;
        if (fd.kind === "choice") {
          input = document.createElement("select");
          if (!fd.required || !fd.default) input.appendChild(new Option("—", ""));
          fd.options.forEach(function (o) { input.appendChild(new Option(o.label, o.id, false, o.id === fd.default)); });
        } else if (fd.kind === "bool") {
          input = document.createElement("input");
          input.type = "checkbox";
          input.checked = fd.default === "true";
          l.textContent = " " + fd.label;
          l.prepend(input);
        } else {
          input = document.createElement(fd.multiline ? "textarea" : "input");
          if (!fd.multiline) input.type = fd.kind === "number" ? "number" : "text";
          if (fd.kind === "number") { input.step = "any"; if (fd.min != null) input.min = fd.min; if (fd.max != null) input.max = fd.max; }
          else { if (fd.min != null) input.minLength = fd.min; if (fd.max != null) input.maxLength = fd.max; }
          input.value = fd.default || "";
        }
        input.id = id; input.name = id;
        if (fd.required && fd.kind !== "bool") input.required = true;
        w.appendChild(l);
        if (fd.kind !== "bool") w.appendChild(input);
      }
      if (fd.help) {
        help = mk("div", "help", fd.help);
        help.id = id + "-help";
        (input || w).setAttribute("aria-describedby", help.id);
        w.appendChild(help);
      }
      f.appendChild(w);
    });
    var opts = mk("div", "qbtns"), ok = mk("button", "btn primary", form.url ? "Done" : "Submit"), no = mk("button", "btn", "Decline");
    ok.type = "submit"; no.type = "button";
    opts.append(ok, no);
    f.appendChild(opts);
    var done = function (action) {
      var values = {};
      if (action === "accept") (form.fields || []).forEach(function (fd) {
        var id = uid + fd.id, v = [];
        if (fd.kind === "bool") v = [String(f.elements[id].checked)];
        else if (fd.kind === "choice" && fd.options.length <= 5 || fd.kind === "multi") {
          f.querySelectorAll("input[name=\"" + CSS.escape(id) + "\"]:checked").forEach(function (i) { v.push(i.value); });
        } else if (f.elements[id].value !== "") v = [f.elements[id].value];
        values[fd.id] = v;
      });
      ok.disabled = no.disabled = true;
      api("POST", "/api/threads/" + encodeURIComponent(state.thread) + "/forms/" + encodeURIComponent(msg.id) + "/answer", { author: author(), action: action, values: values })
        .then(function (res) { if (res.reply) note(node, res.reply); }, function (err) { note(node, err.message); ok.disabled = no.disabled = false; });
    };
    f.addEventListener("submit", function (e) { e.preventDefault(); done("accept"); });
    no.addEventListener("click", function () { done("decline"); });
    return f;
  }
  function note(node, text) {
    var n = node.querySelector(".reply");
    if (!n) {
      n = document.createElement("div");
      n.className = "reply";
      n.setAttribute("role", "status");
      node.appendChild(n);
    }
    n.textContent = "Only you see this: " + text;
  }
  function setTyping(on) {
    state.typing = on;
    busy();
  }
  // A stop shows "Stopping…" at once, and the thread stays busy until
  // the turn has really ended: the session stops typing at once, posts a
  // "Stopping…" notice and edits it when the turn has ended.
  function busy() {
    var on = state.typing || state.stopping;
    if (!on) pin(null); // the turn has ended: its plan stays in the history
    el.typing.hidden = !on;
    el.stop.hidden = !on;
    el.stop.disabled = state.stopping;
    el.stop.textContent = state.stopping ? "Stopping…" : "Stop";
    el.busy.textContent = state.stopping ? "Stopping" : "The agent is working";
    toEnd();
  }
  function stopping(on, note) {
    state.stopping = on;
    state.stopNote = on && note || "";
    if (!on) {
      state.waiting.clear();
      el.messages.querySelectorAll(".waiting").forEach(function (n) { n.remove(); });
    }
    busy();
  }
  function noticed(msg) {
    if (msg.kind !== "notice" && msg.role !== "system") return;
    if (/Stopping…$/.test(msg.text)) {
      // (One left over from a gateway that stopped meanwhile is old.)
      if (Date.now() - Date.parse(msg.time) < 300000) stopping(true, msg.id);
    } else if (state.stopping && (msg.id === state.stopNote || !state.stopNote)) {
      stopping(false); // the turn ended (or nothing was running)
    }
  }
  function waiting(node) {
    if (!state.waiting.has(node.dataset.id) || node.querySelector(".waiting")) return;
    var w = document.createElement("div");
    w.className = "waiting";
    w.textContent = "waiting for the stop…";
    node.appendChild(w);
  }

  // ---- Session: agent · model · mode · context, a menu for each setting ----
  function renderSession() {
    var s = state.session, box = el.session;
    box.replaceChildren();
    box.hidden = !s;
    if (!s) return;
    var sep = function () { var x = document.createElement("span"); x.className = "sep"; x.setAttribute("aria-hidden", "true"); box.appendChild(x); };
    if (s.agent) box.append(s.agent);
    (s.settings || []).forEach(function (st) {
      var cur = (st.values || []).find(function (v) { return v.id === st.current; }), b = document.createElement("button");
      sep();
      b.type = "button";
      b.className = "btn";
      b.dataset.setting = st.id;
      b.textContent = (cur ? cur.label : st.current || st.name) + " ▾";
      b.setAttribute("aria-haspopup", "menu");
      b.setAttribute("aria-expanded", "false");
      b.setAttribute("aria-label", st.name + ": " + (cur ? cur.label : st.current || "not set"));
      b.addEventListener("click", function () { settingMenu(b, st); });
      box.appendChild(b);
    });
    ["model", "mode", "effort"].forEach(function (k) { // known but not settable here: as text
      if (s[k] && !(s.settings || []).some(function (st) { return st.command === k; })) { sep(); box.append(s[k]); }
    });
    if (s.contextShare) { sep(); box.append(s.contextShare + " context"); }
    if (s.currency) { sep(); box.append((s.currency === "USD" ? "$" + s.cost.toFixed(2) : s.cost.toFixed(2) + " " + s.currency)); }
  }
  function settingMenu(b, st) {
    var old = el.session.querySelector(".menu");
    if (old) { old.remove(); el.session.querySelectorAll("[aria-expanded]").forEach(function (x) { x.setAttribute("aria-expanded", "false"); }); if (old.dataset.for === st.id) return; }
    var m = document.createElement("ul"), items = [];
    m.className = "menu";
    m.dataset.for = st.id;
    m.setAttribute("role", "menu");
    m.setAttribute("aria-label", st.name);
    m.style.left = b.offsetLeft + "px";
    m.style.top = b.offsetTop + b.offsetHeight + "px";
    var close = function (focus) { m.remove(); b.setAttribute("aria-expanded", "false"); if (focus) b.focus(); };
    (st.values || []).forEach(function (v) {
      var li = document.createElement("li"), i = document.createElement("button");
      li.setAttribute("role", "none");
      i.type = "button";
      i.setAttribute("role", "menuitemradio");
      i.setAttribute("aria-checked", String(v.id === st.current));
      i.dataset.value = v.id;
      i.textContent = v.label;
      i.addEventListener("click", function () {
        close(true);
        api("POST", "/api/threads/" + encodeURIComponent(state.thread) + "/commands",
          { author: author(), name: st.command, args: st.command === "set" ? st.id + " " + v.id : v.id }).then(function () { showError(null); }, showError);
      });
      li.appendChild(i); m.appendChild(li); items.push(i);
    });
    m.addEventListener("keydown", function (e) {
      var k = items.indexOf(document.activeElement);
      if (e.key === "ArrowDown" || e.key === "ArrowUp") { e.preventDefault(); items[(k + (e.key === "ArrowDown" ? 1 : items.length - 1)) % items.length].focus(); }
      else if (e.key === "Escape" || e.key === "Tab") { e.preventDefault(); close(true); }
    });
    el.session.appendChild(m);
    m.style.left = Math.max(0, Math.min(b.offsetLeft, el.session.clientWidth - m.offsetWidth)) + "px"; // kept on screen
    b.setAttribute("aria-expanded", "true");
    (items.find(function (i) { return i.getAttribute("aria-checked") === "true"; }) || items[0]).focus();
  }

  // ---- Command palette: "/" at the start of the composer ----
  var pal = { items: [], at: 0, q: null };
  function commands() {
    var seen = {}, out = [];
    ((state.session && state.session.commands) || []).concat(me.commands || []).forEach(function (c) {
      if (!seen[c.name]) { seen[c.name] = 1; out.push(c); }
    });
    return out;
  }
  function palette() {
    var m = /^\/(\S*)$/.exec(el.prompt.value), q = m ? m[1].toLowerCase() : null;
    // The exact name first, then those it starts, then the rest.
    function rank(c) { return c.name === q ? 0 : c.name.indexOf(q) === 0 ? 1 : 2; }
    pal.q = q;
    pal.items = q === null ? [] : commands().filter(function (c) { return c.name.indexOf(q) >= 0; })
      .sort(function (a, b) { return rank(a) - rank(b); });
    pal.at = 0;
    el.palette.replaceChildren();
    pal.items.forEach(function (c, i) {
      var li = document.createElement("li"), n = document.createElement("b"), d = document.createElement("span");
      li.id = "pal-" + i;
      li.setAttribute("role", "option");
      n.textContent = "/" + c.name + (c.arg ? " " + c.arg : "");
      d.textContent = c.description || "";
      li.append(n, d);
      if (c.agent) { var t = document.createElement("span"); t.className = "tag"; t.textContent = "agent"; li.appendChild(t); }
      li.addEventListener("mousedown", function (e) { e.preventDefault(); pick(i); });
      el.palette.appendChild(li);
    });
    el.palette.hidden = !pal.items.length;
    mark();
  }
  function mark() {
    Array.prototype.forEach.call(el.palette.children, function (li, i) { li.setAttribute("aria-selected", String(i === pal.at)); });
    var cur = el.palette.children[pal.at];
    if (cur) { el.prompt.setAttribute("aria-activedescendant", cur.id); cur.scrollIntoView({ block: "nearest" }); }
    else el.prompt.removeAttribute("aria-activedescendant");
  }
  function pick(i) {
    el.prompt.value = "/" + pal.items[i].name + " ";
    closePalette();
    el.prompt.focus();
  }
  function closePalette() { pal.items = []; el.palette.hidden = true; el.prompt.removeAttribute("aria-activedescendant"); }
  el.prompt.addEventListener("input", palette);
  el.prompt.addEventListener("blur", closePalette);
  el.prompt.addEventListener("keydown", function (e) {
    if (el.palette.hidden || e.isComposing) return;
    var n = pal.items.length;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") { pal.at = (pal.at + (e.key === "ArrowDown" ? 1 : n - 1)) % n; mark(); }
    else if (e.key === "Enter" && !e.shiftKey && pal.items[pal.at] && pal.items[pal.at].name === pal.q) {
      // A complete command: Enter sends it, as typed.
      closePalette();
      return;
    }
    else if (e.key === "Enter" || e.key === "Tab") pick(pal.at);
    else if (e.key === "Escape") closePalette();
    else return;
    e.preventDefault();
    e.stopImmediatePropagation();
  });
  document.addEventListener("click", function (e) {
    var m = el.session.querySelector(".menu");
    if (m && !el.session.contains(e.target)) { m.remove(); el.session.querySelectorAll("[aria-expanded]").forEach(function (x) { x.setAttribute("aria-expanded", "false"); }); }
  });

  // ---- Composer ----
  // grow fits the composer to its text, up to its max-height (40 % of
  // the screen), past which it scrolls inside itself.
  function grow() {
    var p = el.prompt;
    p.style.height = "auto";
    var border = p.offsetHeight - p.clientHeight, max = parseFloat(getComputedStyle(p).maxHeight) || Infinity;
    var want = p.scrollHeight + border;
    p.style.height = Math.min(want, max) + "px";
    p.style.overflowY = want > max ? "auto" : "hidden";
  }
  el.prompt.addEventListener("input", grow);
  el.empty.addEventListener("click", function (e) {
    var b = e.target.closest("button[data-text]");
    if (!b) return;
    el.prompt.value = b.dataset.text;
    grow();
    el.prompt.focus();
  });
  function send() {
    // Blank lines before the text are nobody's message (a stray Enter).
    var typed = el.prompt.value, text = typed.replace(/^\s*\n/, "");
    if (!text.trim() && !pending.length) return;
    if (new TextEncoder().encode(text).length > maxText) { showError(tooLong); return; }
    if (!me.fixed && store.get("acpgw.asked") !== "1" && !el.author.value.trim()) { askName(); return; }
    el.send.disabled = true;
    state.follow = true;
    var files = pending.slice();
    var agent = !state.thread && !el.pick.hidden ? el.pick.value : "";
    // (A second send while the new thread is being created goes to it.)
    var ready = state.thread ? Promise.resolve(state.thread) : state.creating || (state.creating = newThread().finally(function () { state.creating = null; }));
    ready.then(function (id) {
      var body = { author: author(), text: text };
      if (files.length) body.files = files;
      if (agent) body.agent = agent;
      return api("POST", "/api/threads/" + encodeURIComponent(id) + "/messages", body);
    }).then(function (res) {
      if (state.stopping) {
        state.waiting.add(res.id);
        var node = state.nodes.get(res.id);
        if (node) waiting(node);
      }
      // Keep what was typed while the message was on its way.
      var now = el.prompt.value;
      el.prompt.value = now.indexOf(typed) === 0 ? now.slice(typed.length).replace(/^\s*\n/, "") : now;
      grow();
      pending = [];
      renderFiles();
      showError(null);
    }, showError).finally(function () {
      el.send.disabled = false;
      el.prompt.focus();
    });
  }
  // Files go as base64 in the message's JSON; the gateway reads text
  // files and images, and says why it left any other out.
  function addFiles(list) {
    Array.prototype.forEach.call(list, function (f) {
      var r = new FileReader();
      r.onload = function () {
        var url = String(r.result);
        pending.push({ name: f.name || "pasted", type: f.type || "", data: url.slice(url.indexOf(",") + 1) });
        renderFiles();
      };
      r.onerror = function () { showError("cannot read " + f.name); };
      r.readAsDataURL(f);
    });
  }
  function renderFiles() {
    el.files.replaceChildren();
    pending.forEach(function (f, i) {
      var chip = document.createElement("span");
      chip.className = "file";
      if (/^image\/(png|jpeg|gif|webp)$/.test(f.type)) {
        var img = document.createElement("img");
        img.src = "data:" + f.type + ";base64," + f.data;
        img.alt = "";
        chip.append(img, f.name);
      } else chip.textContent = "📎 " + f.name;
      var rm = document.createElement("button");
      rm.type = "button";
      rm.textContent = "×";
      rm.setAttribute("aria-label", "Remove " + f.name);
      rm.addEventListener("click", function () { pending.splice(i, 1); renderFiles(); });
      chip.appendChild(rm);
      el.files.appendChild(chip);
    });
    el.files.hidden = !pending.length;
  }
  el.attach.addEventListener("click", function () { el.fileInput.click(); });
  el.fileInput.addEventListener("change", function () { addFiles(el.fileInput.files); el.fileInput.value = ""; });
  // Files dropped anywhere on the thread are attached.
  var dragging = 0;
  function dragged(e) { return e.dataTransfer && Array.prototype.indexOf.call(e.dataTransfer.types || [], "Files") >= 0; }
  el.main.addEventListener("dragenter", function (e) { if (dragged(e)) { dragging++; el.main.classList.add("dropping"); } });
  el.main.addEventListener("dragleave", function () { if (dragging && !--dragging) el.main.classList.remove("dropping"); });
  el.main.addEventListener("dragover", function (e) { if (dragged(e)) { e.preventDefault(); e.dataTransfer.dropEffect = "copy"; } });
  el.main.addEventListener("drop", function (e) {
    dragging = 0;
    el.main.classList.remove("dropping");
    if (!e.dataTransfer || !e.dataTransfer.files.length) return;
    e.preventDefault();
    addFiles(e.dataTransfer.files);
    el.prompt.focus();
  });
  el.prompt.addEventListener("paste", function (e) {
    var files = e.clipboardData && e.clipboardData.files;
    if (files && files.length) { e.preventDefault(); addFiles(files); }
  });
  el.form.addEventListener("submit", function (e) { e.preventDefault(); send(); });
  // The name is asked once, at the first send, and kept in the browser;
  // a named token's holder is never asked.
  function askName() {
    el.ask.hidden = false;
    el.askName.placeholder = me.name;
    el.askName.focus();
  }
  // (Not a form: the Enter that sent the message must not answer.)
  el.askName.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.isComposing) { e.preventDefault(); named(); }
  });
  $("#ask-ok").addEventListener("click", named);
  function named() {
    el.author.value = el.askName.value.trim();
    store.set("acpgw.author", el.author.value);
    store.set("acpgw.asked", "1");
    el.ask.hidden = true;
    send();
  }
  el.prompt.addEventListener("input", function () {
    if (el.error.textContent === tooLong && new TextEncoder().encode(el.prompt.value).length <= maxText) showError(null);
  });
  el.prompt.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
    // Escape in an empty composer stops the running turn.
    if (e.key === "Escape" && !el.prompt.value && !el.stop.hidden && !el.stop.disabled) { e.preventDefault(); el.stop.click(); }
  });
  // Stop ends the running turn, and what is queued behind it runs next;
  // held down (or with Shift) it drops the queued messages too.
  function stopTurn(all) {
    if (!state.thread) return;
    stopping(true);
    var body = { author: author() };
    if (all) body.all = true;
    api("POST", "/api/threads/" + encodeURIComponent(state.thread) + "/stop", body)
      .then(function () { showError(null); }, function (err) { stopping(false); showError(err); });
  }
  var holdTimer = 0, held = false;
  el.stop.addEventListener("pointerdown", function () {
    held = false;
    clearTimeout(holdTimer);
    holdTimer = setTimeout(function () { held = true; stopTurn(true); }, 600);
  });
  ["pointerup", "pointerleave", "pointercancel"].forEach(function (t) {
    el.stop.addEventListener(t, function () { clearTimeout(holdTimer); });
  });
  el.stop.addEventListener("contextmenu", function (e) { e.preventDefault(); }); // a long press on a phone
  el.stop.addEventListener("click", function (e) {
    // The release of a hold clicks too: the hold stopped it already. (A
    // click from the keyboard, detail 0, is a stop of its own.)
    if (held && e.detail !== 0) { held = false; return; }
    held = false;
    stopTurn(e.shiftKey);
  });
  // New thread opens an empty one; nothing is created until its first
  // message is sent.
  el.newThread.addEventListener("click", function () { menu(false); el.pick.selectedIndex = 0; go(""); el.prompt.focus(); });
  try { el.author.value = localStorage.getItem("acpgw.author") || ""; } catch (e) { /* storage off */ }
  el.author.addEventListener("change", function () {
    if (me.fixed) return;
    store.set("acpgw.author", el.author.value.trim());
    store.set("acpgw.asked", "1");
  });
  function start() {
    api("GET", "/api/me").then(function (m) {
      me = m;
      el.author.placeholder = m.name;
      el.pick.replaceChildren();
      (m.agents || []).forEach(function (name) {
        var o = document.createElement("option");
        o.value = o.textContent = name;
        el.pick.appendChild(o);
      });
      renderThreads();
      if (!m.fixed) return;
      el.author.value = m.name;
      el.author.readOnly = true;
      el.author.title = "Your token signs you in as " + m.name + " (" + m.id + ")";
      $('label[for="author"]').textContent = "Signed in as";
    }, showError);

    refreshThreads().then(function () {
      select(chooseThread(decodeURIComponent(location.hash.slice(1))));
    }, function () { reconnect(1000); });
  }
  start();
})();
