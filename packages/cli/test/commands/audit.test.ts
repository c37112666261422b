import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { listTrailDirectory, loadSigningKey } from '@termgate/audit';
import { CheckpointingAuditSink, FileAuditSink } from '@termgate/audit/adapters';
import { type CommandJudge, PolicyGate, recordServerStart, recordServerStop } from '@termgate/policy';
import type { GateRequest } from '@termgate/termhost';
import { auditCommand, parseSince, printable } from '../../src/commands/audit.js';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const code = await auditCommand(argv, { stdin: new PassThrough(), stdout, stderr });
  return { code, out, err };
}

const judge: CommandJudge = {
  judge: (request) => {
    const program = request.command.split(' ')[0]!;
    const subcommands = [{ program, argv: [program], via: [] }];
    return request.command.startsWith('rm')
      ? { decision: 'deny', ruleIds: ['no-rm'], reason: 'rm is denied', subcommands, resolvedCwd: null }
      : { decision: 'allow', ruleIds: ['any'], reason: 'allowed', subcommands, resolvedCwd: null };
  },
};

function request(terminalId: string, command: string, clientName = 'test-client'): GateRequest {
  return {
    verb: 'create',
    terminalId,
    spec: { command, args: null, cwd: '/w', env: {}, outputByteLimit: 10, argv: ['bash', '-c', command] },
    caller: { clientName, protocol: 'mcp/2026-07-28' },
  };
}

