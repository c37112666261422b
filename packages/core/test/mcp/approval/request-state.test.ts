/**
 * The sealed `requestState` of an `input_required` round trip, in process:
 * the client echoes it back, so everything about it is attacker-controlled.
 * The raw-wire attacks through the built server are in
 * packages/cli/test/approval/request-state-attacks.test.ts; these pin each
 * check of `open` (shape, integrity, expiry, binding, single use) at its
 * boundary, which the end-to-end tests cannot reach.
 */
import {
  argumentsDigest,
  DEFAULT_REQUEST_STATE_TTL_MS,
  RequestStateSealer,
} from '../../../src/mcp/approval/request-state.js';

const CLAIMS = { tool: 'terminal_create', argumentsDigest: 'd1', approvalId: 'appr-7' };
const PREFIX = 'tg1.';

/** A sealer on a clock the test moves. */
function clocked(ttlMs?: number) {
  const clock = { now: 1_000_000 };
  const sealer = new RequestStateSealer({ ...(ttlMs === undefined ? {} : { ttlMs }), now: () => clock.now });
  return { clock, sealer };
}

/** The state's bytes after the prefix, changed by `edit`, sealed again in the same form. */
function rewritten(state: string, edit: (bytes: Buffer) => Buffer): string {
  return PREFIX + edit(Buffer.from(state.slice(PREFIX.length), 'base64url')).toString('base64url');
}

describe('RequestStateSealer: a sealed state opens once, for its own call', () => {
  it('opens with the claims it was sealed with, and not a second time', () => {
    const { sealer } = clocked();
    const state = sealer.seal(CLAIMS);
    expect(state.startsWith(PREFIX)).toBe(true);
    expect(sealer.open(state, 'terminal_create', 'd1')).toEqual({ ok: true, claims: CLAIMS });
    expect(sealer.open(state, 'terminal_create', 'd1')).toEqual({ ok: false, problem: 'replayed' });
  });

  it('gives each state its own identity: two states of the same claims each open once', () => {
    const { sealer } = clocked();
    const first = sealer.seal(CLAIMS);
    const second = sealer.seal(CLAIMS);
    expect(second).not.toBe(first);
    expect(sealer.open(first, 'terminal_create', 'd1').ok).toBe(true);
    expect(sealer.open(second, 'terminal_create', 'd1').ok).toBe(true);
    expect(sealer.open(second, 'terminal_create', 'd1')).toEqual({ ok: false, problem: 'replayed' });
  });

  it('is mismatched for another tool or other arguments, and such a try does not consume it', () => {
    const { sealer } = clocked();
    const state = sealer.seal(CLAIMS);
    expect(sealer.open(state, 'terminal_kill', 'd1')).toEqual({ ok: false, problem: 'mismatched' });
    expect(sealer.open(state, 'terminal_create', 'd2')).toEqual({ ok: false, problem: 'mismatched' });
    expect(sealer.open(state, 'terminal_create', 'd1').ok).toBe(true);
  });
});

describe('RequestStateSealer: expiry', () => {
  it('accepts a state until its ttl has passed, and not at the ttl', () => {
    const { clock, sealer } = clocked(10_000);
    const state = sealer.seal(CLAIMS);
    const late = sealer.seal(CLAIMS);
    clock.now += 9_999;
    expect(sealer.open(state, 'terminal_create', 'd1').ok).toBe(true);
    clock.now += 1;
    expect(sealer.open(late, 'terminal_create', 'd1')).toEqual({ ok: false, problem: 'expired' });
  });

  it('defaults to five minutes', () => {
    expect(DEFAULT_REQUEST_STATE_TTL_MS).toBe(300_000);
    const { clock, sealer } = clocked();
    const state = sealer.seal(CLAIMS);
    const late = sealer.seal(CLAIMS);
    clock.now += 300_000 - 1;
    expect(sealer.open(state, 'terminal_create', 'd1').ok).toBe(true);
    clock.now += 1;
    expect(sealer.open(late, 'terminal_create', 'd1')).toEqual({ ok: false, problem: 'expired' });
  });

  it('checks expiry before the binding: an expired state for another call says expired', () => {
    const { clock, sealer } = clocked(10);
    const state = sealer.seal(CLAIMS);
    clock.now += 10;
    expect(sealer.open(state, 'terminal_kill', 'other')).toEqual({ ok: false, problem: 'expired' });
  });

  it('keeps a consumed state refused while it is valid: a replay just before expiry is replayed', () => {
    const { clock, sealer } = clocked(10_000);
    const state = sealer.seal(CLAIMS);
    expect(sealer.open(state, 'terminal_create', 'd1').ok).toBe(true);
    clock.now += 9_999;
    // Another open in between prunes the memory of consumed states: it must keep this one.
    expect(sealer.open(sealer.seal(CLAIMS), 'terminal_create', 'd1').ok).toBe(true);
    expect(sealer.open(state, 'terminal_create', 'd1')).toEqual({ ok: false, problem: 'replayed' });
  });
});

