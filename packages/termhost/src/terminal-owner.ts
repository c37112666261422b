import type { CallerContext } from './terminal-spec.js';

/**
 * Who a terminal belongs to, as keys the registry compares: the principal
 * (issuer and subject; `''` for a caller without one, the anonymous
 * principal) and the owner (that principal within the caller's scope). Two
 * callers see the same terminals exactly when their owner keys are equal.
 * JSON arrays, so that no issuer or subject can be spelled to collide with another.
 */
export interface TerminalOwner {
  /** What the per-principal limits count by. */
  readonly principal: string;
  /** What a lookup must match: the scope and the principal. */
  readonly owner: string;
}

export function terminalOwner(caller: CallerContext): TerminalOwner {
  const { principal } = caller;
  const principalKey = principal === undefined ? '' : JSON.stringify([principal.issuer, principal.subject]);
  return { principal: principalKey, owner: JSON.stringify([caller.scope ?? '', principalKey]) };
}
