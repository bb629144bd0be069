/**
 * Pictures in a streamed workbook. exceljs's streaming WorkbookWriter (4.4) accepts only
 * background images (tiled behind the cells, not printed); `Worksheet#addImage` exists
 * only in the in-memory Workbook, which would hold a million-row export in memory. So an
 * anchored picture is written here as its own drawing part, through four internals of the
 * streaming writer. `canAnchorPictures` checks they are there; without them the caller
 * falls back to a background image.
 */
import type ExcelJS from 'exceljs';
import { xmlSafe } from './cells.js';

interface ZipInternals {
  append(source: string | Buffer, data: { name: string }): unknown;
}

interface WorkbookWriterInternals {
  zip: ZipInternals;
}

interface WorksheetWriterInternals {
  _sheetRelsWriter: { addRelationship(rel: { Type: string; Target: string }): string };
  _writeLegacyData(): void;
  stream: { write(s: string): unknown };
}

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const EMU_PER_PX = 9525;
const CONTENT_TYPES = '[Content_Types].xml';

// The casts below are the point of this module: they reach into exceljs's writer, which
// declares none of these members; the guards check each before it is used.
const internals = <T>(o: object) => o as unknown as T;

function isFn(o: unknown, name: string): boolean {
  return typeof o === 'object' && o !== null && typeof (o as Record<string, unknown>)[name] === 'function';
}

/** Whether this exceljs writer has the internals an anchored picture needs. */
export function canAnchorPictures(wb: ExcelJS.stream.xlsx.WorkbookWriter, ws: ExcelJS.Worksheet): boolean {
  const w = internals<Partial<WorkbookWriterInternals>>(wb);
  const s = internals<Partial<WorksheetWriterInternals>>(ws);
  return (
    isFn(w.zip, 'append') &&
    isFn(s._sheetRelsWriter, 'addRelationship') &&
    typeof s._writeLegacyData === 'function' &&
    isFn(s.stream, 'write')
  );
}

const xmlAttr = (s: string) =>
  s.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'));

function drawingXml(row: number, widthPx: number, heightPx: number, title: string): string {
  const cx = Math.round(widthPx * EMU_PER_PX);
  const cy = Math.round(heightPx * EMU_PER_PX);
  return (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
    '<xdr:wsDr xmlns:xdr="http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"' +
    ' xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">' +
    '<xdr:oneCellAnchor>' +
    `<xdr:from><xdr:col>0</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>${row}</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from>` +
    `<xdr:ext cx="${cx}" cy="${cy}"/>` +
    '<xdr:pic>' +
    `<xdr:nvPicPr><xdr:cNvPr id="2" name="Picture 1" descr="${xmlAttr(xmlSafe(title))}"/>` +
    '<xdr:cNvPicPr><a:picLocks noChangeAspect="1"/></xdr:cNvPicPr></xdr:nvPicPr>' +
    `<xdr:blipFill><a:blip xmlns:r="${REL}" r:embed="rId1"/><a:stretch><a:fillRect/></a:stretch></xdr:blipFill>` +
    `<xdr:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="${cx}" cy="${cy}"/></a:xfrm>` +
    '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></xdr:spPr>' +
    '</xdr:pic><xdr:clientData/></xdr:oneCellAnchor></xdr:wsDr>'
  );
}

const drawingRelsXml = (media: string) =>
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  `<Relationship Id="rId1" Type="${REL}/image" Target="../media/${media}"/></Relationships>`;

/**
 * Anchors pictures to worksheets of one streaming workbook. Create it before the first
 * picture; `anchor` must run before the worksheet is committed.
 */
export class PictureAnchors {
  private count = 0;
  private readonly zip: ZipInternals;

  constructor(wb: ExcelJS.stream.xlsx.WorkbookWriter) {
    const zip = internals<WorkbookWriterInternals>(wb).zip;
    const append = zip.append.bind(zip);
    // exceljs writes [Content_Types].xml last, from its own list of parts; the drawings
    // and the png extension are added to it on the way into the archive.
    zip.append = (source, data) => {
      if (data.name === CONTENT_TYPES && typeof source === 'string' && this.count > 0) {
        return append(source.replace('</Types>', `${this.contentTypes(source)}</Types>`), data);
      }
      return append(source, data);
    };
    this.zip = { append };
  }

  private contentTypes(existing: string): string {
    let xml = existing.includes('Extension="png"')
      ? ''
      : '<Default Extension="png" ContentType="image/png"/>';
    for (let i = 1; i <= this.count; i++) {
      xml +=
        `<Override PartName="/xl/drawings/drawing${i}.xml"` +
        ' ContentType="application/vnd.openxmlformats-officedocument.drawing+xml"/>';
    }
    return xml;
  }

  /** Puts `png` on `ws` with its top-left corner at the start of 0-based `row`, at its own size. */
  anchor(
    ws: ExcelJS.Worksheet,
    png: Buffer,
    row: number,
    widthPx: number,
    heightPx: number,
    title: string,
  ): void {
    this.count += 1;
    const n = this.count;
    // Plain alphanumeric names: exceljs's own reader skips parts named otherwise.
    const media = `picture${n}.png`;
    const drawing = `drawing${n}.xml`;
    this.zip.append(png, { name: `xl/media/${media}` });
    this.zip.append(drawingXml(row, widthPx, heightPx, title), { name: `xl/drawings/${drawing}` });
    this.zip.append(drawingRelsXml(media), { name: `xl/drawings/_rels/${drawing}.rels` });

    const s = internals<WorksheetWriterInternals>(ws);
    const rId = s._sheetRelsWriter.addRelationship({
      Type: `${REL}/drawing`,
      Target: `../drawings/${drawing}`,
    });
    const writeLegacyData = s._writeLegacyData.bind(ws);
    // <drawing> goes right before <legacyDrawing> in the worksheet schema's element order.
    s._writeLegacyData = () => {
      s.stream.write(`<drawing r:id="${rId}"/>`);
      writeLegacyData();
    };
  }
}