describe('RequestStateSealer: shape and integrity', () => {
  it.each([
    ['a number', 42],
    ['an object', { state: 'x' }],
    ['null', null],
    ['undefined', undefined],
    ['a string without the prefix', 'tg2.AAAA'],
    ['the prefix alone', PREFIX],
  ])('calls %s malformed', (_label, state) => {
    const { sealer } = clocked();
    expect(sealer.open(state, 'terminal_create', 'd1')).toEqual({ ok: false, problem: 'malformed' });
  });

  it('calls a state no longer than an iv and a tag malformed, and one byte more tampered', () => {
    const { sealer } = clocked();
    const ivAndTag = PREFIX + Buffer.alloc(12 + 16, 7).toString('base64url');
    const oneMore = PREFIX + Buffer.alloc(12 + 16 + 1, 7).toString('base64url');
    expect(sealer.open(ivAndTag, 'terminal_create', 'd1')).toEqual({ ok: false, problem: 'malformed' });
    expect(sealer.open(oneMore, 'terminal_create', 'd1')).toEqual({ ok: false, problem: 'tampered' });
  });

  it('calls a state with any byte changed tampered (iv, ciphertext or tag)', () => {
    const { sealer } = clocked();
    const state = sealer.seal(CLAIMS);
    const length = Buffer.from(state.slice(PREFIX.length), 'base64url').length;
    for (const at of [0, 11, 12, length - 17, length - 16, length - 1]) {
      const changed = rewritten(state, (bytes) => {
        const copy = Buffer.from(bytes);
        copy[at] = (copy[at] ?? 0) ^ 1;
        return copy;
      });
      expect(sealer.open(changed, 'terminal_create', 'd1')).toEqual({ ok: false, problem: 'tampered' });
    }
    // Untouched, it still opens: the changes above were refused for their change alone.
    expect(sealer.open(state, 'terminal_create', 'd1').ok).toBe(true);
  });

  it('calls a state with its tag cut short tampered', () => {
    const { sealer } = clocked();
    const state = sealer.seal(CLAIMS);
    const cut = rewritten(state, (bytes) => bytes.subarray(0, bytes.length - 1));
    expect(sealer.open(cut, 'terminal_create', 'd1')).toEqual({ ok: false, problem: 'tampered' });
  });

  it("calls another process's state tampered: the key is per sealer", () => {
    const { sealer } = clocked();
    const other = clocked().sealer.seal(CLAIMS);
    expect(sealer.open(other, 'terminal_create', 'd1')).toEqual({ ok: false, problem: 'tampered' });
  });
});

describe('argumentsDigest', () => {
  it('is a sha256 in hex', () => {
    expect(argumentsDigest('terminal_create', {})).toMatch(/^[0-9a-f]{64}$/);
  });

  it('ignores the order of object keys at every depth', () => {
    const a = { command: 'ls', env: { B: '2', A: '1' }, opts: [{ y: 1, x: 2 }] };
    const b = { opts: [{ x: 2, y: 1 }], env: { A: '1', B: '2' }, command: 'ls' };
    expect(argumentsDigest('terminal_create', a)).toBe(argumentsDigest('terminal_create', b));
  });

  it('binds the tool, every value, array order and nesting', () => {
    const base = argumentsDigest('terminal_create', { command: 'ls', args: ['-l', '-a'] });
    const others = [
      argumentsDigest('terminal_kill', { command: 'ls', args: ['-l', '-a'] }),
      argumentsDigest('terminal_create', { command: 'ls', args: ['-a', '-l'] }),
      argumentsDigest('terminal_create', { command: 'rm', args: ['-l', '-a'] }),
      argumentsDigest('terminal_create', { command: 'ls', args: [['-l'], '-a'] }),
      argumentsDigest('terminal_create', { command: 'ls', args: { 0: '-l', 1: '-a' } }),
      argumentsDigest('terminal_create', { command: 'ls', args: ['-l', '-a'], cwd: '/' }),
      argumentsDigest('terminal_create', { command: 'ls', env: { args: ['-l', '-a'] } }),
    ];
    for (const other of others) expect(other).not.toBe(base);
  });

  it('tells nested values apart: a changed value deep inside changes the digest', () => {
    const deep = (value: string) => argumentsDigest('t', { a: { b: [{ c: value }] } });
    expect(deep('x')).not.toBe(deep('y'));
  });
});
