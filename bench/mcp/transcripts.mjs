#!/usr/bin/env node
/**
 * Transcript benchmark: a fixed set of scripted agent tasks run against
 * termgate before the one-call change (the four-call pattern: create, wait,
 * output, release) and after it (terminal_create waits and returns the
 * output; a running command is polled with terminal_wait_for_exit, which
 * returns only new output), side by side in one run, on the same fixture.
 *
 *   npx -y pnpm@12.4.2 run build
 *   git archive 68bfc50 | (mkdir -p /tmp/tg-before && tar -x -C /tmp/tg-before)
 *   (cd /tmp/tg-before && npx -y pnpm@12.4.2 install --frozen-lockfile && npx -y pnpm@12.4.2 run build)
 *   node bench/mcp/transcripts.mjs --before /tmp/tg-before/packages/cli/dist/bin.js
 *
 * Per task: tool calls, characters of tool output returned to the model
 * (every text block of every result, as the model reads them), the largest
 * single result, and wall time. Both servers run with the repository's
 * default policy and their own audit file, in a scratch fixture directory
 * (a git repository with a small npm project, a 5 MB log and an HTTP server).
 * Prints Markdown on stdout. Not a test: no pass/fail.
 */
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const AFTER_BIN = path.join(REPO_ROOT, 'packages/cli/dist/bin.js');
const beforeIndex = process.argv.indexOf('--before');
const BEFORE_BIN = beforeIndex === -1 ? undefined : path.resolve(process.argv[beforeIndex + 1]);
if (BEFORE_BIN === undefined) {
  process.stderr.write('usage: node bench/mcp/transcripts.mjs --before <old termgate dist/bin.js>\n');
  process.exit(2);
}
const POLICY = path.join(REPO_ROOT, 'policies/default.yaml');
const FIXTURE_SOURCES = path.join(REPO_ROOT, 'bench/mcp/transcript-fixture');
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'termgate-transcripts', version: '0.0.0' },
};

/** One server over JSON lines; every tools/call is recorded as the model would see it. */
class Session {
  constructor(bin, cwd, audit) {
    this.child = spawn(process.execPath, [bin, 'serve', '--policy', POLICY, '--audit', audit], {
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stderr.resume();
    this.pending = new Map();
    this.nextId = 1;
    this.buffer = '';
    this.calls = 0;
    this.chars = 0;
    this.largest = 0;
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk) => {
      this.buffer += chunk;
      for (let nl = this.buffer.indexOf('\n'); nl !== -1; nl = this.buffer.indexOf('\n')) {
        const message = JSON.parse(this.buffer.slice(0, nl));
        this.buffer = this.buffer.slice(nl + 1);
        const waiter = this.pending.get(message.id);
        if (waiter && message.method === undefined) {
          this.pending.delete(message.id);
          waiter(message);
        }
      }
    });
  }

  request(method, params) {
    const id = this.nextId++;
    const answer = new Promise((resolve) => this.pending.set(id, resolve));
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return answer;
  }

  /** A tool call: counted, and its text blocks measured. Returns the structured result (or `{error}`). */
  async call(name, args) {
    const message = await this.request('tools/call', { name, arguments: args, _meta: META });
    if (message.error) throw new Error(`${name}: ${JSON.stringify(message.error)}`);
    const text = message.result.content.map((block) => block.text ?? '').join('');
    this.calls += 1;
    this.chars += text.length;
    this.largest = Math.max(this.largest, text.length);
    if (message.result.isError) return { error: text };
    return { ...message.result.structuredContent, notes: message.result.content.slice(1).map((b) => b.text) };
  }

  reset() {
    this.calls = 0;
    this.chars = 0;
    this.largest = 0;
  }

  async close() {
    this.child.stdin.end();
    await new Promise((resolve) => this.child.once('exit', resolve));
  }
}

/** The old agent loop: create, wait, output, release. */
async function runBefore(s, command) {
  const { terminalId, error } = await s.call('terminal_create', { command });
  if (error) return error;
  await s.call('terminal_wait_for_exit', { terminalId, timeoutSeconds: 30 });
  const out = await s.call('terminal_output', { terminalId });
  await s.call('terminal_release', { terminalId });
  return out.output;
}

/** The new agent loop: one create; poll while it still runs. */
async function runAfter(s, command) {
  let result = await s.call('terminal_create', { command });
  if (result.error) return result.error;
  let output = result.output;
  while (result.running) {
    result = await s.call('terminal_wait_for_exit', { terminalId: result.terminalId });
    output += result.output;
  }
  return output;
}

function portOf(text) {
  const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(text ?? '');
  if (!match) throw new Error(`no port in ${JSON.stringify(text)}`);
  return match[1];
}

const simple = (name, command) => ({
  name,
  command,
  before: (s) => runBefore(s, command),
  after: (s) => runAfter(s, command),
});

