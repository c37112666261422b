/** Chunks shorter than this are copied into a shared block instead of being kept as they are. */
const SMALL_CHUNK_BYTES = 4096;
/** Capacity of the block that collects small chunks. */
const BLOCK_BYTES = 16384;
/** A UTF-8 sequence has at most three continuation bytes. */
const MAX_CONTINUATION_BYTES = 3;
const EMPTY = new Uint8Array(0);

/** The retained bytes at one moment, cut so that they start on a character. */
export interface OutputTailSnapshot {
  readonly bytes: Buffer;
  /** Bytes written but not in `bytes`: dropped to respect the limit, plus any skipped to reach a character start. */
  readonly droppedBytes: number;
  /** Where `bytes` starts in the whole stream (`droppedBytes` unless a later start was asked for). */
  readonly offset: number;
}

/**
 * Keeps the newest `limit` bytes of a byte stream and exact counters.
 *
 * Memory stays within `limit` plus one appended chunk plus one 16 KiB block,
 * however many chunks arrive: chunks of 4 KiB or more are kept as they are
 * (no copy) and dropped whole from the front, the first one trimmed with
 * `subarray`; smaller ones are packed into blocks so that per-chunk overhead
 * cannot multiply the footprint. Appending never concatenates.
 */
export class OutputTail {
  readonly #limit: number;
  #chunks: Uint8Array[] = [];
  #head = 0;
  #retained = 0;
  #total = 0;
  #dropped = 0;
  /** The block that small chunks are packed into; its used part is the last entry of `#chunks`. */
  #block: Uint8Array | null = null;
  #blockUsed = 0;

  /** @param limit bytes to retain, a safe integer ≥ 0 */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Every byte ever appended. Monotonic. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Bytes currently held (≤ the limit). */
  get retainedBytes(): number {
    return this.#retained;
  }

  /**
   * Bytes written but not retained, plus the leading continuation bytes that
   * {@link snapshot} skips. Same value as `snapshot().droppedBytes`.
   */
  get droppedBytes(): number {
    return this.#dropped + this.#leadingContinuationBytes();
  }

  /** True once any byte has been dropped. Stays true. */
  get truncated(): boolean {
    return this.#dropped > 0;
  }

  /** Appends a chunk. The store keeps a reference to it: the caller must not modify it afterwards. */
  append(chunk: Uint8Array): void {
    const length = chunk.length;
    if (length === 0) return;
    this.#total += length;
    if (this.#limit === 0) {
      this.#dropped += length;
      return;
    }
    if (length < SMALL_CHUNK_BYTES) {
      this.#pack(chunk);
    } else {
      this.#sealBlock();
      this.#chunks.push(chunk);
    }
    this.#retained += length;
    this.#trim();
  }

  /**
   * The retained bytes as one buffer (≤ limit bytes). Once anything was dropped,
   * up to three leading UTF-8 continuation bytes are skipped (and counted as
   * dropped) so that the text starts on a character; for valid UTF-8,
   * `droppedBytes + bytes.length === totalBytes`.
   *
   * With `fromByte` (an offset in the whole stream), only the retained bytes
   * at or after it are returned, starting on a character: continuation bytes
   * at the cut are skipped too. `droppedBytes` still counts only what the
   * limit dropped; `offset` is where `bytes` starts in the stream.
   */
  snapshot(fromByte = 0): OutputTailSnapshot {
    const skip = this.#leadingContinuationBytes();
    const retainedStart = this.#dropped + skip;
    if (fromByte <= retainedStart) {
      const bytes = Buffer.concat(
        this.#head === 0 ? this.#chunks : this.#chunks.slice(this.#head),
        this.#retained,
      );
      return {
        bytes: skip === 0 ? bytes : bytes.subarray(skip),
        droppedBytes: retainedStart,
        offset: retainedStart,
      };
    }
    if (fromByte >= this.#total) {
      return { bytes: Buffer.alloc(0), droppedBytes: retainedStart, offset: this.#total };
    }
    // Collect only the chunks that hold bytes at or after `fromByte`.
    let position = this.#total;
    let first = this.#chunks.length;
    while (first > this.#head && position > fromByte) {
      first--;
      position -= this.#chunks[first]!.length;
    }
    const parts = this.#chunks.slice(first);
    let bytes = Buffer.concat(parts, this.#total - position).subarray(fromByte - position);
    let start = fromByte;
    let cut = 0;
    while (cut < MAX_CONTINUATION_BYTES && cut < bytes.length && (bytes[cut]! & 0xc0) === 0x80) cut++;
    if (cut > 0) {
      bytes = bytes.subarray(cut);
      start += cut;
    }
    return { bytes, droppedBytes: retainedStart, offset: start };
  }

  /** Continuation bytes (at most three) at the head of the retained bytes once something was dropped. */
  #leadingContinuationBytes(): number {
    if (this.#dropped === 0) return 0;
    let skip = 0;
    for (let i = this.#head; i < this.#chunks.length && skip < MAX_CONTINUATION_BYTES; i++) {
      const chunk = this.#chunks[i]!;
      for (let j = 0; j < chunk.length; j++) {
        if ((chunk[j]! & 0xc0) !== 0x80) return skip;
        if (++skip === MAX_CONTINUATION_BYTES) return skip;
      }
    }
    return skip;
  }

  #pack(chunk: Uint8Array): void {
    let offset = 0;
    while (offset < chunk.length) {
      let block = this.#block;
      if (block === null || this.#blockUsed === block.length) {
        block = new Uint8Array(BLOCK_BYTES);
        this.#block = block;
        this.#blockUsed = 0;
        this.#chunks.push(block.subarray(0, 0));
      }
      const take = Math.min(chunk.length - offset, block.length - this.#blockUsed);
      block.set(chunk.subarray(offset, offset + take), this.#blockUsed);
      this.#blockUsed += take;
      offset += take;
      const last = this.#chunks.length - 1;
      this.#chunks[last] = block.subarray(this.#chunks[last]!.byteOffset, this.#blockUsed);
    }
  }

  /** Closes the open block; a partly used one is copied to its exact size so no capacity is wasted. */
  #sealBlock(): void {
    const block = this.#block;
    if (block === null) return;
    this.#block = null;
    if (this.#blockUsed < block.length) {
      const last = this.#chunks.length - 1;
      this.#chunks[last] = this.#chunks[last]!.slice();
    }
  }

  #trim(): void {
    let excess = this.#retained - this.#limit;
    if (excess <= 0) return;
    this.#retained -= excess;
    this.#dropped += excess;
    while (excess > 0) {
      const first = this.#chunks[this.#head]!;
      if (first.length <= excess) {
        excess -= first.length;
        this.#chunks[this.#head] = EMPTY;
        this.#head++;
      } else {
        this.#chunks[this.#head] = first.subarray(excess);
        excess = 0;
      }
    }
    if (this.#head === this.#chunks.length) {
      this.#chunks = [];
      this.#head = 0;
      this.#block = null;
    } else if (this.#head >= 64 && this.#head * 2 >= this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
  }
}
