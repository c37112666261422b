import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { isAlive } from '../../../../../test-support/processes.js';

/** Repository root (this file lives in packages/cli/test/e2e/support). */
export const REPO_ROOT = path.resolve(import.meta.dirname, '../../../../..');
/** The built CLI entry point; `npx tsc -b` produces it. */
export const SERVER_BIN = path.join(REPO_ROOT, 'packages/cli/dist/bin.js');

export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSION = '2025-11-25';
export const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
export const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
export const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
export const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';

/** The tools, in the order `tools/list` must return them. */
export const TOOL_NAMES = [
  'terminal_create',
  'terminal_output',
  'terminal_wait_for_exit',
  'terminal_kill',
  'terminal_release',
] as const;

/** The annotations each tool must carry (a subset match: other hints may be present). */
export const TOOL_ANNOTATIONS: Readonly<Record<(typeof TOOL_NAMES)[number], Record<string, boolean>>> = {
  terminal_create: { destructiveHint: true, openWorldHint: true },
  terminal_output: { readOnlyHint: true },
  terminal_wait_for_exit: { readOnlyHint: true },
  terminal_kill: { destructiveHint: true },
  terminal_release: { destructiveHint: true },
};

export type RequestId = string | number;

/** One JSON-RPC message as read from the server's stdout (shape not trusted). */
export interface WireMessage {
  readonly jsonrpc?: unknown;
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: Record<string, unknown>;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: unknown; readonly message: unknown; readonly data?: unknown };
}

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** Fails fast, with a useful message, when the server has not been built. */
export function assertServerBuilt(): void {
  if (!existsSync(SERVER_BIN)) {
    throw new Error(`${SERVER_BIN} is missing: run \`npx tsc -b\` before the e2e tests`);
  }
}

let auditDir: string | undefined;
let auditCount = 0;

/**
 * `--audit FILE` naming a fresh file, for every server a test starts: without
 * it `serve` appends to the user's `~/.local/state/termgate/audit.jsonl`, and
 * an audit file must have one writer. Call `removeAuditFiles` in `afterAll`.
 */
export function auditArgs(): string[] {
  auditDir ??= mkdtempSync(path.join(tmpdir(), 'termgate-e2e-audit-'));
  auditCount += 1;
  return ['--audit', path.join(auditDir, `audit-${auditCount}.jsonl`)];
}

/** The shipped default policy. */
export const DEFAULT_POLICY = path.join(REPO_ROOT, 'policies/default.yaml');

let unsandboxedPolicy: string | undefined;

/**
 * The shipped default policy with `sandbox.mode: off`, for tests about the
 * protocol and the host that look at pids or host paths from outside (a
 * sandboxed command sees its own pid namespace and a private /tmp). The
 * sandbox's own suites, and the client suites' sandboxed run, use the
 * default itself.
 */
export function unsandboxedDefaultPolicy(): string {
  if (unsandboxedPolicy === undefined) {
    const text = readFileSync(DEFAULT_POLICY, 'utf8');
    if (!/^ {2}mode: required$/m.test(text))
      throw new Error(`${DEFAULT_POLICY} has no sandbox mode to turn off`);
    const dir = mkdtempSync(path.join(tmpdir(), 'termgate-e2e-policy-'));
    // Readable by every user: some suites start the server as nobody.
    chmodSync(dir, 0o755);
    unsandboxedPolicy = path.join(dir, 'default-unsandboxed.yaml');
    writeFileSync(unsandboxedPolicy, text.replace(/^ {2}mode: required$/m, '  mode: off'), { mode: 0o644 });
  }
  return unsandboxedPolicy;
}

/** `serve` arguments that pick the default policy, with the sandbox on or off. */
export function defaultPolicyArgs(sandbox: boolean): string[] {
  return ['--policy', sandbox ? DEFAULT_POLICY : unsandboxedDefaultPolicy()];
}

export function removeAuditFiles(): void {
  if (auditDir !== undefined) rmSync(auditDir, { recursive: true, force: true });
  auditDir = undefined;
}

/** The `_meta` envelope of a modern (2026-07-28) request, plus any extra keys. */
export function modernMeta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    [PROTOCOL_VERSION_KEY]: MODERN_VERSION,
    [CLIENT_CAPABILITIES_KEY]: {},
    [CLIENT_INFO_KEY]: { name: 'termgate-e2e', version: '0.0.0' },
    ...extra,
  };
}

