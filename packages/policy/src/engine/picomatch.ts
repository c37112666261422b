import * as loaded from 'picomatch';

type Picomatch = typeof import('picomatch');

/**
 * picomatch, whichever way the module system hands over its CommonJS
 * `module.exports = picomatch`: as the default export (Node ESM) or as the
 * module object itself (CommonJS transpilation without interop, as in the
 * tests).
 */
export const picomatch: Picomatch =
  (loaded as unknown as { default?: Picomatch }).default ?? (loaded as unknown as Picomatch);
