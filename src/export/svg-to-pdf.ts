/**
 * Draws a chart's SVG (as Vega renders it: charts.ts) into a pdfkit document as vector
 * graphics with real text, so a printed chart is sharp and its labels can be searched and
 * selected. Only what Vega's SVG renderer writes is read: `svg`, `g`, `rect`, `path`,
 * `line` and `text`, with `transform` (translate, rotate, scale), fill, stroke, opacity
 * and font size; anything else is skipped. The SVG is our own renderer's output, not a
 * user's document.
 */

interface Node {
  name: string;
  attrs: Record<string, string>;
  children: Node[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const decode = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (all, e: string) => {
    if (e[0] === '#')
      return String.fromCodePoint(
        e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)),
      );
    return ENTITIES[e.toLowerCase()] ?? all;
  });

/** A small XML reader for the SVG subset above (no DTDs, no CDATA). */
export function parseSvg(svg: string): Node {
  const root: Node = { name: '#root', attrs: {}, children: [], text: '' };
  const stack: Node[] = [root];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"]*")*)\s*(\/?)>|([^<]+)/g;
  for (let m = tag.exec(svg); m; m = tag.exec(svg)) {
    const top = stack[stack.length - 1]!;
    if (m[5] !== undefined) {
      top.text += decode(m[5]);
      continue;
    }
    if (m[1]) {
      if (stack.length > 1) stack.pop();
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of (m[3] ?? '').matchAll(/([\w:-]+)="([^"]*)"/g)) attrs[a[1]!] = decode(a[2]!);
    const node: Node = { name: m[2]!, attrs, children: [], text: '' };
    top.children.push(node);
    if (!m[4]) stack.push(node);
  }
  return root.children[0] ?? root;
}

interface Style {
  fill: string;
  stroke: string;
  strokeWidth: number;
  opacity: number;
  fontSize: number;
  anchor: string;
}

const INHERITED: Style = {
  fill: 'black',
  stroke: 'none',
  strokeWidth: 1,
  opacity: 1,
  fontSize: 10,
  anchor: 'start',
};

function styleOf(attrs: Record<string, string>, parent: Style): Style {
  const number = (v: string | undefined, fallback: number) => {
    const n = v === undefined ? Number.NaN : Number.parseFloat(v);
    return Number.isFinite(n) ? n : fallback;
  };
  return {
    fill: attrs.fill ?? parent.fill,
    stroke: attrs.stroke ?? parent.stroke,
    strokeWidth: number(attrs['stroke-width'], parent.strokeWidth),
    opacity: parent.opacity * number(attrs.opacity, 1),
    fontSize: number(attrs['font-size'], parent.fontSize),
    anchor: attrs['text-anchor'] ?? parent.anchor,
  };
}

const painted = (color: string) => color !== 'none' && color !== 'transparent' && color !== '';

/** Applies an SVG `transform` attribute to the document's current matrix. */
function transform(doc: PDFKit.PDFDocument, value: string | undefined) {
  if (!value) return;
  for (const m of value.matchAll(/(translate|rotate|scale)\(([^)]*)\)/g)) {
    const args = m[2]!
      .split(/[\s,]+/)
      .filter(Boolean)
      .map(Number);
    if (m[1] === 'translate') doc.translate(args[0] ?? 0, args[1] ?? 0);
    else if (m[1] === 'rotate') doc.rotate(args[0] ?? 0, { origin: [args[1] ?? 0, args[2] ?? 0] });
    else doc.scale(args[0] ?? 1, args[1] ?? args[0] ?? 1);
  }
}

function paint(doc: PDFKit.PDFDocument, style: Style, fill: boolean) {
  const doFill = fill && painted(style.fill);
  const doStroke = painted(style.stroke) && style.strokeWidth > 0;
  if (doFill) doc.fillColor(style.fill).fillOpacity(style.opacity);
  if (doStroke) doc.strokeColor(style.stroke).strokeOpacity(style.opacity).lineWidth(style.strokeWidth);
  if (doFill && doStroke) doc.fillAndStroke();
  else if (doFill) doc.fill();
  else if (doStroke) doc.stroke();
  // Neither: end the path unpainted (PDF's `n`), or the next fill would paint it too.
  else (doc as unknown as { addContent(op: string): void }).addContent('n');
}

function draw(doc: PDFKit.PDFDocument, node: Node, parent: Style, font: string) {
  const a = node.attrs;
  if (a.display === 'none' || a.visibility === 'hidden') return;
  const style = styleOf(a, parent);
  doc.save();
  transform(doc, a.transform);
  switch (node.name) {
    case 'svg':
    case 'g':
      for (const child of node.children) draw(doc, child, style, font);
      break;
    case 'rect': {
      doc.rect(Number(a.x ?? 0), Number(a.y ?? 0), Number(a.width ?? 0), Number(a.height ?? 0));
      paint(doc, style, true);
      break;
    }
    case 'path':
      if (a.d) {
        doc.path(a.d);
        paint(doc, style, true);
      }
      break;
    case 'line':
      doc.moveTo(Number(a.x1 ?? 0), Number(a.y1 ?? 0)).lineTo(Number(a.x2 ?? 0), Number(a.y2 ?? 0));
      paint(doc, style, false);
      break;
    case 'text': {
      const text = node.text;
      if (!text || !painted(style.fill)) break;
      doc.font(font).fontSize(style.fontSize).fillColor(style.fill).fillOpacity(style.opacity);
      const width = doc.widthOfString(text);
      const shift = style.anchor === 'middle' ? width / 2 : style.anchor === 'end' ? width : 0;
      doc.text(text, Number(a.x ?? 0) - shift, Number(a.y ?? 0), {
        lineBreak: false,
        baseline: 'alphabetic',
      });
      break;
    }
    default:
      break;
  }
  doc.restore();
}

/** The SVG's own size (its `width`/`height`). */
export function svgSize(svg: string): { width: number; height: number } {
  const root = parseSvg(svg);
  return {
    width: Number.parseFloat(root.attrs.width ?? '0'),
    height: Number.parseFloat(root.attrs.height ?? '0'),
  };
}

/**
 * Draws `svg` with its top left corner at (x, y), scaled to fit `fit` (keeping its
 * proportions); text in `font` (a font registered on the document). Returns the size drawn.
 */
export function drawSvg(
  doc: PDFKit.PDFDocument,
  svg: string,
  x: number,
  y: number,
  fit: [number, number],
  font: string,
): { width: number; height: number } {
  const root = parseSvg(svg);
  const width = Number.parseFloat(root.attrs.width ?? '0') || fit[0];
  const height = Number.parseFloat(root.attrs.height ?? '0') || fit[1];
  const scale = Math.min(fit[0] / width, fit[1] / height);
  const cursor = { x: doc.x, y: doc.y };
  doc.save();
  doc.translate(x, y).scale(scale);
  // A clip to the chart's box: a label never spills over the page's text.
  doc.rect(0, 0, width, height).clip();
  draw(doc, { ...root, attrs: { ...root.attrs, transform: '' } }, INHERITED, font);
  doc.restore();
  doc.x = cursor.x;
  doc.y = cursor.y;
  return { width: width * scale, height: height * scale };
}
