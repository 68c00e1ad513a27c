/**
 * The dashboard's two HTML pages. Nothing from Discord is ever put into this
 * markup: the pages are static, and the run list arrives as JSON that the
 * inline script renders with `textContent`, so hostile thread or user names
 * stay text.
 */

export const BOT_NAME = 'bubble-discord dashboard';

/** Client poll interval; short enough to watch a queue move, long enough to cost nothing. */
const POLL_MS = 1500;

const STYLE = `
:root {
  color-scheme: light dark;
  --fg: #1f2328; --muted: #59636e; --border: #d1d9e0; --bg: #f6f8fa; --card: #ffffff;
  --accent: #5865f2; --accent-fg: #ffffff; --danger: #cf222e;
  --ok-bg: #dafbe1; --ok-fg: #116329; --wait-bg: #fff8c5; --wait-fg: #7d4e00;
  --info-bg: #ddf4ff; --info-fg: #0550ae; --err-bg: #ffebe9; --err-fg: #a40e26;
}
@media (prefers-color-scheme: dark) {
  :root {
    --fg: #e6edf3; --muted: #9198a1; --border: #3d444d; --bg: #0d1117; --card: #151b23;
    --ok-bg: #12361f; --ok-fg: #6fdd8b; --wait-bg: #3b2e0a; --wait-fg: #e3b341;
    --info-bg: #0c2d6b; --info-fg: #a5d6ff; --err-bg: #4a0e16; --err-fg: #ffa198; --danger: #f85149;
    --accent: #7c85f7;
  }
}
* { box-sizing: border-box; }
body {
  margin: 0; color: var(--fg); background: var(--bg);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif;
}
header {
  display: flex; align-items: center; gap: 16px; padding: 12px 24px;
  background: var(--card); border-bottom: 1px solid var(--border);
}
header h1 { margin: 0; font-size: 16px; font-weight: 600; white-space: nowrap; }
header button { white-space: nowrap; }
header .spacer { flex: 1; }
main { max-width: 1200px; margin: 24px auto; padding: 0 24px; }
.muted { color: var(--muted); }
.id { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; color: var(--muted); overflow-wrap: anywhere; }
button {
  font: inherit; border-radius: 6px; padding: 4px 12px; cursor: pointer;
  border: 1px solid var(--border); background: var(--card); color: var(--fg);
}
button:disabled { opacity: 0.6; cursor: default; }
button.abort { border-color: var(--danger); color: var(--danger); }
button.abort:hover:not(:disabled) { background: var(--danger); color: #ffffff; }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); padding: 8px 16px; }
.toolbar { display: flex; align-items: center; gap: 12px; margin-bottom: 12px; min-height: 32px; }
#summary.stale { color: var(--danger); }
#notice { padding: 4px 12px; border-radius: 6px; }
#notice.ok { background: var(--ok-bg); color: var(--ok-fg); }
#notice.info { background: var(--info-bg); color: var(--info-fg); }
#notice.error { background: var(--err-bg); color: var(--err-fg); }
/* On a phone the table scrolls sideways instead of squeezing every column. */
.table-wrap { background: var(--card); border: 1px solid var(--border); border-radius: 8px; overflow-x: auto; }
/* Fixed columns: the layout must not jump as names come and go between polls. */
table { width: 100%; min-width: 760px; border-collapse: collapse; table-layout: fixed; }
col.c-thread { width: 30%; } col.c-user { width: 22%; } col.c-mode { width: 11%; }
col.c-state { width: 12%; } col.c-since { width: 15%; } col.c-action { width: 10%; }
th, td { text-align: left; vertical-align: middle; padding: 10px 14px; border-bottom: 1px solid var(--border); }
tbody tr:last-child td { border-bottom: none; }
th {
  background: var(--bg); color: var(--muted); font-size: 12px; font-weight: 600;
  text-transform: uppercase; letter-spacing: 0.04em;
}
td.action { text-align: right; white-space: nowrap; }
td.since { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.thread { font-weight: 600; color: var(--fg); overflow-wrap: anywhere; }
a.thread { color: var(--accent); text-decoration: none; }
a.thread:hover { text-decoration: underline; }
.user { overflow-wrap: anywhere; }
.pill { display: inline-block; padding: 1px 10px; border-radius: 999px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.state-running { background: var(--ok-bg); color: var(--ok-fg); }
.state-queued { background: var(--wait-bg); color: var(--wait-fg); }
.mode { border: 1px solid var(--border); color: var(--muted); font-weight: 500; }
td.empty { text-align: center; color: var(--muted); padding: 40px 14px; }
.signin { display: flex; justify-content: center; padding-top: 12vh; }
.card {
  width: 100%; max-width: 380px; padding: 28px; background: var(--card);
  border: 1px solid var(--border); border-radius: 10px;
}
.card h1 { margin: 0 0 4px; font-size: 18px; }
.card p { margin: 0 0 20px; }
.card label { display: block; font-weight: 600; margin-bottom: 6px; }
.card input {
  display: block; width: 100%; margin-bottom: 16px; padding: 8px 10px; font: inherit;
  color: var(--fg); background: var(--bg); border: 1px solid var(--border); border-radius: 6px;
}
.card input:focus { outline: 2px solid var(--accent); outline-offset: -1px; }
.card .error { margin: -4px 0 16px; padding: 6px 10px; border-radius: 6px; background: var(--err-bg); color: var(--err-fg); }
.card button { width: 100%; }
@media (max-width: 640px) {
  header .subtitle { display: none; }
  header, main { padding-left: 12px; padding-right: 12px; }
}
`;

