import type { TermhostError } from '@termgate/termhost';

/**
 * The policy's reason for a `GATE_DENIED` error, as the model-facing
 * refusal texts of MCP and ACP quote it after "Denied by policy: ". The
 * policy engine words its reasons as verdicts (`denied: …`); that word is
 * dropped here, so the refusal does not say it twice.
 */
export function gateDenialReason(error: TermhostError): string {
  const reason = error.details.reason;
  return typeof reason === 'string' ? reason.replace(/^denied: /i, '') : error.message;
}