/** `params` for a modern request: `params` plus the envelope in `_meta`. */
export function modern(params: Record<string, unknown> = {}, extraMeta: Record<string, unknown> = {}) {
  return { ...params, _meta: modernMeta(extraMeta) };
}

function sameId(a: unknown, b: RequestId): boolean {
  return typeof a === typeof b && a === b;
}

export function isResponseTo(message: WireMessage, id: RequestId): boolean {
  return (
    message.method === undefined && sameId(message.id, id) && ('result' in message || 'error' in message)
  );
}

export function isProgressFor(message: WireMessage, token: RequestId): boolean {
  return message.method === 'notifications/progress' && sameId(message.params?.progressToken, token);
}

/** Resolves after `ms` milliseconds (for polling loops only, never as a sync point). */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * `termgate serve` as a child process, spoken to in raw JSON lines.
 *
 * Every stdout line is kept in `lines` (raw) and `messages` (parsed, in
 * arrival order); lines that are not JSON objects land in `nonJsonLines`.
 * Waiting never consumes: `waitFor` scans `messages` from a start index, so
 * tests can also make negative checks over a range (`messagesSince`).
 */
export class WireServer {
  readonly lines: string[] = [];
  readonly messages: WireMessage[] = [];
  readonly nonJsonLines: string[] = [];
  stderr = '';
  readonly exited: Promise<ExitInfo>;
  private exitInfo: ExitInfo | undefined;
  private stdoutClosed = false;
  private buffer = '';
  private nextId = 1;
  private listeners = new Set<() => void>();

