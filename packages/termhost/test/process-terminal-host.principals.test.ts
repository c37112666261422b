/**
 * Terminals belong to a principal (`CallerContext.principal`): another
 * principal, in the same scope or not, cannot read, wait for, kill or
 * release them, and gets exactly the answer an unknown id gets; the
 * per-principal limits count one principal's terminals and output, within
 * the server's. Real processes: the refused verbs must leave them running.
 */
import { isAlive } from '../../../test-support/processes.js';
import type { TermhostError } from '../src/errors.js';
import type { CallerContext, TerminalId } from '../src/terminal-spec.js';
import { closeHosts, newHost } from './support/hosts.js';

afterEach(closeHosts);

const ISSUER = 'https://issuer.example';
const alice: CallerContext = { scope: 'p1', principal: { issuer: ISSUER, subject: 'alice' } };
const bob: CallerContext = { scope: 'p1', principal: { issuer: ISSUER, subject: 'bob' } };
/** The same subject from another issuer is another principal. */
const otherAlice: CallerContext = {
  scope: 'p1',
  principal: { issuer: 'https://other.example', subject: 'alice' },
};
/** No principal at all (stdio), in the same scope. */
const anonymous: CallerContext = { scope: 'p1' };

/** What a verb's refusal looks like to its caller: the code, the message and the details, with the id replaced. */
async function refusal(attempt: Promise<unknown>, id: TerminalId): Promise<unknown> {
  const error = (await attempt.then(
    () => {
      throw new Error('the verb was allowed');
    },
    (caught: unknown) => caught,
  )) as TermhostError;
  const text = JSON.stringify({ code: error.code, message: error.message, details: error.details });
  return JSON.parse(text.replaceAll(String(id), '<id>'));
}

const VERBS = {
  output: (host: ReturnType<typeof newHost>, id: TerminalId, caller: CallerContext) =>
    host.output(id, caller),
  wait: (host: ReturnType<typeof newHost>, id: TerminalId, caller: CallerContext) =>
    host.waitForExit(id, {}, caller),
  kill: (host: ReturnType<typeof newHost>, id: TerminalId, caller: CallerContext) => host.kill(id, caller),
  release: (host: ReturnType<typeof newHost>, id: TerminalId, caller: CallerContext) =>
    host.release(id, caller),
};

