import { PassThrough, Writable } from 'node:stream';
import { LosslessNumber } from 'lossless-json';
import { type FramingError, StdioTransport } from '../src/stdio-transport.js';

function collect(stream: PassThrough): () => string[] {
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return () => text.split('\n').filter((line) => line !== '');
}

describe('StdioTransport', () => {
  it('delivers parsed messages in order and reports framing errors without stopping', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const transport = new StdioTransport(input, output, { maxLineBytes: 64 });
    const messages: unknown[] = [];
    const errors: FramingError[] = [];
    transport.onmessage = (m) => messages.push(m);
    transport.onframingerror = (e) => errors.push(e);
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    transport.start();
    input.write('{"id":1}\r\nnot json\n[1,2]\n');
    input.write(`"${'z'.repeat(100)}"\n{"id":"2"}\n`);
    input.end();
    await closed;
    expect(messages).toEqual([{ id: new LosslessNumber('1') }, [1, 2], { id: '2' }]);
    expect(errors.map((e) => e.kind)).toEqual(['parse-error', 'line-too-long']);
    expect(errors[1]).toEqual({ kind: 'line-too-long', bytes: 102, maxLineBytes: 64 });
  });

  it('writes one compact line per message, in call order, honouring backpressure', async () => {
    const written: string[] = [];
    let pendingCallbacks: (() => void)[] = [];
    const slow = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, callback) {
        written.push(chunk.toString('utf8'));
        pendingCallbacks.push(callback);
      },
    });
    const transport = new StdioTransport(new PassThrough(), slow);
    const sends = Array.from({ length: 5 }, (_, i) => transport.send({ i, text: 'line\nwith newline' }));
    // The first write fills the 16-byte buffer: the rest wait for 'drain'.
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toHaveLength(1);
    while (written.length < 5 || pendingCallbacks.length > 0) {
      const callbacks = pendingCallbacks;
      pendingCallbacks = [];
      for (const callback of callbacks) callback();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(sends);
    expect(written.map((line) => JSON.parse(line).i)).toEqual([0, 1, 2, 3, 4]);
    expect(written.every((line) => line.endsWith('\n') && line.indexOf('\n') === line.length - 1)).toBe(true);
  });

  it('rejects sends after close and ends the output once', async () => {
    const output = new PassThrough();
    const lines = collect(output);
    const transport = new StdioTransport(new PassThrough(), output);
    transport.start();
    await transport.send({ a: 1 });
    await transport.close();
    await transport.close();
    await expect(transport.send({ b: 2 })).rejects.toThrow('closed');
    expect(output.writableEnded).toBe(true);
    expect(lines()).toEqual(['{"a":1}']);
  });

  it('turns a broken output pipe into close, not a crash', async () => {
    const output = new PassThrough();
    const transport = new StdioTransport(new PassThrough(), output);
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    transport.start();
    output.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await closed;
    await expect(transport.send({ late: true })).rejects.toThrow();
  });
});

describe('StdioTransport after end of input', () => {
  it('still sends until close, then ends the output', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const lines = collect(output);
    const transport = new StdioTransport(input, output);
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    transport.start();
    input.end('{"id":1}\n');
    await closed;
    await transport.send({ answer: 1 });
    await transport.close();
    expect(lines()).toEqual(['{"answer":1}']);
    expect(output.writableEnded).toBe(true);
  });
});

describe('StdioTransport close', () => {
  it('stops reading its input, so a live stdin does not keep the process alive', async () => {
    const input = new PassThrough();
    const transport = new StdioTransport(input, new PassThrough());
    const messages: unknown[] = [];
    transport.onmessage = (m) => messages.push(m);
    transport.start();
    input.write('{"a":1}\n');
    await new Promise((resolve) => setImmediate(resolve));
    await transport.close();
    expect(input.isPaused()).toBe(true);
    input.write('{"b":2}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(messages).toEqual([{ a: 1 }]);
  });
});

describe('StdioTransport after its input was detached', () => {
  it('absorbs a later read error instead of letting it crash the process', async () => {
    const input = new PassThrough();
    const transport = new StdioTransport(input, new PassThrough());
    transport.start();
    await transport.close();
    expect(() => input.emit('error', new Error('read ECONNRESET'))).not.toThrow();
  });
});

describe('StdioTransport flow control', () => {
  it('delivers nothing while paused, and everything in order after resume', async () => {
    const input = new PassThrough();
    const transport = new StdioTransport(input, new PassThrough());
    const messages: unknown[] = [];
    transport.onmessage = (m) => messages.push(m);
    transport.start();
    transport.pause();
    input.write('{"n":1}\n{"n":2}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(messages).toEqual([]);
    transport.resume();
    await new Promise((resolve) => setImmediate(resolve));
    expect(messages).toEqual([{ n: 1 }, { n: 2 }]);
  });
});
