/**
 * Text as the pdf renderer draws it: characters the chosen font can show, and cells'
 * lines measured and wrapped fast enough for tables of 100,000 rows.
 */

// Characters Windows-1252 (the encoding of pdfkit's standard fonts) has beyond ASCII and
// Latin-1; anything else would come out as unrelated glyphs, so it is shown as "?".
const CP1252_EXTRA = new Set([...'€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ'].map((c) => c.codePointAt(0)));
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** `s` as the standard fonts can show it: tabs as spaces, other characters outside Windows-1252 as "?". */
export function winAnsiText(s: string): string {
  if (PRINTABLE_ASCII.test(s)) return s;
  let out = '';
  for (const ch of s.replace(/\r\n?/g, '\n')) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp === 10 || (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff) || CP1252_EXTRA.has(cp))
      out += ch;
    else out += cp === 9 ? ' ' : '?';
  }
  return out;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F]/g;

/** `s` for an embedded font: tabs as spaces, control characters (no glyph in any font) as "?". */
export function unicodeText(s: string): string {
  return s.replace(/\r\n?/g, '\n').replace(/\t/g, ' ').replace(CONTROL, '?');
}

/** Measures and wraps cell text in a document's fonts. */
export class CellText {
  /** font → character → advance width at the cell size */
  private readonly advances = new Map<string, Map<string, number>>();

  constructor(private readonly pdf: PDFKit.PDFDocument) {}

  /**
   * The width of `s` in `font` (the document's current font, at its current size), from
   * cached advance widths. pdfkit's own
   * widthOfString looks up a kerning pair per character and took most of the time of a
   * large table; kerning only narrows text, so the sum errs on the roomy side.
   */
  measure(font: string, s: string): number {
    let widths = this.advances.get(font);
    if (widths === undefined) {
      widths = new Map();
      this.advances.set(font, widths);
    }
    let w = 0;
    for (const ch of s) {
      let cw = widths.get(ch);
      if (cw === undefined) {
        cw = this.pdf.widthOfString(ch);
        widths.set(ch, cw);
      }
      w += cw;
    }
    return w;
  }

  /** `s` cut to fit `width` with an ellipsis. */
  ellipsize(font: string, s: string, width: number): string {
    let cut = s.trimEnd();
    while (cut !== '' && this.measure(font, `${cut}…`) > width) cut = cut.slice(0, -1);
    return `${cut}…`;
  }

  /**
   * `text` broken into lines of at most `width` (at spaces, or anywhere in a word longer
   * than a line), at most maxLines of them, the last ending in an ellipsis when
   * there was more.
   */
  wrap(font: string, text: string, width: number, maxLines: number): string[] {
    if (!text.includes('\n') && this.measure(font, text) <= width) return text === '' ? [] : [text];
    const lines: string[] = [];
    const full = () => lines.length > maxLines;
    for (const paragraph of text.split('\n')) {
      let line = '';
      let lineWidth = 0;
      for (let word of paragraph.split(/(?<= )/)) {
        const ww = this.measure(font, word);
        if (lineWidth + ww <= width || (line === '' && ww <= width)) {
          line += word;
          lineWidth += ww;
          continue;
        }
        if (line !== '') lines.push(line.trimEnd());
        if (full()) break;
        while (this.measure(font, word) > width && !full()) {
          let head = '';
          for (const ch of word) {
            if (head !== '' && this.measure(font, head + ch) > width) break;
            head += ch;
          }
          lines.push(head);
          word = word.slice(head.length);
        }
        line = word;
        lineWidth = this.measure(font, word);
      }
      if (full()) break;
      lines.push(line.trimEnd());
    }
    if (lines.length > maxLines) {
      lines.length = maxLines;
      lines[maxLines - 1] = this.ellipsize(font, lines[maxLines - 1] ?? '', width);
    }
    return lines;
  }
}
