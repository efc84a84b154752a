/**
 * The operator console, `GET /console`. One static page, plain HTML and inline script,
 * no build step, with pages by the address's fragment: the fleet (`#`: replicas, the
 * caller's workspaces and worker hosts), a run (`#run=<id>`, `console-run.ts`), the
 * audit trail (`#audit`) and tokens (`#tokens`, `console-records.ts`). The page itself needs no token; it asks for
 * one (or takes it from a sign-in link's fragment, `/console#token=...`, which never
 * reaches a server, and takes it out of the address bar), keeps it in
 * `sessionStorage`, and calls the API with it, so everything it shows is the caller's.
 * It says which kind of token signed in: a person token decides consent, an agent
 * token only looks and turns the kill switch on (its attempts show the refusal). It
 * shows the replicas (with whether each can run a package build, and
 * what it lacks), the caller's own workspaces (released ones on request, with their
 * reasons in words), each run's history (`console-history.ts`), and the caller's
 * worker hosts with their consent requests and routing records (`console-workers.ts`). There is no cluster-wide switch: the kill
 * switch on the page is the caller's own.
 *
 * Everything rendered goes through `textContent`, never `innerHTML`, so a node id or
 * run id cannot inject markup; the Content-Security-Policy allows only this script.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { HISTORY_SCRIPT } from './console-history.js';
import { RECORDS_HTML, RECORDS_SCRIPT } from './console-records.js';
import { RUN_HTML, RUN_SCRIPT } from './console-run.js';
import { WORKERS_HTML, WORKERS_SCRIPT } from './console-workers.js';

const SCRIPT = `
'use strict';
const KEY = 'memql.console.token';
const $ = (id) => document.getElementById(id);
let timer = null;
// Refreshes overlap (the timer, a button); only the latest one may render, or an
// answer read before a change could paint over the one read after it.
let latest = 0;
// The workspace list's pages: the cursor of each page shown after the first.
const WORKSPACE_PAGE = 50;
let workspacePages = [];
// Who signed in: a user's token (user) or the operator credential (operator), which
// sees the replicas, everyone's audit trail and tokens, and no user's runs.
let mode = 'user';
let me = { userId: '', tokenKind: '' };

function token() { return sessionStorage.getItem(KEY); }

function cell(row, text, cls) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined ? '' : String(text);
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}

function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
}

function fill(tbody, rows, empty, columns) {
  tbody.replaceChildren();
  if (rows.length === 0) {
    const tr = document.createElement('tr');
    const td = cell(tr, empty, 'empty');
    td.colSpan = columns;
    tbody.appendChild(tr);
    return;
  }
  for (const r of rows) tbody.appendChild(r);
}

async function api(path, init) {
  const options = init || {};
  const headers = { authorization: 'Bearer ' + token() };
  const request = { method: options.method || 'GET', headers };
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    request.body = JSON.stringify(options.body);
  }
  const res = await fetch(path, request);
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(body.message || ('HTTP ' + res.status));
    err.status = res.status;
    throw err;
  }
  return body;
}

function buildText(b) {
  if (!b) return ['not reported', 'muted'];
  if (b.canBuild) return ['can build', 'ok'];
  if (b.problem === 'missing_tools') return ['cannot build: lacks ' + b.missing.join(', '), 'bad'];
  if (b.problem === 'probe_failed') return ['cannot build: probe failed' + (b.detail ? ' (' + b.detail + ')' : ''), 'bad'];
  return ['not reported yet', 'muted'];
}

function showError(message) {
  $('error').textContent = message;
  $('error').hidden = !message;
}

async function refresh() {
  if (!token() || $('page-fleet').hidden) return;
  const includeReleased = $('include-released').checked;
  const mine = ++latest;
  try {
    if (mode === 'operator') {
      renderFleet(await api('/v1/admin/fleet'));
      $('updated').textContent = 'Updated ' + new Date().toLocaleTimeString();
      showError('');
      return;
    }
    const [fleet, ws, workers, consent, routed] = await Promise.all([
      api('/v1/fleet/workbenches'),
      api('/v1/workspaces?includeReleased=' + includeReleased + '&limit=' + WORKSPACE_PAGE
        + (workspacePages.length > 0 ? '&before=' + encodeURIComponent(workspacePages[workspacePages.length - 1]) : '')),
      api('/v1/workers'),
      api('/v1/consent-requests?status=pending'),
      api('/v1/worker-invocations?limit=20'),
    ]);
    if (mine !== latest) return;
    renderWorkers(workers, consent.requests, routed.invocations);
    renderFleet(fleet);
    fill($('workspaces'), ws.workspaces.map((w) => {
      const tr = document.createElement('tr');
      tr.dataset.runId = w.runId;
      tr.dataset.status = w.status;
      cell(tr, w.runId, 'mono');
      cell(tr, w.nodeId || '(none)', 'mono');
      cell(tr, w.status, w.status === 'provisioned' ? 'ok' : 'muted');
      cell(tr, w.releasedReason ? (w.releasedReasonText || w.releasedReason) : '', 'reason');
      cell(tr, when(w.createdAt));
      cell(tr, when(w.releasedAt));
      const td = document.createElement('td');
      const open = document.createElement('a');
      open.href = '#run=' + encodeURIComponent(w.runId);
      open.textContent = 'Open';
      td.appendChild(open);
      tr.appendChild(td);
      return tr;
    }), includeReleased ? 'You have no workspaces.' : 'You have no live workspaces.', 7);
    $('workspaces-older').hidden = ws.nextBefore === null;
    $('workspaces-older').dataset.before = ws.nextBefore || '';
    $('workspaces-newer').hidden = workspacePages.length === 0;
    $('updated').textContent = 'Updated ' + new Date().toLocaleTimeString();
    showError('');
  } catch (err) {
    if (err.status === 401) {
      sessionStorage.removeItem(KEY);
      showSignIn('That token was not accepted. Paste a valid token.');
      return;
    }
    if (mine !== latest) return;
    showError('Could not load: ' + err.message);
  }
}

function renderFleet(fleet) {
  $('mode').textContent = fleet.mode === 'local'
    ? 'Local mode: the workbench runs inside this node.'
    : 'Remote mode: replicas this agent node is connected to.';
  fill($('replicas'), fleet.replicas.map((r) => {
    const tr = document.createElement('tr');
    tr.dataset.nodeId = r.nodeId || '';
    cell(tr, r.nodeId || '(no hello yet)', 'mono');
    cell(tr, r.address, 'mono');
    cell(tr, r.healthy ? 'healthy' : 'unhealthy', r.healthy ? 'ok' : 'bad');
    cell(tr, r.running + ' running, ' + r.queued + ' queued, capacity ' + r.capacity);
    const [build, buildClass] = buildText(r.build);
    cell(tr, build, buildClass + ' build');
    cell(tr, r.connectedSince ? when(r.connectedSince) : 'not connected');
    return tr;
  }), 'No workbench replicas are known to this node.', 6);
}

/** Who the credential speaks for: a user's token, or else the operator credential. */
async function identify() {
  try {
    me = await api('/v1/me');
    mode = 'user';
  } catch (err) {
    if (err.status !== 401) throw err;
    await api('/v1/admin/fleet');
    mode = 'operator';
    me = { userId: '', tokenKind: 'operator' };
  }
  document.body.dataset.mode = mode;
  for (const el of document.querySelectorAll('.user-only')) el.hidden = mode !== 'user';
  for (const el of document.querySelectorAll('.operator-only')) el.hidden = mode !== 'operator';
  $('who').dataset.kind = me.tokenKind;
  $('who').textContent = mode === 'operator'
    ? 'Signed in with the operator credential: the replicas, and every user’s audit trail and tokens.'
    : me.tokenKind === 'person'
      ? 'Signed in as ' + me.userId + ' with your person token.'
      : 'Signed in as ' + me.userId + ' with an agent token: it can look and turn the kill switch on; approving, denying and turning computer use back on need your person token.';
}

