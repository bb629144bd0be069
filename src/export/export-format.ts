/** The file formats an export or a report can be rendered in. */
export const EXPORT_FORMATS = ['csv', 'xlsx', 'docx', 'pdf', 'json', 'ndjson'] as const;

export type ExportFormat = (typeof EXPORT_FORMATS)[number];

// Misspellings clients already send: the seed API documents `xslx` as an accepted ftype.
export const ALIASES: Readonly<Record<string, ExportFormat>> = { xslx: 'xlsx' };

export const isExportFormat = (s: string): s is ExportFormat =>
  (EXPORT_FORMATS as readonly string[]).includes(s);

/**
 * The format named by an `ftype` (case-insensitive, surrounding blanks ignored, aliases
 * such as `xslx` accepted), or `null` when it names none.
 */
export function parseExportFormat(s: string): ExportFormat | null {
  const name = s.trim().toLowerCase();
  if (isExportFormat(name)) return name;
  return Object.hasOwn(ALIASES, name) ? (ALIASES[name] ?? null) : null;
}