describe('termgate audit', () => {
  let dir: string;
  let file: string;
  const now = Date.now();

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-cli-audit-'));
    file = join(dir, 'audit.jsonl');
    let clock = now - 2 * 3_600_000;
    const sink = FileAuditSink.open(file, { now: () => new Date(clock) });
    const policy = { path: '/p.yaml', sha256: 'd'.repeat(64) };
    recordServerStart(sink, { policy, version: '0.1.0' });
    const gate = new PolicyGate(judge, sink, policy);
    gate.decide(request('aaaa1111-old', 'rm -rf /tmp/x'));
    clock = now - 10 * 60_000;
    gate.decide(request('bbbb2222-new', 'npm test'));
    gate.onSpawned({ terminalId: 'bbbb2222-new', pid: 77, caller: {} });
    gate.onExited({
      terminalId: 'bbbb2222-new',
      exitStatus: { exitCode: 3, signal: null, timedOut: false },
      durationMs: 5,
      totalBytes: 1,
      droppedBytes: 0,
      outputSha256: null,
      caller: {},
    });
    gate.decide(request('cccc3333-esc', 'echo hi\n\u001b[2Kclear'));
    sink.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('verify', () => {
    test('an intact file exits 0 and says so', async () => {
      const { code, out, err } = await run(['verify', file]);
      expect(code).toBe(0);
      expect(out).toMatch(/: intact, 6 records \(seq 1\.\.6\), head hash [0-9a-f]{64}\n$/);
      expect(err).toBe('');
    });

    test('a broken file exits 1 and names the seq and the problem', async () => {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.splice(2, 1);
      writeFileSync(file, lines.join('\n'));
      const { code, out } = await run(['verify', file]);
      expect(code).toBe(1);
      expect(out).toContain('BROKEN at seq 3 (line 3): found seq 4 where seq 3 was expected');
      expect(out).toContain('seq 1..2 are intact');
    });

    test('--json prints the result as JSON', async () => {
      writeFileSync(file, readFileSync(file, 'utf8').replace('npm test', 'npm TEST'));
      const { code, out } = await run(['verify', file, '--json']);
      expect(code).toBe(1);
      expect(JSON.parse(out)).toMatchObject({
        file,
        ok: false,
        seq: 3,
        problem: expect.stringMatching(/edited/),
      });
    });

    test('--anchor: a head noted earlier catches records cut from the end and a rewritten chain', async () => {
      const head = JSON.parse((await run(['verify', file, '--json'])).out).head as {
        seq: number;
        hash: string;
      };
      expect((await run(['verify', file, '--anchor', `${head.seq}:${head.hash}`])).code).toBe(0);

      const original = readFileSync(file, 'utf8');
      // Cut the last two records: the chain alone still verifies.
      writeFileSync(file, `${original.split('\n').slice(0, 4).join('\n')}\n`);
      expect((await run(['verify', file])).code).toBe(0);
      const cut = await run(['verify', file, '--anchor', `${head.seq}:${head.hash}`]);
      expect(cut.code).toBe(1);
      expect(cut.out).toContain(`BROKEN at seq ${head.seq}: anchored record seq ${head.seq} is missing`);

      // Rewrite everything with a fresh, self-consistent chain of the same length.
      rmSync(file);
      const forger = FileAuditSink.open(file);
      for (let i = 0; i < head.seq; i++) forger.append({ event: { action: 'forged' } });
      forger.close();
      expect((await run(['verify', file])).code).toBe(0);
      const rewritten = await run(['verify', file, '--anchor', `${head.seq}:${head.hash}`]);
      expect(rewritten.code).toBe(1);
      expect(rewritten.out).toMatch(/the chain was rewritten/);
    });

    test('a malformed --anchor is a usage error', async () => {
      const { code, err } = await run(['verify', file, '--anchor', '6:nothex']);
      expect(code).toBe(2);
      expect(err).toContain('--anchor must be SEQ:HASH');
    });

    test('a missing file exits 2 with the I/O error on stderr', async () => {
      const { code, out, err } = await run(['verify', join(dir, 'missing.jsonl')]);
      expect(code).toBe(2);
      expect(out).toBe('');
      expect(err).toMatch(/ENOENT/);
    });
  });

  describe('show', () => {
    test('prints an aligned table', async () => {
      const { code, out } = await run(['show', file]);
      expect(code).toBe(0);
      const lines = out.trimEnd().split('\n');
      expect(lines).toHaveLength(7);
      expect(lines[0]).toMatch(
        /^TIME\s+SEQ\s+ACTION\s+DECISION\s+TERMINAL\s+COMMAND\s+RULES\s+EXIT\s+REASON$/,
      );
      const column = (name: string) => lines[0]!.indexOf(name);
      const create = lines.find((line) => line.includes('npm test'))!;
      expect(create.slice(column('ACTION')).startsWith('terminal-create')).toBe(true);
      expect(create.slice(column('DECISION')).startsWith('allow')).toBe(true);
      expect(create.slice(column('TERMINAL')).startsWith('bbbb2222 ')).toBe(true);
      expect(create.slice(column('RULES')).startsWith('any')).toBe(true);
      const exit = lines.find((line) => line.includes('terminal-exit'))!;
      expect(exit.slice(column('EXIT'), column('REASON')).trim()).toBe('3');
    });

    test('a refused create is marked refused instead of naming a terminal that never existed', async () => {
      const { out } = await run(['show', file]);
      const lines = out.trimEnd().split('\n');
      const column = (name: string) => lines[0]!.indexOf(name);
      const refused = lines.find((line) => line.includes('rm -rf /tmp/x'))!;
      expect(refused.slice(column('DECISION')).startsWith('deny ')).toBe(true);
      expect(refused.slice(column('TERMINAL')).startsWith('(refused) ')).toBe(true);
      expect(refused).not.toContain('aaaa1111');
      // Created terminals keep their short id; --terminal still finds the refused create by its requested id.
      const created = lines.find((line) => line.includes('npm test'))!;
      expect(created.slice(column('TERMINAL')).startsWith('bbbb2222 ')).toBe(true);
      const byId = (await run(['show', file, '--terminal', 'aaaa'])).out.trimEnd().split('\n');
      expect(byId).toHaveLength(2);
      expect(byId[1]).toContain('(refused)');
    });

    test('the REASON column shows the recorded reason, "-" when there is none', async () => {
      const { out } = await run(['show', file]);
      const lines = out.trimEnd().split('\n');
      const column = (name: string) => lines[0]!.indexOf(name);
      const reason = (text: string) => lines.find((line) => line.includes(text))!.slice(column('REASON'));
      expect(reason('rm -rf /tmp/x')).toBe('rm is denied');
      expect(reason('npm test')).toBe('allowed');
      expect(reason('terminal-spawn')).toBe('-');
      expect(reason('server-start')).toBe('-');
    });

    test('a long or hostile reason is clipped and escaped', async () => {
      const sink = FileAuditSink.open(file);
      sink.append({
        event: { action: 'server-stop', reason: `stop\u001b[2J ${'x'.repeat(200)}` },
      });
      sink.close();
      const { out } = await run(['show', file]);
      const lines = out.trimEnd().split('\n');
      const stop = lines[lines.length - 1]!.slice(lines[0]!.indexOf('REASON'));
      expect(stop.startsWith('stop\\u001b[2J xxx')).toBe(true);
      expect(stop.endsWith('x…')).toBe(true);
      expect([...stop]).toHaveLength(80);
      expect(out).not.toContain('\u001b');
    });

    test('escapes control characters in commands', async () => {
      const { out } = await run(['show', file, '--terminal', 'cccc']);
      expect(out).toContain('echo hi\\n\\u001b[2Kclear');
      expect(out).not.toContain('\u001b');
    });

    test.each([
      [['--decision', 'deny'], ['rm -rf /tmp/x']],
      [
        ['--decision', 'allow'],
        ['npm test', 'echo hi'],
      ],
      [
        ['--terminal', 'bbbb'],
        ['npm test', 'terminal-spawn', 'terminal-exit'],
      ],
      [['--grep', '^rm\\s'], ['rm -rf']],
      [
        ['--since', '1h'],
        ['npm test', 'terminal-spawn', 'terminal-exit', 'echo hi'],
      ],
      [['--since', new Date(now - 3 * 3_600_000).toISOString(), '--decision', 'deny'], ['rm -rf']],
    ])('filters %j', async (filters, expected) => {
      const { code, out } = await run(['show', file, ...filters]);
      expect(code).toBe(0);
      const rows = out.trimEnd().split('\n').slice(1);
      expect(rows).toHaveLength(expected.length);
      expected.forEach((text, i) => {
        expect(rows[i]).toContain(text);
      });
    });

    test('--json prints the matching records as JSON Lines', async () => {
      const { out } = await run(['show', file, '--json', '--decision', 'allow']);
      const records = out
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(records.map((r) => r.termgate.terminal_id)).toEqual(['bbbb2222-new', 'cccc3333-esc']);
      expect(records[0]).toMatchObject({ event: { action: 'terminal-create' }, seq: 3 });
    });

    test('no match prints nothing on stdout and says so on stderr', async () => {
      const { code, out, err } = await run(['show', file, '--grep', 'nothing-like-this']);
      expect([code, out]).toEqual([0, '']);
      expect(err).toContain('no matching records');
    });

    test('unreadable lines are reported on stderr and skipped', async () => {
      writeFileSync(file, `${readFileSync(file, 'utf8')}{garbage\n`);
      const { code, out, err } = await run(['show', file, '--decision', 'deny']);
      expect(code).toBe(0);
      expect(out).toContain('rm -rf');
      expect(err).toMatch(/audit\.jsonl:7: not valid JSON, skipped/);
    });
  });

  test.each([
    [[]],
    [['frobnicate']],
    [['verify']],
    [['verify', 'f', '--public-key']],
    [['keygen']],
    [['show', 'f', '--json', '--summary']],
    [['show', 'f', '--decision', 'maybe']],
    [['show', 'f', '--since', 'yesterday']],
    [['show', 'f', '--grep', '(']],
    [['show', 'f', '--bogus']],
  ])('usage error %j exits 2 with one line and the --help hint on stderr', async (argv) => {
    const { code, out, err } = await run(argv);
    expect(code).toBe(2);
    expect(out).toBe('');
    const known = ['verify', 'keygen', 'report', 'show'].includes(argv[0] ?? '');
    const name = known ? `termgate audit ${argv[0]}` : 'termgate audit';
    expect(err).toMatch(new RegExp(`^${name}: \\S.*\nRun "${name} --help" for usage.\n$`));
  });

  test('help prints the usage on stdout', async () => {
    expect(await run(['help'])).toMatchObject({
      code: 0,
      out: expect.stringContaining('termgate audit verify'),
    });
  });
});

