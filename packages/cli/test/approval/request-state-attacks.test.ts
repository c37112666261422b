/**
 * Raw-wire attacks on the modern era's approval `requestState`: a client (or
 * anything speaking for it) controls what it sends back. Each attack must run
 * nothing (the marker file stays absent) and say why, or ask again.
 */
import {
  CLIENT_CAPABILITIES_KEY,
  modernMeta,
  toolErrorText,
  type WireMessage,
  WireServer,
} from '../e2e/support/wire-server.js';
import { ApprovalWorkspace, touchArgs } from './support/approval-fixture.js';

const ACCEPT_ONCE = { approve: { action: 'accept', content: { decision: 'allow_once' } } };
const DECLINE = { approve: { action: 'decline' } };

describe('requestState attacks (raw wire, 2026-07-28)', () => {
  let workspace: ApprovalWorkspace;
  let server: WireServer;

  beforeAll(() => {
    workspace = new ApprovalWorkspace();
    server = WireServer.start(['--policy', workspace.policy]);
    workspace.audit = server.auditPath;
  });

  afterAll(async () => {
    await server?.dispose();
    workspace?.dispose();
  });

  function create(target: WireServer, args: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    return target.request('tools/call', {
      name: 'terminal_create',
      arguments: args,
      ...extra,
      _meta: modernMeta({ [CLIENT_CAPABILITIES_KEY]: { elicitation: {} } }),
    });
  }

  /** The first leg: must be input_required; returns its requestState. */
  async function ask(target: WireServer, args: Record<string, unknown>): Promise<string> {
    const response = await create(target, args);
    expect(response.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { approve: { method: 'elicitation/create', params: { mode: 'form' } } },
    });
    const state = response.result?.requestState;
    expect(typeof state).toBe('string');
    return state as string;
  }

  const rejected = (response: WireMessage, why: RegExp) => {
    expect(response.result?.resultType).toBe('complete');
    expect(response.result?.isError).toBe(true);
    expect(toolErrorText(response)).toMatch(/^The approval state \(requestState\) was rejected: /);
    expect(toolErrorText(response)).toMatch(why);
  };

  test('a valid state with an accepted answer runs the command (the control case)', async () => {
    const marker = workspace.marker();
    const args = touchArgs(marker, workspace.dir);
    const state = await ask(server, args);
    expect(workspace.ran(marker)).toBe(false);
    const response = await create(server, args, { requestState: state, inputResponses: ACCEPT_ONCE });
    expect(response.result?.isError).toBeUndefined();
    expect(workspace.ran(marker)).toBe(true);
  });

  test('tampered: one character changed, runs nothing', async () => {
    const marker = workspace.marker();
    const args = touchArgs(marker, workspace.dir);
    const state = await ask(server, args);
    const at = Math.floor(state.length / 2);
    const tampered = state.slice(0, at) + (state[at] === 'A' ? 'B' : 'A') + state.slice(at + 1);
    rejected(
      await create(server, args, { requestState: tampered, inputResponses: ACCEPT_ONCE }),
      /it was altered/,
    );
    rejected(
      await create(server, args, { requestState: 'tg1.AAAA', inputResponses: ACCEPT_ONCE }),
      /not a state this server issued/,
    );
    rejected(
      await create(server, args, { requestState: 42, inputResponses: ACCEPT_ONCE }),
      /not a state this server issued/,
    );
    expect(workspace.ran(marker)).toBe(false);
    expect(workspace.steps(marker)).toEqual(['terminal-create:ask', 'terminal-answer:ask:pending']);
  });

  test('replayed: a state used once (declined) is refused when sent again with an accept', async () => {
    const marker = workspace.marker();
    const args = touchArgs(marker, workspace.dir);
    const state = await ask(server, args);
    const declined = await create(server, args, { requestState: state, inputResponses: DECLINE });
    expect(toolErrorText(declined)).toMatch(/^Not run: declined by a person/);
    rejected(
      await create(server, args, { requestState: state, inputResponses: ACCEPT_ONCE }),
      /already used once/,
    );
    expect(workspace.ran(marker)).toBe(false);
  });

  test('presented for other arguments: refused, neither command runs', async () => {
    const first = workspace.marker();
    const other = workspace.marker();
    const state = await ask(server, touchArgs(first, workspace.dir));
    rejected(
      await create(server, touchArgs(other, workspace.dir), {
        requestState: state,
        inputResponses: ACCEPT_ONCE,
      }),
      /issued for a call with other arguments/,
    );
    // The same arguments with one more field (a longer wait) are other arguments too.
    rejected(
      await create(
        server,
        { ...touchArgs(first, workspace.dir), waitSeconds: 11 },
        {
          requestState: state,
          inputResponses: ACCEPT_ONCE,
        },
      ),
      /other arguments/,
    );
    expect(workspace.ran(first)).toBe(false);
    expect(workspace.ran(other)).toBe(false);
  });

  test('missing or malformed inputResponses: asked again with a fresh state, nothing runs', async () => {
    const marker = workspace.marker();
    const args = touchArgs(marker, workspace.dir);
    const state = await ask(server, args);
    const again = await create(server, args, { requestState: state });
    expect(again.result?.resultType).toBe('input_required');
    expect(again.result?.requestState).not.toBe(state);
    const malformed = await create(server, args, {
      requestState: again.result?.requestState,
      inputResponses: { approve: { action: 'accept', content: { decision: 'yes' } } },
    });
    expect(malformed.result?.resultType).toBe('input_required');
    expect(workspace.ran(marker)).toBe(false);
  });

  test('two concurrent asks do not cross: each state answers its own call only', async () => {
    const a = workspace.marker();
    const b = workspace.marker();
    const [stateA, stateB] = await Promise.all([
      ask(server, touchArgs(a, workspace.dir)),
      ask(server, touchArgs(b, workspace.dir)),
    ]);
    // B's state cannot approve A.
    rejected(
      await create(server, touchArgs(a, workspace.dir), {
        requestState: stateB,
        inputResponses: ACCEPT_ONCE,
      }),
      /other arguments/,
    );
    const [answerA, answerB] = await Promise.all([
      create(server, touchArgs(a, workspace.dir), { requestState: stateA, inputResponses: ACCEPT_ONCE }),
      create(server, touchArgs(b, workspace.dir), { requestState: stateB, inputResponses: DECLINE }),
    ]);
    expect(answerA.result?.isError).toBeUndefined();
    expect(toolErrorText(answerB)).toMatch(/^Not run: declined by a person/);
    expect(workspace.ran(a)).toBe(true);
    expect(workspace.ran(b)).toBe(false);
  });
});

