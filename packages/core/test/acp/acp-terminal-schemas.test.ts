import { ACP_TERMINAL_METHODS } from '../../src/acp/acp-methods.js';
import { ACP_TERMINAL_PARAMS_SCHEMAS } from '../../src/acp/acp-terminal-schemas.js';
import { AjvSchemaValidator } from '../../src/adapters/ajv-schema-validator.js';
import { AcpSchema } from './support/acp-schema.js';

const schema = new AcpSchema();
const validator = new AjvSchemaValidator();

const CREATE_CASES: unknown[] = [
  { sessionId: 's', command: 'ls' },
  {
    sessionId: 's',
    command: 'ls',
    args: ['-l'],
    env: [{ name: 'A', value: 'b' }],
    cwd: '/',
    outputByteLimit: 0,
  },
  { sessionId: 's', command: 'ls', cwd: null, outputByteLimit: null, _meta: null },
  { sessionId: 's', command: 'ls', extra: true },
  { sessionId: 's' },
  { command: 'ls' },
  { sessionId: 1, command: 'ls' },
  { sessionId: 's', command: ['ls'] },
  { sessionId: 's', command: 'ls', args: 'ls' },
  { sessionId: 's', command: 'ls', args: [1] },
  { sessionId: 's', command: 'ls', env: { A: 'b' } },
  { sessionId: 's', command: 'ls', env: [{ name: 'A' }] },
  { sessionId: 's', command: 'ls', env: [{ name: 'A', value: 1 }] },
  { sessionId: 's', command: 'ls', cwd: 3 },
  { sessionId: 's', command: 'ls', outputByteLimit: -1 },
  { sessionId: 's', command: 'ls', outputByteLimit: 2.5 },
  { sessionId: 's', command: 'ls', outputByteLimit: '10' },
  [],
  'x',
];

const TERMINAL_CASES: unknown[] = [
  { sessionId: 's', terminalId: 't' },
  { sessionId: 's', terminalId: 't', _meta: { a: 1 } },
  { sessionId: 's' },
  { terminalId: 't' },
  { sessionId: 's', terminalId: 5 },
  { sessionId: null, terminalId: 't' },
  {},
];

const DEFS: Record<string, string> = {
  [ACP_TERMINAL_METHODS.create]: 'CreateTerminalRequest',
  [ACP_TERMINAL_METHODS.output]: 'TerminalOutputRequest',
  [ACP_TERMINAL_METHODS.waitForExit]: 'WaitForTerminalExitRequest',
  [ACP_TERMINAL_METHODS.kill]: 'KillTerminalRequest',
  [ACP_TERMINAL_METHODS.release]: 'ReleaseTerminalRequest',
};

describe('the transcribed params schemas are deliberately more lenient in one point', () => {
  test('null args and env are accepted (the schema marks them x-deserialize-default-on-null)', () => {
    const value = { sessionId: 's', command: 'ls', args: null, env: null };
    expect(validator.compile(ACP_TERMINAL_PARAMS_SCHEMAS['terminal/create'])(value)).toEqual([]);
    expect(schema.errors('CreateTerminalRequest', value)).not.toEqual([]);
  });
});

describe('the transcribed params schemas agree with ACP v1 schema.json', () => {
  for (const [method, def] of Object.entries(DEFS)) {
    test(`${method} ≡ $defs/${def}`, () => {
      const validate = validator.compile(
        ACP_TERMINAL_PARAMS_SCHEMAS[method as keyof typeof ACP_TERMINAL_PARAMS_SCHEMAS],
      );
      const cases = method === ACP_TERMINAL_METHODS.create ? CREATE_CASES : TERMINAL_CASES;
      for (const value of cases) {
        const ours = validate(value).length === 0;
        const acp = schema.errors(def, value).length === 0;
        expect({ value, ours }).toEqual({ value, ours: acp });
      }
    });
  }
});
