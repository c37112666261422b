/**
 * The terminal scenarios both real-client suites run (modern v2 client and
 * legacy v1 client), written against a minimal adapter so each suite only
 * wires its SDK's `listTools`/`callTool`.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { TOOL_ANNOTATIONS, TOOL_NAMES } from './wire-server.js';

/** What the scenarios need from a connected SDK client. */
export interface ToolCaller {
  listTools(): Promise<{ tools: ReadonlyArray<ListedTool> }>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    onprogress?: (progress: ProgressUpdate) => void,
    signal?: AbortSignal,
  ): Promise<ToolCallResult>;
}

export interface ListedTool {
  readonly name: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: unknown;
}

export interface ProgressUpdate {
  readonly progress: number;
  readonly total?: number | undefined;
  readonly message?: string | undefined;
}

export interface ToolCallResult {
  readonly content?: unknown;
  readonly structuredContent?: unknown;
  readonly isError?: boolean | undefined;
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function structured(result: ToolCallResult): Record<string, unknown> {
  expect(result.isError ?? false).toBe(false);
  expect(typeof result.structuredContent).toBe('object');
  const content = result.content as Array<{ type: string; text?: string }>;
  const texts = content
    .filter((block) => block.type === 'text')
    .map((block) => parseOrText(block.text ?? ''));
  expect(texts).toContainEqual(result.structuredContent);
  return result.structuredContent as Record<string, unknown>;
}

export async function expectToolList(caller: ToolCaller): Promise<void> {
  const { tools } = await caller.listTools();
  expect(tools.map((tool) => tool.name)).toEqual([...TOOL_NAMES]);
  for (const tool of tools) {
    const name = tool.name as (typeof TOOL_NAMES)[number];
    expect(typeof tool.title).toBe('string');
    expect(typeof tool.description).toBe('string');
    expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(tool.outputSchema).toMatchObject({ type: 'object' });
    expect(tool.annotations).toMatchObject(TOOL_ANNOTATIONS[name]);
  }
}

/**
 * Creates a command that prints six lines with pauses once a gate file
 * appears, waits for it with progress, and checks the stream against the
 * final output: progress strictly increasing, each message exactly the bytes
 * since the previous one, the last one accounting for every byte.
 */
export async function expectStreamedRun(caller: ToolCaller): Promise<void> {
  // Not under /tmp: a sandboxed command has a private /tmp and would never see the gate file.
  const dir = mkdtempSync('/var/tmp/termgate-e2e-client-');
  // Served as root, a sandboxed command runs as the unprivileged sandbox user: let it see the gate.
  chmodSync(dir, 0o755);
  try {
    const gate = path.join(dir, 'gate');
    const created = structured(
      await caller.callTool('terminal_create', {
        command: `while [ ! -e '${gate}' ]; do sleep 0.02; done; for i in 1 2 3 4 5 6; do printf 'line %s\\n' "$i"; sleep 0.15; done`,
        waitSeconds: 0,
      }),
    );
    const terminalId = created.terminalId as string;
    expect(typeof terminalId).toBe('string');

    const updates: ProgressUpdate[] = [];
    const waiting = caller.callTool('terminal_wait_for_exit', { terminalId }, (update) =>
      updates.push(update),
    );
    writeFileSync(gate, '');
    const waited = structured(await waiting);
    expect(waited).toMatchObject({ running: false, exitCode: 0, signal: null });

    const out = structured(await caller.callTool('terminal_output', { terminalId }));
    const expected = 'line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n';
    expect(out).toMatchObject({
      output: expected,
      truncated: false,
      totalBytes: expected.length,
      exitStatus: { exitCode: 0, signal: null },
    });

    expect(updates.length).toBeGreaterThan(0);
    let streamed = '';
    let previous: number | undefined;
    for (const update of updates) {
      expect(typeof update.message).toBe('string');
      const message = update.message ?? '';
      if (previous !== undefined) {
        expect(update.progress).toBeGreaterThan(previous);
        expect(Buffer.byteLength(message)).toBe(update.progress - previous);
      }
      previous = update.progress;
      streamed += message;
    }
    expect(previous).toBe(expected.length);
    expect(expected.endsWith(streamed)).toBe(true);
    const first = updates[0] as ProgressUpdate;
    expect(first.progress - Buffer.byteLength(first.message ?? '')).toBe(expected.length - streamed.length);

    expect(structured(await caller.callTool('terminal_release', { terminalId }))).toEqual({});
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Kills a `sleep 1000`, checks the wait reports SIGTERM, releases it, and checks the id is then unknown. */
export async function expectKillAndRelease(caller: ToolCaller): Promise<void> {
  const { terminalId } = structured(
    await caller.callTool('terminal_create', { command: 'sleep', args: ['1000'], waitSeconds: 0 }),
  );
  expect(
    structured(await caller.callTool('terminal_output', { terminalId: terminalId as string })),
  ).toMatchObject({
    exitStatus: null,
  });
  expect(structured(await caller.callTool('terminal_kill', { terminalId }))).toEqual({});
  expect(structured(await caller.callTool('terminal_wait_for_exit', { terminalId }))).toEqual(
    expect.objectContaining({ running: false, exitCode: null, signal: 'SIGTERM' }),
  );
  expect(structured(await caller.callTool('terminal_output', { terminalId }))).toMatchObject({
    exitStatus: { exitCode: null, signal: 'SIGTERM' },
  });
  expect(structured(await caller.callTool('terminal_release', { terminalId }))).toEqual({});

  const released = await caller.callTool('terminal_output', { terminalId });
  expect(released.isError).toBe(true);
  const text = (released.content as Array<{ type: string; text?: string }>)
    .map((block) => block.text ?? '')
    .join('');
  expect(text.length).toBeGreaterThan(0);
}

/**
 * Aborts a pending wait through the SDK (which sends notifications/cancelled):
 * the call rejects, the command keeps running, and the connection still works.
 */
export async function expectCancelledWait(caller: ToolCaller): Promise<void> {
  const { terminalId } = structured(
    await caller.callTool('terminal_create', { command: 'sleep', args: ['1000'], waitSeconds: 0 }),
  );
  const controller = new AbortController();
  const updates: ProgressUpdate[] = [];
  const waiting = caller.callTool(
    'terminal_wait_for_exit',
    { terminalId, timeoutSeconds: 60 },
    (update) => updates.push(update),
    controller.signal,
  );
  // A full round trip first, so the wait has reached the server before it is cancelled.
  expect(structured(await caller.callTool('terminal_output', { terminalId }))).toMatchObject({
    exitStatus: null,
  });
  controller.abort('e2e cancellation');
  await expect(waiting).rejects.toBeDefined();
  expect(structured(await caller.callTool('terminal_output', { terminalId }))).toMatchObject({
    exitStatus: null,
  });
  expect(updates).toEqual([]);
  expect(structured(await caller.callTool('terminal_kill', { terminalId }))).toEqual({});
  expect(structured(await caller.callTool('terminal_release', { terminalId }))).toEqual({});
}
