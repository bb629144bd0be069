import Ajv from 'ajv';
import addFormats from 'ajv-formats';

/**
 * The validator the API checks requests with: bodies with their real JSON types
 * (`coerce` false), query strings and paths, which arrive as text, coerced. The CLI checks
 * what it hands the services directly with the same one, so both refuse alike.
 */
export function makeAjv(coerce: boolean): Ajv.default {
  const ajv = new Ajv.default({
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: false,
  });
  addFormats.default(ajv);
  return ajv;
}
