/**
 * The `pattern` check of structural-schema validation (apiextensions-apiserver
 * pkg/apiserver/schema/validation.go validateValueValidation): every pattern must compile as a Go
 * regexp when the CRD is written. The API server sorts these errors by their text.
 */
import type { JSONSchemaProps } from '../apiextensions.ts';
import { FieldError } from '../apimachinery/field-error.ts';
import { childPath, indexPath, keyPath } from '../apimachinery/field-path.ts';
import { compileGoRegexp } from '../apimachinery/go-regexp.ts';

function walk(schema: JSONSchemaProps | undefined, path: string, errors: FieldError[]): void {
  if (!schema) return;
  if (schema.items && !Array.isArray(schema.items)) walk(schema.items, childPath(path, 'items'), errors);
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    walk(property, keyPath(childPath(path, 'properties'), name), errors);
  }
  if (typeof schema.additionalProperties === 'object') {
    walk(schema.additionalProperties, childPath(path, 'additionalProperties'), errors);
  }
  for (const junctor of ['allOf', 'anyOf', 'oneOf'] as const) {
    for (const [i, nested] of (schema[junctor] ?? []).entries()) {
      walk(nested, indexPath(childPath(path, junctor), i), errors);
    }
  }
  walk(schema.not, childPath(path, 'not'), errors);
  if (schema.pattern) {
    try {
      compileGoRegexp(schema.pattern);
    } catch (error) {
      errors.push(
        new FieldError(
          'FieldValueInvalid',
          childPath(path, 'pattern'),
          schema.pattern,
          `must be a valid regular expression, but isn't: ${(error as Error).message}`,
        ),
      );
    }
  }
}

/** The errors the API server reports for patterns that do not compile, sorted as it sorts them. */
export function invalidPatterns(openAPIV3Schema: JSONSchemaProps, basePath: string): FieldError[] {
  const errors: FieldError[] = [];
  walk(openAPIV3Schema, basePath, errors);
  return errors.sort((a, b) => {
    const x = a.toString();
    const y = b.toString();
    return x < y ? -1 : x > y ? 1 : 0;
  });
}
