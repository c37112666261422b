import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { defaultPolicyArgs, pause, REPO_ROOT, SERVER_BIN } from '../../e2e/support/wire-server.js';

const RAW_AGENT = path.join(REPO_ROOT, 'packages/cli/test/acp-proxy/fixtures/raw-agent.mjs');

/** One step of the raw agent's script (see fixtures/raw-agent.mjs). */
export type AgentStep =
  | { send: string }
  | { waitFor: string }
  | { stopReading: true }
  | { sleep: number }
  | { exit: number };

/**
 * `termgate acp-proxy` in front of the scripted raw agent. The test is the
 * editor: it writes raw lines to `editorIn` and reads `editorLines`; the
 * agent's view (every line the proxy sent it) is `agentLines`.
 */
export class RawProxy {
  readonly editorLines: string[] = [];
  readonly agentLines: string[] = [];
  stderr = '';
  readonly auditPath: string;
  readonly exited: Promise<number | null>;
  private out = '';
  private readonly dir: string;

  private constructor(
    readonly child: ChildProcess,
    dir: string,
  ) {
    this.dir = dir;
    this.auditPath = path.join(dir, 'audit.jsonl');
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      this.out += chunk;
      const lines = this.out.split('\n');
      this.out = lines.pop()!;
      this.editorLines.push(...lines);
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      this.stderr += chunk;
      for (const line of chunk.split('\n')) {
        if (line.startsWith('FROM-PROXY ')) this.agentLines.push(line.slice('FROM-PROXY '.length));
      }
    });
    (child.stdin as Writable).on('error', () => undefined);
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /**
   * Starts the proxy; `stdio` may add descriptors after 0–2 (index = fd);
   * `proxyArgs` replace the default policy arguments (e.g. another `--policy`).
   */
  static start(
    steps: readonly AgentStep[],
    extraStdio: ('pipe' | 'ignore')[] = [],
    proxyArgs: readonly string[] = defaultPolicyArgs(false),
  ): RawProxy {
    const dir = mkdtempSync(path.join(tmpdir(), 'termgate-rawproxy-'));
    const script = path.join(dir, 'script.json');
    writeFileSync(script, JSON.stringify(steps));
    const child = spawn(
      process.execPath,
      [
        SERVER_BIN,
        'acp-proxy',
        // The tests read commands' pids and descriptors from outside, which a sandbox's pid namespace renumbers.
        ...proxyArgs,
        '--audit',
        path.join(dir, 'audit.jsonl'),
        '--log-level',
        'silent',
        '--',
        process.execPath,
        RAW_AGENT,
        script,
      ],
      { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe', ...extraStdio] },
    );
    return new RawProxy(child, dir);
  }

  get editorIn(): Writable {
    return this.child.stdin as Writable;
  }

  fd(index: number): Readable {
    return (this.child.stdio as unknown as Readable[])[index]!;
  }

  /** Resolves with the first agent-side line containing `text`. */
  async agentLine(text: string, timeoutMs = 15_000): Promise<string> {
    return this.until(
      () => this.agentLines.find((l) => l.includes(text)),
      `agent line with ${text}`,
      timeoutMs,
    );
  }

  async editorLine(text: string, timeoutMs = 15_000): Promise<string> {
    return this.until(
      () => this.editorLines.find((l) => l.includes(text)),
      `editor line with ${text}`,
      timeoutMs,
    );
  }

  async until<T>(probe: () => T | undefined, what: string, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}\nstderr:\n${this.stderr.slice(-3000)}`);
      await pause(20);
    }
  }

  /** Editor EOF, then waits for the proxy to exit and removes its files. */
  async dispose(): Promise<void> {
    this.editorIn.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A raw terminal/* request line from the agent, with the id text as given. */
export function terminalRequest(idText: string, method: string, params: Record<string, unknown>): string {
  return `{"jsonrpc":"2.0","id":${idText},"method":"terminal/${method}","params":${JSON.stringify({ sessionId: 's1', ...params })}}`;
}
