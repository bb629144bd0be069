import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import { cellText, jsonText, truncateText, xmlSafe } from '../../../src/export/cells.js';
import { fitColumns } from '../../../src/export/column-widths.js';
import { inertCell } from '../../../src/export/csv-renderer.js';
import { EXPORT_FORMATS, parseExportFormat } from '../../../src/export/export-format.js';
import { winAnsiText } from '../../../src/export/pdf-text.js';
import { sheetName } from '../../../src/export/xlsx-renderer.js';
import { readZipEntry } from '../../../src/export/zip-entry.js';

describe('parseExportFormat', () => {
  it('takes every format, case-insensitively, and the xslx alias', () => {
    for (const f of EXPORT_FORMATS) {
      expect(parseExportFormat(f)).toBe(f);
      expect(parseExportFormat(f.toUpperCase())).toBe(f);
    }
    expect(parseExportFormat('xslx')).toBe('xlsx');
    expect(parseExportFormat('XSLX')).toBe('xlsx');
    expect(parseExportFormat(' Pdf ')).toBe('pdf');
  });

  it('gives null for anything else', () => {
    for (const s of ['', 'xls', 'doc', 'html', 'csv2', 'toString', '__proto__', 'constructor']) {
      expect(parseExportFormat(s), s).toBeNull();
    }
  });
});

describe('cellText', () => {
  it('renders each kind of value', () => {
    expect(cellText(1_705_320_000.5, 'time', 'Europe/Paris')).toBe('2024-01-15 13:00:00.500+01:00');
    expect(cellText(new Date(Date.UTC(2024, 0, 15, 12)), 'string', 'Europe/Paris')).toBe(
      '2024-01-15 13:00:00.000+01:00',
    );
    expect(cellText('not a time', 'time', 'UTC')).toBe('not a time');
    expect(cellText(Number.NaN, 'time', 'UTC')).toBe('NaN');
    expect(cellText(1e20, 'time', 'UTC')).toBe('100000000000000000000');
    expect(cellText(1.5, 'number', 'UTC')).toBe('1.5');
    expect(cellText(12345678901234567890n, 'number', 'UTC')).toBe('12345678901234567890');
    expect(cellText(true, 'string', 'UTC')).toBe('true');
    expect(cellText(null, 'string', 'UTC')).toBe('');
    expect(cellText(undefined, 'json', 'UTC')).toBe('');
    expect(cellText({ a: [1, 'x'], b: null }, 'json', 'UTC')).toBe('{"a":[1,"x"],"b":null}');
    expect(cellText('plain', 'json', 'UTC')).toBe('plain');
    expect(cellText({ big: 1n }, 'json', 'UTC')).toBe('{"big":"1"}');
  });

  it('survives values JSON cannot hold', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(jsonText(circular)).toBe('[object Object]');
  });
});

describe('text helpers', () => {
  it('xmlSafe drops the control characters XML 1.0 forbids, keeping tab and line breaks', () => {
    expect(xmlSafe('a\u0000b\u001bc\td\ne\rf\uFFFEg')).toBe('abc\td\ne\rfg');
  });

  it('truncateText marks the cut and never splits a surrogate pair', () => {
    expect(truncateText('abcdef', 10)).toBe('abcdef');
    expect(truncateText('abcdef', 4)).toBe('abc…');
    expect(truncateText('ab🚀cd', 4)).toBe('ab…');
  });

  it('inertCell keeps formulas from running in a spreadsheet, numbers and plain dashes as they are', () => {
    expect(inertCell('=1+2')).toBe("'=1+2");
    expect(inertCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(inertCell('+33 1 23')).toBe("'+33 1 23");
    expect(inertCell('-ERR')).toBe("'-ERR");
    expect(inertCell('\tx')).toBe("'\tx");
    expect(inertCell('-1.5')).toBe('-1.5');
    expect(inertCell('+3e10')).toBe('+3e10');
    expect(inertCell('-')).toBe('-');
    expect(inertCell('a=b')).toBe('a=b');
    expect(inertCell('')).toBe('');
  });

  it('winAnsiText keeps Windows-1252 and shows the rest as "?"', () => {
    expect(winAnsiText('plain')).toBe('plain');
    expect(winAnsiText('café € “q” — …')).toBe('café € “q” — …');
    expect(winAnsiText('日本 🚀 ✓')).toBe('?? ? ?');
    expect(winAnsiText('a\tb\r\nc\rd')).toBe('a b\nc\nd');
  });
});

describe('sheetName', () => {
  it('makes names Excel accepts: short, without []:*?/\\, unique regardless of case', () => {
    const used = new Set<string>();
    expect(sheetName('Events', used)).toBe('Events');
    expect(sheetName('events', used)).toBe('events (2)');
    expect(sheetName('EVENTS', used)).toBe('EVENTS (3)');
    expect(sheetName('a/b\\c[d]e:f*g?h', used)).toBe('a b c d e f g h');
    expect(sheetName("'quoted'", used)).toBe('quoted');
    expect(sheetName('   ', used)).toBe('Sheet');
    expect(sheetName('History', used)).toBe('History 1');
    const long = 'Top values of http.request.headers.user_agent';
    const first = sheetName(long, used);
    const second = sheetName(long, used);
    expect(first).toBe(long.slice(0, 31));
    expect(second).toHaveLength(31);
    expect(second.endsWith(' (2)')).toBe(true);
    expect(sheetName('🚀'.repeat(20), used).length).toBeLessThanOrEqual(31);
  });
});

describe('fitColumns', () => {
  it('grows columns that fit, at most to twice their width', () => {
    expect(fitColumns([100, 200], 600, 10)).toEqual([200, 400]);
    expect(fitColumns([100, 200], 450, 10)).toEqual([150, 300]);
  });

  it('keeps narrow columns and shares the rest among the wide ones', () => {
    const widths = fitColumns([50, 1000, 60, 2000], 700, 10);
    expect(widths).toEqual([50, 295, 60, 295]);
    expect(widths.reduce((a, b) => a + b, 0)).toBeCloseTo(700);
  });

  it('splits evenly when not even the minimum fits', () => {
    expect(fitColumns([500, 500, 500], 60, 30)).toEqual([20, 20, 20]);
    expect(fitColumns([], 100, 10)).toEqual([]);
  });
});

describe('readZipEntry', () => {
  it('reads stored and deflated entries of a real archive', async () => {
    const zip = new JSZip();
    zip.file('stored.txt', 'plain', { compression: 'STORE' });
    zip.file('dir/deflated.xml', '<a>ü</a>'.repeat(1000), { compression: 'DEFLATE' });
    const buf = await zip.generateAsync({ type: 'nodebuffer', comment: 'a comment' });
    expect(readZipEntry(buf, 'stored.txt')?.toString()).toBe('plain');
    expect(readZipEntry(buf, 'dir/deflated.xml')?.toString()).toBe('<a>ü</a>'.repeat(1000));
    expect(readZipEntry(buf, 'missing')).toBeUndefined();
    expect(() => readZipEntry(Buffer.from('not a zip at all, not even close'), 'x')).toThrow(/ZIP/);
  });
});
