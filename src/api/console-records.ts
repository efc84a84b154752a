/**
 * The console's **Audit** page (`#audit`: events newest first, searched by run, event
 * type and, for an operator, user; older pages on request) and **Tokens** page
 * (`#tokens`: the caller's tokens with Revoke, which takes the person token; for an
 * operator, every user's, searched by user). A user signed in sees only their own;
 * the operator credential sees everyone's through `/v1/admin`. Script and markup only,
 * rendered through `textContent` as the rest of the console.
 *
 * @module
 */

/** The pages' functions, joined into the console's one script. */
export const RECORDS_SCRIPT = `
let auditBefore = null;

function auditPath(before) {
  const q = new URLSearchParams({ limit: '50' });
  const run = $('audit-run').value.trim();
  const type = $('audit-type').value.trim();
  const user = $('audit-user').value.trim();
  if (run) q.set('runId', run);
  if (type) q.set('type', type);
  if (mode === 'operator' && user) q.set('userId', user);
  if (before) q.set('before', String(before));
  return (mode === 'operator' ? '/v1/admin/audit?' : '/v1/audit?') + q;
}

function metadataText(m) {
  return Object.entries(m || {})
    .filter(([, v]) => v !== null)
    .map(([k, v]) => k + '=' + v)
    .join(' ');
}

async function loadAudit(fresh) {
  if (fresh) {
    auditBefore = null;
    $('audit').replaceChildren();
  }
  try {
    const page = await api(auditPath(auditBefore));
    const rows = page.events.map((e) => {
      const tr = document.createElement('tr');
      tr.dataset.eventId = String(e.id);
      tr.dataset.eventType = e.eventType;
      cell(tr, when(e.createdAt));
      cell(tr, e.eventType, 'mono');
      cell(tr, e.ownerUserId || '', 'mono');
      cell(tr, e.runId || '', 'mono');
      cell(tr, metadataText(e.metadata), 'meta');
      return tr;
    });
    if (fresh) fill($('audit'), rows, 'No events match.', 5);
    else for (const r of rows) $('audit').appendChild(r);
    auditBefore = page.nextBefore;
    $('audit-older').hidden = page.nextBefore === null;
    showError('');
  } catch (err) {
    showError('Could not load the audit trail: ' + err.message);
  }
}

function tokenRefusal(message) {
  $('token-refusal').textContent = message;
  $('token-refusal').hidden = !message;
}

async function loadTokens() {
  const user = $('tokens-user').value.trim();
  const path = mode === 'operator'
    ? '/v1/admin/tokens' + (user ? '?userId=' + encodeURIComponent(user) : '')
    : '/v1/tokens';
  try {
    const { tokens } = await api(path);
    fill($('tokens'), tokens.map((k) => {
      const tr = document.createElement('tr');
      tr.dataset.tokenId = k.id;
      cell(tr, k.id, 'mono');
      cell(tr, k.userId || me.userId, 'mono');
      cell(tr, k.kind);
      cell(tr, k.label || '');
      cell(tr, when(k.createdAt));
      const td = cell(tr, k.revokedAt ? 'revoked ' + when(k.revokedAt) : '', k.revokedAt ? 'muted' : '');
      if (!k.revokedAt) {
        const b = document.createElement('button');
        b.type = 'button';
        b.textContent = 'Revoke';
        b.addEventListener('click', async () => {
          b.disabled = true;
          try {
            await api((mode === 'operator' ? '/v1/admin/tokens/' : '/v1/tokens/') + encodeURIComponent(k.id), { method: 'DELETE' });
            tokenRefusal('');
          } catch (err) {
            tokenRefusal('Could not revoke it: ' + err.message);
          }
          await loadTokens();
        });
        td.appendChild(b);
      }
      return tr;
    }), 'No tokens.', 6);
    showError('');
  } catch (err) {
    showError('Could not load the tokens: ' + err.message);
  }
}

$('audit-form').addEventListener('submit', (e) => { e.preventDefault(); loadAudit(true); });
$('audit-older').addEventListener('click', () => loadAudit(false));
$('tokens-form').addEventListener('submit', (e) => { e.preventDefault(); loadTokens(); });
`;

/** The pages' markup. */
export const RECORDS_HTML = `
  <div id="page-audit" class="page" hidden>
    <section>
      <h2>Audit</h2>
      <p class="note">What happened, newest first: ids, counts, codes and durations, never command text, output or file contents.</p>
      <form id="audit-form" class="toolbar">
        <input id="audit-run" placeholder="run id" aria-label="run id" size="30">
        <input id="audit-type" placeholder="event type, or its start: workspace_command." aria-label="event type" size="36">
        <input id="audit-user" class="operator-only" placeholder="user id" aria-label="user id" size="16" hidden>
        <button type="submit">Search</button>
      </form>
      <table><thead><tr><th>When</th><th>Event</th><th>User</th><th>Run</th><th>Details</th></tr></thead><tbody id="audit"></tbody></table>
      <div class="toolbar"><button id="audit-older" type="button" hidden>Older events</button></div>
    </section>
  </div>
  <div id="page-tokens" class="page" hidden>
    <section>
      <h2>Tokens</h2>
      <p class="note">An agent token is a tool loop's; the person token is yours alone: revoking a token takes it.</p>
      <form id="tokens-form" class="toolbar operator-only" hidden>
        <input id="tokens-user" placeholder="user id" aria-label="user id" size="16">
        <button type="submit">Search</button>
      </form>
      <p id="token-refusal" class="bad" hidden></p>
      <table><thead><tr><th>Token</th><th>User</th><th>Kind</th><th>Label</th><th>Created</th><th></th></tr></thead><tbody id="tokens"></tbody></table>
    </section>
  </div>`;
