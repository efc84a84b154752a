/**
 * The console's **run page** (`/console#run=<runId>`), opened from a workspace's row:
 * the run's status with End and Delete, its files as its current version holds them
 * (each downloadable), its commands
 * (status, exit code, output on demand, Cancel while queued or running), its
 * background processes, its artifacts (each downloadable) and its history
 * (`console-history.ts`). Script and markup only, as the other panels: the page's `api`
 * helper loads the data, and everything is rendered through `textContent`. A refused
 * action (an agent token's `person_required`, a run that ended) shows on the page.
 *
 * @module
 */

import { HISTORY_HTML } from './console-history.js';

/** The page's functions, joined into the console's one script. */
export const RUN_SCRIPT = `
let runShown = null;
const enc = encodeURIComponent;

function runRefusal(message) {
  $('run-refusal').textContent = message;
  $('run-refusal').hidden = !message;
}

// A button of the page; one that changes the run (changes: true) reloads the page after.
function runButton(label, onClick, changes) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      await onClick();
      runRefusal('');
    } catch (err) {
      runRefusal('Could not ' + label.toLowerCase() + ': ' + err.message);
    }
    b.disabled = false;
    if (changes && runShown) await showRun(runShown);
  });
  return b;
}

async function download(path, name) {
  const res = await fetch(path, { headers: { authorization: 'Bearer ' + token() } });
  if (!res.ok) {
    const body = await res.json().catch(() => ({}));
    throw new Error(body.message || ('HTTP ' + res.status));
  }
  const a = document.createElement('a');
  a.href = URL.createObjectURL(await res.blob());
  a.download = name;
  a.hidden = true;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
}

function outputText(text, encoding) {
  if (!text) return '';
  return encoding === 'base64' ? '(binary output, ' + Math.floor(text.length * 3 / 4) + ' bytes)' : text;
}

async function showCommand(id) {
  const { command } = await api('/v1/commands/' + enc(id));
  $('command-output').hidden = false;
  $('command-output-title').textContent = 'Command ' + id + ': ' + command.status +
    (command.exitCode === null ? '' : ', exit code ' + command.exitCode);
  $('command-stdout').textContent = outputText(command.stdout, command.stdoutEncoding) || '(no output)';
  $('command-stderr').textContent = outputText(command.stderr, command.stderrEncoding) || '(nothing on stderr)';
}

function renderFiles(runId, manifest) {
  fill($('files'), manifest.files.map((f) => {
    const tr = document.createElement('tr');
    tr.dataset.path = f.path;
    cell(tr, f.path, 'mono');
    cell(tr, String(f.size));
    cell(tr, when(new Date(f.mtimeMs).toISOString()));
    const td = cell(tr, '');
    td.appendChild(runButton('Download', () =>
      download('/v1/runs/' + enc(runId) + '/files?path=' + enc(f.path), f.path.split('/').pop())));
    return tr;
  }), 'No files.', 4);
  $('files-note').textContent = 'As version ' + manifest.version + ' holds them' +
    (manifest.next ? ': the first ' + manifest.files.length + '.' : '.');
}

async function showRun(runId) {
  runShown = runId;
  $('run-title').textContent = runId;
  const base = '/v1/runs/' + enc(runId);
  try {
    // A section that cannot load (an ended run's processes) says why; the rest shows.
    const [{ run }, manifest, commands, artifacts, processes] = await Promise.all([
      api(base),
      api(base + '/manifest?limit=500'),
      api(base + '/commands?limit=20'),
      api('/v1/artifacts?runId=' + enc(runId)),
      api(base + '/processes?limit=20').catch((err) => ({ processes: [], why: err.message })),
    ]);
    if (runShown !== runId) return;
    $('run-status').textContent = run.status + (run.endedAt ? ', ended ' + when(run.endedAt) : '') +
      '; created ' + when(run.createdAt);
    $('run-status').dataset.status = run.status;
    $('run-actions').replaceChildren();
    if (run.status === 'running') {
      for (const status of ['succeeded', 'failed', 'cancelled']) {
        $('run-actions').appendChild(runButton('End as ' + status, () =>
          api(base + '/end', { method: 'POST', body: { status } }), true));
      }
    }
    $('run-actions').appendChild(runButton('Delete', async () => {
      if (!confirm('Delete run ' + runId + ': its files, commands, versions and artifacts?')) return;
      await api(base, { method: 'DELETE' });
      location.hash = '';
    }, false));
    renderFiles(runId, manifest);
    fill($('commands'), commands.commands.map((c) => {
      const tr = document.createElement('tr');
      tr.dataset.commandId = c.id;
      tr.dataset.status = c.status;
      cell(tr, c.id, 'mono');
      cell(tr, c.status, c.status === 'completed' ? 'ok' : c.status === 'failed' || c.status === 'timed_out' ? 'bad' : '');
      cell(tr, c.exitCode === null ? '' : String(c.exitCode));
      cell(tr, when(c.queuedAt));
      cell(tr, c.durationMs === null ? '' : c.durationMs + ' ms');
      const td = cell(tr, '');
      td.appendChild(runButton('Output', () => showCommand(c.id)));
      if (c.status === 'queued' || c.status === 'running') {
        td.appendChild(runButton('Cancel', () => api('/v1/commands/' + enc(c.id) + '/cancel', { method: 'POST', body: {} }), true));
      }
      return tr;
    }), 'No commands yet.', 6);
    fill($('processes'), processes.processes.map((p) => {
      const tr = document.createElement('tr');
      tr.dataset.processId = p.processId;
      cell(tr, p.command, 'mono');
      cell(tr, p.status + (p.errorCode ? ' (' + p.errorCode + ')' : ''), p.status === 'running' ? 'ok' : '');
      cell(tr, p.exitCode === null ? (p.signal || '') : String(p.exitCode));
      cell(tr, when(p.startedAt));
      return tr;
    }), processes.why ? 'Processes cannot be listed: ' + processes.why : 'No background processes.', 4);
    fill($('artifacts'), artifacts.artifacts.map((a) => {
      const tr = document.createElement('tr');
      tr.dataset.artifactId = a.id;
      cell(tr, a.name, 'mono');
      cell(tr, a.contentType);
      cell(tr, String(a.size));
      cell(tr, when(a.createdAt));
      const td = cell(tr, '');
      td.appendChild(runButton('Download', () => download('/v1/artifacts/' + enc(a.id) + '/content', a.name)));
      return tr;
    }), 'No artifacts.', 5);
    showError('');
  } catch (err) {
    showError('Could not load run ' + runId + ': ' + err.message);
    return;
  }
  await showHistory(runId);
}
`;