  private constructor(
    readonly child: ChildProcessWithoutNullStreams,
    /** The audit trail this server writes. */
    readonly auditPath: string,
  ) {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => this.onStdout(chunk));
    child.stdout.on('end', () => {
      if (this.buffer.length > 0) this.onLine(this.buffer);
      this.buffer = '';
      this.stdoutClosed = true;
      this.notify();
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    // A write after the server exited must not crash the test runner.
    child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        this.notify();
        resolve(this.exitInfo);
      });
    });
  }

  /**
   * Spawns `node packages/cli/dist/bin.js serve --audit <fresh file> …extraArgs`
   * in `cwd` (the default policy only allows commands to run below the
   * directory `serve` started in).
   */
  static start(
    extraArgs: readonly string[] = [],
    {
      cwd = REPO_ROOT,
      env,
      wrap = [],
    }: {
      cwd?: string;
      env?: NodeJS.ProcessEnv;
      /** A command line put in front of node (e.g. `setpriv … --`). */
      wrap?: readonly string[];
    } = {},
  ): WireServer {
    assertServerBuilt();
    // Without --policy: the shipped default, sandbox off (see unsandboxedDefaultPolicy).
    const policy = extraArgs.includes('--policy') ? [] : defaultPolicyArgs(false);
    const audit = auditArgs();
    const argv = [process.execPath, SERVER_BIN, 'serve', ...audit, ...policy, ...extraArgs];
    const [program, ...args] = [...wrap, ...argv] as [string, ...string[]];
    const child = spawn(program, args, {
      cwd,
      ...(env !== undefined && { env }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new WireServer(child, audit[1]!);
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('server did not spawn');
    return this.child.pid;
  }

  /** Index of the next message to arrive: a mark for `waitFor`/`messagesSince`. */
  mark(): number {
    return this.messages.length;
  }

  messagesSince(mark: number): WireMessage[] {
    return this.messages.slice(mark);
  }

  send(message: Record<string, unknown>): void {
    this.sendRaw(`${JSON.stringify(message)}\n`);
  }

  sendRaw(text: string): void {
    this.child.stdin.write(text);
  }

  /** Sends a notification (a message without `id`). */
  sendNotification(method: string, params?: Record<string, unknown>): void {
    this.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  /** Fresh request id (numbers by default). */
  id(): number {
    return this.nextId++;
  }

  /**
   * Sends a request and resolves with its response (result or error). The
   * default waits (60 s for a message, 30 s for an exit) only bound a failure:
   * a loaded machine starts a sandboxed server's gate slowly.
   */
  async request(
    method: string,
    params?: Record<string, unknown>,
    id: RequestId = this.id(),
    timeoutMs = 60_000,
  ): Promise<WireMessage> {
    const from = this.mark();
    this.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return this.waitFor((m) => isResponseTo(m, id), `response to ${method} (id ${JSON.stringify(id)})`, {
      from,
      timeoutMs,
    });
  }

  /** Resolves with the first message at index ≥ `from` matching `predicate`. */
  waitFor(
    predicate: (message: WireMessage) => boolean,
    what: string,
    { from = 0, timeoutMs = 60_000 }: { from?: number; timeoutMs?: number } = {},
  ): Promise<WireMessage> {
    return new Promise((resolve, reject) => {
      let scanned = from;
      const check = (): boolean => {
        for (; scanned < this.messages.length; scanned++) {
          const message = this.messages[scanned] as WireMessage;
          if (predicate(message)) {
            done();
            resolve(message);
            return true;
          }
        }
        if (this.stdoutClosed) {
          done();
          reject(new Error(`server stdout closed while waiting for ${what}\n${this.diagnostics()}`));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${this.diagnostics()}`));
      }, timeoutMs);
      const listener = (): void => {
        check();
      };
      const done = (): void => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      this.listeners.add(listener);
      check();
    });
  }

  /** Closes the server's stdin (EOF) and resolves when stdout has closed and the process exited. */
  async closeStdin(timeoutMs = 30_000): Promise<ExitInfo> {
    this.child.stdin.end();
    return this.untilExit(timeoutMs);
  }

  /** Resolves when stdout has closed and the process exited; rejects after `timeoutMs`. */
  async untilExit(timeoutMs = 30_000): Promise<ExitInfo> {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`server did not exit within ${timeoutMs} ms\n${this.diagnostics()}`));
      }, timeoutMs);
      const listener = (): void => {
        if (this.exitInfo !== undefined && this.stdoutClosed) {
          clearTimeout(timer);
          this.listeners.delete(listener);
          resolve();
        }
      };
      this.listeners.add(listener);
      listener();
    });
    return this.exitInfo as ExitInfo;
  }

  /** Test teardown: EOF, then SIGKILL if the server does not go away. */
  async dispose(): Promise<void> {
    if (this.exitInfo !== undefined) return;
    try {
      await this.closeStdin(5_000);
    } catch {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }

  diagnostics(): string {
    const tail = this.lines.slice(-10).map((line) => (line.length > 500 ? `${line.slice(0, 500)}…` : line));
    return `last stdout lines:\n${tail.join('\n')}\nstderr (tail):\n${this.stderr.slice(-2000)}`;
  }

  private onStdout(chunk: string): void {
    this.buffer += chunk;
    let newline = this.buffer.indexOf('\n');
    while (newline !== -1) {
      this.onLine(this.buffer.slice(0, newline));
      this.buffer = this.buffer.slice(newline + 1);
      newline = this.buffer.indexOf('\n');
    }
    this.notify();
  }

  private onLine(line: string): void {
    this.lines.push(line);
    try {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        this.messages.push(parsed as WireMessage);
        return;
      }
    } catch {
      // fall through: recorded as a non-JSON line
    }
    this.nonJsonLines.push(line);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/** The structured content of a successful tool result, after checking the text block mirrors it. */
export function structuredResult(response: WireMessage): Record<string, unknown> {
  const result = response.result;
  if (result === undefined) throw new Error(`expected a result, got ${JSON.stringify(response)}`);
  if (result.isError === true)
    throw new Error(`expected a successful tool result, got ${JSON.stringify(result)}`);
  const structured = result.structuredContent;
  if (typeof structured !== 'object' || structured === null) {
    throw new Error(`tool result has no structuredContent: ${JSON.stringify(result)}`);
  }
  const content = result.content as Array<{ type: string; text?: string }>;
  const mirrored = content.some((block) => {
    if (block.type !== 'text' || block.text === undefined) return false;
    try {
      return JSON.stringify(JSON.parse(block.text)) === JSON.stringify(structured);
    } catch {
      return false;
    }
  });
  if (!mirrored) throw new Error(`no text block mirrors structuredContent: ${JSON.stringify(result)}`);
  return structured as Record<string, unknown>;
}

/** The concatenated text of an `isError` tool result (throws if the result is not an error). */
export function toolErrorText(response: WireMessage): string {
  const result = response.result;
  if (result?.isError !== true)
    throw new Error(`expected an isError tool result, got ${JSON.stringify(response)}`);
  const content = result.content as Array<{ type: string; text?: string }>;
  return content.map((block) => block.text ?? '').join('\n');
}

/** Polls until `pid` is gone; resolves false if it is still alive after `timeoutMs` (a guard, not a measurement). */
export async function waitUntilGone(pid: number, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await pause(25);
  }
  return true;
}
