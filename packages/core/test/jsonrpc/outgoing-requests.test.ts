import { type OutgoingRequestError, OutgoingRequests } from '../../src/jsonrpc/outgoing-requests.js';

type Message = Record<string, unknown>;

function setup() {
  const sent: Message[] = [];
  const requests = new OutgoingRequests(async (message) => {
    sent.push(message);
  });
  return { sent, requests };
}

async function rejection(promise: Promise<unknown>): Promise<OutgoingRequestError> {
  try {
    await promise;
  } catch (error) {
    return error as OutgoingRequestError;
  }
  throw new Error('expected a rejection');
}

describe('OutgoingRequests', () => {
  test('matches the response to its request by an unguessable id', async () => {
    const { sent, requests } = setup();
    const pending = requests.request('elicitation/create', { a: 1 }, { timeoutMs: 60_000 });
    const id = sent[0]!.id as string;
    expect(id).toMatch(/^termgate-[0-9a-f-]{36}$/);
    expect(requests.settle({ id: 'termgate-1', result: { wrong: true } })).toBe(false);
    expect(requests.settle({ id, result: { action: 'accept' } })).toBe(true);
    await expect(pending).resolves.toEqual({ action: 'accept' });
    // A second (late or replayed) response for the same id is not ours any more.
    expect(requests.settle({ id, result: { action: 'accept' } })).toBe(false);
  });

  test('an error response, a timeout, a cancellation and closing each reject with their kind', async () => {
    const { sent, requests } = setup();
    const erroring = requests.request('m', {}, { timeoutMs: 60_000 });
    requests.settle({ id: sent[0]!.id, error: { code: -32601, message: 'Method not found' } });
    expect(await rejection(erroring)).toMatchObject({ kind: 'error' });

    const timed = await rejection(requests.request('m', {}, { timeoutMs: 1 }));
    expect(timed).toMatchObject({ kind: 'timeout' });
    expect(sent.at(-1)).toMatchObject({
      method: 'notifications/cancelled',
      params: { requestId: sent[1]!.id },
    });

    const controller = new AbortController();
    const cancelled = requests.request('m', {}, { timeoutMs: 60_000, signal: controller.signal });
    controller.abort(new Error('the turn was cancelled'));
    expect(await rejection(cancelled)).toMatchObject({
      kind: 'cancelled',
      message: 'the turn was cancelled',
    });
    expect(sent.at(-1)).toMatchObject({ method: 'notifications/cancelled' });

    const open = requests.request('m', {}, { timeoutMs: 60_000 });
    requests.closeAll();
    expect(await rejection(open)).toMatchObject({ kind: 'closed' });
  });
});