describe('requestState expiry (serve --approval-state-ttl 0: every state is already expired)', () => {
  test('an expired state is asked again with a fresh state; nothing runs', async () => {
    const workspace = new ApprovalWorkspace();
    const server = WireServer.start(['--policy', workspace.policy, '--approval-state-ttl', '0']);
    workspace.audit = server.auditPath;
    try {
      const marker = workspace.marker();
      const args = touchArgs(marker, workspace.dir);
      const meta = { _meta: modernMeta({ [CLIENT_CAPABILITIES_KEY]: { elicitation: {} } }) };
      const first = await server.request('tools/call', { name: 'terminal_create', arguments: args, ...meta });
      expect(first.result?.resultType).toBe('input_required');
      const retry = await server.request('tools/call', {
        name: 'terminal_create',
        arguments: args,
        requestState: first.result?.requestState,
        inputResponses: ACCEPT_ONCE,
        ...meta,
      });
      expect(retry.result?.resultType).toBe('input_required');
      expect(retry.result?.requestState).not.toBe(first.result?.requestState);
      expect(workspace.ran(marker)).toBe(false);
      expect(workspace.steps(marker)).toEqual([
        'terminal-create:ask',
        'terminal-answer:ask:pending',
        'terminal-create:ask',
        'terminal-answer:ask:pending',
      ]);
    } finally {
      await server.dispose();
      workspace.dispose();
    }
  });
});
