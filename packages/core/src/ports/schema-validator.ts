/** One violation, located by a JSON pointer into the validated value. */
export interface SchemaViolation {
  /** JSON pointer, e.g. `/env/PATH`; empty for the root. */
  readonly path: string;
  readonly message: string;
}

export type Validate = (value: unknown) => readonly SchemaViolation[];

/** Compiles a JSON Schema once; the returned function validates many times. */
export interface SchemaValidator {
  compile(schema: Readonly<Record<string, unknown>>): Validate;
}
