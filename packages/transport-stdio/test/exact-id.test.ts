import { PassThrough, Writable } from 'node:stream';
import { LosslessNumber } from 'lossless-json';
import { stringifyMessage, topLevelMemberText, withExactId } from '../src/exact-id.js';
import { StdioTransport } from '../src/stdio-transport.js';

/** Every line written to a transport's output. */
function lines(stream: PassThrough): () => string[] {
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return () => text.split('\n').filter((line) => line !== '');
}

describe('exact ids', () => {
  it.each(['9007199254740993', '12345678901234567890123', '1e-400', '1E2', '-0', '1.0', '7'])(
    'echoes the id %s byte for byte through parse and send',
    async (id) => {
      const input = new PassThrough();
      const output = new PassThrough();
      const written = lines(output);
      const transport = new StdioTransport(input, output);
      transport.onmessage = (message) => {
        const { id: got } = message as { id: unknown };
        void transport.send({ jsonrpc: '2.0', id: got, result: { echoed: true } });
      };
      transport.start();
      input.write(`{"jsonrpc":"2.0","id":${id},"method":"ping"}\n`);
      await new Promise((resolve) => setImmediate(resolve));
      expect(written()).toEqual([`{"id":${id},"jsonrpc":"2.0","result":{"echoed":true}}`]);
    },
  );

  it('finds the top-level member as JSON.parse reads it: last duplicate wins, escaped keys, nested ids ignored', () => {
    const text =
      '{"params":{"id":1,"s":"\\"id\\":2 \\\\"},"id":3, "a":[{"id":4},"]}"],"\\u0069d" : 5e0 ,"z":"}"}';
    expect(JSON.parse(text).id).toBe(5);
    expect(topLevelMemberText(text, 'id')).toBe('5e0');
    expect(topLevelMemberText('{"a":"\\\\","id":8}', 'id')).toBe('8');
    expect(topLevelMemberText('{}', 'id')).toBeUndefined();
  });

  it('leaves string ids and non-objects alone, and writes nested lossless numbers as numbers', () => {
    expect(withExactId('{"id":"7"}', { id: '7' })).toEqual({ id: '7' });
    expect(withExactId('[1]', [1])).toEqual([1]);
    expect(
      stringifyMessage({ id: new LosslessNumber('5'), result: { _meta: { sub: new LosslessNumber('5') } } }),
    ).toBe('{"id":5,"result":{"_meta":{"sub":5}}}');
    expect(stringifyMessage({ id: new LosslessNumber('5') })).toBe('{"id":5}');
  });

  it('never writes a forged lossless-looking object raw', () => {
    const forged = JSON.parse('{"id":{"isLosslessNumber":true,"value":"1,\\"x\\":2"}}');
    expect(JSON.parse(stringifyMessage(forged))).toEqual(forged);
  });
});

describe('StdioTransport: a peer that stops reading', () => {
  it('counts unread output in backlogBytes and reports the peer gone after the stall timeout', async () => {
    const callbacks: (() => void)[] = [];
    const stuck = new Writable({
      highWaterMark: 16,
      write(_chunk: Buffer, _encoding, callback) {
        callbacks.push(callback); // never called: the peer reads nothing
      },
    });
    const input = new PassThrough();
    const transport = new StdioTransport(input, stuck, { stallTimeoutMs: 200 });
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
    });
    transport.start();
    const sends = [transport.send({ n: 'x'.repeat(100) }), transport.send({ n: 'y'.repeat(100) })];
    expect(transport.backlogBytes()).toBeGreaterThanOrEqual(2 * 100);
    await closed;
    await expect(sends[1]).rejects.toThrow(/read nothing for 200 ms/);
    await expect(transport.send({ later: true })).rejects.toThrow(/read nothing/);
    await transport.close();
  });
});
