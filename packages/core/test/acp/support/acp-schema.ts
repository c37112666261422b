import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';

/** ACP v1's normative schema as shipped in @agentclientprotocol/sdk 2.4.0 (a root devDependency). */
export const ACP_SCHEMA_PATH = path.resolve(
  import.meta.dirname,
  '../../../../../node_modules/@agentclientprotocol/sdk/schema/v1/schema.json',
);

/** Validates values against `$defs` of the ACP schema the ACP SDK ships: the wire shapes are checked against the specification's own schema. */
export class AcpSchema {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });

  constructor() {
    for (const format of ['int32', 'int64', 'uint16', 'uint32', 'uint64', 'double', 'uri']) {
      this.ajv.addFormat(format, { type: 'number', validate: () => true });
    }
    this.ajv.addSchema(JSON.parse(readFileSync(ACP_SCHEMA_PATH, 'utf8')), 'acp');
  }

  /** The ajv error messages for `value` against `$defs/<name>`; empty when valid. */
  errors(name: string, value: unknown): string[] {
    const validate = this.ajv.getSchema(`acp#/$defs/${name}`);
    if (!validate) throw new Error(`no $defs/${name} in the ACP schema`);
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  }
}
