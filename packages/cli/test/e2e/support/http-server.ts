/**
 * `termgate serve --http 127.0.0.1:0` as a child process (the built CLI):
 * started, its endpoint URL read from the line it prints on stderr, stopped
 * with SIGTERM. Its audit trail is a fresh file (`auditArgs`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { assertServerBuilt, auditArgs, REPO_ROOT, SERVER_BIN } from './wire-server.js';

const URL_LINE = /serving MCP over Streamable HTTP at (\S+?)["\s]/;

export class HttpServer {
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
    private readonly output: { text: string },
  ) {}

  /** Everything the server wrote on stderr so far. */
  get stderr(): string {
    return this.output.text;
  }

  /** Starts `serve --http HOST:PORT` with `args` and waits for its URL (rejects with its stderr if it exits first). */
  static async start(args: readonly string[], listen = '127.0.0.1:0'): Promise<HttpServer> {
    assertServerBuilt();
    const child = spawn(
      process.execPath,
      [SERVER_BIN, 'serve', '--http', listen, '--log-format', 'json', ...auditArgs(), ...args],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const output = { text: '' };
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no URL within 20 s; stderr:\n${output.text}`)),
        20_000,
      );
      child.stderr?.on('data', (chunk: Buffer) => {
        output.text += chunk.toString();
        const match = URL_LINE.exec(output.text);
        if (match) {
          clearTimeout(timer);
          resolve(match[1] as string);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`serve --http exited (${code}) before listening; stderr:\n${output.text}`));
      });
    });
    const server = new HttpServer(child, url, output);
    server.stdoutText = () => stdout;
    return server;
  }

  /** What the server wrote on stdout (nothing: HTTP carries the protocol). */
  stdoutText: () => string = () => '';

  /** SIGTERM, then the exit code (SIGKILL after 20 s). */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  }
}

/** The headers of a 2026-07-28 POST for `method` (and its `Mcp-Name`). */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name !== undefined && { 'mcp-name': name }),
  };
}
