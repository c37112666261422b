/**
 * The report page's script, inlined into the HTML (no external assets). It
 * reads the model from `<script id="report-data">`, renders the filters, the
 * timeline and the terminal table, and marks `<body data-ready="1">` once
 * the page is interactive. Text reaches the DOM only through `textContent`.
 * Plain ES2020, no template literals (it lives in one).
 */
export const REPORT_SCRIPT = `
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var terminals = data.terminals;
  var PAGE = 500;
  var shownLimit = PAGE;
  var byId = function (id) { return document.getElementById(id); };
  var el = function (tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  };
  var iso = function (ms) { return ms === null ? '-' : new Date(ms).toISOString().replace('T', ' ').replace(/\\.\\d+Z$/, 'Z'); };
  var duration = function (ms) {
    if (ms === null) return '-';
    if (ms < 1000) return ms.toFixed(0) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    return (ms / 60000).toFixed(1) + ' min';
  };
  var exitText = function (t) {
    if (t.exitCode !== null) return String(t.exitCode);
    if (t.signal) return t.signal;
    if (t.decision !== 'allow') return '';
    return t.end === null ? 'running' : '-';
  };

  // Lower-cased search text, once per terminal.
  for (var i = 0; i < terminals.length; i++) {
    var t = terminals[i];
    t.search = [t.id, t.command, t.cwd, t.reason, t.client, t.principal, t.rules.join(' '), t.envNames.join(' ')]
      .join('\\n').toLowerCase();
  }

  function fillSelect(id, values) {
    var select = byId(id);
    values.sort().forEach(function (value) {
      var option = el('option', value);
      option.value = value;
      select.appendChild(option);
    });
  }
  var uniq = function (f) {
    var seen = {};
    terminals.forEach(function (t) { f(t).forEach(function (v) { if (v !== null) seen[v] = true; }); });
    return Object.keys(seen);
  };
  fillSelect('f-decision', uniq(function (t) { return [t.decision]; }));
  fillSelect('f-rule', uniq(function (t) { return t.rules.length ? t.rules : ['(default)']; }));
  fillSelect('f-client', uniq(function (t) { return [t.client]; }));

  function current() {
    var decision = byId('f-decision').value;
    var rule = byId('f-rule').value;
    var client = byId('f-client').value;
    var text = byId('f-text').value.trim().toLowerCase();
    return terminals.filter(function (t) {
      if (decision && t.decision !== decision) return false;
      if (rule && (t.rules.length ? t.rules.indexOf(rule) === -1 : rule !== '(default)')) return false;
      if (client && t.client !== client) return false;
      if (text && t.search.indexOf(text) === -1) return false;
      return true;
    });
  }

  function details(t) {
    var dl = el('dl', null, 'details');
    var add = function (name, value) {
      dl.appendChild(el('dt', name));
      dl.appendChild(el('dd', value === null || value === undefined || value === '' ? '-' : value));
    };
    add('terminal', t.id);
    add('command', t.command);
    add('cwd', t.cwd);
    add('decision', decisionText(t));
    add('approval', t.approval);
    add('rule ids', t.rules.join(', '));
    add('reason', t.reason);
    add('env names', t.envNames.join(', '));
    add('client', t.client);
    add('principal', t.principal);
    add('protocol', t.protocol);
    add('pid', t.pid);
    add('start', iso(t.start));
    add('end', iso(t.end));
    add('duration', duration(t.durationMs));
    add('exit', exitText(t) + (t.timedOut ? ' (timed out)' : ''));
    add('output bytes', t.totalBytes === null ? null : t.totalBytes + ' (' + t.droppedBytes + ' not kept)');
    add('output sha256', t.outputSha256);
    add('refused verbs', t.refusedVerbs.join(', '));
    add('records (seq)', t.seqs.join(', '));
    return dl;
  }

  // A person's no is not a rule's deny; an answer nobody gave is neither.
  var declined = function (t) { return t.decision === 'deny' && t.approval === 'deny'; };
  var decisionText = function (t) {
    var text = t.decision || '-';
    if (declined(t)) text = 'deny (a person said no)';
    else if (t.approval && t.decision === 'deny') text = 'deny (' + t.approval + ')';
    else if (t.approval && t.decision === 'allow') text = 'allow (approved: ' + t.approval + ')';
    if (t.verification === 'failed') text += ' - FAILED VERIFICATION';
    else if (t.verification === 'unverified') text += ' - unverified';
    return text;
  };

  function row(t) {
    var cls = 'decision-' + (t.decision || 'none');
    if (declined(t)) cls += ' declined';
    if (t.verification === 'failed') cls += ' verification-failed';
    else if (t.verification === 'unverified') cls += ' unverified';
    var tr = el('tr', null, cls);
    tr.dataset.id = t.id;
    if (t.verification) tr.dataset.verification = t.verification;
    tr.appendChild(el('td', iso(t.start)));
    tr.appendChild(el('td', duration(t.durationMs), 'num'));
    tr.appendChild(el('td', decisionText(t)));
    tr.appendChild(el('td', exitText(t), 'num'));
    tr.appendChild(el('td', t.client || '-'));
    tr.appendChild(el('td', t.command, 'command'));
    tr.appendChild(el('td', t.rules.join(', ') || '(default)'));
    tr.tabIndex = 0;
    var toggle = function () {
      var next = tr.nextSibling;
      if (next && next.className === 'details-row') { next.remove(); return; }
      var cell = el('td');
      cell.colSpan = 7;
      cell.appendChild(details(t));
      var extra = el('tr', null, 'details-row');
      extra.appendChild(cell);
      tr.after(extra);
    };
    tr.addEventListener('click', toggle);
    tr.addEventListener('keydown', function (e) { if (e.key === 'Enter') toggle(); });
    return tr;
  }

  function drawTimeline(list) {
    var canvas = byId('timeline');
    var width = canvas.clientWidth || 1000;
    var ratio = window.devicePixelRatio || 1;
    canvas.width = width * ratio;
    canvas.height = 120 * ratio;
    var ctx = canvas.getContext('2d');
    ctx.scale(ratio, ratio);
    ctx.clearRect(0, 0, width, 120);
    var from = data.firstAt, to = data.lastAt;
    if (from === null || to === null) return;
    var span = Math.max(1, to - from);
    var lanes = 24;
    var x = function (ms) { return ((ms - from) / span) * (width - 2) + 1; };
    list.forEach(function (t, n) {
      if (t.start === null) return;
      var y = 4 + (n % lanes) * 4.8;
      var x0 = x(t.start);
      var x1 = t.end === null ? (t.decision === 'allow' ? x(to) : x0 + 1) : Math.max(x0 + 1, x(t.end));
      ctx.fillStyle = declined(t) ? '#6a1b9a' : t.decision === 'deny' ? '#c62828' : t.decision === 'allow'
        ? (t.exitCode === 0 ? '#2e7d32' : '#546e7a') : '#ef8f00';
      ctx.fillRect(x0, y, x1 - x0, t.decision === 'allow' ? 3 : 4);
    });
  }

  function render() {
    var list = current();
    var body = byId('terminal-rows');
    body.textContent = '';
    var fragment = document.createDocumentFragment();
    for (var n = 0; n < list.length && n < shownLimit; n++) fragment.appendChild(row(list[n]));
    body.appendChild(fragment);
    byId('shown-count').textContent = String(list.length);
    var counts = {};
    list.forEach(function (t) { var d = t.decision || 'none'; counts[d] = (counts[d] || 0) + 1; });
    var box = byId('decision-counts');
    box.textContent = '';
    Object.keys(counts).sort().forEach(function (d) {
      var chip = el('span', d + ': ' + counts[d], 'chip decision-' + d);
      chip.dataset.decisionCount = d;
      chip.dataset.count = String(counts[d]);
      box.appendChild(chip);
    });
    var more = byId('more');
    more.hidden = list.length <= shownLimit;
    more.textContent = 'Show ' + Math.min(PAGE, list.length - shownLimit) + ' more (' + (list.length - shownLimit) + ' not shown)';
    byId('listed-count').textContent = String(Math.min(list.length, shownLimit));
    drawTimeline(list);
  }

  ['f-decision', 'f-rule', 'f-client'].forEach(function (id) {
    byId(id).addEventListener('change', function () { shownLimit = PAGE; render(); });
  });
  var pending = null;
  byId('f-text').addEventListener('input', function () {
    clearTimeout(pending);
    pending = setTimeout(function () { shownLimit = PAGE; render(); }, 120);
  });
  byId('more').addEventListener('click', function () { shownLimit += PAGE; render(); });
  byId('total-count').textContent = String(terminals.length);
  render();
  document.body.dataset.ready = '1';
})();
`;