function showPage(name) {
  for (const page of document.querySelectorAll('.page')) page.hidden = page.id !== 'page-' + name;
  for (const link of document.querySelectorAll('nav a')) {
    link.classList.toggle('current', link.dataset.page === name);
  }
}

function route() {
  const run = /^#run=(.+)$/.exec(location.hash);
  if (run && mode === 'user') {
    showPage('run');
    showRun(decodeURIComponent(run[1]));
  } else if (location.hash === '#audit') {
    showPage('audit');
    loadAudit(true);
  } else if (location.hash === '#tokens') {
    showPage('tokens');
    loadTokens();
  } else {
    showPage('fleet');
    refresh();
  }
}

function showSignIn(message) {
  $('signin').hidden = false;
  $('fleet').hidden = true;
  $('signin-message').textContent = message || '';
  if (timer) clearInterval(timer);
  timer = null;
}

function showFleet() {
  $('signin').hidden = true;
  $('fleet').hidden = false;
  identify().then(route, (err) => {
    if (err.status === 401) {
      sessionStorage.removeItem(KEY);
      showSignIn('That token was not accepted. Paste a valid token, or the operator credential.');
    } else {
      showError('Could not load: ' + err.message);
    }
  });
  if (!timer) timer = setInterval(refresh, 10000);
}

