/**
 * The look of a report, one place for the PDF, DOCX and XLSX renderers and their charts:
 * colours by role, and type sizes in points by medium (a landscape PDF page holds more
 * columns at a smaller size than a spreadsheet shows by default). Each renderer converts
 * to its own units (`docxColor`, `xlsxColor`; half-points in DOCX).
 */
export const REPORT_COLORS = {
  /** Notes under a heading, footers, chart titles in documents. */
  note: '#595959',
  /** A table's header row. */
  headerFill: '#e7e6e6',
  /** Lines between the rows of a PDF table. */
  rule: '#d9d9d9',
  /** Cell borders of a DOCX table. */
  border: '#bfbfbf',
  /** Labels and axes inside charts. */
  chartText: '#333333',
} as const;

/** Type sizes (pt) by role and medium. */
export const REPORT_TYPE = {
  pdf: { title: 16, heading: 12, note: 9, cell: 7.5, footer: 8 },
  docx: { cell: 8, caption: 8 },
  xlsx: { title: 14, note: 11, header: 11 },
  chart: { label: 10, pieLabel: 11 },
} as const;

/** Fonts by medium: what the reader is sure to have (XLSX) or what is embedded (charts). */
export const REPORT_FONTS = { xlsx: 'Calibri', chart: 'DejaVu Sans' } as const;

/** A colour as WordprocessingML writes it (`595959`). */
export const docxColor = (color: string): string => color.slice(1).toUpperCase();

/** A colour as ExcelJS takes it (`FF595959`, opaque). */
export const xlsxColor = (color: string): string => `FF${docxColor(color)}`;
