import { OutputTail } from '../src/output-tail.js';

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

function appendAll(tail: OutputTail, chunks: Uint8Array[]): void {
  for (const chunk of chunks) tail.append(chunk);
}

describe('OutputTail', () => {
  it('keeps everything below the limit, untruncated', () => {
    const tail = new OutputTail(100);
    appendAll(tail, [utf8('hello '), utf8('wörld')]);
    const { bytes, droppedBytes } = tail.snapshot();
    expect(bytes.toString('utf8')).toBe('hello wörld');
    expect(tail.totalBytes).toBe(12);
    expect(droppedBytes).toBe(0);
    expect(tail.truncated).toBe(false);
  });

  it('keeps exactly the newest limit bytes and counts what it dropped', () => {
    const tail = new OutputTail(5);
    appendAll(tail, [utf8('abc'), utf8('defg'), utf8('hi')]);
    const { bytes, droppedBytes } = tail.snapshot();
    expect(bytes.toString()).toBe('efghi');
    expect(droppedBytes).toBe(4);
    expect(tail.totalBytes).toBe(9);
    expect(tail.truncated).toBe(true);
  });

  it('moves the start past a split two-byte character and counts the skipped byte as dropped', () => {
    // 'x' + 'é'×10: x C3 A9 C3 A9 … (21 bytes); the newest 5 start with a continuation byte A9.
    const tail = new OutputTail(5);
    tail.append(utf8(`x${'é'.repeat(10)}`));
    const { bytes, droppedBytes } = tail.snapshot();
    expect(bytes).toEqual(utf8('éé'));
    expect(droppedBytes).toBe(17);
    expect(tail.droppedBytes).toBe(17);
    expect(droppedBytes + bytes.length).toBe(tail.totalBytes);
  });

  it.each([
    ['three-byte', '€', 7, '€€', 3],
    ['four-byte', '😀', 6, '😀', 8],
    ['four-byte, one continuation byte kept', '😀', 5, '😀', 8],
  ])('cuts a %s character straddling the limit', (_label, char, limit, expected, dropped) => {
    const tail = new OutputTail(limit);
    for (const byte of utf8(char.repeat(3))) tail.append(Uint8Array.of(byte));
    const { bytes, droppedBytes } = tail.snapshot();
    expect(bytes.toString('utf8')).toBe(expected);
    expect(droppedBytes).toBe(dropped);
    expect(droppedBytes + bytes.length).toBe(tail.totalBytes);
  });

  it('skips at most three continuation bytes, so binary output is never emptied', () => {
    const tail = new OutputTail(8);
    tail.append(Buffer.alloc(20, 0x80));
    const { bytes, droppedBytes } = tail.snapshot();
    expect(bytes.length).toBe(5);
    expect(droppedBytes).toBe(15);
  });

  it('does not skip leading continuation bytes when nothing was dropped', () => {
    const tail = new OutputTail(8);
    tail.append(Uint8Array.of(0x80, 0x41));
    expect(tail.snapshot().bytes).toEqual(Buffer.from([0x80, 0x41]));
    expect(tail.droppedBytes).toBe(0);
  });

  it('retains nothing with a limit of 0 but still counts', () => {
    const tail = new OutputTail(0);
    appendAll(tail, [utf8('abc'), Buffer.alloc(10_000)]);
    expect(tail.snapshot().bytes.length).toBe(0);
    expect(tail.totalBytes).toBe(10_003);
    expect(tail.droppedBytes).toBe(10_003);
    expect(tail.truncated).toBe(true);
  });

  it('ignores empty chunks', () => {
    const tail = new OutputTail(4);
    tail.append(new Uint8Array(0));
    expect(tail.totalBytes).toBe(0);
    expect(tail.truncated).toBe(false);
  });

  it('reproduces the exact tail for any mix of small and large chunks', () => {
    // Deterministic pseudo-random chunk sizes spanning the packing threshold.
    let seed = 12345;
    const next = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (const limit of [1, 100, 4095, 4096, 20_000, 70_000]) {
      const tail = new OutputTail(limit);
      const written: Buffer[] = [];
      for (let i = 0; i < 300; i++) {
        const size = next() % 3 === 0 ? 4096 + (next() % 30_000) : next() % 5000;
        const chunk = Buffer.alloc(size);
        for (let j = 0; j < size; j++) chunk[j] = 0x41 + ((i + j) % 26);
        written.push(chunk);
        tail.append(chunk);
        expect(tail.retainedBytes).toBeLessThanOrEqual(limit);
      }
      const all = Buffer.concat(written);
      const { bytes, droppedBytes } = tail.snapshot();
      expect(bytes).toEqual(all.subarray(all.length - Math.min(limit, all.length)));
      expect(tail.totalBytes).toBe(all.length);
      expect(droppedBytes).toBe(all.length - bytes.length);
    }
  });

  it('does not retain the chunks it dropped', () => {
    const tail = new OutputTail(10);
    const first = Buffer.alloc(5000, 0x61);
    tail.append(first);
    tail.append(Buffer.alloc(5000, 0x62));
    const { bytes } = tail.snapshot();
    expect(bytes.toString()).toBe('b'.repeat(10));
    // The retained view belongs to the second chunk's memory, never the first's.
    expect(bytes.buffer).not.toBe(first.buffer);
  });

  it('packs many tiny chunks without keeping one object per chunk', () => {
    const limit = 64 * 1024;
    const tail = new OutputTail(limit);
    for (let i = 0; i < 200_000; i++) tail.append(Uint8Array.of(0x30 + (i % 10)));
    const { bytes } = tail.snapshot();
    expect(bytes.length).toBe(limit);
    expect(tail.totalBytes).toBe(200_000);
    expect(bytes[bytes.length - 1]).toBe(0x30 + (199_999 % 10));
    expect(bytes[0]).toBe(0x30 + ((200_000 - limit) % 10));
  });

  describe('snapshot(fromByte)', () => {
    it('returns the retained bytes from an offset, across small packed and large chunks', () => {
      const tail = new OutputTail(1 << 20);
      const big = Buffer.alloc(5000, 'b');
      appendAll(tail, [utf8('aaaa'), big, utf8('cc'), utf8('dd')]);
      expect(tail.snapshot(0)).toMatchObject({ offset: 0, droppedBytes: 0 });
      const fromBig = tail.snapshot(4 + 4998);
      expect(fromBig.bytes.toString()).toBe('bbccdd');
      expect(fromBig.offset).toBe(5002);
      expect(tail.snapshot(5006).bytes.toString()).toBe('dd');
      expect(tail.snapshot(5008)).toMatchObject({ offset: 5008, droppedBytes: 0 });
      expect(tail.snapshot(5008).bytes.length).toBe(0);
      expect(tail.snapshot(9999)).toMatchObject({ offset: 5008 });
    });

    it('starts at the oldest retained byte when the offset was already dropped', () => {
      const tail = new OutputTail(5);
      appendAll(tail, [utf8('abc'), utf8('defg'), utf8('hi')]);
      const { bytes, droppedBytes, offset } = tail.snapshot(2);
      expect(bytes.toString()).toBe('efghi');
      expect(droppedBytes).toBe(4);
      expect(offset).toBe(4);
    });

    it('moves an offset inside a character forward to the next character', () => {
      const tail = new OutputTail(100);
      tail.append(utf8('a😀b'));
      const { bytes, offset } = tail.snapshot(2);
      expect(bytes.toString()).toBe('b');
      expect(offset).toBe(5);
      expect(offset + bytes.length).toBe(tail.totalBytes);
    });
  });
});
