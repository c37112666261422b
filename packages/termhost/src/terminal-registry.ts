import { randomUUID } from 'node:crypto';
import { TermhostError } from './errors.js';
import type { ProcessTerminal } from './process-terminal.js';
import type { CallerContext, TerminalId } from './terminal-spec.js';

/**
 * The host's terminals: their unguessable ids, the slots `maxTerminals`
 * counts (terminals being created or not yet fully released), lookup by
 * id within the caller's scope, the order of last use, reclaiming an exited
 * terminal when full (`reclaimExited`), and release.
 */
export class TerminalRegistry {
  readonly #maxTerminals: number;
  readonly #reclaimExited: boolean;
  readonly #terminals = new Map<TerminalId, ProcessTerminal>();
  /** Terminals being created or not yet fully released: what `maxTerminals` counts. */
  #slots = 0;
  /** Counts verbs, to order terminals by their last use. */
  #uses = 0;
  /** Releases under way, so that `closeAll` also waits for them. */
  readonly #releasing = new Map<ProcessTerminal, Promise<void>>();

  constructor(maxTerminals: number, reclaimExited: boolean) {
    this.#maxTerminals = maxTerminals;
    this.#reclaimExited = reclaimExited;
  }

  /** A new terminal id (a random UUID): a caller cannot guess another's. */
  newId(): TerminalId {
    return randomUUID();
  }

  /**
   * Takes a slot for a terminal of `scope`. When all are taken, releases the
   * exited terminal to reclaim first (see `reclaimExited`) and tries again,
   * calling `stillOpen` (which throws once the host closed) after each;
   * without one, `TERMINAL_LIMIT_REACHED`.
   */
  async reserve(scope: string, stillOpen: () => void): Promise<void> {
    while (this.#slots >= this.#maxTerminals) {
      const reclaimable = this.#reclaimExited ? this.#leastRecentlyUsedExited(scope) : undefined;
      if (reclaimable === undefined) throw this.#limitReached();
      await this.release(reclaimable);
      stillOpen();
    }
    this.#slots++;
  }

  /** Gives back a slot whose terminal was never added (its spawn failed). */
  unreserve(): void {
    this.#slots--;
  }

  /** Registers a spawned terminal in its reserved slot, as just used. */
  add(terminal: ProcessTerminal): void {
    this.touch(terminal);
    this.#terminals.set(terminal.id, terminal);
  }

  /** Marks `terminal` as used now (created, read, waited on or killed). */
  touch(terminal: ProcessTerminal): void {
    terminal.lastUsed = ++this.#uses;
  }

  /** The terminal `id` of the caller's scope; anything else is `TERMINAL_NOT_FOUND`. */
  lookup(id: TerminalId, caller: CallerContext): ProcessTerminal {
    const terminal = typeof id === 'string' ? this.#terminals.get(id) : undefined;
    if (terminal === undefined || terminal.scope !== (caller.scope ?? '')) {
      throw new TermhostError('TERMINAL_NOT_FOUND', `No terminal ${String(id)}`, { terminalId: id });
    }
    return terminal;
  }

  /** Every terminal of `scope` (all without one), those being released included. */
  inScope(scope?: string): ProcessTerminal[] {
    const inScope = (t: ProcessTerminal): boolean => scope === undefined || t.scope === scope;
    return [...this.#terminals.values(), ...this.#releasing.keys()].filter(inScope);
  }

  /** Forgets the terminal at once, then closes it; concurrent calls share one close. */
  release(terminal: ProcessTerminal): Promise<void> {
    const under = this.#releasing.get(terminal);
    if (under !== undefined) return under;
    if (this.#terminals.get(terminal.id) !== terminal) return Promise.resolve();
    this.#terminals.delete(terminal.id);
    const closing = terminal.close().finally(() => {
      this.#slots--;
      this.#releasing.delete(terminal);
    });
    this.#releasing.set(terminal, closing);
    return closing;
  }

  /** The exited terminal of `scope` to reclaim first (see `reclaimExited`), if any. */
  #leastRecentlyUsedExited(scope: string): ProcessTerminal | undefined {
    const exited = [...this.#terminals.values()].filter((t) => t.scope === scope && t.exitStatus !== null);
    if (exited.length === 0) return undefined;
    exited.sort((a, b) => a.lastUsed - b.lastUsed);
    // Usually the least recently used one's group is gone: one probe. Otherwise the first whose group is.
    return exited.find((terminal) => !terminal.groupAlive()) ?? exited[0];
  }

  #limitReached(): TermhostError {
    const running = [...this.#terminals.values()].filter((t) => t.exitStatus === null).length;
    const rule = this.#reclaimExited
      ? `none of them has exited (${running} running); exited terminals are reclaimed automatically, so stop one with kill or release it`
      : 'release one first';
    return new TermhostError(
      'TERMINAL_LIMIT_REACHED',
      `At most ${this.#maxTerminals} terminals may exist at once; ${rule}`,
      { maxTerminals: this.#maxTerminals, running, reclaimExited: this.#reclaimExited },
    );
  }
}
