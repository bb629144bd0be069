import { describe, expect, it } from 'vitest';
import { docxRenderer } from '../../../src/export/docx-renderer.js';
import { pdfRenderer } from '../../../src/export/pdf-renderer.js';
import { RENDERERS } from '../../../src/export/renderers.js';
import { xlsxRenderer } from '../../../src/export/xlsx-renderer.js';

describe('renderers loaded on first use', () => {
  it('name the extension and media type of the renderer they load', () => {
    for (const [lazy, real] of [
      [RENDERERS.xlsx, xlsxRenderer],
      [RENDERERS.docx, docxRenderer],
      [RENDERERS.pdf, pdfRenderer],
    ] as const) {
      expect({ ext: lazy.ext, mediaType: lazy.mediaType }).toEqual({
        ext: real.ext,
        mediaType: real.mediaType,
      });
    }
  });
});
