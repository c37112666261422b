/**
 * StdioTransport's life cycle: how input ending (each way a stream can end),
 * the output failing, and `close` settle sends, listeners and `onclose`.
 * A transport that gets these wrong keeps stdin open (the process never
 * exits), answers after it was closed, or loses a final line.
 */
import { PassThrough, Writable } from 'node:stream';
import { StdioTransport } from '../src/stdio-transport.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A transport over fresh streams, with what it delivered and how often it closed. */
function harness(options: ConstructorParameters<typeof StdioTransport>[2] = {}, input = new PassThrough()) {
  const output = new PassThrough();
  const transport = new StdioTransport(input, output, options);
  const messages: unknown[] = [];
  let closes = 0;
  transport.onmessage = (message) => messages.push(message);
  transport.onclose = () => {
    closes++;
  };
  return { input, output, transport, messages, closes: () => closes };
}

/** A writable that keeps every write waiting until `release` is called. */
function stuckWritable() {
  const callbacks: (() => void)[] = [];
  const stream = new Writable({
    highWaterMark: 1,
    write(_chunk: Buffer, _encoding, callback) {
      callbacks.push(callback);
    },
  });
  const release = (): void => {
    for (const callback of callbacks.splice(0)) callback();
  };
  return { stream, release };
}

describe('StdioTransport: input', () => {
  it('listens once however often it is started', async () => {
    const { input, transport, messages } = harness();
    transport.start();
    transport.start();
    input.write('{"id":"a"}\n');
    await tick();
    expect(messages).toEqual([{ id: 'a' }]);
  });

  it('delivers a last line without a newline when the input ends, then closes once', async () => {
    const { input, transport, messages, closes } = harness();
    transport.start();
    input.end('{"id":"b"}');
    await tick();
    expect(messages).toEqual([{ id: 'b' }]);
    expect(closes()).toBe(1);
    await transport.close();
    expect(closes()).toBe(1);
  });

  it("closes on the input's 'close' without 'end' (a destroyed stdin)", async () => {
    const { input, transport, closes } = harness();
    transport.start();
    input.destroy();
    await tick();
    expect(closes()).toBe(1);
  });

  it("closes on an input 'error' alone, and a later read error is no uncaught error", async () => {
    const input = new PassThrough({ emitClose: false });
    const { transport, closes } = harness({}, input);
    transport.start();
    input.emit('error', new Error('EIO'));
    await tick();
    expect(closes()).toBe(1);
    expect(() => input.emit('error', new Error('EIO again'))).not.toThrow();
  });

  it('stops listening at the end of input: no listener of its own is left on stdin', async () => {
    const { input, transport } = harness();
    const before = {
      data: input.listenerCount('data'),
      end: input.listenerCount('end'),
      close: input.listenerCount('close'),
    };
    transport.start();
    input.end();
    await tick();
    expect(input.listenerCount('data')).toBe(before.data);
    expect(input.listenerCount('end')).toBe(before.end);
    expect(input.listenerCount('close')).toBe(before.close);
    // Only the listener that swallows late read errors.
    expect(input.listenerCount('error')).toBe(1);
  });

  it('stops listening on close, while stdin is still open: no listener of its own is left', async () => {
    const { input, transport } = harness();
    const before = ['data', 'end', 'close'].map((event) => input.listenerCount(event));
    transport.start();
    await transport.close();
    expect(['data', 'end', 'close'].map((event) => input.listenerCount(event))).toEqual(before);
  });

  it('pauses and resumes stdin only while it reads it', async () => {
    const { input, transport } = harness();
    transport.pause();
    expect(input.isPaused()).toBe(false); // not started: not its to pause
    transport.start();
    transport.pause();
    expect(input.isPaused()).toBe(true);
    transport.resume();
    expect(input.isPaused()).toBe(false);
    input.end();
    await tick();
    transport.resume(); // ended: stdin must stay paused, or it holds the process open
    expect(input.isPaused()).toBe(true);
  });

  it('keeps stdin paused after close, whatever resume says', async () => {
    const { input, transport } = harness();
    transport.start();
    await transport.close();
    transport.resume();
    expect(input.isPaused()).toBe(true);
  });
});