const TASKS = [
  simple('build', 'npm run build'),
  simple('test', 'npm test'),
  simple('failing test', 'npm run test:fail'),
  simple('grep', 'grep -rn TODO src'),
  simple('git log', 'git log --oneline -20'),
  simple('git log --stat', 'git log -5 --stat'),
  simple('git status', 'git status'),
  simple('git diff --stat', 'git diff HEAD~3 --stat'),
  simple('failing command (ls)', 'ls does-not-exist'),
  simple('failing command (node)', `node -e "JSON.parse('{oops')"`),
  simple('5 MB log: cat', 'cat big.log'),
  simple('5 MB log: grep -c', 'grep -c ERROR big.log'),
  simple('5 MB log: tail', 'tail -n 50 big.log'),
  simple('ls', 'ls -la src'),
  simple('cat a file', 'cat package.json'),
  simple('find', "find . -name '*.js' -not -path './.git/*'"),
  simple('wc', 'wc -l src/*.js'),
  simple('node --version', 'node --version'),
  simple('sed a range', 'sed -n 1,40p src/file-1.js'),
  simple('du', 'du -sh src'),
  {
    name: 'dev server: start, curl, kill',
    command: 'node server.mjs; curl -s http://127.0.0.1:PORT/health',
    async before(s) {
      const { terminalId } = await s.call('terminal_create', { command: 'node server.mjs' });
      await s.call('terminal_wait_for_exit', { terminalId, timeoutSeconds: 1 });
      const port = portOf((await s.call('terminal_output', { terminalId })).output);
      const probed = await runBefore(s, `curl -s http://127.0.0.1:${port}/health`);
      await s.call('terminal_kill', { terminalId });
      await s.call('terminal_release', { terminalId });
      return probed;
    },
    async after(s) {
      const server = await s.call('terminal_create', { command: 'node server.mjs', waitSeconds: 1 });
      const probed = await runAfter(s, `curl -s http://127.0.0.1:${portOf(server.output)}/health`);
      await s.call('terminal_kill', { terminalId: server.terminalId });
      return probed;
    },
  },
  {
    name: 'tail -f: read twice, stop',
    command: 'tail -f app.log',
    async before(s, fixture) {
      const { terminalId } = await s.call('terminal_create', { command: 'tail -f app.log' });
      await s.call('terminal_wait_for_exit', { terminalId, timeoutSeconds: 0.5 });
      const first = (await s.call('terminal_output', { terminalId })).output;
      fixture.appendLog();
      await s.call('terminal_wait_for_exit', { terminalId, timeoutSeconds: 0.5 });
      const second = (await s.call('terminal_output', { terminalId })).output;
      await s.call('terminal_kill', { terminalId });
      await s.call('terminal_release', { terminalId });
      return first + second;
    },
    async after(s, fixture) {
      const started = await s.call('terminal_create', { command: 'tail -f app.log', waitSeconds: 0.5 });
      fixture.appendLog();
      const next = await s.call('terminal_wait_for_exit', {
        terminalId: started.terminalId,
        timeoutSeconds: 0.5,
      });
      await s.call('terminal_kill', { terminalId: started.terminalId });
      return started.output + next.output;
    },
  },
];

function git(cwd, ...args) {
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Bench',
      GIT_AUTHOR_EMAIL: 'bench@example.invalid',
      GIT_COMMITTER_NAME: 'Bench',
      GIT_COMMITTER_EMAIL: 'bench@example.invalid',
      GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
      GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
    },
  });
}

