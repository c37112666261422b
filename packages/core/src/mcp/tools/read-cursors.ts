/** Cursors kept at most; beyond it the oldest is forgotten (its next wait then returns all retained output). */
const MAX_CURSORS = 4096;

/**
 * Per terminal, the byte offset up to which a tool result has shown its
 * output: where the next terminal_wait_for_exit starts reading.
 *
 * Contract: a cursor only moves forward; an unknown terminal's cursor is 0;
 * memory stays bounded even when terminals vanish without a release through
 * this connection (reclaimed, or the host closed).
 */
export class ReadCursors {
  private readonly cursors = new Map<string, number>();

  get(terminalId: string): number {
    return this.cursors.get(terminalId) ?? 0;
  }

  advance(terminalId: string, toByte: number): void {
    const current = this.cursors.get(terminalId);
    if (current !== undefined && current >= toByte) return;
    this.cursors.delete(terminalId);
    this.cursors.set(terminalId, toByte);
    if (this.cursors.size > MAX_CURSORS) {
      const oldest = this.cursors.keys().next().value;
      if (oldest !== undefined) this.cursors.delete(oldest);
    }
  }

  forget(terminalId: string): void {
    this.cursors.delete(terminalId);
  }
}
