import { mkdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { auditField, verifyAuditFile, verifyAuditLines } from '@termgate/audit';
import { FileAuditSink, InMemoryAuditSink } from '@termgate/audit/adapters';
import {
  type CommandRequest,
  type PolicyDecision,
  PolicyGate,
  type SandboxPolicy,
  SandboxProfiler,
} from '@termgate/policy';
import type { GateVerb, SandboxProfile } from '@termgate/termhost';
import { OrderedSink } from './support/ordered-sink.js';
import { gateRequest, MCP_CALLER } from './support/requests.js';
import { allow, deny, TableJudge } from './support/table-judge.js';
import { tempDir } from './support/temp-dir.js';

const POLICY = { path: '/etc/termgate/policy.yaml', sha256: 'a'.repeat(64) };

const judgeTable = (onJudge?: () => void) =>
  new TableJudge(
    [
      {
        match: 'npm test',
        decision: allow('npm test is allowed by rule npm-test', ['npm-test'], {
          subcommands: [{ program: 'npm', argv: ['npm', 'test'], via: [], range: [0, 8] }],
          resolvedCwd: '/real/project',
        }),
      },
      {
        match: /^rm /,
        decision: deny('rm is denied by rule no-rm', ['no-rm'], {
          subcommands: [{ program: 'rm', argv: ['rm', '-rf', '/'], via: [] }],
        }),
      },
      { match: 'git', decision: allow('git status is allowed', ['git-read']) },
    ],
    undefined,
    onJudge,
  );

describe('PolicyGate: create', () => {
  test('judges the resolved spec, records the decision, then answers with the resolved cwd', () => {
    const log: string[] = [];
    const judge = judgeTable(() => log.push('judge'));
    const sink = new OrderedSink(log);
    const gate = new PolicyGate(judge, sink, POLICY);

    const answer = gate.decide(gateRequest('create', 'npm test', { env: { CI: '1' } }));
    log.push('returned');

    expect(log).toEqual(['judge', 'append terminal-create', 'returned']);
    expect(answer).toEqual({
      allow: true,
      reason: 'npm test is allowed by rule npm-test',
      cwd: '/real/project',
    });
    expect(judge.requests).toEqual([
      { command: 'npm test', args: null, cwd: '/work/project', env: { CI: '1' } },
    ]);
    const [record] = sink.inner.records;
    expect(record).toMatchObject({
      event: {
        kind: 'event',
        category: ['process'],
        type: ['info', 'allowed'],
        action: 'terminal-create',
        outcome: 'success',
        reason: 'npm test is allowed by rule npm-test',
      },
      process: {
        command_line: 'npm test',
        args: ['bash', '--noprofile', '--norc', '-c', 'npm test'],
        working_directory: '/real/project',
      },
      rule: { id: ['npm-test'] },
      termgate: {
        terminal_id: 'term-0123456789abcdef',
        verb: 'create',
        decision: 'allow',
        env_names: ['CI'],
        cwd_requested: '/work/project',
        subcommands: [{ program: 'npm', argv: ['npm', 'test'], via: [], range: [0, 8] }],
        policy: { sha256: POLICY.sha256 },
        client: { name: 'claude-code', version: '2.1.0' },
        protocol: 'mcp/2026-07-28',
      },
    });
  });

  test('a deny is answered with its reason and rule ids, and recorded as a failure', () => {
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(judgeTable(), sink, POLICY);
    expect(gate.decide(gateRequest('create', 'rm -rf /'))).toEqual({
      allow: false,
      reason: 'rm is denied by rule no-rm',
      ruleIds: ['no-rm'],
    });
    expect(sink.records[0]).toMatchObject({
      event: { type: ['info', 'denied'], outcome: 'failure', reason: 'rm is denied by rule no-rm' },
      rule: { id: ['no-rm'] },
      termgate: { decision: 'deny', subcommands: [{ program: 'rm' }] },
    });
  });

  test('an argv-form spec is judged as a program with args and recorded shell-quoted', () => {
    const judge = judgeTable();
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(judge, sink, POLICY);
    expect(
      gate.decide(gateRequest('create', 'git', { args: ['log', '--format=%H %s', "it's"] })),
    ).toMatchObject({
      allow: true,
    });
    expect(judge.requests[0]).toMatchObject({ command: 'git', args: ['log', '--format=%H %s', "it's"] });
    expect(auditField(sink.records[0]!, 'process.command_line')).toBe(`git log '--format=%H %s' 'it'\\''s'`);
    expect(auditField(sink.records[0]!, 'process.args')).toEqual(['git', 'log', '--format=%H %s', "it's"]);
  });

  test('a judge that throws is a deny with the reason, and is recorded', () => {
    const judge = judgeTable();
    judge.throwing = new Error('parser crashed');
    const sink = new InMemoryAuditSink();
    const answer = new PolicyGate(judge, sink, POLICY).decide(gateRequest('create', 'npm test'));
    expect(answer).toEqual({
      allow: false,
      reason: 'policy engine failed: parser crashed; nothing was run',
      ruleIds: [],
    });
    expect(sink.records[0]).toMatchObject({ termgate: { decision: 'deny' }, event: { outcome: 'failure' } });
  });

  test.each([
    [
      'an unknown verdict',
      { decision: 'ALLOW', ruleIds: [], reason: 'x', subcommands: [], resolvedCwd: null },
    ],
    ['no rule ids', { decision: 'allow', reason: 'x', subcommands: [], resolvedCwd: null }],
    ['nothing', undefined],
  ])('a judge that answers %s is a deny', (_name, answer) => {
    const judge = { judge: () => answer as never };
    const decision = new PolicyGate(judge, new InMemoryAuditSink(), POLICY).decide(
      gateRequest('create', 'ls'),
    );
    expect(decision).toMatchObject({ allow: false, reason: expect.stringMatching(/invalid decision/) });
  });

  test('a sink that throws turns an allow into a refusal that names the audit trail', () => {
    const sink = new InMemoryAuditSink();
    sink.failWith(new Error('EACCES: permission denied, open /var/log/termgate/audit.jsonl'));
    const answer = new PolicyGate(judgeTable(), sink, POLICY).decide(gateRequest('create', 'npm test'));
    expect(answer).toEqual({
      allow: false,
      reason:
        'audit trail unavailable: in-memory audit sink: EACCES: permission denied, open /var/log/termgate/audit.jsonl; nothing was run',
    });
    expect(answer).not.toHaveProperty('cwd');
  });

  test('environment values are never written, only the names (real file)', () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'audit.jsonl');
      const sink = FileAuditSink.open(file);
      const gate = new PolicyGate(judgeTable(), sink, POLICY);
      gate.decide(
        gateRequest('create', 'npm test', { env: { NPM_TOKEN: 'sekret-value-8c1f', HOME: '/home/agent' } }),
      );
      gate.decide(
        gateRequest('create', 'rm -rf /', { env: { AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG' } }),
      );
      sink.close();
      const text = readFileSync(file, 'utf8');
      expect(text).not.toContain('sekret-value-8c1f');
      expect(text).not.toContain('wJalrXUtnFEMI');
      expect(text).not.toContain('/home/agent');
      expect(text).toContain('"env_names":["HOME","NPM_TOKEN"]');
      expect(text).toContain('"env_names":["AWS_SECRET_ACCESS_KEY"]');
      expect(verifyAuditFile(file)).toMatchObject({ ok: true, records: 2 });
    } finally {
      dir.cleanup();
    }
  });
});

describe('PolicyGate: sandboxed creates', () => {
  const profiler = (root: string, readOnly: string): SandboxProfiler => {
    const policy: SandboxPolicy = {
      mode: 'required',
      writable: [root],
      readOnly: [readOnly],
      hidden: [],
      protectGit: false,
      privateTmp: false,
      network: 'none',
    };
    return new SandboxProfiler(policy, { privateTmp: null, protect: { readOnly: [], hidden: [] } });
  };

  test('an allow carries the profile for its cwd, and the record its digest', () => {
    const dir = tempDir('termgate-gate-sandbox-');
    try {
      const root = realpathSync(dir.path);
      mkdirSync(join(root, 'config'));
      const sink = new InMemoryAuditSink();
      const gate = new PolicyGate(judgeTable(), sink, POLICY, {
        sandbox: profiler(root, join(root, 'config')),
      });
      const answer = gate.decide(gateRequest('create', 'npm test'));
      expect(answer).toMatchObject({
        allow: true,
        sandbox: { filesystem: { writable: [root], readOnly: [join(root, 'config')] }, network: 'none' },
      });
      expect(sink.records[0]).toMatchObject({
        event: { outcome: 'success' },
        termgate: { sandbox: { sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } },
      });
    } finally {
      dir.cleanup();
    }
  });

  test('a profile that cannot be computed turns the allow into a recorded refusal: nothing runs unsandboxed', () => {
    const dir = tempDir('termgate-gate-sandbox-');
    try {
      const root = realpathSync(dir.path);
      mkdirSync(join(root, 'real'));
      // A read-only path that now resolves through a symlink: the profiler refuses to steer a mount by it.
      symlinkSync(join(root, 'real'), join(root, 'config'));
      const sink = new InMemoryAuditSink();
      const gate = new PolicyGate(judgeTable(), sink, POLICY, {
        sandbox: profiler(root, join(root, 'config')),
      });
      const answer = gate.decide(gateRequest('create', 'npm test'));
      expect(answer).toEqual({
        allow: false,
        reason: expect.stringMatching(
          /^the sandbox profile could not be computed: .*resolves through a symlink.*; nothing was run$/,
        ),
        ruleIds: [],
      });
      expect(sink.records).toHaveLength(1);
      expect(sink.records[0]).toMatchObject({
        event: { type: ['info', 'denied'], outcome: 'failure' },
        termgate: { decision: 'deny' },
      });
    } finally {
      dir.cleanup();
    }
  });
});

describe('PolicyGate: an asynchronous judge', () => {
  /** The table's answers, given as promises that settle on a later turn of the event loop. */
  const asyncJudge = (log: string[]) => {
    const table = judgeTable();
    return {
      requests: table.requests,
      judge: (request: CommandRequest): Promise<PolicyDecision> =>
        new Promise((resolve) => {
          setImmediate(() => {
            log.push('judged');
            resolve(table.judge(request));
          });
        }),
    };
  };

  test('answers with a promise that settles after the decision record is appended', async () => {
    const log: string[] = [];
    const sink = new OrderedSink(log);
    const pending = new PolicyGate(asyncJudge(log), sink, POLICY).decide(gateRequest('create', 'npm test'));
    expect(pending).toBeInstanceOf(Promise);
    log.push('decide returned');
    const answer = await pending;
    log.push('answered');
    expect(log).toEqual(['decide returned', 'judged', 'append terminal-create', 'answered']);
    expect(answer).toEqual({
      allow: true,
      reason: 'npm test is allowed by rule npm-test',
      cwd: '/real/project',
    });
    expect(sink.inner.records[0]).toMatchObject({
      event: { action: 'terminal-create', outcome: 'success' },
      process: { working_directory: '/real/project' },
      rule: { id: ['npm-test'] },
    });
  });

  test('an asynchronous deny is answered with its reason and rule ids', async () => {
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(asyncJudge([]), sink, POLICY);
    await expect(gate.decide(gateRequest('create', 'rm -rf /'))).resolves.toEqual({
      allow: false,
      reason: 'rm is denied by rule no-rm',
      ruleIds: ['no-rm'],
    });
    expect(sink.records[0]).toMatchObject({ termgate: { decision: 'deny' }, event: { outcome: 'failure' } });
  });

  test('a judge that rejects is a deny with the reason, and is recorded', async () => {
    const sink = new InMemoryAuditSink();
    const judge = { judge: () => Promise.reject(new Error('judge worker exited (signal SIGKILL)')) };
    await expect(
      new PolicyGate(judge, sink, POLICY).decide(gateRequest('create', 'npm test')),
    ).resolves.toEqual({
      allow: false,
      reason: 'policy engine failed: judge worker exited (signal SIGKILL); nothing was run',
      ruleIds: [],
    });
    expect(sink.records[0]).toMatchObject({ termgate: { decision: 'deny' }, event: { outcome: 'failure' } });
  });

  test.each([
    [
      'an unknown verdict',
      { decision: 'ALLOW', ruleIds: [], reason: 'x', subcommands: [], resolvedCwd: null },
    ],
    ['nothing', undefined],
  ])('a judge that resolves to %s is a deny', async (_name, answer) => {
    const judge = { judge: () => Promise.resolve(answer as never) };
    await expect(
      new PolicyGate(judge, new InMemoryAuditSink(), POLICY).decide(gateRequest('create', 'ls')),
    ).resolves.toMatchObject({ allow: false, reason: expect.stringMatching(/invalid decision/) });
  });

  test('with the audit trail down, an asynchronous allow becomes a refusal', async () => {
    const sink = new InMemoryAuditSink();
    sink.failWith(new Error('ENOSPC'));
    const answer = await new PolicyGate(asyncJudge([]), sink, POLICY).decide(
      gateRequest('create', 'npm test'),
    );
    expect(answer).toEqual({
      allow: false,
      reason: 'audit trail unavailable: in-memory audit sink: ENOSPC; nothing was run',
    });
  });

  test('the verbs after create stay synchronous', () => {
    const answer = new PolicyGate(asyncJudge([]), new InMemoryAuditSink(), POLICY).decide(
      gateRequest('wait', 'npm test'),
    );
    expect(answer).toMatchObject({ allow: true });
  });
});

describe('PolicyGate: the verbs after create', () => {
  const verbs: Exclude<GateVerb, 'create'>[] = ['output', 'wait', 'kill', 'release'];

  test.each(verbs)('%s is allowed and recorded before the answer', (verb) => {
    const log: string[] = [];
    const sink = new OrderedSink(log);
    const answer = new PolicyGate(judgeTable(), sink, POLICY).decide(gateRequest(verb, 'npm test'));
    log.push('returned');
    expect(answer).toMatchObject({ allow: true, reason: expect.stringMatching(/passed the gate at create/) });
    expect(log).toEqual([`append terminal-${verb}`, 'returned']);
    expect(sink.inner.records[0]).toMatchObject({
      event: { action: `terminal-${verb}`, outcome: 'success' },
      process: { command_line: 'npm test' },
      termgate: {
        verb,
        decision: 'allow',
        terminal_id: 'term-0123456789abcdef',
        client: { name: 'claude-code' },
      },
    });
  });

  test('a follow-up policy may deny, and its deny is recorded', () => {
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(judgeTable(), sink, POLICY, {
      followUp: (request) =>
        request.verb === 'output'
          ? { decision: 'deny', ruleIds: ['no-peek'], reason: 'output is private' }
          : { decision: 'allow', ruleIds: [], reason: 'ok' },
    });
    expect(gate.decide(gateRequest('output', 'npm test'))).toEqual({
      allow: false,
      reason: 'output is private',
      ruleIds: ['no-peek'],
    });
    expect(sink.records[0]).toMatchObject({ rule: { id: ['no-peek'] }, termgate: { decision: 'deny' } });
  });

  test('a follow-up policy that throws is a deny', () => {
    const gate = new PolicyGate(judgeTable(), new InMemoryAuditSink(), POLICY, {
      followUp: () => {
        throw new Error('bug');
      },
    });
    expect(gate.decide(gateRequest('wait', 'npm test'))).toMatchObject({ allow: false, reason: /bug/ });
  });

  test('with the audit trail down, output and wait are refused; kill and release still stop the process', () => {
    const sink = new InMemoryAuditSink();
    sink.failWith(new Error('ENOSPC'));
    const gate = new PolicyGate(judgeTable(), sink, POLICY);
    expect(gate.decide(gateRequest('output', 'npm test'))).toMatchObject({
      allow: false,
      reason: expect.stringMatching(/^audit trail unavailable: .*ENOSPC; the output was refused$/),
    });
    expect(gate.decide(gateRequest('wait', 'npm test'))).toMatchObject({ allow: false });
    expect(gate.decide(gateRequest('kill', 'npm test'))).toMatchObject({
      allow: true,
      reason: expect.stringMatching(/the kill goes ahead unrecorded/),
    });
    expect(gate.decide(gateRequest('release', 'npm test'))).toMatchObject({ allow: true });
  });
});

describe('PolicyGate: lifecycle records', () => {
  test('spawn and exit are recorded with pid, exit status, byte counts and output digest', () => {
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(judgeTable(), sink, POLICY);
    gate.decide(gateRequest('create', 'npm test'));
    gate.onSpawned({ terminalId: 'term-0123456789abcdef', pid: 4242, caller: MCP_CALLER });
    gate.onExited({
      terminalId: 'term-0123456789abcdef',
      exitStatus: { exitCode: null, signal: 'SIGKILL', timedOut: true },
      durationMs: 1500,
      totalBytes: 2048,
      droppedBytes: 1024,
      outputSha256: 'b'.repeat(64),
      caller: MCP_CALLER,
    });
    const [, spawn, exit] = sink.records;
    expect(spawn).toMatchObject({
      event: { action: 'terminal-spawn', type: ['start'], outcome: 'success' },
      process: { pid: 4242 },
      termgate: { terminal_id: 'term-0123456789abcdef', protocol: 'mcp/2026-07-28' },
    });
    expect(exit).toMatchObject({
      event: { action: 'terminal-exit', type: ['end'], outcome: 'failure', duration: 1_500_000_000 },
      process: { pid: 4242 },
      termgate: {
        signal: 'SIGKILL',
        timed_out: true,
        total_bytes: 2048,
        dropped_bytes: 1024,
        output_sha256: 'b'.repeat(64),
      },
    });
    expect(exit).not.toHaveProperty('process.exit_code');
    expect(verifyAuditLines(sink.lines)).toMatchObject({ ok: true, records: 3 });
  });

  test('a clean exit records exit_code 0 as a success', () => {
    const sink = new InMemoryAuditSink();
    new PolicyGate(judgeTable(), sink, POLICY).onExited({
      terminalId: 't',
      exitStatus: { exitCode: 0, signal: null, timedOut: false },
      durationMs: 3,
      totalBytes: 0,
      droppedBytes: 0,
      outputSha256: null,
      caller: {},
    });
    expect(sink.records[0]).toMatchObject({ event: { outcome: 'success' }, process: { exit_code: 0 } });
  });

  test('an observer append that fails is thrown to the host', () => {
    const sink = new InMemoryAuditSink();
    sink.failWith(new Error('ENOSPC'));
    const gate = new PolicyGate(judgeTable(), sink, POLICY);
    expect(() => gate.onSpawned({ terminalId: 't', pid: 1, caller: {} })).toThrow(/ENOSPC/);
  });
});

describe('PolicyGate: an asynchronous judge and an asynchronous profile', () => {
  const PROFILE = (cwd: string): SandboxProfile => ({
    filesystem: {
      emptied: [],
      readable: [],
      sockets: [],
      writable: [cwd],
      readOnly: [],
      placeholderDirectories: [],
      placeholderFiles: [],
      hiddenDirectories: [],
      hiddenFiles: [],
      tmp: null,
    },
    network: 'none',
  });

  /** A judge whose answer waits for `release`, a profiler that logs each call and answers on a later turn. */
  function world(decision: PolicyDecision, profileError: Error | null = null) {
    const log: string[] = [];
    let release: () => void = () => {};
    const judge = {
      judge: (request: CommandRequest): Promise<PolicyDecision> =>
        new Promise((resolve) => {
          log.push(`judge ${request.cwd}`);
          release = () => {
            log.push('judged');
            resolve(decision);
          };
        }),
    };
    const sandbox = {
      enabled: true,
      profile: (cwd: string): Promise<SandboxProfile> => {
        log.push(`profile ${cwd}`);
        return new Promise((resolve, reject) =>
          setImmediate(() => (profileError !== null ? reject(profileError) : resolve(PROFILE(cwd)))),
        );
      },
    };
    return { log, judge, sandbox, release: () => release() };
  }

  test('the profile of the request cwd is computed while the judge works, and used when the judge keeps that cwd', async () => {
    const { log, judge, sandbox, release } = world(allow('ok', ['r']));
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(judge, sink, POLICY, { sandbox });
    const request = gateRequest('create', 'npm test');
    const answer = gate.decide(request);
    // Before the judge answered, the profile was already asked for.
    expect(log).toEqual([`judge ${request.spec.cwd}`, `profile ${request.spec.cwd}`]);
    release();
    await expect(answer).resolves.toMatchObject({ allow: true, sandbox: PROFILE(request.spec.cwd) });
    expect(log).toEqual([`judge ${request.spec.cwd}`, `profile ${request.spec.cwd}`, 'judged']);
    expect(sink.records[0]).toMatchObject({ termgate: { sandbox: { sha256: expect.any(String) } } });
  });

  test('a judge that resolves another cwd gets the profile of that cwd, computed after it answered', async () => {
    const { log, judge, sandbox, release } = world(allow('ok', ['r'], { resolvedCwd: '/elsewhere' }));
    const gate = new PolicyGate(judge, new InMemoryAuditSink(), POLICY, { sandbox });
    const answer = gate.decide(gateRequest('create', 'npm test'));
    release();
    await expect(answer).resolves.toMatchObject({
      allow: true,
      cwd: '/elsewhere',
      sandbox: PROFILE('/elsewhere'),
    });
    expect(log.slice(-2)).toEqual(['judged', 'profile /elsewhere']);
  });

  test('a failing profile refuses an allow, and is harmless for a deny (no unhandled rejection)', async () => {
    const failing = world(allow('ok', ['r']), new Error('too many mounts'));
    const sink = new InMemoryAuditSink();
    const gate = new PolicyGate(failing.judge, sink, POLICY, { sandbox: failing.sandbox });
    const answer = gate.decide(gateRequest('create', 'npm test'));
    failing.release();
    await expect(answer).resolves.toMatchObject({
      allow: false,
      reason: 'the sandbox profile could not be computed: too many mounts; nothing was run',
    });
    expect(sink.records[0]).toMatchObject({ termgate: { decision: 'deny' } });
    const denied = world(deny('no', ['d']), new Error('too many mounts'));
    const other = new PolicyGate(denied.judge, new InMemoryAuditSink(), POLICY, { sandbox: denied.sandbox });
    const refused = other.decide(gateRequest('create', 'rm -rf /'));
    denied.release();
    await expect(refused).resolves.toMatchObject({ allow: false, reason: 'no' });
    await new Promise((resolve) => setImmediate(resolve));
  });
});