describe('StdioTransport: close', () => {
  it('ends the output and calls onclose, once; a send after it is refused', async () => {
    const { output, transport, closes } = harness();
    transport.start();
    await transport.close();
    expect(output.writableEnded).toBe(true);
    expect(closes()).toBe(1);
    await transport.close();
    expect(closes()).toBe(1);
    await expect(transport.send({ id: 1 })).rejects.toThrow('transport is closed');
  });

  it('leaves the output open with endOutputOnClose: false', async () => {
    const { output, transport, closes } = harness({ endOutputOnClose: false });
    transport.start();
    await transport.close();
    expect(output.writableEnded).toBe(false);
    expect(closes()).toBe(1);
  });

  it('sends what was queued before close, then ends', async () => {
    const { output, transport } = harness();
    let text = '';
    output.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    transport.start();
    const sent = transport.send({ id: 3 });
    await transport.close();
    await sent;
    expect(text).toBe('{"id":3}\n');
  });
});

describe('StdioTransport: output', () => {
  it('refuses a send to an ended or destroyed output', async () => {
    const ended = harness();
    ended.output.end();
    await expect(ended.transport.send({ id: 1 })).rejects.toThrow('output stream is closed');
    const destroyed = harness();
    destroyed.output.on('error', () => undefined);
    destroyed.output.destroy();
    await expect(destroyed.transport.send({ id: 1 })).rejects.toThrow('output stream is closed');
  });

  it('after an output error (EPIPE), closes and refuses sends with that error', async () => {
    const { output, transport, closes } = harness();
    transport.start();
    const epipe = new Error('EPIPE');
    output.emit('error', epipe);
    expect(closes()).toBe(1);
    await expect(transport.send({ id: 1 })).rejects.toBe(epipe);
    output.emit('error', new Error('a later error'));
    await expect(transport.send({ id: 2 })).rejects.toBe(epipe);
  });

  it('counts nothing once writes are handed over, and reports each settled send to ondrain', async () => {
    const { output, transport } = harness();
    output.resume(); // a peer that reads everything
    let drains = 0;
    transport.ondrain = () => {
      drains++;
    };
    transport.start();
    await Promise.all([transport.send({ id: 1 }), transport.send({ id: 2 }), transport.send({ id: 3 })]);
    await tick();
    expect(drains).toBe(3);
    expect(transport.backlogBytes()).toBe(0);
  });

  it("counts the output stream's own unread buffer in backlogBytes", async () => {
    const input = new PassThrough();
    const output = new Writable({
      highWaterMark: 1024,
      write(_chunk: Buffer, _encoding, _callback) {
        // never read
      },
    });
    const transport = new StdioTransport(input, output);
    transport.start();
    await transport.send({ id: 1 }); // '{"id":1}\n': 9 bytes, accepted by the stream's buffer
    await tick();
    expect(transport.backlogBytes()).toBe(9);
  });

  it('waits for drain, and leaves no listener behind once drained', async () => {
    const { stream, release } = stuckWritable();
    const transport = new StdioTransport(new PassThrough(), stream, { stallTimeoutMs: 60_000 });
    transport.start();
    const sent = transport.send({ id: 1 });
    let settled = false;
    void sent.then(() => {
      settled = true;
    });
    await tick();
    expect(settled).toBe(false);
    release();
    await sent;
    expect(stream.listenerCount('drain')).toBe(0);
    expect(stream.listenerCount('close')).toBe(0);
  });

  it('settles a write waiting for drain when the output closes', async () => {
    const { stream } = stuckWritable();
    const transport = new StdioTransport(new PassThrough(), stream, { stallTimeoutMs: 60_000 });
    transport.start();
    const sent = transport.send({ id: 1 });
    await tick();
    stream.destroy();
    await expect(sent).resolves.toBeUndefined();
  });

  it('does not declare a peer that drained in time gone', async () => {
    const { stream, release } = stuckWritable();
    const transport = new StdioTransport(new PassThrough(), stream, { stallTimeoutMs: 1_000 });
    let closed = false;
    transport.onclose = () => {
      closed = true;
    };
    transport.start();
    const sent = transport.send({ id: 1 });
    await tick();
    release();
    await sent;
    // Past the stall timeout: a timer left running would now close the transport.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(closed).toBe(false);
    expect(stream.destroyed).toBe(false);
  });

  it('rejects the write that waited on a peer that read nothing, and destroys the output', async () => {
    const { stream } = stuckWritable();
    const transport = new StdioTransport(new PassThrough(), stream, { stallTimeoutMs: 200 });
    transport.start();
    const waiting = transport.send({ id: 1 });
    await expect(waiting).rejects.toThrow('the peer read nothing for 200 ms');
    expect(stream.destroyed).toBe(true);
  });
});
