import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from './core/package-root.js';

/** The package version, read once. */
export const VERSION: string = (
  JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
