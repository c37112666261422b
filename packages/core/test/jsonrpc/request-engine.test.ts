/**
 * The request engine alone, over an in-memory channel (serveChannel), with
 * handlers the test controls: duplicate ids, cancellation under both rules
 * (a cancel of an unknown id included), the in-flight cap, back-pressure
 * and the answer-producing cap, requests kept open, and errors.
 */
import type { InboundRequest } from '../../src/jsonrpc/messages.js';
import { ProtocolError } from '../../src/jsonrpc/protocol-error.js';
import {
  type CancellationRule,
  type RequestContext,
  RequestEngine,
  type RequestEngineOptions,
} from '../../src/jsonrpc/request-engine.js';
import { serveChannel } from '../../src/jsonrpc/serve-channel.js';
import type { Logger } from '../../src/ports/logger.js';
import { InMemoryChannel } from '../support/in-memory-channel.js';

/** An in-memory channel with the optional flow-control members of the port. */
class FlowChannel extends InMemoryChannel {
  backlog = 0;
  reading = true;
  holds: boolean[] = [];
  ondrain?: () => void;
  pause(): void {
    this.reading = false;
  }
  resume(): void {
    this.reading = true;
  }
  backlogBytes(): number {
    return this.backlog;
  }
}

/** A handler whose calls each wait until the test ends them. */
class Gated {
  readonly calls: { request: InboundRequest; context: RequestContext; end: (result: object) => void }[] = [];
  readonly handler = (request: InboundRequest, context: RequestContext) =>
    new Promise<Record<string, unknown>>((resolve) => {
      this.calls.push({ request, context, end: (result) => resolve({ ...result }) });
    });
  /** Ends the call of request `id`. */
  end(id: number | string, result: object = { done: id }): void {
    const call = this.calls.find((c) => c.request.id === id);
    if (call === undefined) throw new Error(`no call for ${id}`);
    call.end(result);
  }
  started(id: number | string): boolean {
    return this.calls.some((c) => c.request.id === id);
  }
}

const SILENT: CancellationRule = { method: 'cancel', mode: 'silent', reason: 'cancelled by the test' };
const ANSWERED: CancellationRule = { method: 'cancel', mode: 'answered', reason: 'cancelled by the test' };

function setup(options: Partial<RequestEngineOptions> = {}) {
  const channel = new FlowChannel();
  const gated = new Gated();
  const errors: unknown[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (obj) => errors.push(obj),
  };
  const engine = new RequestEngine({
    send: (message) => channel.send(message),
    cancellation: SILENT,
    logger,
    flow: {
      backlogBytes: () => channel.backlogBytes(),
      hold: (held) => {
        channel.holds.push(held);
        if (held) channel.pause();
        else channel.resume();
      },
    },
    ...options,
  });
  engine.on('slow', gated.handler);
  engine.on('echo', async (request) => ({ echo: request.params ?? null }));
  serveChannel(channel, engine);
  return { channel, client: channel.client, engine, gated, errors };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const request = (id: number | string, method: string, params?: object) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params !== undefined && { params }),
});
const cancel = (requestId: unknown) => ({ jsonrpc: '2.0', method: 'cancel', params: { requestId } });
const answersTo = (client: FlowChannel['client'], id: number | string) =>
  client.received.filter((m) => m.id === id);
const DUPLICATE = {
  code: -32600,
  message: 'Invalid request: this id is already used by a request in flight; it was not run',
};

