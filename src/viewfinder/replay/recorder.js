/* Viewfinder's session recorder. Embed it in a web app:
 *   <script src="https://viewfinder.example/recorder.js" data-key="vf_proj_..."></script>
 * with a key of the `record` role (it is public in the page and can only send sessions).
 *
 * It records clicks, typed text (keystrokes merged into the final value), special keys,
 * scrolls and navigations, each with candidate selectors (most robust first), a label and the
 * element's box; fetch and XMLHttpRequest calls (bodies cut at 64 kB); local and session
 * storage and cookies at the start; the URL history. Password fields, card-number fields and
 * everything under [data-viewfinder-mask] are never recorded: no value, no text.
 * Batches are sent as text/plain (no CORS preflight) and with sendBeacon when the page goes
 * away. During a Viewfinder replay (window.Viewfinder.isReplay) nothing is recorded.
 * The server fills in SAMPLE_RATE below when it serves this file. */
(function () {
  "use strict";
  var SAMPLE_RATE = 1; /* set by the server */
  var BODY_MAX = 64 * 1024;
  var STORAGE_MAX = 16 * 1024; /* each of local and session storage, at the start */
  var VALUE_MAX = 10000; /* typed text kept per input */
  var BATCH_MAX = 60 * 1024; /* sendBeacon and keepalive fetch carry about 64 kB */
  var FLUSH_MS = 2000;
  var STORE = "viewfinder:recorder";
  var SPECIAL = /^(Enter|Tab|Escape|Arrow(Up|Down|Left|Right)|Backspace|Delete|Home|End|PageUp|PageDown| )$/;

  var VF = (window.Viewfinder = window.Viewfinder || {});
  VF.isReplay = VF.isReplay === true || window.__VIEWFINDER_REPLAY__ === true;
  if (VF.isReplay || VF.recording) return;
  var script = document.currentScript;
  var key = script && script.getAttribute("data-key");
  if (!key) {
    if (window.console) console.warn("Viewfinder recorder: add data-key=\"vf_proj_...\" (a record key) to its script tag");
    return;
  }
  var endpoint = new URL("/api/v1/sessions/ingest", script.src).href + "?key=" + encodeURIComponent(key);

  function load() {
    try { return JSON.parse(sessionStorage.getItem(STORE) || "null"); } catch (e) { return null; }
  }
  function save() {
    try { sessionStorage.setItem(STORE, JSON.stringify(state)); } catch (e) { /* storage full or off */ }
  }
  function randomId() {
    var bytes = new Uint8Array(18), out = "";
    crypto.getRandomValues(bytes);
    for (var i = 0; i < bytes.length; i++) out += ("0" + bytes[i].toString(16)).slice(-2);
    return out;
  }
  function snapshot(area, skip) {
    var out = {}, size = 0;
    try {
      for (var i = 0; i < area.length; i++) {
        var k = area.key(i);
        if (k === skip) continue;
        var v = area.getItem(k) || "";
        size += k.length + v.length;
        if (size > STORAGE_MAX) break;
        out[k] = v;
      }
    } catch (e) { /* storage blocked */ }
    return out;
  }

  var state = load();
  var fresh = !state;
  if (fresh) {
    state = { id: randomId(), started: Date.now(), seq: 0, ev: 0, net: 0, last: 0,
              sampled: Math.random() < SAMPLE_RATE, capped: false, who: null };
  }
  VF.identify = function (who) { state.who = who == null ? null : String(who).slice(0, 200); save(); };
  if (!state.sampled || state.capped) { save(); return; }
  VF.recording = true;

  var queue = { events: [], network: [], urls: [] };
  var start = null;
  if (fresh) {
    start = {
      startUrl: location.href,
      viewport: { width: window.innerWidth, height: window.innerHeight },
      userAgent: navigator.userAgent,
      storage: { local: snapshot(window.localStorage, null), session: snapshot(window.sessionStorage, STORE),
                 cookies: document.cookie || "" },
      startedAt: state.started
    };
  }
  save();

  function now() { return Math.max(0, Date.now() - state.started); }

  /* ---- what an element is: masked?, selectors, label, box ---- */
  function masked(el) {
    if (!el || el.nodeType !== 1) return false;
    if (el.closest && el.closest("[data-viewfinder-mask]")) return true;
    if (el.tagName === "INPUT" && (el.type || "").toLowerCase() === "password") return true;
    var auto = (el.getAttribute("autocomplete") || "").toLowerCase();
    return auto.indexOf("password") >= 0 || auto.indexOf("cc-") >= 0;
  }
  function quote(value) { return "\"" + String(value).replace(/\\/g, "\\\\").replace(/"/g, "\\\"") + "\""; }
  function unique(selector) {
    try { return document.querySelectorAll(selector).length === 1; } catch (e) { return false; }
  }
  function cssPath(el) {
    var parts = [];
    while (el && el.nodeType === 1 && el !== document.documentElement) {
      if (el.id && unique("#" + CSS.escape(el.id))) { parts.unshift("#" + CSS.escape(el.id)); break; }
      var tag = el.tagName.toLowerCase(), n = 1, sib = el;
      while ((sib = sib.previousElementSibling)) if (sib.tagName === el.tagName) n++;
      parts.unshift(tag + ":nth-of-type(" + n + ")");
      el = el.parentElement;
    }
    return parts.join(" > ");
  }
  function role(el) {
    var explicit = el.getAttribute("role");
    if (explicit) return explicit;
    var tag = el.tagName.toLowerCase();
    if (tag === "a") return "link";
    if (tag === "button" || tag === "summary") return "button";
    if (tag === "select") return "combobox";
    if (tag === "textarea") return "textbox";
    if (tag === "input") {
      var type = (el.type || "text").toLowerCase();
      if (type === "checkbox" || type === "radio") return type;
      if (type === "submit" || type === "button" || type === "reset") return "button";
      return "textbox";
    }
    return tag;
  }
  function name(el) {
    if (masked(el)) return "";
    var text = el.getAttribute("aria-label") || "";
    if (!text && el.id) {
      var label = document.querySelector("label[for=" + quote(el.id) + "]");
      if (label) text = label.textContent || "";
    }
    if (!text && el.closest("label") && el.tagName === "INPUT") text = el.closest("label").textContent || "";
    if (!text) text = el.getAttribute("placeholder") || "";
    if (!text && el.tagName === "INPUT" && /^(submit|button|reset)$/i.test(el.type)) text = el.value || "";
    if (!text && !/^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)) text = el.innerText || el.textContent || "";
    if (!text) text = el.getAttribute("title") || el.getAttribute("name") || "";
    text = text.replace(/\s+/g, " ").trim();
    return text.length > 60 ? text.slice(0, 57) + "..." : text;
  }
  function describe(el) {
    var hidden = masked(el);
    var selectors = [];
    ["data-testid", "data-test", "data-cy"].forEach(function (attr) {
      var v = el.getAttribute(attr);
      if (v && unique("[" + attr + "=" + quote(v) + "]")) selectors.push("[" + attr + "=" + quote(v) + "]");
    });
    if (el.id && unique("#" + CSS.escape(el.id))) selectors.push("#" + CSS.escape(el.id));
    var aria = el.getAttribute("aria-label");
    if (aria && unique("[aria-label=" + quote(aria) + "]")) selectors.push("[aria-label=" + quote(aria) + "]");
    var nameAttr = el.getAttribute("name");
    var tag = el.tagName.toLowerCase();
    if (nameAttr && unique(tag + "[name=" + quote(nameAttr) + "]")) selectors.push(tag + "[name=" + quote(nameAttr) + "]");
    selectors.push(cssPath(el));
    var text = name(el);
    if (!hidden && text && (tag === "a" || tag === "button" || role(el) === "button") && text.length <= 40) {
      selectors.push("text=" + text);
    }
    var r = el.getBoundingClientRect();
    return {
      selectors: selectors,
      box: { x: Math.round(r.left), y: Math.round(r.top), width: Math.round(r.width), height: Math.round(r.height) },
      label: hidden ? role(el) + " (masked)" : (text ? role(el) + " '" + text + "'" : role(el))
    };
  }
  function target(el) {
    if (!el || el.nodeType !== 1) el = el && el.parentElement;
    var found = el && el.closest("a,button,input,select,textarea,summary,label,[role=button],[role=link],[role=tab],[role=menuitem],[role=checkbox],[onclick]");
    return found || el;
  }

  /* ---- events ---- */
  var typing = null; /* {el, t}: keystrokes merged until something else happens */
  function push(event) {
    event.seq = state.ev++;
    queue.events.push(event);
    state.last = Date.now();
    save();
    if (queue.events.length >= 40) flush(false);
  }
  function endTyping() {
    if (!typing) return;
    var el = typing.el, t = typing.t;
    typing = null;
    if (masked(el)) return;
    var d = describe(el);
    push({ t: t, type: "input", selectors: d.selectors, box: d.box, label: d.label, value: String(el.value == null ? "" : el.value).slice(0, VALUE_MAX) });
  }
  document.addEventListener("click", function (e) {
    if (!e.isTrusted) return;
    var el = target(e.target);
    if (!el || el === document.documentElement) return;
    if (typing && typing.el !== el) endTyping();
    var d = describe(el);
    push({ t: now(), type: "click", selectors: d.selectors, box: d.box, label: d.label });
  }, true);
  document.addEventListener("input", function (e) {
    if (!e.isTrusted) return;
    var el = e.target;
    if (!el || !/^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)) return;
    if (/^(checkbox|radio)$/i.test(el.type || "")) return; /* the click says it */
    if (typing && typing.el !== el) endTyping();
    if (masked(el)) return;
    typing = { el: el, t: now() };
    if (el.tagName === "SELECT") endTyping();
  }, true);
  document.addEventListener("change", function (e) { if (typing && typing.el === e.target) endTyping(); }, true);
  document.addEventListener("focusout", function (e) { if (typing && typing.el === e.target) endTyping(); }, true);
  document.addEventListener("keydown", function (e) {
    if (!e.isTrusted || !SPECIAL.test(e.key)) return;
    var el = e.target && e.target.nodeType === 1 ? e.target : null;
    var editable = el && (/^(INPUT|TEXTAREA)$/.test(el.tagName) || el.isContentEditable);
    if (editable && /^(Backspace|Delete|Home|End| |ArrowLeft|ArrowRight)$/.test(e.key)) return; /* part of typing */
    if (e.key === " " && el && /^(BUTTON|A)$/.test(el.tagName)) return; /* the click says it */
    endTyping();
    var event = { t: now(), type: "key", key: e.key === " " ? "Space" : e.key, selectors: [], box: null };
    if (el && el !== document.body && el !== document.documentElement) {
      var d = describe(el);
      event.selectors = d.selectors; event.box = d.box; event.label = d.label;
    }
    push(event);
  }, true);

  var scrolls = {};
  document.addEventListener("scroll", function (e) {
    if (!e.isTrusted) return;
    var el = e.target === document || e.target === document.documentElement ? null : e.target;
    var id = el ? cssPath(el) : "";
    clearTimeout(scrolls[id]);
    scrolls[id] = setTimeout(function () {
      delete scrolls[id];
      endTyping();
      if (el) {
        var d = describe(el);
        push({ t: now(), type: "scroll", selectors: d.selectors, box: d.box, label: d.label,
               scroll: { x: Math.round(el.scrollLeft), y: Math.round(el.scrollTop) } });
      } else {
        push({ t: now(), type: "scroll", selectors: [], box: null, scroll: { x: Math.round(window.scrollX), y: Math.round(window.scrollY) } });
      }
    }, 200);
  }, true);

  /* ---- URLs and navigations ---- */
  var lastUrl = null;
  function visit() {
    if (location.href === lastUrl) return;
    lastUrl = location.href;
    queue.urls.push({ t: now(), url: location.href });
  }
  ["pushState", "replaceState"].forEach(function (method) {
    var original = history[method];
    history[method] = function () {
      var result = original.apply(this, arguments);
      visit();
      return result;
    };
  });
  function navigated() {
    endTyping();
    push({ t: now(), type: "navigation", url: location.href, selectors: [], box: null });
    visit();
  }
  window.addEventListener("popstate", navigated);
  window.addEventListener("hashchange", function () { if (location.href !== lastUrl) navigated(); });
  /* A page load nobody clicked or pressed a key for (typed address, reload, bookmark). */
  if (!fresh && Date.now() - state.last > 1500) push({ t: now(), type: "navigation", url: location.href, selectors: [], box: null });
  visit();

  /* ---- network ---- */
  function cut(text) {
    if (text == null) return { text: null, cut: false };
    text = String(text);
    return text.length > BODY_MAX ? { text: text.slice(0, BODY_MAX), cut: true } : { text: text, cut: false };
  }
  function textual(type) { return !type || /json|text|xml|javascript|x-www-form-urlencoded|graphql/i.test(type); }
  function exchange(method, url, requestBody, status, responseBody, type) {
    var req = cut(typeof requestBody === "string" ? requestBody : null);
    var res = cut(textual(type) ? responseBody : null);
    queue.network.push({ seq: state.net++, t: now(), method: String(method || "GET").toUpperCase(), url: url,
                         status: status, requestBody: req.text, responseBody: res.text,
                         responseHeaders: type ? { "content-type": type } : {}, truncated: req.cut || res.cut });
    save();
  }
  function ours(url) { return url.indexOf(endpoint.split("?")[0]) === 0; }
  if (window.fetch) {
    var originalFetch = window.fetch;
    window.fetch = function (input, init) {
      var request;
      try { request = new Request(input, init); } catch (e) { return originalFetch.apply(this, arguments); }
      var url = request.url, method = request.method;
      var body = init && typeof init.body === "string" ? init.body : null;
      var call = originalFetch.apply(this, arguments);
      if (ours(url)) return call;
      call.then(function (response) {
        var type = response.headers.get("content-type") || "";
        if (!textual(type)) { exchange(method, url, body, response.status, null, type); return; }
        response.clone().text().then(function (text) { exchange(method, url, body, response.status, text, type); },
                                     function () { exchange(method, url, body, response.status, null, type); });
      }, function () { exchange(method, url, body, 0, null, ""); });
      return call;
    };
  }
  if (window.XMLHttpRequest) {
    var xhrOpen = XMLHttpRequest.prototype.open, xhrSend = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.open = function (method, url) {
      this.__vf = { method: method, url: new URL(url, location.href).href };
      return xhrOpen.apply(this, arguments);
    };
    XMLHttpRequest.prototype.send = function (body) {
      var info = this.__vf, xhr = this;
      if (info && !ours(info.url)) {
        xhr.addEventListener("loadend", function () {
          var type = xhr.getResponseHeader("content-type") || "";
          var text = null;
          try { text = xhr.responseType === "" || xhr.responseType === "text" ? xhr.responseText : null; } catch (e) { text = null; }
          exchange(info.method, info.url, typeof body === "string" ? body : null, xhr.status, text, type);
        });
      }
      return xhrSend.apply(this, arguments);
    };
  }

  /* ---- batches ---- */
  function batch(events, network, urls) {
    var body = { session: state.id, seq: state.seq++, events: events, network: network, urls: urls,
                 synthetic: navigator.webdriver === true };
    if (state.who) body.recordedBy = state.who;
    if (start) { body.start = start; start = null; }
    return body;
  }
  function pieces(events, network, urls) {
    /* Split what is queued into batches that fit a beacon. */
    var text = JSON.stringify({ events: events, network: network, urls: urls });
    if (text.length <= BATCH_MAX - 4096 || events.length + network.length + urls.length <= 1) {
      if (text.length > BATCH_MAX - 4096) network.forEach(function (x) {
        x.requestBody = x.requestBody && x.requestBody.slice(0, 4096);
        x.responseBody = x.responseBody && x.responseBody.slice(0, 4096);
        x.truncated = true;
      });
      return [[events, network, urls]];
    }
    var he = Math.ceil(events.length / 2), hn = Math.ceil(network.length / 2), hu = Math.ceil(urls.length / 2);
    return pieces(events.slice(0, he), network.slice(0, hn), urls.slice(0, hu))
      .concat(pieces(events.slice(he), network.slice(hn), urls.slice(hu)));
  }
  function post(body, leaving) {
    var text = JSON.stringify(body);
    if (leaving && navigator.sendBeacon && navigator.sendBeacon(endpoint, new Blob([text], { type: "text/plain" }))) return;
    try {
      /* keepalive lets the request outlive the page, but only for about 64 kB */
      fetch(endpoint, { method: "POST", body: text, keepalive: text.length <= BATCH_MAX, mode: "cors", credentials: "omit",
                        headers: { "Content-Type": "text/plain" } }).then(function (response) {
        if (response.status === 413) { state.capped = true; save(); }
      }, function () { /* offline: this batch is lost, the session goes on */ });
    } catch (e) { /* nothing to do */ }
  }
  function flush(leaving) {
    if (leaving) endTyping();
    if (state.capped) return;
    var events = queue.events, network = queue.network, urls = queue.urls;
    if (!events.length && !network.length && !urls.length && !start) return;
    queue = { events: [], network: [], urls: [] };
    pieces(events, network, urls).forEach(function (p) { post(batch(p[0], p[1], p[2]), leaving); });
    save();
  }
  setInterval(function () { flush(false); }, FLUSH_MS);
  window.addEventListener("pagehide", function () { flush(true); });
  document.addEventListener("visibilitychange", function () { if (document.visibilityState === "hidden") flush(true); });
  VF.flush = function () { flush(false); };
})();
