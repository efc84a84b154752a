/**
 * The console's **History** panel: a run's versions, opened from its row of the
 * workspaces table (newest first, a page at a time: when, what made each, how many
 * paths it added, changed and removed, its label), and what one version changed against
 * the version before it (paths with their size and hash). Script and markup only, in
 * the manner of `console-workers.ts`: the page's `api` helper loads the data, and
 * everything is rendered through `textContent`.
 *
 * @module
 */

/** The panel's functions, joined into the page's one script. */
export const HISTORY_SCRIPT = `
let historyRun = null;

function madeBy(v) {
  if (v.source === 'command') return 'command ' + (v.commandId || '');
  if (v.source === 'restore') return 'restore of version ' + v.restoredFrom;
  if (v.source === 'fork') return v.forkedFrom ? 'fork of ' + v.forkedFrom.runId + ' at version ' + v.forkedFrom.version : 'fork';
  if (v.source === 'process') return 'background processes';
  if (v.source === 'action') return v.action || 'file action';
  return 'before versions were recorded';
}

function historyButton(label, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.addEventListener('click', onClick);
  return b;
}

async function showHistory(runId, before) {
  historyRun = runId;
  $('history-panel').hidden = false;
  $('history-run').textContent = runId;
  $('changes-title').hidden = true;
  $('changes-table').hidden = true;
  const path = '/v1/runs/' + encodeURIComponent(runId) + '/versions?limit=20' + (before ? '&before=' + before : '');
  try {
    const page = await api(path);
    if (historyRun !== runId) return;
    $('history-current').textContent = 'Current version: ' + page.current + '.';
    fill($('versions'), page.versions.map((v) => {
      const tr = document.createElement('tr');
      tr.dataset.version = String(v.version);
      cell(tr, String(v.version), 'mono');
      cell(tr, when(v.createdAt));
      cell(tr, madeBy(v), 'made-by');
      cell(tr, String(v.added));
      cell(tr, String(v.changed));
      cell(tr, String(v.removed));
      cell(tr, v.label || '', 'label mono');
      const td = document.createElement('td');
      if (v.version > 1) td.appendChild(historyButton('Changes', () => showChanges(runId, v.version)));
      tr.appendChild(td);
      return tr;
    }), 'No versions yet: nothing has changed its files.', 8);
    const more = $('versions-more');
    more.hidden = page.next === null;
    more.onclick = () => showHistory(runId, page.next);
    showError('');
  } catch (err) {
    showError('Could not load the history: ' + err.message);
  }
}

async function showChanges(runId, version) {
  const path = '/v1/runs/' + encodeURIComponent(runId) + '/versions/diff?from=' + (version - 1) + '&to=' + version + '&limit=500';
  $('changes-title').hidden = false;
  $('changes-table').hidden = false;
  try {
    const diff = await api(path);
    $('changes-title').textContent = 'Version ' + version + ' against ' + (version - 1) + ': ' +
      diff.added + ' added, ' + diff.changed + ' changed, ' + diff.removed + ' removed' +
      (diff.next ? ' (the first 500 paths)' : '');
    fill($('changes'), diff.entries.map((e) => {
      const tr = document.createElement('tr');
      tr.dataset.path = e.path;
      const side = e.to || e.from;
      cell(tr, e.change, e.change === 'removed' ? 'bad' : e.change === 'added' ? 'ok' : '');
      cell(tr, e.path, 'mono');
      cell(tr, String(side.size));
      cell(tr, side.hash.slice(0, 16), 'mono');
      return tr;
    }), 'Only times changed.', 4);
  } catch (err) {
    $('changes-title').textContent = err.status === 404
      ? 'Version ' + (version - 1) + ' is no longer kept, so what ' + version + ' changed cannot be shown.'
      : 'Could not load the changes: ' + err.message;
    fill($('changes'), [], '', 4);
  }
}
`;

/** The panel's markup, below the workspaces table. */
export const HISTORY_HTML = `
    <section id="history-panel" hidden>
      <h2>History of <span id="history-run" class="mono"></span></h2>
      <p class="note">Every change of the run's files is a version; restore one with <code>memql restore</code> or <code>version_restore</code>, start a new run from one with <code>memql fork</code>. <span id="history-current"></span></p>
      <table><thead><tr><th>Version</th><th>Created</th><th>Made by</th><th>Added</th><th>Changed</th><th>Removed</th><th>Label</th><th></th></tr></thead><tbody id="versions"></tbody></table>
      <div class="toolbar"><button id="versions-more" type="button" hidden>Older versions</button></div>
      <h3 id="changes-title" hidden></h3>
      <table id="changes-table" hidden><thead><tr><th>Change</th><th>Path</th><th>Size</th><th>SHA-256</th></tr></thead><tbody id="changes"></tbody></table>
    </section>`;
