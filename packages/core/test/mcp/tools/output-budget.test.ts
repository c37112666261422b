import { callBudget, fitOutput, fitOutputFromStart, jsonCost } from '../../../src/mcp/tools/output-budget.js';

/** What a reader gets with `fromByte`: the bytes of `text` from that offset on. */
function bytesFrom(text: string, fromByte: number, toByte?: number): string {
  return Buffer.from(text).subarray(fromByte, toByte).toString('utf8');
}

const MARKER =
  /\n\[termgate: ([\d,]+) characters omitted here \(output bytes (\d+) to (\d+)\)\. Read them with terminal_output and "fromByte": (\d+), or rerun the command through grep, head or tail\.\]\n/;

describe('jsonCost', () => {
  it('counts what JSON escaping adds: quotes, backslashes, newlines and other control characters', () => {
    for (const text of [
      'plain',
      'a"b\\c',
      'line\nline\r\t',
      '\u0001\u001f',
      'é😀',
      '\ud800 lone',
      '\u2028',
    ]) {
      expect(jsonCost(text)).toBe(JSON.stringify(text).length - 2);
    }
  });
});

describe('fitOutput', () => {
  it('returns text that fits unchanged', () => {
    expect(fitOutput('hello\n', 100, { startByte: 0 })).toEqual({ text: 'hello\n', omittedChars: 0 });
  });

  it('keeps the beginning and the end around a marker whose byte range reads back exactly what it left out', () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i} é\n`).join('');
    const startByte = 7000;
    const fitted = fitOutput(lines, 2000, { startByte });
    expect(jsonCost(fitted.text)).toBeLessThanOrEqual(2000);
    const match = MARKER.exec(fitted.text)!;
    expect(match).not.toBeNull();
    const [, omitted, from, to, readFrom] = match;
    expect(readFrom).toBe(from);
    const head = fitted.text.slice(0, match.index);
    const tail = fitted.text.slice(match.index + match[0].length);
    expect(lines.startsWith(head)).toBe(true);
    expect(lines.endsWith(tail)).toBe(true);
    expect(head.length).toBeGreaterThan(400);
    expect(tail.length).toBeGreaterThan(400);
    // Short lines: both cuts fall on line boundaries.
    expect(head.endsWith('\n')).toBe(true);
    expect(tail).toMatch(/^line \d+ é\n/);
    const middle = bytesFrom(lines, Number(from) - startByte, Number(to) - startByte);
    expect(head + middle + tail).toBe(lines);
    expect(Number(omitted!.replaceAll(',', ''))).toBe(middle.length);
    expect(fitted.omittedChars).toBe(middle.length);
  });

  it('counts the JSON cost of what it keeps, and never splits a surrogate pair', () => {
    const text = '"\n😀'.repeat(3000);
    const fitted = fitOutput(text, 1500, { startByte: 0 });
    expect(JSON.stringify(fitted.text).length - 2).toBeLessThanOrEqual(1500);
    expect(fitted.text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});

describe('fitOutputFromStart', () => {
  it('keeps the beginning and names the byte to continue from; paging reads everything once', () => {
    const text = Array.from({ length: 3000 }, (_, i) => `row ${i}\n`).join('');
    let from = 0;
    let read = '';
    for (let page = 0; page < 100 && from < Buffer.byteLength(text); page++) {
      const fitted = fitOutputFromStart(bytesFrom(text, from), 1000, { startByte: from });
      expect(jsonCost(fitted.text)).toBeLessThanOrEqual(1000);
      const next =
        /\n\[termgate: [\d,]+ more characters\. Continue with terminal_output and "fromByte": (\d+)\.\]\n$/.exec(
          fitted.text,
        );
      if (next === null) {
        read += fitted.text;
        break;
      }
      read += fitted.text.slice(0, next.index);
      from = Number(next[1]);
    }
    expect(read).toBe(text);
  });
});

describe('callBudget', () => {
  it('uses the call budget, else the default, never above the ceiling', () => {
    const limits = { defaultChars: 30_000, maxChars: 50_000 };
    expect(callBudget(undefined, limits)).toBe(30_000);
    expect(callBudget(2_000, limits)).toBe(2_000);
    expect(callBudget(90_000, limits)).toBe(50_000);
    expect(callBudget(undefined, { defaultChars: 30_000, maxChars: 10_000 })).toBe(10_000);
  });
});
