import { generateSigningKeyPair } from '@termgate/audit';
import { parseAuditArgs } from './audit-args.js';
import type { CliIo } from './cli-io.js';

/**
 * `termgate audit keygen FILE`: writes an Ed25519 key pair for signed
 * checkpoints, FILE (private, mode 0600) and FILE.pub (public, 0644).
 * Refuses to overwrite either (the error, with EEXIST, is thrown).
 */
export function keygenCommand(argv: readonly string[], io: CliIo): number {
  const { files } = parseAuditArgs(argv, {});
  const privatePath = files[0]!;
  const { publicPath, keyId } = generateSigningKeyPair(privatePath);
  io.stdout.write(
    `private key ${privatePath} (mode 0600): give it to serve or acp-proxy with --audit-signing-key\n` +
      `public key ${publicPath} (key id ${keyId}): give it to audit verify with --public-key\n`,
  );
  return 0;
}