/*
 * Plain ES2017 for the browser, kept in a string because there is no build
 * step. It never writes data through innerHTML: every value goes in with
 * textContent or a property. Rows are keyed by run id and updated in place, so
 * a poll never replaces the Abort button under the operator's pointer.
 */
const SCRIPT = `
(function () {
  'use strict';
  var POLL_MS = ${POLL_MS};
  var MODES = { chat: 'chat', agentic: 'agentic', ask: 'ask' };
  var runsBody = document.getElementById('runs');
  var emptyBody = document.getElementById('empty');
  var summary = document.getElementById('summary');
  var notice = document.getElementById('notice');
  var rows = new Map();
  var timer = null;
  var inFlight = false;
  var again = false;
  var noticeTimer = null;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function ago(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    if (s < 90) return s + ' s ago';
    var m = Math.floor(s / 60);
    if (m < 90) return m + ' min ago';
    return Math.floor(m / 60) + ' h ' + (m % 60) + ' min ago';
  }

  function label(run) { return run.threadName || run.threadId; }

  function showNotice(text, kind) {
    notice.textContent = text;
    notice.className = kind;
    notice.hidden = false;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(function () { notice.hidden = true; }, 8000);
  }

  function fillThread(cell, run) {
    var name = run.threadName || '(unnamed thread)';
    var title;
    if (run.guildId) {
      title = el('a', 'thread', name);
      title.href = 'https://discord.com/channels/' + encodeURIComponent(run.guildId) + '/' + encodeURIComponent(run.threadId);
      title.target = '_blank';
      title.rel = 'noopener noreferrer';
      title.title = 'Open in Discord';
    } else {
      title = el('span', 'thread', name);
    }
    cell.replaceChildren(title, el('div', 'id', run.threadId));
  }

  function fillUser(cell, run) {
    cell.replaceChildren(el('div', 'user', run.userName), el('div', 'id', run.userId));
  }

  function createRow(run) {
    var row = { tr: el('tr'), run: run, key: '' };
    row.tr.dataset.runId = run.id;
    row.thread = el('td', 'thread-cell');
    row.user = el('td', 'user-cell');
    row.mode = el('td');
    row.modePill = el('span', 'pill mode');
    row.mode.appendChild(row.modePill);
    row.state = el('td');
    row.statePill = el('span', 'pill');
    row.state.appendChild(row.statePill);
    row.since = el('td', 'since');
    var action = el('td', 'action');
    row.button = el('button', 'abort', 'Abort');
    row.button.type = 'button';
    row.button.addEventListener('click', function () { abortRun(row); });
    action.appendChild(row.button);
    row.tr.append(row.thread, row.user, row.mode, row.state, row.since, action);
    rows.set(run.id, row);
    return row;
  }

  function updateRow(row, run, now) {
    row.run = run;
    // The static cells are rebuilt only when their data changed, so a link stays clickable between polls.
    var key = JSON.stringify([run.threadName, run.threadId, run.guildId, run.userName, run.userId]);
    if (key !== row.key) {
      row.key = key;
      fillThread(row.thread, run);
      fillUser(row.user, run);
    }
    row.modePill.textContent = MODES[run.mode] || String(run.mode);
    var queued = run.state === 'queued';
    row.statePill.textContent = queued ? (run.position === undefined || run.position === null ? 'waiting (thread busy)' : 'queued #' + run.position) : 'running';
    row.statePill.className = 'pill ' + (queued ? 'state-queued' : 'state-running');
    var since = queued || run.startedAt === undefined || run.startedAt === null ? run.enqueuedAt : run.startedAt;
    row.since.textContent = (queued ? 'queued ' : 'started ') + ago(now - since);
    row.since.title = new Date(since).toLocaleString();
  }

  function render(data) {
    var seen = new Set();
    data.runs.forEach(function (run, index) {
      var row = rows.get(run.id) || createRow(run);
      updateRow(row, run, data.now);
      seen.add(run.id);
      var at = runsBody.children[index] || null;
      if (at !== row.tr) runsBody.insertBefore(row.tr, at);
    });
    rows.forEach(function (row, id) {
      if (!seen.has(id)) { row.tr.remove(); rows.delete(id); }
    });
    emptyBody.hidden = data.runs.length > 0;
    var running = data.runs.filter(function (run) { return run.state === 'running'; }).length;
    summary.className = 'muted';
    summary.textContent = running + ' running \\u00b7 ' + (data.runs.length - running) + ' queued \\u00b7 updated ' + new Date().toLocaleTimeString();
  }

  function signedOut() { window.location.assign('/'); }

  function poll() {
    if (inFlight) { again = true; return; }
    inFlight = true;
    clearTimeout(timer);
    fetch('/api/runs', { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } })
      .then(function (res) {
        if (res.status === 401) { signedOut(); return; }
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.json().then(render);
      })
      .catch(function () {
        summary.className = 'stale';
        summary.textContent = 'Cannot reach the bot \\u2014 retrying\\u2026';
      })
      .then(function () {
        inFlight = false;
        if (again) { again = false; poll(); return; }
        timer = setTimeout(poll, POLL_MS);
      });
  }

  function abortRun(row) {
    var run = row.run;
    var what = run.state === 'queued' ? (run.position === undefined || run.position === null ? 'waiting run' : 'queued run (#' + run.position + ')') : 'running run';
    if (!window.confirm('Abort the ' + what + ' in "' + label(run) + '" for ' + run.userName + '?')) return;
    row.button.disabled = true;
    row.button.textContent = 'Aborting\\u2026';
    fetch('/api/runs/' + encodeURIComponent(run.id) + '/abort', {
      method: 'POST', credentials: 'same-origin', headers: { 'X-Bubble-Dashboard': '1', Accept: 'application/json' }
    })
      .then(function (res) {
        if (res.status === 401) { signedOut(); return; }
        return res.json().catch(function () { return {}; }).then(function (body) {
          if (res.ok) showNotice('Aborted the run in "' + label(run) + '".', 'ok');
          else if (res.status === 404) showNotice('The run in "' + label(run) + '" had already finished.', 'info');
          else showNotice('Abort failed: ' + (body.error || 'HTTP ' + res.status), 'error');
        });
      })
      .catch(function () { showNotice('Abort failed: cannot reach the bot.', 'error'); })
      .then(function () {
        row.button.disabled = false;
        row.button.textContent = 'Abort';
        poll();
      });
  }

  document.getElementById('signout').addEventListener('click', function () {
    fetch('/logout', { method: 'POST', credentials: 'same-origin', headers: { 'X-Bubble-Dashboard': '1' } })
      .then(signedOut, signedOut);
  });

  poll();
})();
`;

