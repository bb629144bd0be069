import type { Writable } from 'node:stream';
import { rendering } from './output.js';
import { PageLimit, type PdfFonts, PdfWriter } from './pdf-writer.js';
import type { ExportDocument, Renderer } from './renderer.js';

/** Rows per table a pdf holds: past that a table of logs is no longer read, only scrolled. */
export const PDF_MAX_ROWS = 100_000;

/** Options of the pdf renderer. */
export interface PdfOptions {
  /** rows per table before it is cut short with a visible note */
  maxRows?: number;
  /**
   * most pages of a document (unless the document sets its own `maxPages`); past it the
   * rest is left out with a note saying what. Without a cap pages are streamed as they
   * fill and numbered "Page N"; with one they are held until the end and numbered
   * "Page N of M".
   */
  maxPages?: number;
  /** fonts to embed; without them the standard Helvetica is used, which covers Windows-1252 only */
  fonts?: PdfFonts;
}

/**
 * PDF, A4 landscape: the title, when it was made and the zone its times are in; per
 * table a heading, the notes, its chart and a ruled table whose columns are sized from
 * the titles and the first rows, the header repeated on every page, long cells cut at
 * eight lines, then the footnotes; pictures shrunk to fit a page. Every page has the
 * title and its number in the footer. A table stops at `maxRows` (100,000) with a note
 * under it; a document with a page cap (its own `maxPages`, or the renderer's) stops
 * there with a note saying what it left out, and its pages read "Page N of M".
 */
export function createPdfRenderer(options: PdfOptions = {}): Renderer {
  const maxRows = options.maxRows ?? PDF_MAX_ROWS;
  return {
    ext: 'pdf',
    mediaType: 'application/pdf',
    render: (doc: ExportDocument, out: Writable) =>
      rendering(out, async () => {
        const maxPages = Math.max(1, doc.maxPages ?? options.maxPages ?? Number.POSITIVE_INFINITY);
        const w = new PdfWriter(doc, out, maxRows, maxPages, options.fonts);
        w.pdf.pipe(out);
        w.heading();
        let rows = 0;
        let truncated = false;
        for (const [i, section] of doc.sections.entries()) {
          try {
            switch (section.kind) {
              case 'table': {
                const t = await w.table(section.table);
                rows += t.rows;
                truncated ||= t.truncated;
                break;
              }
              case 'image':
                await w.image(section);
                break;
              default:
                section satisfies never;
            }
          } catch (err) {
            if (!(err instanceof PageLimit)) throw err;
            rows += w.progress?.rows ?? 0;
            truncated = true;
            w.cutNote(doc.sections.slice(i + 1));
            break;
          }
        }
        if (w.capped) w.numberPages();
        w.pdf.end();
        return { rows, truncated };
      }),
  };
}

export const pdfRenderer: Renderer = createPdfRenderer();
