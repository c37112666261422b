import type { ApprovalOutcome, ApprovalQuestion } from '@termgate/termhost';

/**
 * The question as a person reads it, shared by every channel: the exact
 * line, where it runs, the variable names set, the rule that put it to a
 * person (`Policy rule: ask-git-push`: a rule, not who asks) and its reason.
 */
export function approvalMessage(question: ApprovalQuestion): string {
  // The policy's rule that put the line to a person; the person is whoever reads this.
  const rules = question.ruleIds.length > 0 ? question.ruleIds.join(', ') : "none (the policy's default)";
  const env = question.envNames.length > 0 ? question.envNames.join(', ') : '(none)';
  return [
    'termgate asks before running this command. Approve only if you want exactly this to run.',
    '',
    `Command: ${question.commandLine}`,
    `Directory: ${question.cwd}`,
    `Environment variables set: ${env}`,
    `Policy rule: ${rules}`,
    `Why: ${question.reason}`,
  ].join('\n');
}

/** The choices offered, in order. `scope` completes "allow this exact line for the rest of …". */
export function approvalChoices(scope: string): { const: Choice; title: string }[] {
  return [
    { const: 'allow_once', title: 'Allow once' },
    { const: 'allow_always', title: `Allow this exact line (same directory) for the rest of ${scope}` },
    { const: 'deny', title: 'Deny' },
  ];
}

type Choice = 'allow_once' | 'allow_always' | 'deny';

/** The elicitation (form mode) that asks `question`, for MCP (both eras). */
export function approvalElicitation(question: ApprovalQuestion): Record<string, unknown> {
  return {
    mode: 'form',
    message: approvalMessage(question),
    requestedSchema: {
      type: 'object',
      properties: {
        decision: {
          type: 'string',
          title: 'Run this command?',
          description: question.commandLine,
          oneOf: approvalChoices("this server's life"),
        },
      },
      required: ['decision'],
    },
  };
}

/**
 * The outcome an elicitation result means, or `null` when it is not a
 * well-formed answer. `decline` is a person's no; `cancel` a dismissal.
 * Unknown extra fields are ignored.
 */
export function elicitationOutcome(result: unknown): ApprovalOutcome | null {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return null;
  const { action, content } = result as { action?: unknown; content?: unknown };
  if (action === 'decline') return 'deny';
  if (action === 'cancel') return 'cancelled';
  if (action !== 'accept' || typeof content !== 'object' || content === null) return null;
  const decision = (content as { decision?: unknown }).decision;
  return decision === 'allow_once' || decision === 'allow_always' || decision === 'deny' ? decision : null;
}
