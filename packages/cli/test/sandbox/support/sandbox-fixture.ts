/**
 * A disposable world for sandbox tests: a workspace that is a git
 * repository, a fake HOME with startup files and credentials, a directory
 * outside every writable root, an audit trail and a policy, all under one
 * temporary directory, and `termgate serve` started in the workspace.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  modern,
  structuredResult,
  toolErrorText,
  type WireMessage,
  WireServer,
} from '../../e2e/support/wire-server.js';

export interface SandboxWorld {
  readonly root: string;
  readonly workspace: string;
  readonly home: string;
  readonly outside: string;
  readonly auditPath: string;
  readonly policyPath: string;
  readonly secret: string;
  dispose(): void;
}

export interface WorldOptions {
  /** The policy's `sandbox:` section as YAML lines (indented two spaces), or `null` for none. */
  readonly sandbox: string | null;
  /** Put the policy file inside the workspace (so only the always-on protection keeps it read-only). */
  readonly policyInWorkspace?: boolean;
}

export function makeWorld(options: WorldOptions): SandboxWorld {
  // Not under /tmp: a sandbox's private /tmp would hide it, and these tests are about what the policy exposes.
  const base = '/var/tmp';
  mkdirSync(base, { recursive: true });
  const root = mkdtempSync(path.join(base, 'termgate-sandbox-'));
  const workspace = path.join(root, 'ws');
  const home = path.join(root, 'home');
  const outside = path.join(root, 'outside');
  for (const dir of [workspace, home, outside, path.join(home, '.ssh'), path.join(root, 'state')]) {
    mkdirSync(dir, { recursive: true });
  }
  execFileSync('git', ['init', '-q', workspace]);
  const secret = `secret-${process.pid}-${Date.now()}`;
  writeFileSync(path.join(home, '.ssh', 'id_rsa'), `${secret}\n`);
  writeFileSync(path.join(home, '.bashrc'), '# bashrc\n');
  writeFileSync(path.join(outside, 'target.txt'), 'original\n');
  writeFileSync(path.join(outside, 'sed.txt'), 'original\n');
  writeFileSync(path.join(workspace, 'source.txt'), 'payload\n');
  const policyPath = options.policyInWorkspace
    ? path.join(workspace, 'policy.yaml')
    : path.join(root, 'policy.yaml');
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy placeholder, not a template
  const lines = ['default: allow', "cwd: { roots: ['${SERVER_CWD}'] }"];
  if (options.sandbox !== null) lines.push('sandbox:', options.sandbox);
  writeFileSync(policyPath, `${lines.join('\n')}\n`);
  return {
    root,
    workspace,
    home,
    outside,
    auditPath: path.join(root, 'state', 'audit.jsonl'),
    policyPath,
    secret,
    dispose: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** `termgate serve` in the world's workspace, with its HOME, policy and audit trail. */
export function serveIn(world: SandboxWorld, env: NodeJS.ProcessEnv = {}): WireServer {
  return WireServer.start(['--policy', world.policyPath, '--audit', world.auditPath], {
    cwd: world.workspace,
    env: { ...process.env, HOME: world.home, ...env },
  });
}

export interface Run {
  /** False when the gate refused (nothing ran). */
  readonly ran: boolean;
  readonly output: string;
  readonly exitCode: number | null;
  readonly terminalId: string | null;
}

/** create → wait → output → release over the wire; `args` for argv form. */
export async function run(
  server: WireServer,
  command: string,
  { args, timeoutSeconds = 20 }: { args?: string[]; timeoutSeconds?: number } = {},
): Promise<Run> {
  const created = await server.request(
    'tools/call',
    // waitSeconds 0: the handle at once, so that refusal (no handle) and failure (a handle) stay apart.
    modern({
      name: 'terminal_create',
      arguments: { command, waitSeconds: 0, ...(args !== undefined && { args }) },
    }),
  );
  if (isToolError(created)) {
    const text = toolErrorText(created);
    // A create that spawned but whose first read was refused still names its handle: it ran.
    const started = /The command started as terminalId "([^"]+)"/.exec(text);
    return { ran: started !== null, output: text, exitCode: null, terminalId: started?.[1] ?? null };
  }
  const { terminalId } = structuredResult(created) as { terminalId: string };
  await server.request(
    'tools/call',
    modern({ name: 'terminal_wait_for_exit', arguments: { terminalId, timeoutSeconds } }),
    undefined,
    (timeoutSeconds + 10) * 1000,
  );
  const read = await server.request(
    'tools/call',
    modern({ name: 'terminal_output', arguments: { terminalId } }),
  );
  // A later verb can be refused (a trail the command broke stops the server's gate): say so as output.
  if (isToolError(read)) return { ran: true, output: toolErrorText(read), exitCode: null, terminalId };
  const out = structuredResult(read) as { output: string; exitStatus: { exitCode: number | null } | null };
  return { ran: true, output: out.output, exitCode: out.exitStatus?.exitCode ?? null, terminalId };
}

/** Starts a command and returns its terminal id without waiting. */
export async function start(server: WireServer, command: string): Promise<string> {
  const created = await server.request(
    'tools/call',
    modern({ name: 'terminal_create', arguments: { command, waitSeconds: 0 } }),
  );
  return (structuredResult(created) as { terminalId: string }).terminalId;
}

export async function call(
  server: WireServer,
  name: string,
  args: Record<string, unknown>,
): Promise<WireMessage> {
  return server.request('tools/call', modern({ name, arguments: args }));
}

function isToolError(message: WireMessage): boolean {
  return (message.result as { isError?: boolean } | undefined)?.isError === true;
}

/** A command line that runs `code` with Debian's python3 (the one in the sandbox), quoted for bash. */
export const py = (code: string): string => `/usr/bin/python3 -c '${code.replaceAll("'", "'\\''")}'`;

export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Audit records of the world's trail, parsed. */
export function auditRecords(world: SandboxWorld): Record<string, unknown>[] {
  return readText(world.auditPath)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** pids of host processes whose argv, joined by spaces, is exactly `commandLine`. */
export function processesWith(commandLine: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'latin1').replaceAll('\0', ' ');
    } catch {
      continue;
    }
    if (cmdline.trim() === commandLine) found.push(Number(entry));
  }
  return found;
}
