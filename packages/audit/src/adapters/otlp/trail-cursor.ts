import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { isHex64 } from '../../chain.js';

/** The last record a collector confirmed: its `seq` and `hash`. */
export interface CursorPosition {
  readonly seq: number;
  readonly hash: string;
}

/**
 * Where an export stands, persisted in one small JSON file
 * (`{"seq":N,"hash":"…"}`): the last record the collector accepted. Stored
 * beside the trail by default (`defaultCursorPath`), created mode 0600, as
 * the trail is; replaced atomically (write a temporary file, fsync, rename,
 * fsync the directory), so a crash leaves the old position or the new one,
 * never a torn one. A position that moves back is refused.
 *
 * Export is at-least-once: the position is saved after the collector
 * answered, so a crash between the two sends those records again.
 */
export class TrailCursor {
  private constructor(
    readonly path: string,
    private current: CursorPosition | null,
  ) {}

  /** Reads the cursor at `path`; a missing file is "nothing exported yet". A malformed one throws. */
  static open(path: string): TrailCursor {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new TrailCursor(path, null);
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`${path}: the export cursor is not JSON`);
    }
    const { seq, hash } = (parsed ?? {}) as { seq?: unknown; hash?: unknown };
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1 || !isHex64(hash)) {
      throw new Error(`${path}: the export cursor must be {"seq": N, "hash": "<64 hex>"}`);
    }
    return new TrailCursor(path, { seq, hash });
  }

  /** The last exported record, or null before the first export. */
  get position(): CursorPosition | null {
    return this.current;
  }

  /** Persists `position` (durably, see above); throws when it is behind the current one. */
  advance(position: CursorPosition): void {
    if (this.current !== null && position.seq < this.current.seq) {
      throw new Error(`export cursor cannot move back from seq ${this.current.seq} to ${position.seq}`);
    }
    const temporary = `${this.path}.tmp`;
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeSync(fd, `${JSON.stringify({ seq: position.seq, hash: position.hash })}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.path);
    const dir = openSync(dirname(this.path), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
    this.current = position;
  }
}

/**
 * The default cursor of the trail at `trail` (a file or a rotated trail's
 * directory): `audit.otlp-cursor` beside `audit.jsonl`, `DIR/otlp-cursor`
 * inside a directory. Neither name is one the trail's readers take for a
 * segment (`trail-files.ts`).
 */
export function defaultCursorPath(trail: string, isDirectory: boolean): string {
  if (isDirectory) return join(trail, 'otlp-cursor');
  const name = basename(trail, extname(trail));
  return join(dirname(trail), `${name}.otlp-cursor`);
}
