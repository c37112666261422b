/**
 * The model-facing scenarios of the one-call path, run by every real-client
 * suite: a short command in one call, polling that returns only new output,
 * results within the character budget, exited terminals that never lock the
 * client out, and a cancelled create whose handle stays reachable.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { type ProgressUpdate, structured, type ToolCaller, type ToolCallResult } from './client-scenarios.js';

/** What the model reads: the text blocks of a result, joined. */
export function resultText(result: ToolCallResult): string {
  return (result.content as Array<{ type: string; text?: string }>).map((block) => block.text ?? '').join('');
}

function scratch(): { dir: string; gate: string; done: () => void } {
  // Not under /tmp: a sandboxed command has a private /tmp and would never see the gate file.
  const dir = mkdtempSync('/var/tmp/termgate-e2e-onecall-');
  // Served as root, a sandboxed command runs as the unprivileged sandbox user: let it see the gate.
  chmodSync(dir, 0o755);
  return { dir, gate: path.join(dir, 'gate'), done: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A short command: one terminal_create returns its exit status and output; the terminal stays readable. */
export async function expectOneCallRun(caller: ToolCaller): Promise<void> {
  const result = structured(
    await caller.callTool('terminal_create', { command: "printf 'built\\n'; printf 'warn\\n' >&2; exit 3" }),
  );
  expect(result).toEqual({
    terminalId: expect.any(String),
    running: false,
    exitCode: 3,
    signal: null,
    timedOut: false,
    output: 'built\nwarn\n',
    totalBytes: 11,
  });
  const again = structured(await caller.callTool('terminal_output', { terminalId: result.terminalId }));
  expect(again).toMatchObject({ output: 'built\nwarn\n', exitStatus: { exitCode: 3 } });
}

/**
 * Progress during a create-with-wait: strictly increasing byte totals whose
 * messages are the output, all before the result, which has the whole output.
 */
export async function expectOneCallProgress(caller: ToolCaller): Promise<void> {
  const updates: ProgressUpdate[] = [];
  const result = structured(
    await caller.callTool(
      'terminal_create',
      { command: 'for i in 1 2 3 4; do printf \'step %s\\n\' "$i"; sleep 0.15; done' },
      (update) => updates.push(update),
    ),
  );
  const expected = 'step 1\nstep 2\nstep 3\nstep 4\n';
  expect(result).toMatchObject({
    running: false,
    exitCode: 0,
    output: expected,
    totalBytes: expected.length,
  });
  expect(updates.length).toBeGreaterThan(0);
  const values = updates.map((u) => u.progress);
  expect(values).toEqual([...values].sort((a, b) => a - b));
  expect(new Set(values).size).toBe(values.length);
  expect(values.at(-1)).toBe(expected.length);
  expect(expected.endsWith(updates.map((u) => u.message ?? '').join(''))).toBe(true);
}

/**
 * A command still running when the wait ends comes back with its handle and
 * the output so far; terminal_wait_for_exit then returns only what followed.
 */
export async function expectRunningThenNewOutput(caller: ToolCaller): Promise<void> {
  const { gate, done } = scratch();
  try {
    const started = structured(
      await caller.callTool('terminal_create', {
        command: `echo first; while [ ! -e '${gate}' ]; do sleep 0.02; done; echo second`,
        waitSeconds: 1.5,
      }),
    );
    expect(started).toMatchObject({ running: true, exitCode: null, output: 'first\n', totalBytes: 6 });
    const terminalId = started.terminalId as string;
    writeFileSync(gate, '');
    const waited = structured(await caller.callTool('terminal_wait_for_exit', { terminalId }));
    expect(waited).toEqual({
      running: false,
      exitCode: 0,
      signal: null,
      timedOut: false,
      output: 'second\n',
      totalBytes: 13,
    });
    const polled = structured(await caller.callTool('terminal_wait_for_exit', { terminalId }));
    expect(polled).toMatchObject({ running: false, output: '' });
    expect(structured(await caller.callTool('terminal_output', { terminalId }))).toMatchObject({
      output: 'first\nsecond\n',
    });
  } finally {
    done();
  }
}

/**
 * Output over the budget: the result text stays within maxOutputChars, keeps
 * the first and last lines, and its marker's fromByte reads on exactly where
 * the kept beginning stopped. The default budget holds too.
 */
export async function expectBudgetedOutput(caller: ToolCaller): Promise<void> {
  const small = await caller.callTool('terminal_create', { command: 'seq 1 100000', maxOutputChars: 5000 });
  expect(resultText(small).length).toBeLessThanOrEqual(5000);
  const fitted = structured(small);
  expect(fitted).toMatchObject({ running: false, exitCode: 0, totalBytes: 588_895 });
  const output = fitted.output as string;
  expect(output.startsWith('1\n2\n3\n')).toBe(true);
  expect(output.endsWith('99999\n100000\n')).toBe(true);
  const marker =
    /\n\[termgate: ([\d,]+) characters omitted here \(output bytes (\d+) to (\d+)\)\. Read them with terminal_output and "fromByte": (\d+)/.exec(
      output,
    );
  expect(marker).not.toBeNull();
  const head = output.slice(0, marker!.index);
  expect(Number(marker![2])).toBe(Buffer.byteLength(head));
  const page = await caller.callTool('terminal_output', {
    terminalId: fitted.terminalId,
    fromByte: Number(marker![4]),
    maxOutputChars: 5000,
  });
  expect(resultText(page).length).toBeLessThanOrEqual(5000);
  const pageText = structured(page).output as string;
  const all = Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join('');
  expect(all.startsWith(head + pageText.slice(0, pageText.indexOf('\n[termgate:')))).toBe(true);

  const byDefault = await caller.callTool('terminal_output', { terminalId: fitted.terminalId });
  expect(resultText(byDefault).length).toBeLessThanOrEqual(30_000);
  expect(resultText(byDefault).length).toBeGreaterThan(25_000);
  expect(structured(byDefault)).toMatchObject({ totalBytes: 588_895, droppedBytes: 0, truncated: false });
}

/**
 * More one-call commands than the policy's maxTerminals (16 in the default
 * policy), none released: none is refused. Then every slot held by a running
 * command: the refusal says to kill one, and a kill makes room.
 */
export async function expectExitedTerminalsReclaimed(caller: ToolCaller): Promise<void> {
  for (let i = 0; i < 20; i++) {
    expect(structured(await caller.callTool('terminal_create', { command: `echo ${i}` }))).toMatchObject({
      exitCode: 0,
      output: `${i}\n`,
    });
  }
  const running: string[] = [];
  try {
    let refusal: ToolCallResult | undefined;
    for (let i = 0; i < 17 && refusal === undefined; i++) {
      const result = await caller.callTool('terminal_create', {
        command: 'sleep',
        args: ['1000'],
        waitSeconds: 0,
      });
      if (result.isError) refusal = result;
      else running.push(structured(result).terminalId as string);
    }
    expect(refusal).toBeDefined();
    expect(running.length).toBeGreaterThan(0);
    expect(running.length).toBeLessThanOrEqual(16);
    expect(resultText(refusal!)).toMatch(/none of them has exited.*terminal_kill/);
    expect(structured(await caller.callTool('terminal_kill', { terminalId: running[0] }))).toEqual({});
    await caller.callTool('terminal_wait_for_exit', { terminalId: running[0] });
    const made = await caller.callTool('terminal_create', { command: 'echo room' });
    expect(structured(made)).toMatchObject({ output: 'room\n' });
  } finally {
    for (const terminalId of running) await caller.callTool('terminal_release', { terminalId });
  }
}

/**
 * A create-with-wait the client cancels: the call rejects, the command keeps
 * running, no progress follows, and the next result names its handle.
 */
export async function expectCancelledCreate(caller: ToolCaller): Promise<void> {
  const { gate, done } = scratch();
  try {
    const controller = new AbortController();
    const updates: ProgressUpdate[] = [];
    const creating = caller.callTool(
      'terminal_create',
      {
        command: `echo started; while [ ! -e '${gate}' ]; do sleep 0.02; done; echo late; sleep 1000`,
        waitSeconds: 60,
      },
      (update) => updates.push(update),
      controller.signal,
    );
    creating.catch(() => undefined);
    // A full round trip, so the create has reached the server before it is cancelled.
    await caller.listTools();
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort('e2e cancellation');
    await expect(creating).rejects.toBeDefined();
    const before = updates.length;
    writeFileSync(gate, '');
    const next = await caller.callTool('terminal_create', { command: 'true' });
    const handle = /A terminal_create was cancelled after its command started: terminalId "([^"]+)"/.exec(
      resultText(next),
    );
    expect(handle).not.toBeNull();
    const terminalId = handle![1]!;
    const out = structured(await caller.callTool('terminal_output', { terminalId }));
    expect(out).toMatchObject({ exitStatus: null });
    expect(out.output as string).toMatch(/^started\n/);
    expect(updates.length).toBe(before);
    // Named once only.
    expect(resultText(await caller.callTool('terminal_create', { command: 'true' }))).not.toMatch(
      /cancelled/,
    );
    expect(structured(await caller.callTool('terminal_kill', { terminalId }))).toEqual({});
    expect(structured(await caller.callTool('terminal_release', { terminalId }))).toEqual({});
  } finally {
    done();
  }
}
