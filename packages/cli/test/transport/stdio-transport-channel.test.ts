/**
 * One transport contract: core's `MessageChannel` port is the interface,
 * and transport-stdio (which may import nothing of ours) satisfies it
 * structurally. The assignments below are checked by `tsc -b`
 * (tsconfig.test.json): a member that drifts apart fails the build. The
 * test then drives the port's members on a real transport.
 */
import { PassThrough } from 'node:stream';
import type { ChannelFramingError, MessageChannel } from '@termgate/core';
import { type FramingError, StdioTransport } from '@termgate/transport-stdio';

/** Both framing reports are the same type, each assignable to the other. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const framingReportsAgree: Same<FramingError, ChannelFramingError> = true;

/** Every optional member of the port, required: the stdio transport has them all. */
type FullChannel = Required<MessageChannel>;

describe('the stdio transport is a MessageChannel', () => {
  it('is assignable to the port with every flow-control member, and moves messages through it', async () => {
    expect(framingReportsAgree).toBe(true);
    const input = new PassThrough();
    const output = new PassThrough();
    const transport = new StdioTransport(input, output);
    const full: Omit<FullChannel, 'onmessage' | 'onframingerror' | 'onclose' | 'ondrain'> = transport;
    const channel: MessageChannel = transport;
    const received: unknown[] = [];
    const framing: ChannelFramingError[] = [];
    channel.onmessage = (message) => received.push(message);
    channel.onframingerror = (error) => framing.push(error);
    channel.start();
    input.write('{"jsonrpc":"2.0","method":"ping"}\nnot json\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(received).toEqual([{ jsonrpc: '2.0', method: 'ping' }]);
    expect(framing).toEqual([{ kind: 'parse-error', message: expect.any(String) }]);
    full.pause();
    full.resume();
    await channel.send({ jsonrpc: '2.0', id: 'a', result: {} });
    const line = '{"jsonrpc":"2.0","id":"a","result":{}}\n';
    expect(full.backlogBytes()).toBe(Buffer.byteLength(line));
    expect(String(output.read())).toBe(line);
    await new Promise((resolve) => setImmediate(resolve));
    expect(full.backlogBytes()).toBe(0);
    await channel.close();
  });
});
