import type { TermhostError } from '@termgate/termhost';
import { gateDenialReason } from '../../gate-denial.js';

/**
 * Translates a local termhost error into text a model can act on. This is
 * the edge where string codes become tool-result errors.
 */
export function describeTermhostError(error: TermhostError): string {
  const details = error.details;
  switch (error.code) {
    case 'TERMINAL_NOT_FOUND':
      return `Unknown terminal id: it was never created here, was released, or had exited and was freed to make room for newer commands. Start a new command with terminal_create. (${error.message})`;
    case 'GATE_DENIED': {
      const reason = gateDenialReason(error);
      if (typeof details.approval === 'string') return approvalRefused(details.approval, reason);
      const ruleIds = Array.isArray(details.ruleIds) ? details.ruleIds : [];
      const rules = ruleIds.length > 0 ? ` Rules: ${ruleIds.join(', ')}.` : '';
      return `Denied by policy: ${reason}.${rules} Nothing was run. Do not retry the same command; choose another approach or ask the user.`;
    }
    case 'PROGRAM_NOT_FOUND':
      return `Program not found: ${error.message}. Check the name, or run it as a command line (omit "args") so that PATH lookups and shell syntax apply.`;
    case 'PERMISSION_DENIED':
      return `Permission denied: ${error.message}.`;
    case 'CWD_NOT_FOUND':
    case 'CWD_NOT_DIRECTORY':
      return `Bad working directory: ${error.message}. Pass an existing directory as "cwd".`;
    case 'TERMINAL_LIMIT_REACHED':
      return details.reclaimExited === true
        ? `Too many commands are running: ${error.message}. Stop one you no longer need with terminal_kill (or terminal_release), then try again.`
        : `Too many terminals are open: ${error.message}. Release terminals you no longer need with terminal_release, then try again.`;
    case 'HOST_CLOSED':
      return `The server is shutting down: ${error.message}.`;
    default:
      return `${error.code}: ${error.message}`;
  }
}

/** A command the policy asks a person about, and that was not approved: who said no, or why nobody could. */
function approvalRefused(outcome: string, reason: string): string {
  switch (outcome) {
    case 'deny':
      return `Not run: ${reason}. The user declined it; do not retry it unless the user asks you to.`;
    case 'cancelled':
    case 'timeout':
      return `Not run: ${reason}. Ask the user before trying it again.`;
    default:
      return `Not run: ${reason}. This client cannot ask the user for approval (it declares no form elicitation); ask the user to run the command themselves, or to change the policy.`;
  }
}
