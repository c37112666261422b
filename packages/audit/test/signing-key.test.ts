import { generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { generateSigningKeyPair, keyId, loadPublicKeys, loadSigningKey } from '@termgate/audit';
import { tempDir } from './support/temp-dir.js';

/** The open file descriptors of this process (Linux: /proc/self/fd). */
const openFds = (): number => fs.readdirSync('/proc/self/fd').length;

/**
 * The key files of signed checkpoints: what is refused, with which sentence,
 * and that reading or writing keys leaves no file open.
 */
describe('signing key files', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.cleanup());

  test('a directory is refused as a signing key, as not a regular file', () => {
    const path = join(dir.path, 'key-dir');
    fs.mkdirSync(path, { mode: 0o700 });
    expect(() => loadSigningKey(path)).toThrow(`signing key ${path} is not a regular file`);
  });

  test('text that is no PEM key is refused, as a private key and as a public key', () => {
    const path = join(dir.path, 'junk');
    fs.writeFileSync(path, 'not a key\n', { mode: 0o600 });
    expect(() => loadSigningKey(path)).toThrow(
      new RegExp(`^signing key ${path} is not a PEM private key: .+`),
    );
    expect(() => loadPublicKeys([path])).toThrow(
      new RegExp(`^public key ${path} is not a PEM public key: .+`),
    );
  });

  test('a public key that is not Ed25519 is refused', () => {
    const path = join(dir.path, 'rsa.pub');
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    fs.writeFileSync(path, publicKey.export({ type: 'spki', format: 'pem' }));
    expect(() => loadPublicKeys([path])).toThrow(`public key ${path} is a rsa key, not Ed25519`);
  });

  test('public keys are found by their key id; a private key file gives its public half', () => {
    const path = join(dir.path, 'k');
    const made = generateSigningKeyPair(path);
    const keys = loadPublicKeys([made.publicPath, path]);
    expect([...keys.keys()]).toEqual([made.keyId]);
    expect(keyId(loadSigningKey(path))).toBe(made.keyId);
  });

  test('making and reading keys, and refusing one, leave no file descriptor open', () => {
    const before = openFds();
    for (let n = 0; n < 20; n += 1) {
      const path = join(dir.path, `k${n}`);
      generateSigningKeyPair(path);
      loadSigningKey(path);
      fs.chmodSync(path, 0o640);
      expect(() => loadSigningKey(path)).toThrow(/accessible by group or others/);
    }
    expect(openFds()).toBe(before);
  });
});
