import type { TSchema } from 'typebox';
import { describeValidation } from '../errors/error-handler.js';
import { AuthTokenCreateSchema, UserCreateSchema } from '../features/identity/user-schema.js';
import { makeAjv } from '../http/validator.js';
import { CliError } from './api-client.js';

let ajv: ReturnType<typeof makeAjv> | undefined;

/**
 * Checks a body as the API checks the same request: against the route's body schema,
 * with the API's validator, failing with the API's 400 `detail`. The body schema is
 * where the rules live (a password of 8 to 1024 characters, the username pattern, a token
 * name's length), and the CLI hands the services its input directly, so it applies it too.
 */
function checkBody(schema: TSchema, body: Record<string, unknown>): void {
  ajv ??= makeAjv(false);
  const validate = ajv.compile(schema);
  const input = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
  if (validate(input)) return;
  throw new CliError(describeValidation(validate.errors ?? [], 'body').detail);
}

/** `user create` input, checked as POST /api/users checks it. */
export function checkUserCreate(body: {
  username: string;
  password?: string | undefined;
  is_admin: boolean;
  permissions: string[];
}): void {
  checkBody(UserCreateSchema, body);
}

/** `token create` input, checked as POST /api/authtokens checks it. */
export function checkTokenCreate(body: {
  token_type: string;
  name: string;
  expires_at?: string | undefined;
}) {
  checkBody(AuthTokenCreateSchema, body);
}
