import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import type { SchemaValidator, SchemaViolation, Validate } from '../ports/schema-validator.js';

function describe(error: ErrorObject): SchemaViolation {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') {
    return { path: `${error.instancePath}/${String(params.missingProperty)}`, message: 'is required' };
  }
  if (error.keyword === 'additionalProperties') {
    return {
      path: `${error.instancePath}/${String(params.additionalProperty)}`,
      message: 'is not a known property',
    };
  }
  return { path: error.instancePath, message: error.message ?? 'is invalid' };
}

/** JSON Schema 2020-12 validation with ajv; all errors are reported, not only the first. */
export class AjvSchemaValidator implements SchemaValidator {
  private readonly ajv = new Ajv2020({ allErrors: true, strict: true });

  compile(schema: Readonly<Record<string, unknown>>): Validate {
    const validate = this.ajv.compile(schema);
    return (value) => (validate(value) ? [] : (validate.errors ?? []).map(describe));
  }
}
