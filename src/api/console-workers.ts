/**
 * The console's **Workers** panel: the caller's worker hosts (connected or not, OS,
 * what each provides, standing scope, kill switch), a toggle of the kill switch over
 * all of them, the pending consent requests with Approve (at the tier the request
 * needs) and Deny, and the recent routing records. A refused change (an agent token's
 * `person_required`, say) stays on the panel until the next change succeeds, so the
 * page's refresh does not wipe it. Script and markup only; the page
 * (`console-page.ts`) loads the data with its `refresh` and its `api` helper, and
 * renders through `textContent` as everything else on it does.
 *
 * @module
 */

/** The panel's functions, joined into the page's one script. */
export const WORKERS_SCRIPT = `
function showRefusal(message) {
  $('worker-refusal').textContent = message;
  $('worker-refusal').hidden = !message;
}

function workerButton(label, cls, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.className = cls;
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      await onClick();
      showRefusal('');
    } catch (err) {
      showRefusal('Could not change it: ' + err.message);
    }
    await refresh();
  });
  return b;
}

function listText(values) { return values && values.length ? values.join(', ') : '-'; }

function renderWorkers(mine, requests, invocations) {
  const toggle = $('kill-switch');
  toggle.dataset.engaged = String(mine.killSwitch);
  toggle.textContent = mine.killSwitch
    ? 'Turn computer use back on'
    : 'Turn computer use off (kill switch)';
  $('kill-state').textContent = mine.killSwitch
    ? 'Kill switch ON: no call runs on any of your workers.'
    : 'Kill switch off.';
  $('kill-state').className = mine.killSwitch ? 'bad' : 'muted';
  fill($('workers'), mine.workers.map((w) => {
    const tr = document.createElement('tr');
    tr.dataset.workerId = w.workerId;
    cell(tr, w.workerId, 'mono');
    cell(tr, w.connected ? 'connected' : 'not connected', w.connected ? 'ok' : 'muted');
    cell(tr, w.os);
    cell(tr, listText(w.provides));
    cell(tr, w.scope, 'scope');
    cell(tr, w.killSwitch ? 'on' : 'off', w.killSwitch ? 'bad kill' : 'muted kill');
    return tr;
  }), 'You have no worker hosts. Start memql worker on a machine of yours.', 6);
  fill($('consent'), requests.map((r) => {
    const tr = document.createElement('tr');
    tr.dataset.requestId = r.id;
    cell(tr, r.summary);
    cell(tr, r.workerId, 'mono');
    cell(tr, r.runId, 'mono');
    cell(tr, r.action, 'mono');
    cell(tr, listText(r.needs));
    cell(tr, r.requiredScope);
    cell(tr, r.heldScope);
    const actions = cell(tr, '');
    actions.appendChild(workerButton('Approve (' + r.requiredScope + ')', 'approve', () =>
      api('/v1/consent-requests/' + encodeURIComponent(r.id) + '/approve', { method: 'POST', body: {} })));
    actions.appendChild(document.createTextNode(' '));
    actions.appendChild(workerButton('Deny', 'deny', () =>
      api('/v1/consent-requests/' + encodeURIComponent(r.id) + '/deny', { method: 'POST', body: {} })));
    return tr;
  }), 'No pending consent requests.', 8);
  fill($('invocations'), invocations.map((i) => {
    const tr = document.createElement('tr');
    tr.dataset.invocationId = i.id;
    cell(tr, i.reroutedFrom);
    cell(tr, i.workerId, 'mono');
    cell(tr, i.action, 'mono');
    cell(tr, listText(i.needs));
    cell(tr, i.scope);
    cell(tr, i.errorCode ? i.status + ' (' + i.errorCode + ')' : i.status,
      i.status === 'succeeded' ? 'ok' : i.status === 'running' ? '' : 'bad');
    cell(tr, i.runId, 'mono');
    cell(tr, when(i.startedAt));
    return tr;
  }), 'No call has been sent to a worker.', 8);
}

$('kill-switch').addEventListener('click', async () => {
  const engaged = $('kill-switch').dataset.engaged === 'true';
  try {
    await api('/v1/workers/kill-switch', { method: 'POST', body: { engaged: !engaged } });
    showRefusal('');
  } catch (err) {
    showRefusal('Could not change the kill switch: ' + err.message);
  }
  await refresh();
});
`;

/** The panel's markup, inside the page's signed-in view. */
export const WORKERS_HTML = `
    <section id="workers-panel">
      <h2>Workers</h2>
      <div class="toolbar"><button id="kill-switch" type="button" data-engaged="false">Turn computer use off (kill switch)</button><span id="kill-state" class="muted"></span></div>
      <p id="worker-refusal" class="bad" hidden></p>
      <p class="note">Your own machines running <code>memql worker</code>. Observe lets the agent read and list files there; full lets it write, delete and run commands. Only you see and decide these: approving, denying and turning computer use back on take your person token. Turning computer use off also stops what runs there now.</p>
      <table><thead><tr><th>Worker</th><th>Connection</th><th>OS</th><th>Provides</th><th>Scope</th><th>Kill switch</th></tr></thead><tbody id="workers"></tbody></table>
      <h3>Pending consent requests</h3>
      <table><thead><tr><th>Request</th><th>Worker</th><th>Run</th><th>Action</th><th>Needs</th><th>Requires</th><th>Holds</th><th></th></tr></thead><tbody id="consent"></tbody></table>
      <h3>Recent routing records</h3>
      <table><thead><tr><th>Rerouted from</th><th>Worker</th><th>Action</th><th>Needs</th><th>Scope</th><th>Status</th><th>Run</th><th>Started</th></tr></thead><tbody id="invocations"></tbody></table>
    </section>`;