/** The page's markup. */
export const RUN_HTML = `
  <div id="page-run" class="page" hidden>
    <section>
      <h2>Run <span id="run-title" class="mono"></span></h2>
      <p id="run-status" class="note"></p>
      <div class="toolbar" id="run-actions"></div>
      <p id="run-refusal" class="bad" hidden></p>
    </section>
    <section>
      <h2>Files</h2>
      <p id="files-note" class="note"></p>
      <table><thead><tr><th>Path</th><th>Bytes</th><th>Modified</th><th></th></tr></thead><tbody id="files"></tbody></table>
    </section>
    <section>
      <h2>Commands</h2>
      <table><thead><tr><th>Command</th><th>Status</th><th>Exit</th><th>Queued</th><th>Ran</th><th></th></tr></thead><tbody id="commands"></tbody></table>
      <div id="command-output" hidden>
        <h3 id="command-output-title"></h3>
        <pre id="command-stdout"></pre>
        <pre id="command-stderr" class="muted"></pre>
      </div>
    </section>
    <section>
      <h2>Background processes</h2>
      <table><thead><tr><th>Command</th><th>Status</th><th>Exit</th><th>Started</th></tr></thead><tbody id="processes"></tbody></table>
    </section>
    <section>
      <h2>Artifacts</h2>
      <table><thead><tr><th>Name</th><th>Type</th><th>Bytes</th><th>Promoted</th><th></th></tr></thead><tbody id="artifacts"></tbody></table>
    </section>${HISTORY_HTML}
  </div>`;