describe('RequestEngine: handlers and errors', () => {
  it('answers a registered method with its handler result', async () => {
    const { client } = setup();
    expect(await client.request(1, 'echo', { a: 1 })).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { echo: { a: 1 } },
    });
  });

  it('does not take a method without a handler when there is no fallback (serveChannel answers -32601)', async () => {
    const { client, engine } = setup();
    expect(engine.takeRequest({ kind: 'request', id: 9, method: 'nope', params: undefined })).toBe(false);
    expect(await client.request(1, 'nope')).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32601, message: 'Method not found: nope' },
    });
    expect(engine.pending).toBe(0);
  });

  it('serves unknown methods with the fallback when there is one', async () => {
    const { client } = setup({ fallback: async (r) => ({ fallback: r.method }) });
    expect((await client.request(1, 'nope')).result).toEqual({ fallback: 'nope' });
  });

  it('answers a protocol error as it is; any other failure -32603 with its message, and logs it', async () => {
    const { client, engine, errors } = setup();
    engine.on('refuse', async () => {
      throw ProtocolError.invalidParams('no', { why: 'test' });
    });
    engine.on('break', async () => {
      throw new Error('disk gone');
    });
    expect((await client.request(1, 'refuse')).error).toEqual({
      code: -32602,
      message: 'Invalid params: no',
      data: { why: 'test' },
    });
    expect(errors).toEqual([]);
    expect((await client.request(2, 'break')).error).toEqual({
      code: -32603,
      message: 'Internal error: disk gone',
    });
    expect(errors).toEqual([expect.objectContaining({ method: 'break' })]);
  });
});

describe('RequestEngine: duplicate ids', () => {
  it('refuses a request whose id is running, and runs nothing for it; the id is free once answered', async () => {
    const { client, gated } = setup();
    client.send(request(1, 'slow'));
    await tick();
    client.send(request(1, 'echo'));
    expect(await client.response(1)).toEqual({ jsonrpc: '2.0', id: 1, error: DUPLICATE });
    expect(gated.calls).toHaveLength(1);
    gated.end(1);
    await client.waitFor((m) => m.id === 1 && 'result' in m);
    // Free once the send resolved: the answer was handed to the channel.
    await tick();
    client.send(request(1, 'echo'));
    await client.waitFor((m) => m.id === 1 && JSON.stringify(m.result) === '{"echo":null}');
  });

  it('refuses a request whose id is queued; the queued one still runs', async () => {
    const { client, gated } = setup({ flow: { maxInFlight: 1 } });
    client.send(request(1, 'slow'));
    client.send(request(2, 'echo'));
    client.send(request(2, 'echo', { second: true }));
    expect(await client.response(2)).toEqual({ jsonrpc: '2.0', id: 2, error: DUPLICATE });
    gated.end(1);
    expect(await client.waitFor((m) => m.id === 2 && 'result' in m)).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { echo: null },
    });
  });

  it('tells a string id from a number id with the same text', async () => {
    const { client } = setup();
    client.send(request(1, 'slow'));
    client.send(request('1', 'echo'));
    expect(await client.response('1')).toMatchObject({ result: { echo: null } });
  });
});