describe('parseSince', () => {
  const now = new Date('2026-11-30T12:00:00.000Z');
  test.each([
    ['90s', '2026-11-30T11:58:30.000Z'],
    ['1h30m', '2026-11-30T10:30:00.000Z'],
    ['2d', '2026-11-28T12:00:00.000Z'],
    ['2026-11-30T08:00:00Z', '2026-11-30T08:00:00.000Z'],
  ])('%s', (value, expected) => {
    expect(parseSince(value, now).toISOString()).toBe(expected);
  });
});

test('printable escapes bidi overrides', () => {
  expect(printable('a\u202eb')).toBe('a\\u202eb');
});

describe('termgate audit over rotated and signed trails', () => {
  let dir: string;
  let trail: string;
  let file: string;
  let key: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-cli-trail-'));
    trail = join(dir, 'trail');
    mkdirSync(trail);
    file = join(trail, 'audit.jsonl');
    key = join(dir, 'signing-key');
    expect(await run(['keygen', key])).toMatchObject({
      code: 0,
      out: expect.stringMatching(/public key .*signing-key\.pub \(key id [0-9a-f]{16}\)/),
    });
    const sink = new CheckpointingAuditSink(FileAuditSink.open(file, { rotation: { maxBytes: 3_000 } }), {
      privateKey: loadSigningKey(key),
      everyRecords: 7,
    });
    const policy = { path: '/p.yaml', sha256: 'd'.repeat(64) };
    recordServerStart(sink, { policy, version: '0.1.0' });
    const gate = new PolicyGate(judge, sink, policy);
    for (let n = 0; n < 10; n += 1) {
      gate.decide(request(`a-${n}`, n % 3 === 0 ? `rm -rf /tmp/${n}` : `npm test ${n}`, 'claude-code'));
      gate.decide(request(`b-${n}`, `git status ${n}`, 'zed'));
    }
    recordServerStop(sink, { reason: 'test' });
    sink.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // In trail order: two rotations in one millisecond give `…Z.jsonl` then `…Z-2.jsonl`, which a plain sort reverses.
  const files = () => listTrailDirectory(trail);

  test('keygen: private key 0600, and it refuses to overwrite', async () => {
    expect(statSync(key).mode & 0o777).toBe(0o600);
    const again = await run(['keygen', key]);
    expect(again.code).toBe(2);
    expect(again.err).toBe(
      `termgate audit: keygen: ${key}.pub already exists (EEXIST): keygen never overwrites a key\n`,
    );
  });

  test('keygen into a missing directory names it, writes nothing and exits 2', async () => {
    const missing = join(dir, 'no-such-dir');
    const result = await run(['keygen', join(missing, 'key')]);
    expect(result).toEqual({
      code: 2,
      out: '',
      err: `termgate audit: keygen: directory ${missing} does not exist: create it first (mkdir -m 700 ${missing})\n`,
    });
    expect(() => statSync(missing)).toThrow(/ENOENT/);
  });

  test('keygen under a file that is not a directory says so and exits 2', async () => {
    const result = await run(['keygen', join(key, 'key')]);
    expect(result).toEqual({ code: 2, out: '', err: `termgate audit: keygen: ${key} is not a directory\n` });
  });

  test('verify DIR checks the rotated files as one chain, and the signatures with --public-key', async () => {
    expect(files().length).toBeGreaterThan(2);
    const plain = await run(['verify', trail]);
    expect(plain.code).toBe(0);
    expect(plain.out).toMatch(new RegExp(`^${trail}: intact, \\d+ records in ${files().length} files`));
    const signed = await run(['verify', trail, '--public-key', `${key}.pub`]);
    expect(signed.code).toBe(0);
    expect(signed.out).toMatch(
      /; signed through seq \d+ \(\d+ checkpoints\); ends with a final checkpoint \(its server stopped\)\n$/,
    );
    // The same as a list of files.
    expect((await run(['verify', ...files()])).code).toBe(0);
  });

  test('verify names a missing file, and exits 1', async () => {
    const gone = files()[1]!;
    rmSync(gone);
    const { code, out } = await run(['verify', trail]);
    expect(code).toBe(1);
    expect(out).toContain(`BROKEN at seq`);
    expect(out).toContain(`missing file ${gone.slice(trail.length + 1)} between`);
  });

  test('a cut tail exits 3: open or cut after the last seq', async () => {
    const text = readFileSync(file, 'utf8').split('\n');
    // Drop the final checkpoint (the active segment may hold nothing else).
    const kept = text.slice(0, -2);
    writeFileSync(file, kept.length === 0 ? '' : `${kept.join('\n')}\n`);
    const { code, out } = await run(['verify', trail, '--public-key', `${key}.pub`]);
    expect(code).toBe(3);
    expect(out).toMatch(
      /^\S+: OPEN OR CUT after seq \d+: intact so far, .* it does not end with a final checkpoint/,
    );
    expect(out).not.toMatch(/intact, /);
    const json = JSON.parse((await run(['verify', trail, '--public-key', `${key}.pub`, '--json'])).out);
    expect(json).toMatchObject({
      ok: true,
      verdict: 'open-or-cut',
      checkpoints: { checked: true, final: false },
      running: [],
    });
  });

  test('a trail written before the final mark (its stop checkpoint not final) is open or cut, with a note to use --anchor', async () => {
    const legacy = join(dir, 'legacy.jsonl');
    const inner = FileAuditSink.open(legacy);
    const sink = new CheckpointingAuditSink(inner, { privateKey: loadSigningKey(key) });
    const policy = { path: '/p.yaml', sha256: 'd'.repeat(64) };
    recordServerStart(sink, { policy, version: '0.1.0' });
    recordServerStop(sink, { reason: 'test' });
    // What an older termgate wrote at stop: an ordinary checkpoint, not marked final.
    sink.checkpoint('records');
    inner.close();
    const { code, out } = await run(['verify', legacy, '--public-key', `${key}.pub`]);
    expect(code).toBe(3);
    expect(out).toMatch(/: OPEN OR CUT after seq 3: .*signed through seq 2 \(1 checkpoints\)/);
    expect(out).toMatch(
      /No checkpoint in it is marked final: a trail written before termgate marked its stop checkpoint final cannot show its end; verify it with --anchor\.\n$/,
    );
    // Without a key it reads as before: an intact chain.
    expect(await run(['verify', legacy])).toMatchObject({
      code: 0,
      out: expect.stringMatching(/: intact, 3 records/),
    });
  });

  test('verify with another key refuses the checkpoints', async () => {
    const other = join(dir, 'other-key');
    await run(['keygen', other]);
    const { code, out } = await run(['verify', trail, '--public-key', `${other}.pub`]);
    expect(code).toBe(1);
    expect(out).toMatch(/which is not a given public key/);
  });

  test('show --client filters by the recorded client name', async () => {
    const { code, out } = await run(['show', trail, '--client', 'zed']);
    expect(code).toBe(0);
    const rows = out.trimEnd().split('\n').slice(1);
    expect(rows).toHaveLength(10);
    for (const row of rows) expect(row).toContain('git status');
  });

  test('show --summary counts commands by decision, rule and program', async () => {
    const { code, out } = await run(['show', trail, '--summary']);
    expect(code).toBe(0);
    expect(out).toMatch(/^\d+ records, 20 commands \(terminal-create\)\n/);
    expect(out).toContain('by decision:\n  16  allow\n   4  deny\n');
    expect(out).toContain('by rule:\n  16  any\n   4  no-rm\n');
    expect(out).toContain('by program:\n  10  git\n   6  npm\n   4  rm\n');
    const claude = await run(['show', trail, '--summary', '--client', 'claude-code', '--decision', 'deny']);
    expect(claude.out).toContain('by decision:\n  4  deny\n');
  });
});
