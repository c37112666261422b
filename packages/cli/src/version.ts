/** termgate's version; a test keeps it equal to packages/cli/package.json. */
export const TERMGATE_VERSION = '0.1.0';
