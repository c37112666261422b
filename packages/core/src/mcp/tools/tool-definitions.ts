import { DEFAULT_OUTPUT_CHARS, MIN_OUTPUT_CHARS } from './output-budget.js';

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

/** How long terminal_create waits for the command when the call names no `waitSeconds`. */
export const DEFAULT_CREATE_WAIT_SECONDS = 10;

const maxOutputChars = {
  type: 'integer',
  minimum: MIN_OUTPUT_CHARS,
  description: `Longest result, in characters (default ${DEFAULT_OUTPUT_CHARS}).`,
} as const;

/** What create and wait return about a command: status and the output not read before. */
const runProperties = {
  running: {
    type: 'boolean',
    description: 'True when the command was still running when the call returned.',
  },
  ...exitStatusProperties,
  output: { type: 'string', description: 'Output not returned before (stdout and stderr merged).' },
  totalBytes: { type: 'integer', minimum: 0, description: 'Bytes the command has written in all.' },
} as const;

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
    title: 'Run a command',
    description:
      `Run a shell command and wait up to "waitSeconds" (default ${DEFAULT_CREATE_WAIT_SECONDS}) for it. ` +
      'If it finishes, the result has its exit code and output and nothing more is needed. ' +
      'If not, it keeps running: the result has running: true, the output so far and a terminalId for ' +
      'terminal_wait_for_exit (more output and the exit) or terminal_kill. ' +
      'For servers and watchers pass waitSeconds 0-2. ' +
      'Without "args", "command" is a bash command line; with "args", a program run without a shell. ' +
      'stdin is empty and pagers are off. Output longer than maxOutputChars keeps its start and end, and a ' +
      'marker says how to read the middle. A policy checks every command; a refusal says why and nothing ran.',
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
        waitSeconds: {
          type: 'number',
          minimum: 0,
          maximum: 3600,
          description: `Seconds to wait for the command to finish (default ${DEFAULT_CREATE_WAIT_SECONDS}; 0 returns at once).`,
        },
        maxOutputChars,
        outputByteLimit: {
          type: 'integer',
          minimum: 0,
          description: 'Bytes of output the terminal keeps (the newest). The server caps it.',
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { terminalId: { type: 'string' }, ...runProperties },
      required: ['terminalId', 'running', 'exitCode', 'signal', 'timedOut', 'output', 'totalBytes'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'terminal_output',
    title: 'Read terminal output',
    description:
      "Read a terminal's whole retained output (its newest bytes) and exit status (null while running), without " +
      'waiting. Long output keeps its start and end; pass "fromByte" from a marker to read on from that byte.',
    inputSchema: {
      type: 'object',
      properties: {
        terminalId,
        fromByte: {
          type: 'integer',
          minimum: 0,
          description:
            'Read from this byte of the output on, as a marker says (default: all retained output).',
        },
        maxOutputChars,
      },
      required: ['terminalId'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        output: { type: 'string' },
        truncated: {
          type: 'boolean',
          description: 'True once the oldest bytes were dropped to keep the limit.',
        },
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
    title: 'Wait for a command',
    description:
      'Wait for a command that terminal_create left running. Returns the output written since your last read ' +
      'and the exit status; after "timeoutSeconds" (default 30) it returns running: true and the command keeps ' +
      'running: call again, or terminal_kill to stop it.',
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
        maxOutputChars,
      },
      required: ['terminalId'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: runProperties,
      required: ['running', 'exitCode', 'signal', 'timedOut', 'output', 'totalBytes'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'terminal_kill',
    title: 'Stop a command',
    description:
      'Stop a command and everything it started (SIGTERM, then SIGKILL). The terminal stays readable with ' +
      'terminal_output.',
    inputSchema: terminalIdOnly,
    outputSchema: empty,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'terminal_release',
    title: 'Release a terminal',
    description:
      'Stop the command if it still runs and free its terminal; the id is invalid afterwards. Optional for ' +
      'finished commands: the server frees those when it needs room.',
    inputSchema: terminalIdOnly,
    outputSchema: empty,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
];

export const SERVER_INSTRUCTIONS =
  'termgate runs shell commands under a security policy. terminal_create runs a command and waits for it ' +
  `(waitSeconds, default ${DEFAULT_CREATE_WAIT_SECONDS}): a short command needs that one call. A longer one ` +
  'returns a terminalId: terminal_wait_for_exit returns its new output and exit status, terminal_kill stops it. ' +
  'Commands run non-interactively (empty stdin, no pager); a refused command did not run, and the refusal says why.';

/**
 * What the policy's sandbox means for a model, when it is on (`null`
 * when it is off): whether git dirs are read-only, whether `/tmp` is
 * private, and the network commands get.
 */
export interface SandboxFacts {
  /** The confinement tier that runs commands (docs/SANDBOX-TIERS.md): its failures read differently. */
  readonly tier: 'namespaces' | 'landlock';
  readonly protectGit: boolean;
  readonly privateTmp: boolean;
  readonly network: 'none' | 'all' | 'allowlist';
}

/** One sentence per consequence a model would otherwise meet as a bare error. */
export function sandboxSentences(sandbox: SandboxFacts): string[] {
  const sentences = [
    'Commands run in a sandbox: only the workspace and the paths the policy makes writable can be written.',
  ];
  const landlock = sandbox.tier === 'landlock';
  if (sandbox.protectGit) {
    sentences.push(
      `Git directories (.git) are read-only, so git commit, git add and other commands that write them fail with "${landlock ? 'Permission denied' : 'Read-only file system'}": ask the user to run those.`,
    );
  }
  if (sandbox.network === 'allowlist') {
    sentences.push(
      'The network reaches only the hosts the policy allowlists, through a proxy (HTTP_PROXY/HTTPS_PROXY are set): a download from any other host is refused.',
    );
  } else if (sandbox.network === 'none') {
    sentences.push('There is no network: downloads and other connections fail.');
  }
  if (landlock) {
    sentences.push(
      '/tmp is not writable: use $TMPDIR, a directory of your own. Nothing can listen on a TCP port, so a dev server cannot be started here.',
    );
  } else if (sandbox.privateTmp) {
    sentences.push("/tmp is private to these commands and starts empty: it is not the user's /tmp.");
  }
  return sentences;
}

/** The `instructions` of initialize and server/discover: the sandbox's sentences appended when it is on. */
export function serverInstructions(sandbox: SandboxFacts | null): string {
  return sandbox === null
    ? SERVER_INSTRUCTIONS
    : `${SERVER_INSTRUCTIONS} ${sandboxSentences(sandbox).join(' ')}`;
}

/** The tool list: terminal_create's description says what the sandbox means when it is on. */
export function toolDefinitions(sandbox: SandboxFacts | null): readonly ToolDefinition[] {
  if (sandbox === null) return TOOL_DEFINITIONS;
  return TOOL_DEFINITIONS.map((tool) =>
    tool.name === 'terminal_create'
      ? { ...tool, description: `${tool.description} ${sandboxSentences(sandbox).join(' ')}` }
      : tool,
  );
}