function layout(options: { title: string; nonce: string; body: string; script?: string }): string {
  const script = options.script === undefined ? '' : `\n<script nonce="${options.nonce}">${options.script}</script>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${options.title}</title>
<link rel="icon" href="data:,">
<style nonce="${options.nonce}">${STYLE}</style>
</head>
<body>
${options.body}${script}
</body>
</html>
`;
}

/** The sign-in form; `error` is one of our own fixed messages, never request data. */
export function signInPage(nonce: string, error?: 'wrong token' | 'too many failed sign-ins, try again later'): string {
  const message = error === undefined ? '' : `\n<p class="error" role="alert">${error}</p>`;
  return layout({
    title: `Sign in \u00b7 ${BOT_NAME}`,
    nonce,
    body: `<main class="signin">
<form class="card" method="post" action="/login">
<h1>${BOT_NAME}</h1>
<p class="muted">Sign in with the dashboard token from the bot's config.</p>
<label for="token">Dashboard token</label>
<input id="token" name="token" type="password" required autofocus autocomplete="current-password">${message}
<button class="primary" type="submit">Sign in</button>
</form>
</main>`,
  });
}

export function dashboardPage(nonce: string): string {
  return layout({
    title: BOT_NAME,
    nonce,
    body: `<header>
<h1>${BOT_NAME}</h1>
<span class="muted subtitle">Claude runs, running and queued</span>
<span class="spacer"></span>
<button id="signout" type="button">Sign out</button>
</header>
<main>
<div class="toolbar"><span id="summary" class="muted">Loading\u2026</span><span id="notice" role="status" hidden></span></div>
<div class="table-wrap">
<table>
<colgroup><col class="c-thread"><col class="c-user"><col class="c-mode"><col class="c-state"><col class="c-since"><col class="c-action"></colgroup>
<thead><tr><th>Thread</th><th>User</th><th>Mode</th><th>State</th><th>Since</th><th aria-label="Actions"></th></tr></thead>
<tbody id="runs"></tbody>
<tbody id="empty" hidden><tr><td class="empty" colspan="6">No runs right now</td></tr></tbody>
</table>
</div>
</main>`,
    script: SCRIPT,
  });
}
