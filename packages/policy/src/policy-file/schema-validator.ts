import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { SOURCE_ROOT } from '../shell/module-location.js';

/** Absolute path of the policy JSON Schema shipped with the package (`schema/policy.schema.json`). */
export const POLICY_SCHEMA_PATH: string = join(SOURCE_ROOT, 'schema', 'policy.schema.json');

let compiled: ValidateFunction | null = null;

/** Validates a parsed policy document against the shipped schema; returns every error (empty when valid). */
export function validatePolicySchema(data: unknown): readonly ErrorObject[] {
  if (!compiled) {
    const schema = JSON.parse(readFileSync(POLICY_SCHEMA_PATH, 'utf8')) as object;
    compiled = new Ajv({ allErrors: true, strict: true }).compile(schema);
  }
  return compiled(data) ? [] : [...(compiled.errors ?? [])];
}