window.addEventListener('hashchange', () => { if (token()) route(); });
$('signin-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const value = $('token').value.trim();
  if (!value) return;
  sessionStorage.setItem(KEY, value);
  $('token').value = '';
  showFleet();
});
$('include-released').addEventListener('change', () => { workspacePages = []; refresh(); });
$('workspaces-older').addEventListener('click', () => {
  workspacePages.push($('workspaces-older').dataset.before);
  refresh();
});
$('workspaces-newer').addEventListener('click', () => { workspacePages.pop(); refresh(); });
$('refresh').addEventListener('click', route);
$('signout').addEventListener('click', () => {
  sessionStorage.removeItem(KEY);
  showSignIn('');
});
${WORKERS_SCRIPT}
${HISTORY_SCRIPT}
${RUN_SCRIPT}
${RECORDS_SCRIPT}
// A sign-in link carries the token in the fragment: kept as a pasted one would be,
// then taken out of the address bar (and so out of history and bookmarks).
const linked = /^#token=([\x21-\x7e]+)$/.exec(location.hash);
if (linked) {
  sessionStorage.setItem(KEY, decodeURIComponent(linked[1]));
  history.replaceState(null, '', location.pathname + location.search);
}
if (token()) showFleet(); else showSignIn('');
`;

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1d2430; background: #f6f7f9; }
header { background: #1d2430; color: #fff; padding: 10px 20px; display: flex; gap: 16px; align-items: baseline; }
header h1 { font-size: 16px; margin: 0; }
header nav a { color: #b9c2d0; margin-right: 12px; text-decoration: none; }
header nav a.current { color: #fff; font-weight: 600; }
pre { background: #f6f7f9; padding: 8px; white-space: pre-wrap; max-height: 320px; overflow: auto; }
.meta { font-size: 12px; color: #4a5566; }
main { padding: 16px 20px; max-width: 1200px; }
section { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 12px 16px; margin-bottom: 16px; }
h2 { font-size: 15px; margin: 0 0 8px; }
h3 { font-size: 13px; margin: 14px 0 6px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #eceff3; vertical-align: top; }
th { font-weight: 600; color: #4a5566; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
.mono { font-family: ui-monospace, monospace; font-size: 13px; white-space: nowrap; }
.ok { color: #176b36; font-weight: 600; }
.bad { color: #a61b1b; font-weight: 600; }
.muted { color: #6b7585; }
.empty { color: #6b7585; font-style: italic; }
.toolbar { display: flex; gap: 16px; align-items: center; margin-bottom: 8px; }
.note { color: #6b7585; font-size: 12px; }
#error { color: #a61b1b; }
button { font: inherit; }
`;

const HTML_BODY = `
<header><h1>memql-workbench</h1><nav><a href="#" data-page="fleet">Fleet</a> <a href="#audit" data-page="audit">Audit</a> <a href="#tokens" data-page="tokens">Tokens</a></nav></header>
<main>
  <section id="signin" hidden>
    <h2>Sign in</h2>
    <p>Paste your person token, or open the sign-in link <code>npm start</code> prints (<code>/console#token=...</code>). It is kept in this tab only (sessionStorage). An agent token signs in too, but only a person token approves or denies consent, turns computer use back on and revokes tokens. The operator credential (<code>operator-token</code> in the data directory) shows the replicas and every user's audit trail and tokens.</p>
    <form id="signin-form"><input id="token" type="password" autocomplete="off" size="60" aria-label="API token"> <button type="submit">Use token</button></form>
    <p id="signin-message" class="bad"></p>
  </section>
  <div id="fleet" hidden>
    <div class="toolbar"><button id="refresh" type="button">Refresh</button><button id="signout" type="button">Forget token</button><span id="who" class="note"></span><span id="updated" class="note"></span></div>
    <p id="error" hidden></p>
    <div id="page-fleet" class="page">
    <section>
      <h2>Workbench replicas</h2>
      <p id="mode" class="note"></p>
      <table><thead><tr><th>Node id</th><th>Address</th><th>Health</th><th>Load</th><th>Build</th><th>Connected since</th></tr></thead><tbody id="replicas"></tbody></table>
    </section>
    <section class="user-only">
      <h2>Your workspaces</h2>
      <div class="toolbar"><label><input id="include-released" type="checkbox"> Include released</label><span class="note">Only your own workspaces are listed.</span></div>
      <table><thead><tr><th>Run</th><th>Node</th><th>Status</th><th>Released reason</th><th>Created</th><th>Released</th><th></th></tr></thead><tbody id="workspaces"></tbody></table>
      <div class="toolbar"><button id="workspaces-newer" type="button" hidden>Newer workspaces</button><button id="workspaces-older" type="button" hidden>Older workspaces</button></div>
    </section><div class="user-only">${WORKERS_HTML}</div>
    </div>${RUN_HTML}${RECORDS_HTML}
  </div>
</main>
`;

/** The page. */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>memql-workbench console</title>
<style>${STYLE}</style></head>
<body>${HTML_BODY}<script>${SCRIPT}</script></body></html>
`;

const hash = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64');

/** Allows exactly this page's script and style, and API calls to this origin. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  `script-src 'sha256-${hash(SCRIPT)}'`,
  `style-src 'sha256-${hash(STYLE)}'`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