describe('ProcessTerminalHost: a terminal belongs to its principal', () => {
  for (const [verb, act] of Object.entries(VERBS)) {
    it(`${verb} of another principal's terminal is refused exactly as an unknown id, and changes nothing`, async () => {
      const host = newHost();
      const id = await host.create({ command: 'echo ready; sleep 1000' }, alice);
      const unknown = crypto.randomUUID();
      const expected = await refusal(act(host, unknown, bob), unknown);
      expect(expected).toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
      for (const intruder of [bob, otherAlice, anonymous]) {
        expect(await refusal(act(host, id, intruder), id)).toEqual(expected);
      }
      // Still alice's, still running: nothing the others did reached it.
      expect((await host.output(id, alice)).exitStatus).toBeNull();
      await host.kill(id, alice);
      expect((await host.waitForExit(id, {}, alice)).signal).toBe('SIGTERM');
    });
  }

  it("a refused kill leaves the other principal's process alive", async () => {
    const host = newHost();
    const id = await host.create({ command: 'echo $$; sleep 1000' }, alice);
    // Polled on a timer: output() resolves at once, so a bare loop would starve the event loop that reads the pipe.
    let pid = 0;
    while (pid === 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      pid = Number.parseInt((await host.output(id, alice)).output, 10) || 0;
    }
    await expect(host.kill(id, bob)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    await expect(host.release(id, bob)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    expect(isAlive(pid)).toBe(true);
    await host.release(id, alice);
    expect(isAlive(pid)).toBe(false);
  });

  it('the same principal in another scope does not see it either', async () => {
    const host = newHost();
    const id = await host.create({ command: 'true' }, alice);
    await expect(host.output(id, { ...alice, scope: 'p2' })).rejects.toMatchObject({
      code: 'TERMINAL_NOT_FOUND',
    });
    await expect(host.output(id, alice)).resolves.toMatchObject({ truncated: false });
  });

  it('closeAll of a scope ends every principal in it, and nothing else', async () => {
    const host = newHost();
    const a = await host.create({ command: 'sleep 1000' }, alice);
    const b = await host.create({ command: 'sleep 1000' }, { ...bob, scope: 'p2' });
    await host.closeAll('p1');
    await expect(host.output(a, alice)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    expect((await host.output(b, { ...bob, scope: 'p2' })).exitStatus).toBeNull();
  });
});

describe('ProcessTerminalHost: per-principal limits', () => {
  it('maxTerminalsPerPrincipal refuses the principal at its limit, while another still creates', async () => {
    const host = newHost({ maxTerminals: 3, maxTerminalsPerPrincipal: 2 });
    await host.create({ command: 'sleep 1000' }, alice);
    await host.create({ command: 'sleep 1000' }, alice);
    await expect(host.create({ command: 'sleep 1000' }, alice)).rejects.toMatchObject({
      code: 'TERMINAL_LIMIT_REACHED',
      details: { maxTerminalsPerPrincipal: 2, running: 2 },
    });
    // Another scope of the same principal is the same principal: still refused.
    await expect(host.create({ command: 'true' }, { ...alice, scope: 'p2' })).rejects.toMatchObject({
      code: 'TERMINAL_LIMIT_REACHED',
    });
    await host.create({ command: 'sleep 1000' }, bob);
    // The server's limit (3) is reached: bob's second is refused by it, naming only bob's terminals.
    await expect(host.create({ command: 'sleep 1000' }, bob)).rejects.toMatchObject({
      code: 'TERMINAL_LIMIT_REACHED',
      details: { maxTerminals: 3, running: 1 },
    });
  });

  it('a released terminal gives its principal the slot back', async () => {
    const host = newHost({ maxTerminalsPerPrincipal: 1 });
    const first = await host.create({ command: 'sleep 1000' }, alice);
    await expect(host.create({ command: 'true' }, alice)).rejects.toMatchObject({
      code: 'TERMINAL_LIMIT_REACHED',
    });
    await host.release(first, alice);
    await expect(host.create({ command: 'true' }, alice)).resolves.toEqual(expect.any(String));
  });

  it("reclaims only the principal's own exited terminals, never another's", async () => {
    const host = newHost({ maxTerminals: 2, reclaimExited: true });
    const bobs = await host.create({ command: 'true' }, bob);
    await host.waitForExit(bobs, {}, bob);
    const mine = await host.create({ command: 'true' }, alice);
    await host.waitForExit(mine, {}, alice);
    // Full: alice's exited terminal is reclaimed, bob's stays.
    await host.create({ command: 'true' }, alice);
    await expect(host.output(mine, alice)).rejects.toMatchObject({ code: 'TERMINAL_NOT_FOUND' });
    expect((await host.output(bobs, bob)).exitStatus).toMatchObject({ exitCode: 0 });
  });

  it('maxOutputBytesPerPrincipal bounds the output limits of one principal together', async () => {
    const host = newHost({ maxOutputBytes: 1000, maxOutputBytesPerPrincipal: 1500 });
    const first = await host.create({ command: 'sleep 1000' }, alice);
    const refused = host.create({ command: 'sleep 1000' }, alice);
    await expect(refused).rejects.toMatchObject({
      code: 'TERMINAL_LIMIT_REACHED',
      details: { maxOutputBytesPerPrincipal: 1500, heldOutputBytes: 1000 },
    });
    await expect(refused).rejects.toThrow(/pass a smaller outputByteLimit/);
    // A smaller limit fits; bob has a budget of his own.
    await host.create({ command: 'sleep 1000', outputByteLimit: 500 }, alice);
    await host.create({ command: 'sleep 1000' }, bob);
    await host.release(first, alice);
    await expect(host.create({ command: 'true' }, alice)).resolves.toEqual(expect.any(String));
  });

  it('a spawn that fails gives its output bytes back', async () => {
    const host = newHost({ maxOutputBytes: 1000, maxOutputBytesPerPrincipal: 1000 });
    await expect(host.create({ command: 'true', cwd: '/nonexistent/dir' }, alice)).rejects.toMatchObject({
      code: 'CWD_NOT_FOUND',
    });
    await expect(host.create({ command: 'true' }, alice)).resolves.toEqual(expect.any(String));
  });

  it('refuses bad per-principal options at construction', () => {
    expect(() => newHost({ maxTerminalsPerPrincipal: -1 })).toThrow(
      'maxTerminalsPerPrincipal must be an integer ≥ 0',
    );
    expect(() => newHost({ maxOutputBytesPerPrincipal: 1.5 })).toThrow(
      'maxOutputBytesPerPrincipal must be an integer ≥ 0',
    );
  });
});
