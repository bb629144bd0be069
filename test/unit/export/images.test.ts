import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import type { ExportDocument, ExportSection } from '../../../src/export/renderer.js';
import { RENDERERS } from '../../../src/export/renderers.js';
import { loadXlsx, makePng, readPdf, Sink, sampleDoc } from './export-fixtures.js';

const chart = (title: string, width: number, height: number): ExportSection => ({
  kind: 'image',
  title,
  png: makePng(width, height),
  width,
  height,
});

const withCharts = (): ExportDocument =>
  sampleDoc('Europe/Paris', [chart('Errors per minute', 800, 300), chart('Top hosts', 2400, 1800)]);

async function render(format: 'pdf' | 'docx' | 'xlsx' | 'csv' | 'json', doc: ExportDocument) {
  const out = new Sink();
  const result = await RENDERERS[format].render(doc, out);
  return { result, buffer: out.buffer };
}

describe('images', () => {
  it('pdf paints each image as an XObject, shrunk to fit a page', async () => {
    const { buffer } = await render('pdf', withCharts());
    const { pages, texts, images } = await readPdf(buffer);
    expect(images.reduce((a, b) => a + b, 0)).toBe(2);
    // The table takes two pages; the big chart needs a page of its own.
    expect(pages).toBeGreaterThanOrEqual(3);
    const last = texts.length - 1;
    expect(images[last]).toBe(1);
    expect(texts[last]).toContain('Top hosts');
  });

  it('docx embeds each image under word/media with a drawing in the body', async () => {
    const { buffer } = await render('docx', withCharts());
    const zip = await JSZip.loadAsync(buffer);
    const media = Object.keys(zip.files).filter((f) => f.startsWith('word/media/'));
    expect(media).toHaveLength(2);
    const xml = await zip.file('word/document.xml')!.async('string');
    expect(xml.match(/<w:drawing>/g)).toHaveLength(2);
    const rels = await zip.file('word/_rels/document.xml.rels')!.async('string');
    for (const id of xml.match(/r:embed="(rId\d+)"/g)?.map((m) => m.slice(9, -1)) ?? []) {
      expect(rels).toMatch(new RegExp(`Id="${id}"[^>]*Target="media/`));
    }
    // 2400 px wide does not fit a landscape A4 page: shrunk, proportions kept (EMU, 9525 per px).
    const extents = [...xml.matchAll(/<wp:extent cx="(\d+)" cy="(\d+)"/g)].map((m): [number, number] => [
      Number(m[1]),
      Number(m[2]),
    ]);
    expect(extents[0]).toEqual([800 * 9525, 300 * 9525]);
    const [cx, cy] = extents[1] ?? [0, 0];
    expect(cx).toBeLessThan(2400 * 9525);
    expect(cx / cy).toBeCloseTo(2400 / 1800, 2);
    // The table is still there, spliced in where it belongs: before the charts.
    expect(xml.indexOf('<w:tbl>')).toBeLessThan(xml.indexOf('<w:drawing>'));
  });

  it('xlsx puts each image on its own sheet, anchored under the title', async () => {
    const { buffer } = await render('xlsx', withCharts());
    const zip = await JSZip.loadAsync(buffer);
    expect(Object.keys(zip.files).filter((f) => f.startsWith('xl/media/'))).toHaveLength(2);
    expect(Object.keys(zip.files).filter((f) => /^xl\/drawings\/drawing\d+\.xml$/.test(f))).toHaveLength(2);

    const wb = await loadXlsx(buffer);
    expect(wb.worksheets.map((ws) => ws.name)).toEqual(['Events', 'Errors per minute', 'Top hosts']);
    expect(wb.worksheets[0]?.getImages()).toHaveLength(0);
    for (const [i, [w, h]] of [
      [800, 300],
      [2400, 1800],
    ].entries()) {
      const ws = wb.worksheets[i + 1]!;
      expect(ws.getCell('A1').value).toBe(i === 0 ? 'Errors per minute' : 'Top hosts');
      const images = ws.getImages();
      expect(images).toHaveLength(1);
      expect(images[0]?.range.tl.nativeRow).toBe(2);
      expect(images[0]?.range.tl.nativeCol).toBe(0);
      // A one-cell anchor has a size, not a bottom-right cell; exceljs's types know only the latter.
      const range = images[0]?.range as { ext?: { width: number; height: number } } | undefined;
      expect(range?.ext).toEqual({ width: w, height: h });
      const media = wb.getImage(Number(images[0]?.imageId));
      expect(media.extension).toBe('png');
      expect(
        Buffer.from(media.buffer as unknown as Uint8Array)
          .subarray(1, 4)
          .toString(),
      ).toBe('PNG');
    }
  });

  it('csv and json leave images out', async () => {
    const csv = await render('csv', withCharts());
    expect(csv.buffer.toString()).not.toContain('Errors per minute');
    const json = JSON.parse((await render('json', withCharts())).buffer.toString());
    expect(json.sections.map((s: { kind: string }) => s.kind)).toEqual(['table']);
  });

  it('refuses an image that is not a PNG, failing the output too', async () => {
    const doc: ExportDocument = {
      title: 'bad',
      timezone: 'UTC',
      generatedAt: new Date(),
      sections: [{ kind: 'image', title: 'not a png', png: Buffer.from('GIF89a'), width: 10, height: 10 }],
    };
    for (const format of ['pdf', 'docx', 'xlsx'] as const) {
      const out = new Sink();
      await expect(RENDERERS[format].render(doc, out), format).rejects.toThrow(
        'image "not a png" is not a PNG',
      );
      expect(out.destroyed, format).toBe(true);
    }
  });
});
