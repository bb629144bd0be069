/**
 * Where a backup may be written (docs/api/backups.md "Refusals"), checked in the table's
 * order before anything is written: the first refusal that applies answers.
 */
import { realpathSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { createError, fieldError } from '../../errors/errors.js';

export interface TargetRules {
  dataDir: string;
  coldDir: string;
  /** Empty: anywhere. */
  backupRoot: string;
}

/** A path with the symbolic links of its existing part resolved (the rest as written). */
export function resolveExisting(p: string): string {
  let existing = p;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync(existing), ...rest.reverse());
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return p;
      rest.push(path.basename(existing));
      existing = parent;
    }
  }
}

const inside = (child: string, folder: string) =>
  child === folder || child.startsWith(folder.endsWith(path.sep) ? folder : `${folder}${path.sep}`);

/** The path as written, once it passes the shape checks (absent, relative, `..`, NUL). */
export function checkPathShape(value: unknown, field = 'path'): string {
  if (typeof value !== 'string' || value === '' || value.length > 4096)
    throw fieldError(field, 'must be an absolute folder path of 1 to 4,096 characters');
  if (!path.isAbsolute(value))
    throw createError(
      400,
      'path_not_absolute',
      `${field} must be absolute (it is on the server's machine): "${value}"`,
      {
        [field]: ['must be absolute'],
      },
    );
  if (value.includes('\0') || value.split(/[\\/]/).includes('..'))
    throw createError(400, 'path_traversal', `${field} may not hold a ".." segment or a NUL character.`, {
      [field]: ['no ".." segment or NUL'],
    });
  return value;
}

/** Checks a new backup's folder: rules 1-7 of the refusals. */
export async function checkTarget(value: unknown, rules: TargetRules): Promise<string> {
  const written = checkPathShape(value);
  const real = resolveExisting(written);
  for (const dir of [rules.dataDir, rules.coldDir])
    if (inside(real, resolveExisting(dir)))
      throw createError(
        400,
        'path_inside_data_dir',
        'A backup may not be written inside the data dir or the cold tier’s folder: it would copy itself, and go with them.',
        { path: ['inside the data dir or coldDir'] },
      );
  if (rules.backupRoot && !inside(real, resolveExisting(rules.backupRoot)))
    throw createError(
      400,
      'path_outside_backup_root',
      `This server writes backups only inside its backupRoot (${rules.backupRoot}).`,
      { path: ['outside backupRoot'] },
    );
  const parent = path.dirname(real);
  let parentIsFolder = false;
  try {
    parentIsFolder = statSync(parent).isDirectory();
  } catch {
    // missing
  }
  if (!parentIsFolder)
    throw createError(
      400,
      'parent_missing',
      `The folder that would hold the backup (${parent}) does not exist.`,
      {
        path: ['its parent folder does not exist'],
      },
    );
  let exists: 'no' | 'empty' | 'used' = 'no';
  try {
    if (statSync(real).isDirectory()) exists = (await readdir(real)).length ? 'used' : 'empty';
    else exists = 'used';
  } catch {
    exists = 'no';
  }
  if (exists === 'used')
    throw createError(
      409,
      'backup_target_exists',
      `${written} exists and is a file or a folder with something in it: a backup is written into a new or empty folder.`,
    );
  return real;
}
