import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import { keyId } from './checkpoint.js';

/**
 * Ed25519 keys of signed checkpoints, as PEM files: the private key in
 * PKCS#8, the public key in SPKI (what `openssl pkey` reads and writes).
 */

/** Writes `text` to a new file with `mode`; refuses to replace an existing file. */
function writeNew(path: string, text: string, mode: number): void {
  const fd = openSync(path, 'wx', mode);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes a key pair: `privatePath` (mode 0600) and `privatePath.pub` (0644).
 * Neither may exist yet (throws `EEXIST`). Returns the public key's path and id.
 */
export function generateSigningKeyPair(privatePath: string): { publicPath: string; keyId: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicPath = `${privatePath}.pub`;
  writeNew(publicPath, publicKey.export({ type: 'spki', format: 'pem' }).toString(), 0o644);
  writeNew(privatePath, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 0o600);
  return { publicPath, keyId: keyId(publicKey) };
}

/**
 * Reads an Ed25519 private key. Refuses (throws an `Error` that says why) a
 * file that is not a regular file, that group or others may read or write
 * (like ssh: `chmod 600 FILE`), or that is not an Ed25519 private key.
 */
export function loadSigningKey(path: string): KeyObject {
  const fd = openSync(path, 'r');
  let text: string;
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new Error(`signing key ${path} is not a regular file`);
    if ((stats.mode & 0o077) !== 0) {
      throw new Error(
        `signing key ${path} is accessible by group or others (mode ${(stats.mode & 0o777).toString(8)}): run chmod 600 ${path}`,
      );
    }
    text = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(text);
  } catch (error) {
    throw new Error(`signing key ${path} is not a PEM private key: ${(error as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new Error(`signing key ${path} is a ${key.asymmetricKeyType} key, not Ed25519`);
  }
  return key;
}

/** Reads Ed25519 public keys (PEM SPKI; a private key file is accepted for its public half), by key id. */
export function loadPublicKeys(paths: readonly string[]): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  for (const path of paths) {
    const text = readFileSync(path, 'utf8');
    let key: KeyObject;
    try {
      key = createPublicKey(text);
    } catch (error) {
      throw new Error(`public key ${path} is not a PEM public key: ${(error as Error).message}`);
    }
    if (key.asymmetricKeyType !== 'ed25519') {
      throw new Error(`public key ${path} is a ${key.asymmetricKeyType} key, not Ed25519`);
    }
    keys.set(keyId(key), key);
  }
  return keys;
}