describe('RequestEngine: cancellation', () => {
  it('a cancel of an unknown id is not taken, under either rule, and sends nothing', async () => {
    for (const cancellation of [SILENT, ANSWERED]) {
      const { client, engine, gated } = setup({ cancellation });
      client.send(request(1, 'slow'));
      await tick();
      expect(
        engine.takeNotification({ kind: 'notification', method: 'cancel', params: { requestId: 2 } }),
      ).toBe(false);
      expect(engine.takeNotification({ kind: 'notification', method: 'cancel', params: {} })).toBe(false);
      expect(
        engine.takeNotification({ kind: 'notification', method: 'other', params: { requestId: 1 } }),
      ).toBe(false);
      expect(gated.calls[0]?.context.signal.aborted).toBe(false);
      gated.end(1);
      await client.response(1);
      expect(client.received).toHaveLength(1);
    }
  });

  it('silent: a running request is aborted and never answered, and its id is free at once', async () => {
    const { client, engine, gated } = setup();
    client.send(request(1, 'slow'));
    await tick();
    client.send(cancel(1));
    const call = gated.calls[0]!;
    expect(call.context.signal.aborted).toBe(true);
    expect((call.context.signal.reason as Error).message).toBe('cancelled by the test');
    expect(call.context.cancelled).toBe(true);
    expect(engine.pending).toBe(0);
    client.send(request(1, 'echo'));
    expect(await client.response(1)).toMatchObject({ result: { echo: null } });
    call.end({ late: true });
    await tick();
    expect(answersTo(client, 1)).toHaveLength(1);
  });

  it('silent: a failure after the cancel is not answered either', async () => {
    const { client, engine } = setup();
    let fail: (error: Error) => void = () => undefined;
    engine.on('fails', () => new Promise((_resolve, reject) => (fail = reject)));
    client.send(request(1, 'fails'));
    await tick();
    client.send(cancel(1));
    fail(new Error('late'));
    await tick();
    expect(client.received).toEqual([]);
  });

  it('silent: a queued request is dropped and never runs; the one behind it starts', async () => {
    const { client, gated, channel } = setup({ flow: { maxInFlight: 1, hold: () => channel.pause() } });
    client.send(request(1, 'slow'));
    client.send(request(2, 'slow'));
    client.send(request(3, 'echo'));
    client.send(cancel(2));
    gated.end(1);
    expect(await client.response(3)).toMatchObject({ result: { echo: null } });
    expect(gated.started(2)).toBe(false);
    expect(answersTo(client, 2)).toEqual([]);
  });

  it('answered: a running request is aborted and answered once, with what its handler then returns', async () => {
    const { client, engine, gated } = setup({ cancellation: ANSWERED });
    client.send(request(1, 'slow'));
    await tick();
    client.send(cancel(1));
    const call = gated.calls[0]!;
    expect(call.context.signal.aborted).toBe(true);
    // Its id stays taken until the answer.
    client.send(request(1, 'echo'));
    expect(await client.response(1)).toEqual({ jsonrpc: '2.0', id: 1, error: DUPLICATE });
    call.end({ stoppedEarly: true });
    expect(await client.waitFor((m) => m.id === 1 && 'result' in m)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { stoppedEarly: true },
    });
    await tick();
    expect(engine.pending).toBe(0);
  });

  it('answered: a queued request is not cancelled (the notification is not taken); it runs in its turn', async () => {
    const { client, engine, gated } = setup({ cancellation: ANSWERED, flow: { maxInFlight: 1 } });
    client.send(request(1, 'slow'));
    client.send(request(2, 'echo'));
    expect(
      engine.takeNotification({ kind: 'notification', method: 'cancel', params: { requestId: 2 } }),
    ).toBe(false);
    gated.end(1);
    expect(await client.response(2)).toMatchObject({ result: { echo: null } });
  });
});

describe('RequestEngine: flow control', () => {
  it('holds a request while maxInFlight requests are in flight, and starts it when one answers', async () => {
    const { client, channel, gated } = setup({
      flow: {
        maxInFlight: 2,
        hold: (held) => {
          channel.holds.push(held);
          if (held) channel.pause();
          else channel.resume();
        },
      },
    });
    client.send(request(1, 'slow'));
    client.send(request(2, 'slow'));
    client.send(request(3, 'slow'));
    await tick();
    expect(gated.started(3)).toBe(false);
    expect(channel.reading).toBe(false);
    gated.end(2);
    await client.response(2);
    await tick();
    expect(gated.started(3)).toBe(true);
    expect(channel.reading).toBe(true);
    expect(channel.holds).toEqual([true, false]);
  });

  it('back-pressure: starts nothing while the backlog is at maxBacklogBytes, and starts it on drain', async () => {
    const { client, channel } = setup({
      flow: {
        maxBacklogBytes: 100,
        backlogBytes: () => channel.backlog,
        hold: (held) => (held ? channel.pause() : channel.resume()),
      },
    });
    channel.backlog = 100;
    client.send(request(1, 'echo'));
    await tick();
    expect(answersTo(client, 1)).toEqual([]);
    expect(channel.reading).toBe(false);
    channel.ondrain?.();
    await tick();
    expect(answersTo(client, 1)).toEqual([]);
    channel.backlog = 99;
    channel.ondrain?.();
    expect(await client.response(1)).toMatchObject({ result: { echo: null } });
    expect(channel.reading).toBe(true);
  });

  it('caps answer-producing requests at maxActiveRequests; others run past a held head only in order', async () => {
    const { client, gated } = setup({
      flow: { maxActiveRequests: 1 },
      producesAnswer: (r) => r.params?.small !== true,
    });
    client.send(request(1, 'slow'));
    client.send(request(2, 'slow', { small: true }));
    client.send(request(3, 'slow'));
    client.send(request(4, 'slow', { small: true }));
    await tick();
    expect([1, 2, 3, 4].map((id) => gated.started(id))).toEqual([true, true, false, false]);
    gated.end(2);
    await client.response(2);
    await tick();
    // A small request ended: the heavy head still waits, and so does what is behind it.
    expect(gated.started(3)).toBe(false);
    gated.end(1);
    await client.response(1);
    await tick();
    expect([3, 4].map((id) => gated.started(id))).toEqual([true, true]);
  });

  it('settle resolves once every started request answered, or at its timeout', async () => {
    const { client, engine, gated } = setup();
    await engine.settle(10_000);
    client.send(request(1, 'slow'));
    await tick();
    let settled = false;
    const settling = engine.settle(10_000).then(() => {
      settled = true;
    });
    await tick();
    expect(settled).toBe(false);
    gated.end(1);
    await settling;
    expect(answersTo(client, 1)).toHaveLength(1);
    client.send(request(2, 'slow'));
    await tick();
    await engine.settle(1);
    expect(answersTo(client, 2)).toEqual([]);
  });
});

