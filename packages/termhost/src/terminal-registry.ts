import { randomUUID } from 'node:crypto';
import { TermhostError } from './errors.js';
import type { ProcessTerminal } from './process-terminal.js';
import { type TerminalOwner, terminalOwner } from './terminal-owner.js';
import type { CallerContext, TerminalId } from './terminal-spec.js';

/** What the registry enforces (checked in `host-options.ts`). */
export interface RegistryLimits {
  /** Terminals of the whole server at once. */
  readonly maxTerminals: number;
  /** Terminals of one principal at once. */
  readonly maxTerminalsPerPrincipal: number;
  /** The output limits of one principal's terminals, summed; undefined: no ceiling of its own. */
  readonly maxOutputBytesPerPrincipal: number | undefined;
  readonly reclaimExited: boolean;
}

/** A slot taken by `reserve`: `add` fills it, `unreserve` gives it back. */
export interface Reservation {
  readonly owner: TerminalOwner;
  readonly outputBytes: number;
}

/** What one principal holds: slots and the output limits of their terminals. */
interface PrincipalUse {
  terminals: number;
  outputBytes: number;
}

/**
 * The host's terminals: their unguessable ids, the slots `maxTerminals`
 * counts (terminals being created or not yet fully released) for the
 * server and per principal, with each principal's reserved output bytes,
 * lookup by id for the caller's owner (scope and principal), the order of
 * last use, reclaiming an exited terminal of the same owner when full
 * (`reclaimExited`), and release.
 */
export class TerminalRegistry {
  readonly #limits: RegistryLimits;
  readonly #terminals = new Map<TerminalId, ProcessTerminal>();
  /** Terminals being created or not yet fully released: what `maxTerminals` counts. */
  #slots = 0;
  /** The same, per principal key, with their output limits; no entry: nothing held. */
  readonly #principals = new Map<string, PrincipalUse>();
  /** Counts verbs, to order terminals by their last use. */
  #uses = 0;
  /** Releases under way, so that `closeAll` also waits for them. */
  readonly #releasing = new Map<ProcessTerminal, Promise<void>>();

  constructor(limits: RegistryLimits) {
    this.#limits = limits;
  }

  /** A new terminal id (a random UUID): a caller cannot guess another's. */
  newId(): TerminalId {
    return randomUUID();
  }

  /**
   * Takes a slot for a terminal of `caller` that will retain up to
   * `outputBytes`. While the server's or the principal's limits leave no
   * room, releases the exited terminal of the same owner to reclaim first
   * (see `reclaimExited`) and tries again, calling `stillOpen` (which throws
   * once the host closed) after each; without one, `TERMINAL_LIMIT_REACHED`.
   */
  async reserve(caller: CallerContext, outputBytes: number, stillOpen: () => void): Promise<Reservation> {
    const owner = terminalOwner(caller);
    for (;;) {
      const refusal = this.#refusal(owner, outputBytes);
      if (refusal === null) break;
      const reclaimable = this.#limits.reclaimExited ? this.#leastRecentlyUsedExited(owner) : undefined;
      if (reclaimable === undefined) throw refusal;
      await this.release(reclaimable);
      stillOpen();
    }
    this.#slots++;
    const use = this.#principals.get(owner.principal) ?? { terminals: 0, outputBytes: 0 };
    use.terminals++;
    use.outputBytes += outputBytes;
    this.#principals.set(owner.principal, use);
    return { owner, outputBytes };
  }

  /** Gives back a slot whose terminal was never added (its spawn failed). */
  unreserve(reservation: Reservation): void {
    this.#giveBack(reservation.owner.principal, reservation.outputBytes);
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

  /**
   * The terminal `id` of the caller's owner (scope and principal); anything
   * else, another principal's terminal included, is the same
   * `TERMINAL_NOT_FOUND`, naming only the id the caller gave.
   */
  lookup(id: TerminalId, caller: CallerContext): ProcessTerminal {
    const terminal = typeof id === 'string' ? this.#terminals.get(id) : undefined;
    if (terminal === undefined || terminal.owner.owner !== terminalOwner(caller).owner) {
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
      this.#giveBack(terminal.owner.principal, terminal.spec.outputByteLimit);
      this.#releasing.delete(terminal);
    });
    this.#releasing.set(terminal, closing);
    return closing;
  }

  #giveBack(principal: string, outputBytes: number): void {
    this.#slots--;
    const use = this.#principals.get(principal);
    if (use === undefined) return;
    use.terminals--;
    use.outputBytes -= outputBytes;
    if (use.terminals === 0) this.#principals.delete(principal);
  }

  /** The exited terminal of `owner` to reclaim first (see `reclaimExited`), if any. */
  #leastRecentlyUsedExited(owner: TerminalOwner): ProcessTerminal | undefined {
    const exited = [...this.#terminals.values()].filter(
      (t) => t.owner.owner === owner.owner && t.exitStatus !== null,
    );
    if (exited.length === 0) return undefined;
    exited.sort((a, b) => a.lastUsed - b.lastUsed);
    // Usually the least recently used one's group is gone: one probe. Otherwise the first whose group is.
    return exited.find((terminal) => !terminal.groupAlive()) ?? exited[0];
  }

  /** Why a terminal of `owner` retaining `outputBytes` does not fit now, or null when it does. */
  #refusal(owner: TerminalOwner, outputBytes: number): TermhostError | null {
    const { maxTerminals, maxTerminalsPerPrincipal, maxOutputBytesPerPrincipal, reclaimExited } =
      this.#limits;
    const use = this.#principals.get(owner.principal) ?? { terminals: 0, outputBytes: 0 };
    // Only the caller's own terminals are counted in the answer: nothing about another principal's.
    const running = [...this.#terminals.values()].filter(
      (t) => t.owner.owner === owner.owner && t.exitStatus === null,
    ).length;
    const rule = reclaimExited
      ? `none of them has exited (${running} running); exited terminals are reclaimed automatically, so stop one with kill or release it`
      : 'release one first';
    const details = { running, reclaimExited };
    if (this.#slots >= maxTerminals) {
      return new TermhostError(
        'TERMINAL_LIMIT_REACHED',
        `At most ${maxTerminals} terminals may exist at once; ${rule}`,
        {
          ...details,
          maxTerminals,
        },
      );
    }
    if (use.terminals >= maxTerminalsPerPrincipal) {
      return new TermhostError(
        'TERMINAL_LIMIT_REACHED',
        `At most ${maxTerminalsPerPrincipal} terminals of one principal may exist at once; ${rule}`,
        { ...details, maxTerminalsPerPrincipal },
      );
    }
    if (
      maxOutputBytesPerPrincipal !== undefined &&
      use.outputBytes + outputBytes > maxOutputBytesPerPrincipal
    ) {
      return new TermhostError(
        'TERMINAL_LIMIT_REACHED',
        `The terminals of one principal may retain at most ${maxOutputBytesPerPrincipal} output bytes together (${use.outputBytes} are held, this one asks for ${outputBytes}: pass a smaller outputByteLimit); ${rule}`,
        { ...details, maxOutputBytesPerPrincipal, heldOutputBytes: use.outputBytes },
      );
    }
    return null;
  }
}
