import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TERMGATE_VERSION } from '../src/version.js';

test('TERMGATE_VERSION matches packages/cli/package.json', () => {
  const manifest = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  expect(TERMGATE_VERSION).toBe(manifest.version);
});
