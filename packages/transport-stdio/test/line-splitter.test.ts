import { type LineEvent, LineSplitter } from '../src/line-splitter.js';

function split(chunks: readonly (string | Buffer)[], max = 1024): LineEvent[] {
  const events: LineEvent[] = [];
  const splitter = new LineSplitter(max);
  for (const chunk of chunks)
    splitter.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk), (e) => events.push(e));
  splitter.end((e) => events.push(e));
  return events;
}

describe('LineSplitter', () => {
  it('splits on \\n and strips a trailing \\r', () => {
    expect(split(['a\r\nb\n', 'c'])).toEqual([
      { kind: 'line', text: 'a' },
      { kind: 'line', text: 'b' },
      { kind: 'line', text: 'c' },
    ]);
  });

  it('joins a line that arrives in many chunks and skips empty lines', () => {
    expect(split(['{"a"', ':1', '}\n\n\r\n', '{"b":2}\n'])).toEqual([
      { kind: 'line', text: '{"a":1}' },
      { kind: 'line', text: '{"b":2}' },
    ]);
  });

  it('never splits a UTF-8 character across chunks', () => {
    const bytes = Buffer.from('"é€😀"\n');
    const chunks = [...bytes].map((b) => Buffer.from([b]));
    expect(split(chunks)).toEqual([{ kind: 'line', text: '"é€😀"' }]);
  });

  it('reports an over-long line once with its full length and keeps going', () => {
    const long = 'x'.repeat(5000);
    const events = split([long.slice(0, 100), long.slice(100, 3000), `${long.slice(3000)}\nok\n`], 1000);
    expect(events).toEqual([
      { kind: 'too-long', bytes: 5000 },
      { kind: 'line', text: 'ok' },
    ]);
  });

  it('accepts a line of exactly the limit, also with \\r\\n', () => {
    const exact = 'y'.repeat(1000);
    expect(split([`${exact}\r\n${exact}\n`], 1000)).toEqual([
      { kind: 'line', text: exact },
      { kind: 'line', text: exact },
    ]);
    expect(split([`${exact}z\n`], 1000)).toEqual([{ kind: 'too-long', bytes: 1001 }]);
  });

  it('holds no more than the limit while an over-long line streams past', () => {
    const splitter = new LineSplitter(1024);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const events: LineEvent[] = [];
    for (let i = 0; i < 100; i++) splitter.push(chunk, (e) => events.push(e));
    // Internal state is private; what is observable is that nothing was emitted
    // yet and the length is exact once the line ends.
    expect(events).toEqual([]);
    splitter.push(Buffer.from('\n'), (e) => events.push(e));
    expect(events).toEqual([{ kind: 'too-long', bytes: 100 * 64 * 1024 }]);
    expect((splitter as unknown as { pendingBytes: number }).pendingBytes).toBe(0);
  });
});
