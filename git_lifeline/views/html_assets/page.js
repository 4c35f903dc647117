(function () {
  "use strict";
  /* Field order of each entry in the JSON island (views/html.py, _row). */
  var ID = 0, TS = 1, KIND = 2, AUTHOR = 3, SUMMARY = 4, BODY = 5, PARENTS = 6, THREAD = 7, STATUS = 8,
      BY = 9, REVERT = 10, STALE = 11, CONFLICTS = 12, AGENT = 13, CONFLICT_COUNT = 14, TRUST = 15;
  /* PARENTS, BY and CONFLICTS hold positions in the array (or a full id outside it). */
  var FIRST = 120, STEP = 300;
  /* Statuses (views/html.py, status_token) that "hide superseded" hides, and how each
     names the corrections that replaced it. */
  var REPLACED_OR_EXPIRED = ["superseded", "withdrawn", "closed", "expired"];
  var BY_TITLES = { superseded: "replaced by", withdrawn: "withdrawn by", closed: "closed by" };
  var root = document.documentElement;

  /* ---- theme: auto (the system's), light, dark; remembered when storage is allowed ---- */
  var themes = ["auto", "light", "dark"];
  var themeButton = document.getElementById("theme");
  function stored() { try { return window.localStorage.getItem("lifeline-theme"); } catch (e) { return null; } }
  function setTheme(t) {
    root.setAttribute("data-theme", t);
    if (themeButton) { themeButton.textContent = "Theme: " + t; }
    try { window.localStorage.setItem("lifeline-theme", t); } catch (e) { /* file pages may not store */ }
  }
  var initial = stored();
  if (themes.indexOf(initial) >= 0) { setTheme(initial); }
  if (themeButton) {
    themeButton.addEventListener("click", function () {
      var now = root.getAttribute("data-theme") || "auto";
      setTheme(themes[(themes.indexOf(now) + 1) % themes.length]);
    });
  }

  var dataNode = document.getElementById("entries-data");
  var metaNode = document.getElementById("view-meta");
  var list = document.getElementById("entries");
  var more = document.getElementById("more");
  var count = document.getElementById("count");
  var form = document.getElementById("filters");
  if (!dataNode || !list || !form) { return; }

  function el(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) { n.className = cls; }
    if (text !== undefined && text !== null) { n.textContent = text; }
    return n;
  }
  function link(id, text) {
    var a = el("a", "id", text || id.slice(0, 8));
    a.href = "#e-" + id;
    return a;
  }
  function mark(cls, text) { return el("span", "mark " + cls, text); }

  function start() {
    var data = JSON.parse(dataNode.textContent);
    var meta = metaNode ? JSON.parse(metaNode.textContent) : { threads: {} };
    var labels = meta.threads || {};
    var index = {};
    var i;
    for (i = 0; i < data.length; i++) { index[data[i][ID]] = i; }
    var haystack = new Array(data.length);
    function hay(j) {
      if (haystack[j] === undefined) {
        var e = data[j];
        haystack[j] = (e[SUMMARY] + "\n" + e[BODY] + "\n" + e[AUTHOR] + "\n" + e[ID] + "\n" + e[KIND]).toLowerCase();
      }
      return haystack[j];
    }

    /* ---- the filters' choices, from the entries ---- */
    function fill(select, counts, label) {
      Object.keys(counts).sort(function (a, b) { return label(a).localeCompare(label(b)); }).forEach(function (k) {
        var o = el("option", null, label(k) + " (" + counts[k] + ")");
        o.value = k;
        select.appendChild(o);
      });
    }
    var kinds = {}, authors = {}, threads = {};
    data.forEach(function (e) {
      kinds[e[KIND]] = (kinds[e[KIND]] || 0) + 1;
      authors[e[AUTHOR]] = (authors[e[AUTHOR]] || 0) + 1;
      if (e[THREAD]) { threads[e[THREAD]] = (threads[e[THREAD]] || 0) + 1; }
    });
    var ident = function (k) { return k; };
    fill(form.elements.kind, kinds, ident);
    fill(form.elements.author, authors, ident);
    fill(form.elements.thread, threads, function (k) { return labels[k] || k; });

    var order = [];
    var shown = 0;

    function matches(e, j, f) {
      if (f.kind && e[KIND] !== f.kind) { return false; }
      if (f.author && e[AUTHOR] !== f.author) { return false; }
      if (f.thread && e[THREAD] !== f.thread) { return false; }
      if (f.live && REPLACED_OR_EXPIRED.indexOf(e[STATUS]) >= 0) { return false; }
      var day = e[TS].slice(0, 10);
      if (f.from && day < f.from) { return false; }
      if (f.to && day > f.to) { return false; }
      if (f.words.length) {
        var h = hay(j);
        for (var w = 0; w < f.words.length; w++) { if (h.indexOf(f.words[w]) < 0) { return false; } }
      }
      return true;
    }
    function current() {
      var q = (form.elements.q.value || "").toLowerCase().split(/\s+/).filter(Boolean);
      return { kind: form.elements.kind.value, author: form.elements.author.value,
               thread: form.elements.thread.value, from: form.elements.from.value, to: form.elements.to.value,
               live: form.elements.live.checked, words: q };
    }
    function render(e) {
      var st = e[STATUS];
      var art = el("article", "entry k-" + e[KIND] + (st ? " st-" + st : "") + (e[REVERT] ? " revert" : ""));
      art.id = "e-" + e[ID];
      var row = el("div", "row");
      var when = el("a", "ts", e[TS].replace("T", " ").slice(0, 16));
      when.href = "#e-" + e[ID];
      when.title = e[TS] + " (UTC) - permalink";
      row.appendChild(when);
      row.appendChild(el("span", "kind", e[KIND]));
      row.appendChild(el("span", "sum", e[SUMMARY]));
      if (st) { row.appendChild(mark(st, st.replace("-", " "))); }
      if (e[REVERT]) { row.appendChild(mark("revert", "revert")); }
      if (e[STALE]) { row.appendChild(mark("stale", "stale")); }
      if (e[CONFLICTS].length) { row.appendChild(mark("conflict", "conflict")); }
      if (e[TRUST]) { row.appendChild(mark("trust", e[TRUST])); }
      art.appendChild(row);
      var m = el("div", "meta");
      m.appendChild(document.createTextNode(e[AUTHOR] + (e[AGENT] ? " via " + e[AGENT] : "") + " · "));
      m.appendChild(el("span", "id", e[ID].slice(0, 12)));
      if (e[THREAD]) { m.appendChild(document.createTextNode(" · thread " + (labels[e[THREAD]] || e[THREAD]))); }
      function refs(title, list, total) {
        if (!list.length) { return; }
        m.appendChild(document.createTextNode(" · " + title + " "));
        list.forEach(function (p, k) {
          if (k) { m.appendChild(document.createTextNode(", ")); }
          if (typeof p === "number") { m.appendChild(link(data[p][ID])); } else { m.appendChild(el("span", "id", p.slice(0, 8))); }
        });
        if (total > list.length) { m.appendChild(document.createTextNode(" and " + (total - list.length) + " more")); }
      }
      refs("parents", e[PARENTS], 0);
      refs(BY_TITLES[e[STATUS]] || "corrected by", e[BY], 0);
      refs("conflicts with", e[CONFLICTS], e[CONFLICT_COUNT]);
      if (e[STALE]) { m.appendChild(document.createTextNode(" · " + e[STALE])); }
      art.appendChild(m);
      if (e[BODY]) {
        var d = el("details");
        d.appendChild(el("summary", null, e[KIND] === "checkpoint" ? "where it stands" : "why"));
        d.appendChild(el("div", "body", e[BODY]));
        art.appendChild(d);
      }
      return art;
    }
    function renderMore(upto) {
      var end = Math.min(order.length, upto);
      if (end <= shown) { return; }
      var frag = document.createDocumentFragment();
      for (var k = shown; k < end; k++) { frag.appendChild(render(data[order[k]])); }
      list.appendChild(frag);
      shown = end;
    }
    function apply() {
      var f = current();
      order = [];
      for (var j = data.length - 1; j >= 0; j--) { if (matches(data[j], j, f)) { order.push(j); } }
      list.textContent = "";
      shown = 0;
      renderMore(FIRST);
      count.textContent = order.length === data.length
        ? data.length + " entries, newest first"
        : order.length + " of " + data.length + " entries match";
    }
    function goTo(hash) {
      if (hash.indexOf("#e-") !== 0) { return; }
      var want = hash.slice(3).toLowerCase();
      var j = index[want];
      if (j === undefined && /^[0-9a-f]{6,63}$/.test(want)) {
        for (var k = 0; k < data.length; k++) { if (data[k][ID].indexOf(want) === 0) { j = k; break; } }
      }
      if (j === undefined) { return; }
      var at = order.indexOf(j);
      if (at < 0) { form.reset(); apply(); at = order.indexOf(j); }
      renderMore(at + 20);
      var node = document.getElementById("e-" + data[j][ID]);
      if (!node) { return; }
      var old = list.querySelectorAll(".hl");
      for (var h = 0; h < old.length; h++) { old[h].classList.remove("hl"); }
      node.classList.add("hl");
      var d = node.querySelector("details");
      if (d) { d.open = true; }
      node.scrollIntoView({ block: "start" });
    }

    var timer = null;
    form.addEventListener("input", function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(apply, 120);
    });
    form.addEventListener("submit", function (ev) { ev.preventDefault(); apply(); });
    form.addEventListener("reset", function () { window.setTimeout(apply, 0); });
    if ("IntersectionObserver" in window) {
      new IntersectionObserver(function (seen) {
        if (seen[0].isIntersecting) { renderMore(shown + STEP); }
      }, { rootMargin: "1200px" }).observe(more);
    } else {
      window.addEventListener("scroll", function () {
        if (more.getBoundingClientRect().top < window.innerHeight + 1200) { renderMore(shown + STEP); }
      });
    }
    window.addEventListener("hashchange", function () { goTo(window.location.hash); });
    apply();
    goTo(window.location.hash);
    root.setAttribute("data-ready", "1");
    if (window.performance && window.performance.mark) { window.performance.mark("lifeline-timeline"); }
  }
  /* The static parts can paint first; the timeline is built in the next task. */
  window.setTimeout(start, 0);
})();
