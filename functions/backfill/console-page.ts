/**
 * The operator console: one self-contained HTML page (no framework, nothing loaded from the internet) that
 * the operator function serves at `GET /`. Its script reads the function's own JSON routes — `/status`,
 * `/backfills`, `/console/tables`, and the failure-handling routes `/dead-letters` (replay, discard) and `/partitions/retry`
 * where this version serves them — and redraws every few seconds. Same origin, so the page needs exactly the
 * access the routes need (IAM-only in production).
 */

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f5f6f8}
header{background:#1d2330;color:#fff;padding:12px 20px;display:flex;gap:16px;align-items:baseline}
header h1{font-size:18px;margin:0}
main{display:grid;grid-template-columns:repeat(auto-fit,minmax(440px,1fr));gap:16px;padding:16px}
section{background:#fff;border-radius:6px;padding:12px 16px;box-shadow:0 1px 2px #0002;min-width:0;overflow-x:auto}
h2{font-size:15px;margin:0 0 8px}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:3px 6px;border-bottom:1px solid #eee;vertical-align:top}
.state{padding:2px 8px;border-radius:10px;font-weight:600}.running{background:#2e7d32}.starting{background:#f9a825}
.stopped,.uninitialised,.unhealthy,.failing{background:#c62828;color:#fff}.bar{background:#e3e6ea;border-radius:3px;height:10px;width:140px}
.bar>div{background:#1976d2;height:10px;border-radius:3px}.muted{color:#6b7280}.error{color:#c62828;white-space:pre-wrap;overflow-wrap:anywhere}
button{cursor:pointer}svg{width:100%;height:160px;background:#fafbfc}`;

const SCRIPT = `
const $ = (id) => document.getElementById(id);
const esc = (v) => String(v ?? '').replace(/[&<>"']/g, (c) => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'})[c]);
async function get(path) {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  const body = await res.json().catch(() => ({}));
  return { status: res.status, body };
}
async function act(method, path, body) {
  const res = await fetch(path, { method, headers: { 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  const answer = await res.json().catch(() => ({}));
  const note = $('notice');
  if (res.status === 404 && String(answer?.error?.message ?? '').startsWith('no route')) note.textContent = method + ' ' + path + ': not available in this version of sluice';
  else if (!res.ok) note.textContent = method + ' ' + path + ': ' + res.status + ' ' + (answer?.error?.message ?? '');
  else if (answer.failed > 0) note.textContent = method + ' ' + path + ': ' + answer.failed + ' failed: ' + (answer.results || []).filter((r) => r.outcome === 'failed').map((r) => r.id + ' ' + r.error).join('; ');
  else if (path === '/dead-letters/replay' && typeof answer.next === 'string') return act(method, path, { after: answer.next });
  else if (path === '/dead-letters/discard') note.textContent = 'discarded ' + answer.discarded + ' (by ' + answer.by + ')';
  else note.textContent = method + ' ' + path + ': done';
  refresh();
}
function chart(samples) {
  if (!samples || samples.length < 2) return '<p class="muted" data-testid="lag-chart-empty">not enough samples yet</p>';
  const t = samples.map((s) => Date.parse(s.at)); const v = samples.map((s) => s.lagSeconds);
  const t0 = t[0], t1 = t[t.length - 1] || t0 + 1, max = Math.max(1, ...v);
  const pts = samples.map((s, i) => ((t[i] - t0) / Math.max(1, t1 - t0) * 590 + 5).toFixed(1) + ',' + (150 - v[i] / max * 140).toFixed(1)).join(' ');
  return '<svg viewBox="0 0 600 160" data-testid="lag-chart" data-samples="' + samples.length + '"><polyline fill="none" stroke="#1976d2" stroke-width="2" points="' + pts + '"/>'
    + '<text x="6" y="14" font-size="11">' + max.toFixed(1) + ' s</text><text x="6" y="156" font-size="11">0</text></svg>'
    + '<p class="muted">' + esc(samples[0].at) + ' → ' + esc(samples[samples.length - 1].at) + '</p>';
}
// What the status says is wrong: the badge is never a plain green running while one of these holds.
function problems(s) {
  const out = [];
  const failed = (s.partitions || {}).failed || 0;
  if (failed) out.push(failed + ' failed partition' + (failed === 1 ? '' : 's'));
  for (const t of s.tables || []) if (t.state === 'failing') out.push('table ' + t.source + ' failing');
  const pending = (s.deadLetters || {}).pending || 0;
  if (pending) out.push(pending + ' dead letter' + (pending === 1 ? '' : 's') + ' pending');
  if ((s.stalled || []).length) out.push(s.stalled.length + ' stalled lease' + (s.stalled.length === 1 ? '' : 's'));
  if ((s.retention || {}).danger) out.push('retention in danger');
  return out;
}
let tableStates = {};
function drawStatus(status, code) {
  if (code !== 200) { $('state').innerHTML = '<span class="state uninitialised" data-testid="state">no status yet</span>'; return; }
  const s = status;
  const wrong = problems(s);
  const badge = (wrong.length && s.state === 'running' ? 'unhealthy' : esc(s.state));
  $('state').innerHTML = '<span class="state ' + badge + '" data-testid="state">' + esc([s.state, ...wrong].join(' · ')) + '</span> <span data-testid="reason" class="error">' + esc(s.reason ?? '') + '</span>';
  tableStates = Object.fromEntries((s.tables || []).map((t) => [t.source, t]));
  $('watermark').textContent = 'watermark ' + (s.watermark ?? '-') + ' · lag ' + (s.lagSeconds ?? '-') + ' s · updated ' + s.updatedAt;
  $('chart').innerHTML = chart(s.lagHistory);
  const p = s.partitions || {};
  $('partitions').innerHTML = '<table data-testid="partition-counts"><tr>' + ['waiting','ready','leased','finished','failed','total'].map((k) => '<th>' + k + '</th>').join('') + '</tr><tr>'
    + ['waiting','ready','leased','finished','failed','total'].map((k) => '<td data-state="' + k + '">' + esc(p[k] ?? 0) + '</td>').join('') + '</tr></table>'
    + '<h3>slowest</h3><table data-testid="slowest">' + (s.slowest || []).map((x) => '<tr><td>' + esc(x.partition) + '</td><td>' + esc(x.lagSeconds) + ' s</td></tr>').join('') + '</table>';
  const failed = (s.lastErrors || []).filter((e) => e.partition);
  $('failed').innerHTML = (failed.length ? '<button data-testid="retry-all" data-method="POST" data-path="/partitions/retry">retry every failed partition</button>' : '<p class="muted">no failed partitions</p>')
    + '<table data-testid="errors">' + (s.lastErrors || []).map((e) => '<tr><td>' + esc(e.at) + '</td><td>' + esc(e.partition ?? '') + '</td><td class="error">' + esc(e.kind) + ': ' + esc(e.message) + '</td><td>'
    + (e.partition ? '<button data-method="POST" data-path="' + esc('/partitions/retry?partition=' + encodeURIComponent(e.partition)) + '">retry</button>' : '') + '</td></tr>').join('') + '</table>';
  if (Array.isArray(s.tables)) $('reported').textContent = 'reported by the scheduler: ' + s.tables.map((t) => t.name ?? t.source).join(', ');
}
// GET /backfills is paged (ADR-2308): the console polls as many pages as the operator opened, 20 jobs each.
let backfillPages = 1;
async function backfillList() {
  const list = []; let token;
  for (let i = 0; i < backfillPages; i++) {
    const page = await get('/backfills?pageSize=20' + (token ? '&pageToken=' + encodeURIComponent(token) : ''));
    list.push(...(page.body.backfills || [])); token = page.body.nextPageToken;
    if (!token) break;
  }
  return { list, more: Boolean(token) };
}
function drawBackfills({ list, more }) {
  const now = Date.now();
  $('backfills').innerHTML = list.length === 0 ? '<p class="muted">no backfills</p>' : '<table data-testid="backfills"><tr><th>job</th><th>tables</th><th>state</th><th>progress</th><th>rows</th><th>rows/s</th><th></th></tr>'
    + list.map((j) => {
      const done = j.partitions.done, total = j.partitions.total || 0, pct = total ? Math.round(done / total * 100) : 0;
      const from = Date.parse(j.startedAt || j.createdAt), to = j.finishedAt ? Date.parse(j.finishedAt) : now;
      const rate = to > from ? (j.rowsWritten / ((to - from) / 1000)).toFixed(0) : '-';
      const live = j.state === 'running' || j.state === 'planning';
      return '<tr data-job="' + esc(j.id) + '"><td title="' + esc(j.id) + '">' + esc(j.id.slice(0, 8)) + '</td><td>' + esc(j.tables.map((t) => t.name).join(', ')) + '</td><td data-testid="job-state">' + esc(j.state) + '</td>'
        + '<td><div class="bar" title="' + done + '/' + total + '"><div style="width:' + pct + '%"></div></div> ' + done + '/' + total + '</td><td>' + esc(j.rowsWritten) + '</td><td>' + rate + '</td>'
        + '<td>' + (live ? '<button data-testid="cancel" data-method="DELETE" data-path="' + esc('/backfills/' + encodeURIComponent(j.id)) + '">cancel</button>' : '') + (j.error ? '<span class="error">' + esc(j.error) + '</span>' : '') + '</td></tr>';
    }).join('') + '</table>'
    + (more ? '<button data-testid="older-backfills" data-more="backfills">older backfills</button>' : '');
}
// Pending letters, each with its actions: replay (a stream letter) and discard (either source, ADR-2202); a
// writer letter holds Spanner mutations and is never replayed into BigQuery (ADR-2203).
function letterRow(d) {
  const ids = esc(JSON.stringify({ ids: [d.id] }));
  const replay = d.source === 'writer' ? '<span class="muted">not replayable</span>'
    : '<button data-testid="replay-one" data-method="POST" data-path="/dead-letters/replay" data-body="' + ids + '">replay</button>';
  const discard = '<button data-testid="discard" data-method="POST" data-path="/dead-letters/discard" data-reason-from="discard-reason" data-body="' + ids + '">discard</button>';
  const source = d.source === 'writer' ? 'writer ' + (d.origin ?? '') : (d.partition ?? '');
  return '<tr data-testid="dead-letter" data-id="' + esc(d.id) + '" data-source="' + esc(d.source ?? 'stream') + '"><td>' + esc(d.table) + '</td><td>' + esc(d.key ?? '') + '</td><td class="error">'
    + esc(d.reason ?? '') + ' ' + esc(d.message ?? '') + '</td><td>' + esc(source) + '</td><td>' + replay + ' ' + discard + '</td></tr>';
}
function drawDeadLetters(answer) {
  if (answer.status === 404) { $('dead').innerHTML = '<p class="muted" data-testid="dead-letters-unavailable">dead letters are not available in this version</p>'; return; }
  const b = answer.body || {}; const items = (b.items || []).filter((d) => d.state === 'pending');
  $('dead').innerHTML = '<p data-testid="dead-letter-count">' + esc(b.counts?.pending ?? items.length) + ' dead letters</p>'
    + (items.some((d) => d.source !== 'writer') ? '<button data-testid="replay" data-method="POST" data-path="/dead-letters/replay" data-body="{}">replay all</button>' : '')
    + '<table>' + items.slice(0, 50).map(letterRow).join('') + '</table>';
}
function drawTables(tables) {
  $('tables').innerHTML = tables.map((t) => '<details open data-testid="table" data-table="' + esc(t.source) + '"><summary><b>' + esc(t.source) + '</b> → '
    + [t.replica ? 'replica ' + esc(t.replica) : '', t.history ? 'history ' + esc(t.history) : ''].filter(Boolean).join(', ')
    + (tableStates[t.source] ? ' <span class="state ' + esc(tableStates[t.source].state) + '" data-testid="table-state">' + esc(tableStates[t.source].state) + '</span>' : '') + '</summary>'
    + (tableStates[t.source]?.reason ? '<p class="error" data-testid="table-reason">' + esc(tableStates[t.source].reason) + '</p>' : '')
    + (t.error ? '<p class="error">' + esc(t.error) + '</p>' : '<table>' + t.columns.map((c) => '<tr><td>' + esc(c.name) + (t.primaryKey.includes(c.name) ? ' (key)' : '') + '</td><td>' + esc(c.type) + '</td><td class="muted">' + (c.nullable ? 'nullable' : 'not null') + '</td></tr>').join('') + '</table>') + '</details>').join('');
}
async function refresh() {
  try {
    const [status, backfills, dead, tables] = await Promise.all([get('/status'), backfillList(), get('/dead-letters?state=pending'), get('/console/tables')]);
    drawStatus(status.body, status.status);
    drawBackfills(backfills);
    drawDeadLetters(dead);
    drawTables(tables.body.tables || []);
    $('updated').textContent = 'refreshed ' + new Date().toISOString();
    document.body.dataset.loaded = 'true';
  } catch (err) { $('notice').textContent = 'refresh failed: ' + err; }
}
// One listener for every action button: the buttons carry their request in data attributes (escaped like
// every other value), never in handler source text, which the policy forbids anyway (ADR-2301).
document.addEventListener('click', (event) => {
  const older = event.target instanceof Element ? event.target.closest('button[data-more]') : null;
  if (older) { backfillPages += 1; refresh(); return; }
  const button = event.target instanceof Element ? event.target.closest('button[data-method]') : null;
  if (!button) return;
  const { method, path, body, reasonFrom } = button.dataset;
  const parsed = body === undefined ? undefined : JSON.parse(body);
  const reason = reasonFrom ? $(reasonFrom).value.trim() : '';
  act(method, path, reason ? { ...parsed, reason } : parsed);
});
refresh(); setInterval(refresh, REFRESH_MS);`;

/**
 * The console page of `pipeline`, refreshing every `refreshMs`; its one script carries `nonce`, the value
 * the page's Content-Security-Policy allows.
 */
export function consolePage(pipeline: string, refreshMs = 3_000, nonce = ''): string {
  const title = `sluice · ${pipeline.replace(/[^a-z0-9-]/g, '')}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${title}</title><style>${STYLE}</style></head>
<body><header><h1>${title}</h1><span id="state"></span><span id="watermark" data-testid="watermark"></span>
<span id="updated" class="muted"></span></header>
<p id="notice" data-testid="notice" style="padding:0 20px"></p>
<main>
<section><h2>watermark lag, last hours</h2><div id="chart"></div></section>
<section><h2>partitions</h2><div id="partitions"></div></section>
<section><h2>failures</h2><div id="failed"></div></section>
<section><h2>backfills</h2><div id="backfills"></div></section>
<section><h2>dead letters</h2><p><input id="discard-reason" data-testid="discard-reason" size="40" maxlength="500" placeholder="why a discarded letter is no longer needed"></p><div id="dead"></div></section>
<section><h2>replicated tables</h2><p id="reported" class="muted"></p><div id="tables"></div></section>
</main>
<script nonce="${nonce.replace(/[^A-Za-z0-9+/=]/g, '')}">const REFRESH_MS = ${Math.max(500, Math.round(refreshMs))};${SCRIPT}</script>
</body></html>`;
}
