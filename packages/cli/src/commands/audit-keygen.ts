import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { generateSigningKeyPair } from '@termgate/audit';
import { parseAuditArgs } from './audit-args.js';
import type { CliIo } from './cli-io.js';

/**
 * `termgate audit keygen FILE`: writes an Ed25519 key pair for signed
 * checkpoints, FILE (private, mode 0600) and FILE.pub (public, 0644).
 * Refuses to overwrite either. A missing or unusable directory, an existing
 * key and a permission problem are thrown as one-line errors that name the
 * path (`termgate audit` prints them and exits 2, like its other errors);
 * nothing is written then.
 */
export function keygenCommand(argv: readonly string[], io: CliIo): number {
  const { files } = parseAuditArgs(argv, {});
  const privatePath = files[0]!;
  assertDirectory(dirname(privatePath));
  let written: { publicPath: string; keyId: string };
  try {
    written = generateSigningKeyPair(privatePath);
  } catch (error) {
    throw new Error(`keygen: ${explain(error, privatePath)}`, { cause: error });
  }
  io.stdout.write(
    `private key ${privatePath} (mode 0600): give it to serve or acp-proxy with --audit-signing-key\n` +
      `public key ${written.publicPath} (key id ${written.keyId}): give it to audit verify with --public-key\n`,
  );
  return 0;
}

function assertDirectory(dir: string): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error(`keygen: directory ${dir} does not exist: create it first (mkdir -m 700 ${dir})`);
    throw new Error(`keygen: cannot use directory ${dir}: ${(error as Error).message}`, { cause: error });
  }
  if (!isDirectory) throw new Error(`keygen: ${dir} is not a directory`);
}

function explain(error: unknown, privatePath: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  const path = (error as NodeJS.ErrnoException).path ?? privatePath;
  if (code === 'EEXIST') return `${path} already exists (EEXIST): keygen never overwrites a key`;
  if (code === 'EACCES' || code === 'EPERM') return `cannot write ${path}: permission denied (${code})`;
  return (error as Error)?.message ?? String(error);
}
