/**
 * The conformance checks that cannot apply to termgate, a tools-only server
 * whose five tools are its terminals, and why (docs/HTTP.md lists them for
 * users). A scenario named with `checks: 'all'` needs something termgate
 * does not offer in every check; otherwise only the listed check ids may
 * fail. `packages/cli/test/e2e/http-conformance.test.ts` fails on any other
 * failing check, and on an entry here that passes (a stale entry).
 */
export interface NotApplicable {
  readonly checks: 'all' | readonly string[];
  readonly why: string;
}

const FIXTURE_TOOL =
  "calls one of the suite's own fixture tools (test_*), which a server of real tools does not have";
const NO_PROMPTS = 'needs prompts: termgate offers tools only';
const NO_RESOURCES = 'needs resources: termgate offers tools only';
const NO_TASKS =
  'the tasks extension (not scored for 2026-07-28) needs its fixture tools and the tasks capability';

/** By scenario, for both requirement sets (2026-07-28 and 2025-11-25). */
export const NOT_APPLICABLE: Readonly<Record<string, NotApplicable>> = {
  'completion-complete': {
    checks: 'all',
    why: 'needs completion/complete: termgate has no prompts or resource templates to complete',
  },
  'logging-set-level': {
    checks: 'all',
    why: 'needs logging/setLevel: termgate logs to its operator (stderr), not to the client',
  },
  'tools-call-simple-text': { checks: 'all', why: FIXTURE_TOOL },
  'tools-call-image': { checks: 'all', why: FIXTURE_TOOL },
  'tools-call-audio': { checks: 'all', why: FIXTURE_TOOL },
  'tools-call-embedded-resource': { checks: 'all', why: FIXTURE_TOOL },
  'tools-call-mixed-content': { checks: 'all', why: FIXTURE_TOOL },
  'tools-call-error': { checks: 'all', why: FIXTURE_TOOL },
  'tools-call-with-progress': {
    checks: 'all',
    why: `${FIXTURE_TOOL}; termgate's progress over HTTP is proven by packages/cli/test/e2e/http-client.test.ts`,
  },
  'tools-call-with-logging': { checks: 'all', why: `${FIXTURE_TOOL}, and logging/setLevel` },
  'tools-call-sampling': { checks: 'all', why: FIXTURE_TOOL },
  'tools-call-elicitation': {
    checks: 'all',
    why: `${FIXTURE_TOOL}; termgate elicits only for a command its policy puts on ask (http-client.test.ts)`,
  },
  'elicitation-sep1034-defaults': { checks: 'all', why: FIXTURE_TOOL },
  'elicitation-sep1330-enums': { checks: 'all', why: FIXTURE_TOOL },
  'json-schema-2020-12': { checks: 'all', why: FIXTURE_TOOL },
  'resources-list': { checks: 'all', why: NO_RESOURCES },
  'resources-read-text': { checks: 'all', why: NO_RESOURCES },
  'resources-read-binary': { checks: 'all', why: NO_RESOURCES },
  'resources-templates-read': { checks: 'all', why: NO_RESOURCES },
  'resources-subscribe': { checks: 'all', why: NO_RESOURCES },
  'resources-unsubscribe': { checks: 'all', why: NO_RESOURCES },
  'prompts-list': { checks: 'all', why: NO_PROMPTS },
  'prompts-get-simple': { checks: 'all', why: NO_PROMPTS },
  'prompts-get-with-args': { checks: 'all', why: NO_PROMPTS },
  'prompts-get-embedded-resource': { checks: 'all', why: NO_PROMPTS },
  'prompts-get-with-image': { checks: 'all', why: NO_PROMPTS },
  'input-required-result-basic-elicitation': { checks: 'all', why: FIXTURE_TOOL },
  'input-required-result-basic-sampling': { checks: 'all', why: FIXTURE_TOOL },
  'input-required-result-basic-list-roots': { checks: 'all', why: FIXTURE_TOOL },
  'input-required-result-request-state': { checks: 'all', why: FIXTURE_TOOL },
  'input-required-result-multiple-input-requests': { checks: 'all', why: FIXTURE_TOOL },
  'input-required-result-multi-round': { checks: 'all', why: FIXTURE_TOOL },
  'input-required-result-non-tool-request': {
    checks: 'all',
    why: `${NO_PROMPTS} (it asks through prompts/get)`,
  },
  'input-required-result-result-type': { checks: 'all', why: FIXTURE_TOOL },
  'input-required-result-tampered-state': {
    checks: 'all',
    why: `${FIXTURE_TOOL}; termgate's own tampered-state attacks are packages/cli/test/approval/request-state-attacks.test.ts`,
  },
  'input-required-result-capability-check': { checks: 'all', why: FIXTURE_TOOL },
  caching: {
    checks: [
      'sep-2549-prompts-list-caching-hints',
      'sep-2549-resources-list-caching-hints',
      'sep-2549-resources-templates-list-caching-hints',
    ],
    why: `${NO_PROMPTS} or resources (the tools/list and server/discover hints pass)`,
  },
  'server-stateless': {
    checks: [
      'sep-2575-server-rejects-undeclared-capability',
      'sep-2575-missing-capability-http-400',
      'sep-2575-http-server-no-independent-requests-on-stream',
      'sep-2575-server-no-log-without-loglevel',
    ],
    why: 'the four are "not testable" without the diagnostic fixture tools test_missing_capability, test_streaming_elicitation and test_logging_tool',
  },
  'http-custom-header-server-validation': {
    checks: 'all',
    why: 'needs a tool whose input schema has x-mcp-header annotations (pending, not scored); termgate declares none',
  },
  'tasks-lifecycle': { checks: 'all', why: NO_TASKS },
  'tasks-capability-negotiation': { checks: 'all', why: NO_TASKS },
  'tasks-wire-fields': { checks: 'all', why: NO_TASKS },
  'tasks-request-state-removal': { checks: 'all', why: NO_TASKS },
  'tasks-mrtr-input': { checks: 'all', why: NO_TASKS },
  'tasks-request-headers': { checks: 'all', why: NO_TASKS },
  'tasks-dispatch-and-envelope': { checks: 'all', why: NO_TASKS },
  'tasks-required-task-error': { checks: 'all', why: NO_TASKS },
  'tasks-mrtr-composition': { checks: 'all', why: NO_TASKS },
};

/** Scenarios that must run and pass every check, per requirement set: the ones that apply to a tools-only server. */
export const MUST_PASS: Readonly<Record<'2026-07-28' | '2025-11-25', readonly string[]>> = {
  '2026-07-28': [
    'server-stateless',
    'tools-list',
    'server-sse-multiple-streams',
    'sep-2164-resource-not-found',
    'dns-rebinding-protection',
    'input-required-result-missing-input-response',
    'input-required-result-unsupported-methods',
    'input-required-result-ignore-extra-params',
    'input-required-result-validate-input',
    'http-header-validation',
  ],
  '2025-11-25': [
    'server-initialize',
    'ping',
    'tools-list',
    'server-sse-multiple-streams',
    'dns-rebinding-protection',
    'server-session-lifecycle',
  ],
};
