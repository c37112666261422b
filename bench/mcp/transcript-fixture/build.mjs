// The transcript fixture's "build": one line per source file, then a summary.
import { readdirSync } from 'node:fs';

for (const file of readdirSync('src').sort()) console.log(`compiling src/${file} ... ok`);
console.log('built 30 modules');
