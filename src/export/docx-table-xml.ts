/**
 * WordprocessingML for a plain table, written as text. The docx library keeps some 6 KB of
 * objects per table cell (10,000 rows of 17 columns took 1.6 GB and 20 s), so tables are
 * spliced into the document it writes instead; everything else stays the library's.
 */
import { xmlSafe } from './cells.js';
import { docxColor, REPORT_COLORS } from './report-style.js';

const BORDER = `w:val="single" w:sz="4" w:space="0" w:color="${docxColor(REPORT_COLORS.border)}"`;
const HEADER_FILL = docxColor(REPORT_COLORS.headerFill);
/** Left and right padding of every cell, in twips (1 mm). */
export const CELL_MARGIN = 57;

const escapeText = (s: string) =>
  s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));

function runXml(text: string, bold: boolean, halfPoints: number): string {
  const rPr = `<w:rPr>${bold ? '<w:b/><w:bCs/>' : ''}<w:sz w:val="${halfPoints}"/><w:szCs w:val="${halfPoints}"/></w:rPr>`;
  const t = (s: string) => (s === '' ? '' : `<w:t xml:space="preserve">${escapeText(s)}</w:t>`);
  const body = xmlSafe(text)
    .split(/\r\n|\r|\n/)
    .map((line) => line.split('\t').map(t).join('<w:tab/>'))
    .join('<w:br/>');
  return `<w:r>${rPr}${body}</w:r>`;
}

/** How a column's cells line up: numbers on their last digit. */
export type CellAlign = 'left' | 'right';

function rowXml(
  cells: readonly string[],
  widths: readonly number[],
  header: boolean,
  halfPoints: number,
  aligns: readonly CellAlign[],
): string {
  const shading = header ? `<w:shd w:val="clear" w:color="auto" w:fill="${HEADER_FILL}"/>` : '';
  const tcs = cells.map(
    (text, i) =>
      `<w:tc><w:tcPr><w:tcW w:w="${widths[i] ?? 0}" w:type="dxa"/>${shading}</w:tcPr>` +
      `<w:p><w:pPr><w:spacing w:before="0" w:after="0"/>${aligns[i] === 'right' ? '<w:jc w:val="right"/>' : ''}</w:pPr>` +
      `${text === '' ? '' : runXml(text, header, halfPoints)}</w:p></w:tc>`,
  );
  // tblHeader repeats the row on top of every page the table runs onto.
  return `<w:tr>${header ? '<w:trPr><w:tblHeader/></w:trPr>' : ''}${tcs.join('')}</w:tr>`;
}

/** A `<w:tbl>` of fixed column widths (twips): the header row, bold and shaded, then `rows`. */
export function tableXml(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  widths: readonly number[],
  halfPoints: number,
  aligns: readonly CellAlign[] = [],
): string {
  const total = widths.reduce((a, b) => a + b, 0);
  const parts = [
    '<w:tbl><w:tblPr>',
    `<w:tblW w:w="${total}" w:type="dxa"/>`,
    `<w:tblBorders><w:top ${BORDER}/><w:left ${BORDER}/><w:bottom ${BORDER}/><w:right ${BORDER}/>`,
    `<w:insideH ${BORDER}/><w:insideV ${BORDER}/></w:tblBorders>`,
    // Fixed layout: Word need not measure every row to lay out the first page.
    '<w:tblLayout w:type="fixed"/>',
    `<w:tblCellMar><w:left w:w="${CELL_MARGIN}" w:type="dxa"/><w:right w:w="${CELL_MARGIN}" w:type="dxa"/></w:tblCellMar>`,
    '</w:tblPr><w:tblGrid>',
    ...widths.map((w) => `<w:gridCol w:w="${w}"/>`),
    '</w:tblGrid>',
    rowXml(header, widths, true, halfPoints, aligns),
  ];
  for (const row of rows) parts.push(rowXml(row, widths, false, halfPoints, aligns));
  parts.push('</w:tbl>');
  return parts.join('');
}
