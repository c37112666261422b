import { ProgressRelay } from '../../src/mcp/progress-relay.js';

const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('ProgressRelay', () => {
  it('joins characters split across chunks and reports the running byte total', async () => {
    const sent: [number, string][] = [];
    const relay = new ProgressRelay(
      (progress, message) => {
        sent.push([progress, message]);
      },
      { intervalMs: 5 },
    );
    const euro = Buffer.from('€');
    relay.push(euro.subarray(0, 2), 2);
    relay.push(euro.subarray(2), 3);
    relay.finish();
    expect(sent).toEqual([[3, '€']]);
  });

  it('holds further updates while the last one is unwritten, coalescing them, and still sends the final one', async () => {
    const sent: [number, string][] = [];
    const writes: (() => void)[] = [];
    const relay = new ProgressRelay(
      (progress, message) => {
        sent.push([progress, message]);
        return new Promise<void>((resolve) => writes.push(resolve));
      },
      { intervalMs: 1, maxMessageChars: 400 },
    );
    let total = 0;
    const write = (text: string): void => {
      total += Buffer.byteLength(text);
      relay.push(Buffer.from(text), total);
    };
    write('first\n');
    await tick(10);
    expect(sent).toEqual([[6, 'first\n']]);
    // The client does not read: nothing more is sent, and only the newest text is held.
    for (let i = 0; i < 100; i++) write('0123456789');
    await tick(20);
    expect(sent).toHaveLength(1);
    writes.shift()!();
    await tick(10);
    expect(sent).toHaveLength(2);
    expect(sent[1]![0]).toBe(total);
    // The note counts against the cap: the message stays within 400 characters.
    const message = sent[1]![1];
    const [, skipped, kept] = /^\[termgate: (\d+) characters skipped in this update; [^\]]*\]\n(.*)$/s.exec(
      message,
    )!;
    expect(message.length).toBeLessThanOrEqual(400);
    expect(Number(skipped) + kept!.length).toBe(1000);
    expect(kept!.length).toBeGreaterThanOrEqual(200);
    expect('0123456789'.repeat(100).endsWith(kept!)).toBe(true);
    // The final update does not wait for the previous write: the response follows it.
    write('last');
    relay.finish();
    expect(sent).toHaveLength(3);
    expect(sent[2]).toEqual([total, 'last']);
  });
});
