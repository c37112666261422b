import { FileAuditSink } from '@termgate/audit/adapters';
import { type CommandJudge, PolicyGate, recordServerStart, recordServerStop } from '@termgate/policy';

/**
 * Writes a trail of `count` terminals through the real gate and sink:
 * every 5th command is `rm …`, refused by rule `no-rm`; the others are
 * `npm …` (rule `npm`) or `git …` (rule `git`), allowed, spawned and exited
 * (exit 1 for every 7th). Clients alternate `claude-code` and `zed`.
 * Terminal 42's command carries the marker `needle-42`.
 */
export function writeGeneratedTrail(
  file: string,
  count: number,
  start = Date.parse('2026-11-30T09:00:00Z'),
): void {
  let clock = start;
  const sink = FileAuditSink.open(file, { now: () => new Date(clock) });
  const judge: CommandJudge = {
    judge: (request) => {
      const program = request.command.split(' ')[0]!;
      const subcommands = [{ program, argv: request.command.split(' '), via: [] }];
      if (program === 'rm') {
        return {
          decision: 'deny',
          ruleIds: ['no-rm'],
          reason: 'rm is refused by rule no-rm',
          subcommands,
          resolvedCwd: null,
        };
      }
      return {
        decision: 'allow',
        ruleIds: [program],
        reason: `${program} is allowed by rule ${program}`,
        subcommands,
        resolvedCwd: null,
      };
    },
  };
  const policy = { path: '/etc/termgate/policy.yaml', sha256: 'a'.repeat(64) };
  recordServerStart(sink, {
    policy,
    version: '0.1.0',
    sandbox: { mode: 'required', network: ['registry.npmjs.org', '*.githubusercontent.com'] },
  });
  const gate = new PolicyGate(judge, sink, policy);
  for (let n = 0; n < count; n += 1) {
    clock += 1_000;
    const terminalId = `t${String(n).padStart(6, '0')}-0000-4000-8000-000000000000`;
    const command =
      n % 5 === 0 ? `rm -rf /tmp/build-${n}` : n % 2 === 0 ? `npm test -- --shard ${n}` : `git log -n ${n}`;
    const caller = { clientName: n % 2 === 0 ? 'claude-code' : 'zed', protocol: 'mcp/2026-07-28' };
    const decision = gate.decide({
      verb: 'create',
      terminalId,
      spec: {
        command: n === 42 ? `${command} needle-42` : command,
        args: null,
        cwd: '/home/dev/project',
        env: { CI: '1', NPM_TOKEN: 'secret' },
        outputByteLimit: 1_000,
        argv: ['bash', '-c', command],
      },
      caller,
    });
    if (decision instanceof Promise) throw new Error('the generated trail uses a synchronous judge');
    if (!decision.allow) continue;
    gate.onSpawned({ terminalId, pid: 1_000 + n, caller });
    clock += 250 + (n % 13) * 100;
    gate.onExited({
      terminalId,
      exitStatus: { exitCode: n % 7 === 0 ? 1 : 0, signal: null, timedOut: false },
      durationMs: 250 + (n % 13) * 100,
      totalBytes: 100 + n,
      droppedBytes: 0,
      outputSha256: 'b'.repeat(64),
      caller,
    });
  }
  recordServerStop(sink, { reason: 'stdin closed' });
  sink.close();
}