describe('RequestEngine: requests kept open', () => {
  it('keeps the id taken and the slot held until closeOpen answers it; a cancel closes it silently', async () => {
    const { client, engine } = setup({ flow: { maxInFlight: 2 } });
    engine.on('listen', async (_request, context) => context.keepOpen());
    client.send(request(1, 'listen'));
    client.send(request(2, 'listen'));
    await tick();
    expect(engine.pending).toBe(2);
    client.send(request(3, 'echo'));
    await tick();
    expect(answersTo(client, 3)).toEqual([]);
    client.send(request(1, 'echo'));
    expect(await client.response(1)).toEqual({ jsonrpc: '2.0', id: 1, error: DUPLICATE });
    client.send(cancel(2));
    expect(await client.response(3)).toMatchObject({ result: { echo: null } });
    await engine.closeOpen((id) => ({ closed: id }));
    expect(answersTo(client, 1).filter((m) => 'result' in m)).toEqual([
      { jsonrpc: '2.0', id: 1, result: { closed: 1 } },
    ]);
    expect(answersTo(client, 2)).toEqual([]);
    expect(engine.pending).toBe(0);
  });

  it('closeOpen answers a request kept open whose handler has not returned yet, once', async () => {
    const { client, engine } = setup();
    let finish: () => void = () => undefined;
    engine.on('listen', async (_request, context) => {
      const open = context.keepOpen();
      await new Promise<void>((resolve) => (finish = resolve));
      return open;
    });
    client.send(request(1, 'listen'));
    await tick();
    await engine.closeOpen(() => ({ closed: true }));
    finish();
    await tick();
    expect(answersTo(client, 1)).toEqual([{ jsonrpc: '2.0', id: 1, result: { closed: true } }]);
    expect(engine.pending).toBe(0);
  });

  it('a handler that kept its request open and then throws or returns a result is answered once, and frees its id', async () => {
    const { client, engine } = setup();
    const finishers: ((outcome: 'throw' | 'result') => void)[] = [];
    engine.on('listen', async (_request, context) => {
      context.keepOpen();
      const outcome = await new Promise<'throw' | 'result'>((resolve) => finishers.push(resolve));
      if (outcome === 'throw') throw ProtocolError.invalidParams('changed its mind');
      return { late: true };
    });
    client.send(request(1, 'listen'));
    client.send(request(2, 'listen'));
    await tick();
    finishers[0]!('throw');
    expect(await client.response(1)).toMatchObject({ error: { code: -32602 } });
    await engine.closeOpen(() => ({ closed: true }));
    finishers[1]!('result');
    await tick();
    expect(answersTo(client, 1)).toHaveLength(1);
    expect(answersTo(client, 2)).toEqual([{ jsonrpc: '2.0', id: 2, result: { closed: true } }]);
    expect(engine.pending).toBe(0);
  });
});
