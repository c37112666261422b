/**
 * The five terminal tools as MCP `Tool` objects: data, defined once. The
 * order is part of the contract (create, output, wait, kill, release).
 */

const terminalId = {
  type: 'string',
  minLength: 1,
  description: 'The id returned by terminal_create.',
} as const;

const exitStatusProperties = {
  exitCode: {
    type: ['integer', 'null'],
    minimum: 0,
    description: 'Exit code, or null when the command was ended by a signal.',
  },
  signal: { type: ['string', 'null'], description: 'Signal name such as "SIGTERM", or null.' },
  timedOut: {
    type: 'boolean',
    description: "True when termgate killed the command because the policy's timeout passed.",
  },
  processesLeft: {
    type: 'boolean',
    description:
      'Present and true when processes the command started still ran when it exited (background jobs, detached or setsid children); terminal_kill and terminal_release end them.',
  },
} as const;

const exitStatus = {
  type: 'object',
  properties: exitStatusProperties,
  required: ['exitCode', 'signal', 'timedOut'],
  additionalProperties: false,
} as const;

export const TOOL_NAMES = [
  'terminal_create',
  'terminal_output',
  'terminal_wait_for_exit',
  'terminal_kill',
  'terminal_release',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export interface ToolDefinition {
  readonly name: ToolName;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema: Readonly<Record<string, unknown>>;
  readonly annotations: Readonly<Record<string, boolean | string>>;
}

const empty = { type: 'object', properties: {}, additionalProperties: false } as const;

/** The arguments of the tools that take nothing but a terminal id. */
const terminalIdOnly = {
  type: 'object',
  properties: { terminalId },
  required: ['terminalId'],
  additionalProperties: false,
} as const;

export const TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  {
    name: 'terminal_create',
    title: 'Start a command',
    description:
      'Start a shell command in a new terminal and return its terminalId at once, without waiting for it to finish. ' +
      'Without "args", "command" is a bash command line (pipes, &&, redirects work). With "args", "command" is a program run directly with those arguments and no shell. ' +
      'stdin is empty and pagers are disabled, so commands never wait for input. ' +
      'Then call terminal_wait_for_exit or terminal_output, and always terminal_release when done. ' +
      'The command is checked against a policy first; a refusal explains why and nothing runs.',
    inputSchema: {
      type: 'object',
      properties: {
        command: {
          type: 'string',
          minLength: 1,
          description: 'A bash command line, or a program when "args" is given.',
        },
        args: {
          type: 'array',
          items: { type: 'string' },
          description: 'Arguments for "command" run as a program, without a shell.',
        },
        cwd: {
          type: 'string',
          minLength: 1,
          description: "Working directory (absolute, or relative to the server's).",
        },
        env: {
          type: 'object',
          additionalProperties: { type: 'string' },
          description: 'Environment variables to set, as a name → value map.',
        },
        outputByteLimit: {
          type: 'integer',
          minimum: 0,
          description: 'How many bytes of output to keep (the newest ones). The server caps it.',
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { terminalId: { type: 'string' } },
      required: ['terminalId'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'terminal_output',
    title: 'Read terminal output',
    description:
      "Read a terminal's output so far and its exit status (null while it still runs). Output keeps the newest bytes: " +
      '"truncated" is true when older bytes were dropped, and "droppedBytes" says how many. Does not wait.',
    inputSchema: terminalIdOnly,
    outputSchema: {
      type: 'object',
      properties: {
        output: { type: 'string' },
        truncated: { type: 'boolean' },
        totalBytes: { type: 'integer', minimum: 0 },
        droppedBytes: { type: 'integer', minimum: 0 },
        exitStatus: { anyOf: [exitStatus, { type: 'null' }] },
      },
      required: ['output', 'truncated', 'totalBytes', 'droppedBytes', 'exitStatus'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'terminal_wait_for_exit',
    title: 'Wait for a command to finish',
    description:
      'Wait until the command exits and return its exit code and signal. Returns after at most "timeoutSeconds" ' +
      '(default 30): if the command is still running then, "running" is true and the command keeps running; call ' +
      'again to keep waiting, or terminal_kill to stop it. New output is streamed as progress notifications when ' +
      'the client asks for progress.',
    inputSchema: {
      type: 'object',
      properties: {
        terminalId,
        timeoutSeconds: {
          type: 'number',
          exclusiveMinimum: 0,
          maximum: 3600,
          description: 'Longest time to wait, in seconds (default 30).',
        },
      },
      required: ['terminalId'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        running: { type: 'boolean', description: 'True when the wait timed out and the command still runs.' },
        ...exitStatusProperties,
      },
      required: ['running', 'exitCode', 'signal', 'timedOut'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'terminal_kill',
    title: 'Stop a command',
    description:
      'Stop the command and everything it started (SIGTERM, then SIGKILL after a grace period). The terminal stays ' +
      'readable: call terminal_output for the final output, then terminal_release.',
    inputSchema: terminalIdOnly,
    outputSchema: empty,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'terminal_release',
    title: 'Release a terminal',
    description:
      'Stop the command if it still runs and forget the terminal. Its id is invalid afterwards. Release every ' +
      'terminal you create once you have read what you need.',
    inputSchema: terminalIdOnly,
    outputSchema: empty,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
];

export const SERVER_INSTRUCTIONS =
  'termgate runs shell commands as terminal handles. terminal_create starts a command and returns a terminalId ' +
  'immediately; the output is not in that result. Reading it is a second call: terminal_wait_for_exit waits ' +
  '(at most timeoutSeconds, default 30; call it again while "running" is true) and terminal_output reads what the ' +
  'command wrote so far. terminal_kill stops a command; terminal_release frees the terminal and must be called ' +
  'for every terminal you create. Commands run non-interactively (empty stdin, no pager) under a security policy: ' +
  'a refused command did not run, and the refusal says why.';
