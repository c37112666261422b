/** Why a policy could not be used. */
export type PolicyErrorCode =
  | 'POLICY_INVALID'
  | 'POLICY_UNREADABLE'
  | 'POLICY_TESTS_FAILED'
  | 'SHELL_UNSUPPORTED';

/** One problem in a policy file, located for an editor. Lines and columns are 1-based. */
export interface PolicyIssue {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** Dotted path of the offending key, e.g. `rules[2].decision`; empty for the document. */
  readonly key: string;
  readonly message: string;
}

/**
 * A policy that must not be used. Never recovered from by skipping the file
 * or falling back to an empty policy: callers refuse to start (or keep the
 * previous policy). `code` survives serialization where `instanceof` does not.
 */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';

  constructor(
    readonly code: PolicyErrorCode,
    message: string,
    readonly issues: readonly PolicyIssue[] = [],
  ) {
    super(issues.length > 0 ? `${message}\n${issues.map(formatIssue).join('\n')}` : message);
  }
}

/** `file:line:col: key: message`, the format editors and terminals link. */
export function formatIssue(issue: PolicyIssue): string {
  return `${issue.file}:${issue.line}:${issue.column}: ${issue.key ? `${issue.key}: ` : ''}${issue.message}`;
}