/** A deterministic project: sources, tests, a build script, a 5 MB log, a git history and an HTTP server. */
function makeFixture() {
  const dir = mkdtempSync(path.join(tmpdir(), 'termgate-transcripts-'));
  mkdirSync(path.join(dir, 'src'));
  mkdirSync(path.join(dir, 'test'));
  mkdirSync(path.join(dir, 'test-failing'));
  writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify(
      {
        name: 'fixture',
        version: '1.0.0',
        private: true,
        scripts: {
          build: 'node build.mjs',
          test: 'node --test test/',
          'test:fail': 'node --test test-failing/',
        },
      },
      null,
      2,
    )}\n`,
  );
  for (let i = 1; i <= 30; i++) {
    const lines = [`// file ${i}`];
    for (let j = 1; j <= 60; j++) {
      lines.push(
        j % 17 === 0 ? `// TODO(${i}.${j}): handle the edge case` : `export const value${j} = ${i * j};`,
      );
    }
    writeFileSync(path.join(dir, 'src', `file-${i}.js`), `${lines.join('\n')}\n`);
  }
  copyFileSync(path.join(FIXTURE_SOURCES, 'build.mjs'), path.join(dir, 'build.mjs'));
  for (let t = 1; t <= 3; t++) {
    const cases = Array.from(
      { length: 10 },
      (_, k) => `test('case ${t}.${k}', () => assert.strictEqual(${k} + ${k}, ${2 * k}));`,
    );
    writeFileSync(
      path.join(dir, 'test', `t${t}.test.mjs`),
      `import { test } from 'node:test';\nimport assert from 'node:assert';\n${cases.join('\n')}\n`,
    );
  }
  writeFileSync(
    path.join(dir, 'test-failing', 'f.test.mjs'),
    "import { test } from 'node:test';\nimport assert from 'node:assert';\ntest('passes', () => {});\ntest('totals match', () => assert.deepStrictEqual({ total: 41, items: [1, 2, 3] }, { total: 42, items: [1, 2, 3] }));\n",
  );
  const log = [];
  let size = 0;
  for (let i = 0; size < 5 * 1024 * 1024; i++) {
    const level = i % 97 === 0 ? 'ERROR' : i % 13 === 0 ? 'WARN' : 'INFO';
    const line = `2026-01-01T00:${String(Math.floor(i / 3600) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z ${level} worker-${i % 8} request ${i} handled in ${(i * 7) % 300} ms\n`;
    log.push(line);
    size += line.length;
  }
  writeFileSync(path.join(dir, 'big.log'), log.join(''));
  writeFileSync(path.join(dir, 'app.log'), 'boot: starting\nboot: config loaded\nboot: ready\n');
  copyFileSync(path.join(FIXTURE_SOURCES, 'server.mjs'), path.join(dir, 'server.mjs'));
  writeFileSync(path.join(dir, '.gitignore'), 'big.log\napp.log\n');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '.');
  git(dir, 'commit', '-q', '-m', 'initial import');
  for (let c = 1; c <= 25; c++) {
    appendFileSync(path.join(dir, 'src', `file-${c}.js`), `export const change${c} = ${c};\n`);
    git(dir, 'commit', '-q', '-am', `change ${c}: adjust file-${c}`);
  }
  appendFileSync(path.join(dir, 'src', 'file-1.js'), '// uncommitted\n');
  let appended = 0;
  return {
    dir,
    appendLog() {
      appended += 1;
      appendFileSync(
        path.join(dir, 'app.log'),
        Array.from({ length: 5 }, (_, k) => `request ${appended}.${k} handled\n`).join(''),
      );
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function main() {
  const fixture = makeFixture();
  const audits = mkdtempSync(path.join(tmpdir(), 'termgate-transcripts-audit-'));
  const before = new Session(BEFORE_BIN, fixture.dir, path.join(audits, 'before.jsonl'));
  const after = new Session(AFTER_BIN, fixture.dir, path.join(audits, 'after.jsonl'));
  const rows = [];
  try {
    await before.request('server/discover', { _meta: META });
    await after.request('server/discover', { _meta: META });
    // One untimed command each: the policy gate starts before the first task.
    await runBefore(before, 'true');
    await runAfter(after, 'true');
    for (const task of TASKS) {
      const measured = {};
      for (const [label, session] of [
        ['before', before],
        ['after', after],
      ]) {
        session.reset();
        const t0 = performance.now();
        const output = await task[label](session, fixture);
        measured[label] = {
          calls: session.calls,
          chars: session.chars,
          largest: session.largest,
          ms: performance.now() - t0,
          outputChars: (output ?? '').length,
        };
      }
      rows.push({ task, ...measured });
    }
  } finally {
    await before.close();
    await after.close();
    fixture.remove();
    rmSync(audits, { recursive: true, force: true });
  }
  print(rows);
}

function print(rows) {
  const out = (text = '') => process.stdout.write(`${text}\n`);
  const n = (value) => value.toLocaleString('en-US');
  out(
    `Run ${new Date().toISOString()} on ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}, load average ${loadavg()[0].toFixed(2)}.`,
  );
  out();
  out(
    '| # | task | calls before | calls after | chars before | chars after | largest result before | largest after | ms before | ms after |',
  );
  out('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  const total = { cb: 0, ca: 0, xb: 0, xa: 0 };
  rows.forEach(({ task, before, after }, i) => {
    total.cb += before.calls;
    total.ca += after.calls;
    total.xb += before.chars;
    total.xa += after.chars;
    out(
      `| ${i + 1} | ${task.name} (\`${task.command}\`) | ${before.calls} | ${after.calls} | ${n(before.chars)} | ${n(after.chars)} | ${n(before.largest)} | ${n(after.largest)} | ${before.ms.toFixed(0)} | ${after.ms.toFixed(0)} |`,
    );
  });
  out(
    `| | **total** | **${total.cb}** | **${total.ca}** | **${n(total.xb)}** | **${n(total.xa)}** | | | | |`,
  );
  out();
  const oneCall = rows.filter(({ after }) => after.calls === 1).length;
  const simpleTasks = rows.filter(
    ({ task }) =>
      task.before !== undefined && !task.command.includes('PORT') && !task.command.startsWith('tail -f'),
  ).length;
  out(
    `Tasks done in one call after: ${oneCall} of ${simpleTasks} single-command tasks. Largest single result after: ${n(Math.max(...rows.map((r) => r.after.largest)))} characters (budget 30,000).`,
  );
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exitCode = 1;
});
