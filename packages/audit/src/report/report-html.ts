import type { ReportModel, ReportServer } from './report-model.js';
import { REPORT_SCRIPT } from './report-script.js';

/** What the report says about the trail's verification, at the top of the page. */
export interface ReportVerification {
  /** intact: chain (and signatures, when checked) good; unsigned: intact, with records after the last checkpoint. */
  readonly status: 'intact' | 'broken' | 'unsigned';
  /** One line, as `termgate audit verify` prints it. */
  readonly text: string;
}

export interface ReportInput {
  readonly files: readonly string[];
  readonly generatedAt: Date;
  readonly verification: ReportVerification;
  readonly model: ReportModel;
}

const STYLE = `
:root { font: 14px/1.4 system-ui, sans-serif; color: #1d2329; }
body { margin: 0 auto; max-width: 1400px; padding: 16px 24px; }
h1 { font-size: 20px; margin: 0 0 4px; }
.meta { color: #5b6670; margin-bottom: 12px; }
#verification { padding: 10px 14px; border-radius: 6px; font-weight: 600; margin-bottom: 12px; word-break: break-all; }
#verification.intact { background: #e6f4ea; border: 1px solid #2e7d32; }
#verification.unsigned { background: #fff4e0; border: 1px solid #ef8f00; }
#verification.broken { background: #fdecea; border: 1px solid #c62828; }
.summary { display: flex; gap: 16px; flex-wrap: wrap; margin-bottom: 8px; }
canvas { width: 100%; height: 120px; background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 4px; }
.filters { display: flex; gap: 12px; flex-wrap: wrap; align-items: center; margin: 12px 0 8px; }
.filters input { min-width: 280px; }
.chip { padding: 2px 8px; border-radius: 10px; background: #eef1f4; margin-right: 6px; }
.chip.decision-deny { background: #fdecea; color: #c62828; font-weight: 600; }
.chip.decision-ask { background: #fff4e0; color: #9a5b00; font-weight: 600; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eaeef2; vertical-align: top; }
th { position: sticky; top: 0; background: #fff; }
td.num { text-align: right; white-space: nowrap; }
td.command { font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; }
tr.decision-deny td { background: #fdecea; }
tr.decision-deny td:nth-child(3) { color: #c62828; font-weight: 700; }
tr.decision-ask td { background: #fff4e0; }
tr.declined td { background: #f3e8fd; }
tr.declined td:nth-child(3) { color: #6a1b9a; font-weight: 700; }
tr.verification-failed td { background: #c62828; color: #fff; font-weight: 700; }
tr.verification-failed td:first-child::before { content: "✗ "; }
tr.unverified td { color: #8a6d00; font-style: italic; }
#servers { margin-bottom: 12px; }
#servers li { font-family: ui-monospace, monospace; word-break: break-all; }
tr[data-id] { cursor: pointer; }
tr[data-id]:hover td { outline: 1px solid #d0d7de; }
dl.details { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 4px 0 8px; }
dl.details dt { color: #5b6670; }
dl.details dd { margin: 0; font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; }
#more { margin: 8px 0; }
.legend span { margin-right: 12px; }
`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The model as JSON that cannot end the `<script>` element it sits in. */
function embed(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function networkText(network: ReportServer['network']): string {
  if (network === null) return 'unknown';
  return typeof network === 'string' ? network : `allowlist: ${network.join(', ') || '(no host)'}`;
}

/** Each distinct policy and sandbox the trail's servers ran with (from their `server-start` records). */
function serversHtml(servers: readonly ReportServer[]): string {
  const seen = new Set<string>();
  const items: string[] = [];
  for (const server of servers) {
    const sandbox =
      server.sandboxMode === null
        ? 'sandbox: not recorded'
        : `sandbox: ${server.sandboxMode}${server.sandboxMode === 'off' ? '' : `, network: ${networkText(server.network)}`}`;
    const line = `policy ${server.policyPath ?? '(unknown)'} sha256 ${server.policySha256 ?? '(unknown)'}; ${sandbox}`;
    if (seen.has(line)) continue;
    seen.add(line);
    items.push(`<li data-policy-sha256="${escapeHtml(server.policySha256 ?? '')}">${escapeHtml(line)}</li>`);
  }
  return items.length === 0
    ? '<div id="servers" class="meta">No server-start record: policy and sandbox unknown.</div>'
    : `<div id="servers" class="meta">Served by termgate with:<ul>${items.join('')}</ul></div>`;
}

/**
 * The review report: one self-contained HTML document (inline style, script
 * and data; a Content-Security-Policy that allows no network access). The
 * verification result is on top; terminals can be filtered by decision,
 * rule, client and text; refusals are highlighted; a row opens its details.
 */
export function renderReportHtml(input: ReportInput): string {
  const { model, verification } = input;
  const count = (decision: string) => model.terminals.filter((t) => t.decision === decision).length;
  const declined = model.terminals.filter((t) => t.decision === 'deny' && t.approval === 'deny').length;
  const files = input.files.map((file) => `<li>${escapeHtml(file)}</li>`).join('');
  const other = Object.entries(model.otherActions)
    .map(([action, n]) => `${escapeHtml(action)}: ${n}`)
    .join(', ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>termgate audit report</title>
<style>${STYLE}</style>
</head>
<body>
<h1>termgate audit report</h1>
<div class="meta">Generated ${escapeHtml(input.generatedAt.toISOString())} from ${input.files.length} file(s), ${model.records} records.
<details><summary>Files</summary><ul>${files}</ul></details></div>
<div id="verification" class="${verification.status}" data-status="${verification.status}">${escapeHtml(verification.text)}</div>
${serversHtml(model.servers)}
<div class="summary">
<span><b>${model.terminals.length}</b> terminals</span>
<span><b>${count('allow')}</b> allowed</span>
<span><b id="summary-deny">${count('deny') - declined}</b> refused by the policy</span>
<span><b id="summary-declined">${declined}</b> declined by a person</span>
<span>other records: ${other === '' ? 'none' : other}</span>
</div>
<canvas id="timeline" aria-label="timeline of terminals"></canvas>
<div class="legend meta"><span style="color:#2e7d32">■ exit 0</span><span style="color:#546e7a">■ other exit</span><span style="color:#c62828">■ refused by the policy</span><span style="color:#6a1b9a">■ declined by a person</span><span style="color:#ef8f00">■ other decision</span></div>
<div class="filters">
<label>Decision <select id="f-decision"><option value="">all</option></select></label>
<label>Rule <select id="f-rule"><option value="">all</option></select></label>
<label>Client <select id="f-client"><option value="">all</option></select></label>
<label>Text <input id="f-text" type="search" placeholder="command, cwd, reason, id, env name"></label>
</div>
<div class="meta"><b id="shown-count">0</b> of <b id="total-count">0</b> terminals match (<span id="listed-count">0</span> listed) <span id="decision-counts"></span></div>
<table>
<thead><tr><th>Start (UTC)</th><th>Duration</th><th>Decision</th><th>Exit</th><th>Client</th><th>Command</th><th>Rules</th></tr></thead>
<tbody id="terminal-rows"></tbody>
</table>
<button id="more" type="button" hidden></button>
<script type="application/json" id="report-data">${embed(model)}</script>
<script>${REPORT_SCRIPT}</script>
</body>
</html>
`;
}
