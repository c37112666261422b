/**
 * Writes a synthetic but valid audit trail fast (no pino, no lock): the
 * chain of docs/AUDIT.md ("The chain") over a realistic mix of records, a
 * terminal-create decision (1 in 5 refused), then terminal-spawn and
 * terminal-exit for the allowed ones. Used by the audit benchmarks, which
 * need 100,000 to 1,000,000 records in seconds.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

function* events(count) {
  let n = 0;
  let terminal = 0;
  while (n < count) {
    const id = `${String(terminal).padStart(8, '0')}-8a51-4d5e-9c55-2b8f3f0e9a17`;
    const refused = terminal % 5 === 0;
    const command = refused ? `rm -rf /tmp/build-${terminal}` : `npm test -- --shard=${terminal % 8}/8`;
    const client = { name: terminal % 2 === 0 ? 'claude-code' : 'zed', version: '2.1.0' };
    yield {
      event: {
        kind: 'event',
        category: ['process'],
        type: ['info', refused ? 'denied' : 'allowed'],
        action: 'terminal-create',
        outcome: refused ? 'failure' : 'success',
        reason: refused ? 'rm is refused by rule no-rm' : 'npm test is allowed by rule npm-scripts',
      },
      process: {
        command_line: command,
        args: ['bash', '--noprofile', '--norc', '-c', command],
        working_directory: '/home/agent/work/project',
      },
      rule: { id: [refused ? 'no-rm' : 'npm-scripts'] },
      termgate: {
        terminal_id: id,
        verb: 'create',
        decision: refused ? 'deny' : 'allow',
        env_names: ['CI', 'NODE_ENV'],
        subcommands: [{ program: refused ? 'rm' : 'npm', argv: command.split(' '), via: [] }],
        policy: { sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
        client,
        protocol: 'mcp/2026-07-28',
      },
    };
    n += 1;
    if (!refused && n < count) {
      yield {
        event: {
          kind: 'event',
          category: ['process'],
          type: ['start'],
          action: 'terminal-spawn',
          outcome: 'success',
        },
        process: { pid: 10_000 + (terminal % 50_000) },
        termgate: { terminal_id: id, client, protocol: 'mcp/2026-07-28' },
      };
      n += 1;
    }
    if (!refused && n < count) {
      yield {
        event: {
          kind: 'event',
          category: ['process'],
          type: ['end'],
          action: 'terminal-exit',
          outcome: terminal % 7 === 0 ? 'failure' : 'success',
          duration: 250_000_000 + (terminal % 13) * 100_000_000,
        },
        process: { pid: 10_000 + (terminal % 50_000), exit_code: terminal % 7 === 0 ? 1 : 0 },
        termgate: {
          terminal_id: id,
          signal: null,
          timed_out: false,
          total_bytes: 4_096 + terminal,
          dropped_bytes: 0,
          output_sha256: sha256(String(terminal)),
          client,
          protocol: 'mcp/2026-07-28',
        },
      };
      n += 1;
    }
    terminal += 1;
  }
}

/** Writes `count` records to `file` (created or truncated). Returns the byte size. */
export function writeSyntheticTrail(file, count, start = Date.parse('2026-11-30T09:00:00Z')) {
  const fd = openSync(file, 'w', 0o600);
  const nonce = randomBytes(32).toString('hex');
  let prev = sha256(nonce);
  let seq = 0;
  let bytes = 0;
  let batch = [];
  for (const event of events(count)) {
    seq += 1;
    const head = {
      log: { level: 'info' },
      '@timestamp': new Date(start + seq * 200).toISOString(),
      ecs: { version: '8.11.0' },
      service: { name: 'termgate', version: '0.1.0' },
      seq,
      prev_hash: prev,
      ...(seq === 1 ? { nonce } : {}),
    };
    const body = JSON.stringify({ ...head, ...event });
    const hash = createHash('sha256').update(`${prev}\n`).update(body).digest('hex');
    const line = `${body.slice(0, -1)},"hash":"${hash}"}\n`;
    batch.push(line);
    prev = hash;
    if (batch.length === 10_000) {
      bytes += writeSync(fd, batch.join(''));
      batch = [];
    }
  }
  if (batch.length > 0) bytes += writeSync(fd, batch.join(''));
  closeSync(fd);
  return bytes;
}
