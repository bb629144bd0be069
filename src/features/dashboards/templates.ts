import { fieldError } from '../../errors/errors.js';
import { MAX_TEMPLATE_PATH_LENGTH } from './dashboard-schema.js';

export const BUILTIN_PREFIX = 'builtin/';

/** An entry of `GET /api/dashboards/templates`. */
export interface TemplateInfo {
  path: string;
  title: string;
  builtin: boolean;
}

export const isBuiltinPath = (path: string) => path === 'builtin' || path.startsWith(BUILTIN_PREFIX);

/**
 * A template path: 1-200 ASCII letters, digits and `_-./`, `/`-separated
 * segments that are neither empty nor `.` / `..` (so no leading or trailing `/`): a path
 * names a template, never a place to climb out of. Throws a 400 naming `field`.
 */
export function checkTemplatePath(path: string, field: string): void {
  const fail = (message: string) => {
    throw fieldError(field, message);
  };
  if (path.length < 1 || path.length > MAX_TEMPLATE_PATH_LENGTH)
    fail(`Must be 1-${MAX_TEMPLATE_PATH_LENGTH} characters long.`);
  if (!/^[A-Za-z0-9_./-]+$/.test(path)) fail('Only letters, digits and _ - . / are allowed.');
  if (path.startsWith('/')) fail('Must be relative: no leading "/".');
  const segments = path.split('/');
  if (segments.includes('..')) fail('Must not contain a ".." segment.');
  if (segments.includes('.')) fail('Must not contain a "." segment.');
  if (segments.includes('')) fail('Must not contain empty segments or end with "/".');
}
