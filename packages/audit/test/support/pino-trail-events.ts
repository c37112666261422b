/**
 * The events `fixtures/pino-written-trail/` was written with, through the
 * pino-based writer termgate had before `FileAuditSink` (at commit 925acc0,
 * `CheckpointingAuditSink` every 4 records, rotation at 2,500 bytes, a clock
 * starting at 2026-12-02T12:00:00Z that advances 1,250 ms per reading). They
 * mix what the gate writes with values JSON treats specially (undefined,
 * functions, a Date, NaN, control characters, long strings).
 */
const id = '3f1c0e2a-8d4b-4c55-9a1e-0b7f6d2c9e11';
const caller = {
  client: { name: 'claude-code', version: '2.1.0' },
  protocol: '2026-07-28',
  scope: 'session-1',
};
export const PINO_TRAIL_EVENTS: readonly Readonly<Record<string, unknown>>[] = [
  {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['start'],
      action: 'server-start',
      outcome: 'success',
    },
    process: { pid: 4242 },
    host: { hostname: 'build-host' },
    termgate: {
      version: '0.1.0',
      policy: { path: '/etc/termgate/policy.yaml', sha256: 'a'.repeat(64) },
      sandbox: {
        mode: 'required',
        network: ['registry.npmjs.org', 'github.com'],
        layers: { identity: 'uid 65534', filter: 'seccomp' },
      },
    },
  },
  {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['info', 'allowed'],
      action: 'terminal-create',
      outcome: 'success',
      reason: 'allowed by rule "git-read"',
    },
    process: {
      command_line: "git log --oneline | head -3 && echo 'it''s \"quoted\"'",
      args: ['bash', '-lc', 'git log'],
      working_directory: '/home/dev/project',
    },
    rule: { id: ['git-read'] },
    termgate: {
      terminal_id: id,
      verb: 'create',
      decision: 'allow',
      env_names: ['HOME', 'PATH'],
      subcommands: [
        { program: 'git', argv: ['git', 'log', '--oneline'] },
        { program: 'head', argv: ['head', '-3'] },
      ],
      sandbox: { sha256: 'b'.repeat(64) },
      policy: { sha256: 'a'.repeat(64) },
      ...caller,
    },
  },
  {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['start'],
      action: 'terminal-spawn',
      outcome: 'success',
    },
    process: { pid: 5151 },
    termgate: { terminal_id: id, sandbox: { sha256: 'b'.repeat(64) }, ...caller },
  },
  {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['end'],
      action: 'terminal-exit',
      outcome: 'failure',
      duration: 1234567890,
    },
    process: { pid: 5151, exit_code: 1 },
    termgate: {
      terminal_id: id,
      signal: null,
      timed_out: false,
      total_bytes: 0,
      dropped_bytes: 0,
      output_sha256: 'c'.repeat(64),
      processes_left: true,
      ...caller,
    },
  },
  {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['info', 'denied'],
      action: 'terminal-create',
      outcome: 'failure',
      reason: 'écrit hors du projet: ✓ 🚀 \u2028 tab\t newline\n ctrl\u0001 del\u007f back\\slash "quote"',
    },
    process: { command_line: 'rm -rf /'.repeat(20), args: [], working_directory: '/' },
    termgate: {
      terminal_id: 'x'.repeat(128),
      verb: 'create',
      decision: 'deny',
      env_names: [],
      subcommands: [],
      truncated: { 'process.command_line': { length: 9000, sha256: 'd'.repeat(64) } },
    },
  },
  {
    event: {
      kind: 'event',
      category: ['network'],
      type: ['connection', 'denied'],
      action: 'network-refused',
      outcome: 'failure',
      reason: "evil.example is not in the sandbox's network allowlist (refused 3 more times within 1000 ms)",
    },
    destination: { domain: 'evil.example', port: 443 },
    http: { request: { method: 'CONNECT' } },
    termgate: { terminal_id: id, refusals: 4, window_ms: 1000 },
    rule: { id: ['sandbox.network.allow'] },
  },
  {
    event: { kind: 'event', action: 'edge-values', duration: 0.5 },
    numbers: {
      big: 1e21,
      small: 1e-7,
      negative: -0,
      max: Number.MAX_SAFE_INTEGER,
      nan: Number.NaN,
      inf: Number.POSITIVE_INFINITY,
    },
    nested: {
      undefinedMember: undefined,
      nullMember: null,
      emptyObject: {},
      emptyArray: [],
      holes: [undefined, null, () => 1],
      when: new Date('2026-01-01T00:00:00.000Z'),
    },
    skipped: undefined,
    fn: () => 1,
    flag: true,
    count: 7,
    note: 'a top-level string with "quotes" and \\ and é',
    longNote: 'long '.repeat(30),
    ctrlNote: 'line\nbreak',
    nothing: null,
    list: ['a', 1, false, null],
  },
  {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['info'],
      action: 'terminal-answer',
      outcome: 'unknown',
      reason: 'waiting for the person',
      duration: 0,
    },
    process: { command_line: 'npm publish' },
    termgate: {
      terminal_id: id,
      verb: 'create',
      decision: 'ask',
      approval: { id: 'appr-1', outcome: 'pending', channel: 'mcp-elicitation', latency_ms: 0 },
      ...caller,
    },
  },
  {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['info', 'denied'],
      action: 'terminal-kill',
      outcome: 'failure',
      reason: 'no such terminal',
    },
    process: { command_line: 'sleep 100' },
    termgate: { terminal_id: 'gone', verb: 'kill', decision: 'deny' },
  },
  {
    event: {
      kind: 'event',
      category: ['process'],
      type: ['end'],
      action: 'server-stop',
      outcome: 'success',
      reason: 'stdin closed',
    },
    process: { pid: 4242 },
  },
];

/** `service` of every record of that trail. */
export const PINO_TRAIL_SERVICE = { version: '0.1.0' } as const;
