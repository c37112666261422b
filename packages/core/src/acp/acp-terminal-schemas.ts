import { ACP_TERMINAL_METHODS, type AcpTerminalMethod } from './acp-methods.js';

type Schema = Readonly<Record<string, unknown>>;

/*
 * The params of the five methods, transcribed from ACP v1 `schema/v1/schema.json`
 * (`$defs` CreateTerminalRequest, TerminalOutputRequest, WaitForTerminalExitRequest,
 * KillTerminalRequest, ReleaseTerminalRequest, EnvVariable) into the strict
 * ajv dialect the core's validator uses:
 * - `["x", "null"]` unions become `anyOf`;
 * - the Rust-style `format: uint64` is dropped (its `minimum: 0` stays);
 * - `_meta` is not checked: the schema marks it `x-deserialize-default-on-error`,
 *   so a malformed `_meta` is ignored, not refused;
 * - `null` for `args` and `env` is accepted (`x-deserialize-default-on-null`).
 * Unknown properties are allowed, as in the schema. A test checks these
 * schemas against the real schema on a corpus of valid and invalid params.
 */
const sessionId = { type: 'string' } as const;
const terminalId = { type: 'string' } as const;

const terminalRequest: Schema = {
  type: 'object',
  properties: { sessionId, terminalId },
  required: ['sessionId', 'terminalId'],
};

const createTerminalRequest: Schema = {
  type: 'object',
  properties: {
    sessionId,
    command: { type: 'string' },
    args: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }] },
    env: {
      anyOf: [
        {
          type: 'array',
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, value: { type: 'string' } },
            required: ['name', 'value'],
          },
        },
        { type: 'null' },
      ],
    },
    cwd: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    outputByteLimit: { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }] },
  },
  required: ['sessionId', 'command'],
};

/** Params schema of each method. */
export const ACP_TERMINAL_PARAMS_SCHEMAS: Readonly<Record<AcpTerminalMethod, Schema>> = Object.freeze({
  [ACP_TERMINAL_METHODS.create]: createTerminalRequest,
  [ACP_TERMINAL_METHODS.output]: terminalRequest,
  [ACP_TERMINAL_METHODS.waitForExit]: terminalRequest,
  [ACP_TERMINAL_METHODS.kill]: terminalRequest,
  [ACP_TERMINAL_METHODS.release]: terminalRequest,
});
