import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { boundSocketPaths } from '../../src/sandbox/host-sockets.js';

/**
 * `boundSocketPaths` on tables in the kernel's `/proc/net/unix` format
 * (proc(5): the inode is printed `%5lu`, so a small inode is padded with
 * spaces): absolute paths only, whatever the padding.
 */
describe('boundSocketPaths', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'termgate-unix-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const table = (lines: string[]): string => {
    const file = join(dir, `unix-${lines.length}-${Math.random()}`);
    writeFileSync(file, `Num       RefCount Protocol Flags    Type St Inode Path\n${lines.join('\n')}\n`);
    return file;
  };

  it('takes the absolute paths, with a padded inode too, and leaves out abstract and relative names', () => {
    const file = table([
      '0000000000000000: 00000002 00000000 00010000 0001 01 123456 /run/wide.sock',
      '0000000000000000: 00000002 00000000 00010000 0001 01   123 /run/padded.sock',
      '0000000000000000: 00000002 00000000 00010000 0001 01 23456 @abstract',
      '0000000000000000: 00000002 00000000 00010000 0001 01 23457 relative.sock',
      '0000000000000000: 00000003 00000000 00000000 0001 03 23458',
    ]);
    expect(boundSocketPaths(file)).toEqual(['/run/wide.sock', '/run/padded.sock']);
  });

  it('a table that cannot be read gives no paths', () => {
    expect(boundSocketPaths(join(dir, 'missing'))).toEqual([]);
  });
});
