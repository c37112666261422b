/**
 * The adapters of @termgate/core, reachable only as `@termgate/core/adapters`:
 * the technology behind its ports, for the composition root (the CLI), tests
 * and benchmarks. Named exports only.
 */

export { AjvSchemaValidator } from './ajv-schema-validator.js';
