/**
 * A workspace for approval tests: a policy that puts `touch` on `ask` (and
 * denies everything else but `true`), marker files whose existence shows
 * whether a command ran, and the audit trail's records about one marker.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { auditField, readAuditRecords } from '@termgate/audit';

export const ASK_RULE = 'ask-touch';

export class ApprovalWorkspace {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'termgate-approval-'));
  readonly policy = path.join(this.dir, 'policy.yaml');
  /** The trail `serveArgs` names; a test that starts the server otherwise points it at that server's. */
  audit = path.join(this.dir, 'audit.jsonl');
  #markers = 0;

  constructor() {
    writeFileSync(
      this.policy,
      [
        'default: deny',
        'rules:',
        `  - { id: ${ASK_RULE}, decision: ask, program: touch, reason: it writes files }`,
        "  - { id: allow-true, decision: allow, program: 'true' }",
        '',
      ].join('\n'),
    );
  }

  /** `serve` arguments for this workspace (no sandbox: the policy has no sandbox section). */
  serveArgs(): string[] {
    return ['serve', '--policy', this.policy, '--audit', this.audit];
  }

  /** A fresh marker path that no command has created. */
  marker(): string {
    this.#markers += 1;
    return path.join(this.dir, `marker-${this.#markers}`);
  }

  ran(marker: string): boolean {
    return existsSync(marker);
  }

  /**
   * Whether `marker` appears within `seconds`: a create answers with the
   * handle as soon as the command is spawned, not once it ran, so a command
   * that was let through is waited for; one that was not never appears.
   */
  async ranWithin(marker: string, seconds = 20): Promise<boolean> {
    const deadline = Date.now() + seconds * 1000;
    while (!existsSync(marker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    return existsSync(marker);
  }

  /**
   * The create and answer records whose command line names `marker`, and the
   * spawns of their terminals, in order (the later wait/output decisions are left out).
   */
  trail(marker: string): Record<string, unknown>[] {
    const records: Record<string, unknown>[] = [];
    const terminals = new Set<unknown>();
    for (const entry of readAuditRecords(this.audit)) {
      if (!('record' in entry)) continue;
      const record = entry.record as Record<string, unknown>;
      const line = auditField(record, 'process.command_line');
      const terminal = auditField(record, 'termgate.terminal_id');
      const action = auditField(record, 'event.action');
      if (action !== 'terminal-create' && action !== 'terminal-answer' && action !== 'terminal-spawn')
        continue;
      if (typeof line === 'string' && line.includes(marker)) {
        terminals.add(terminal);
        records.push(record);
      } else if (action === 'terminal-spawn' && terminals.has(terminal)) {
        records.push(record);
      }
    }
    return records;
  }

  /** `action:decision[:outcome]` of each record of `trail(marker)`. */
  steps(marker: string): string[] {
    return this.trail(marker).map((record) =>
      [
        auditField(record, 'event.action'),
        auditField(record, 'termgate.decision'),
        auditField(record, 'termgate.approval.outcome'),
      ]
        .filter((part) => part !== undefined)
        .join(':'),
    );
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The create arguments that touch `marker` (waiting for it to finish). */
export function touchArgs(marker: string, dir: string): Record<string, unknown> {
  return { command: `touch ${marker}`, cwd: dir, waitSeconds: 10 };
}

/** The texts of a tool result's content blocks, joined. */
export function resultText(result: { content?: unknown }): string {
  const blocks = (result.content ?? []) as Array<{ type: string; text?: string }>;
  return blocks.map((block) => block.text ?? '').join('\n');
}
