import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where Logscope is installed (the folder holding package.json). This module is two
 * levels below it as `src/core/package-root.ts` (tsx, tests) and inside the build's
 * `dist/cli/` bundle alike, so one relative path serves both; files the server reads at
 * run time (proto/, docs/, dist/ui) are found from here, never relative to a module.
 */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
