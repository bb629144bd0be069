import { decodeUtf8Body, type ParsedEntry, parseNdjson } from './ndjson.js';

const lineDecoder = new TextDecoder('utf-8', { fatal: true });

/**
 * NDJSON from raw bytes. The whole body is decoded at once when it is valid UTF-8 (the
 * common case); otherwise line by line, so a line with invalid bytes is rejected alone
 * and the valid lines of the same request are still stored. `firstLine`/`firstIndex`
 * number a piece of a larger body (see parsers/chunked.ts).
 */
export function parseNdjsonBytes(bytes: Buffer, firstLine = 1, firstIndex = 0): ParsedEntry[] {
  let text: string | null = null;
  try {
    text = decodeUtf8Body(bytes);
  } catch {
    text = null;
  }
  if (text !== null) return parseNdjson(text, firstLine, firstIndex);
  const entries: ParsedEntry[] = [];
  let start = 0;
  let line = firstLine - 1;
  while (start <= bytes.length) {
    let end = bytes.indexOf(10, start);
    if (end === -1) end = bytes.length;
    line++;
    const slice = bytes.subarray(start, end);
    start = end + 1;
    let lineText: string;
    try {
      lineText = lineDecoder.decode(slice);
    } catch {
      entries.push({ index: firstIndex + entries.length, line, error: `line ${line}: invalid UTF-8` });
      continue;
    }
    if (lineText.trim() === '') continue;
    entries.push(...parseNdjson(lineText, line, firstIndex + entries.length));
  }
  return entries;
}
