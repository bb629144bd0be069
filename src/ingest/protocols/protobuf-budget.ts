import protobuf from 'protobufjs';
import { AppError } from '../../errors/errors.js';
import { tooManyRecords } from '../parsers/chunked.js';

/**
 * What a protobuf body may decode to, checked on the wire before it is decoded: decoding
 * makes an object per message, and an empty message is two bytes, so a small compressed
 * body of empty records once became millions of objects (about 70 bytes of heap per byte
 * of body) before the record cap was looked at.
 */
export interface ProtobufBudget {
  /** The message type that is one record (OTLP's LogRecord, Loki's EntryAdapter). */
  record: protobuf.Type;
  /** Most records: past it, 413 `too_many_records` as for every intake. */
  maxRecords: number;
  /** Most messages of any type (records, attributes, values, ...). */
  maxMessages: number;
  /** Deepest nesting of messages. */
  maxDepth: number;
}

/** Messages allowed per record on average: attributes and their values, with room to spare. */
export const MESSAGES_PER_RECORD = 64;

/** The wire format is broken or nested past the budget's depth; the caller words the 400. */
export class ProtobufShapeError extends Error {
  override name = 'ProtobufShapeError';
}

/**
 * Walks the body's wire format against `type` without decoding it: linear in the body,
 * no allocation, and it stops at the first count past the budget (a 413, as for any
 * intake's record cap) or the first malformed length.
 *
 * With `prefix`, `bytes` are the first bytes of a body still arriving: a message or field
 * that runs past them is cut there, not an error, so a body past the budget is refused
 * while it inflates instead of after (ingest-body.ts `checkedAsItArrives`).
 */
export function checkProtobufBudget(
  bytes: Uint8Array,
  type: protobuf.Type,
  budget: ProtobufBudget,
  prefix = false,
): void {
  const reader = protobuf.Reader.create(bytes);
  let records = 0;
  let messages = 0;
  const walk = (messageType: protobuf.Type, end: number, depth: number): void => {
    if (depth > budget.maxDepth)
      throw new ProtobufShapeError(`messages nested more than ${budget.maxDepth} deep`);
    while (reader.pos < end) {
      const tag = reader.uint32();
      const wireType = tag & 7;
      const field = messageType.fieldsById[tag >>> 3];
      const nested = field?.resolvedType;
      if (wireType === 2 && nested instanceof protobuf.Type) {
        const length = reader.uint32();
        let stop = reader.pos + length;
        if (stop > end && prefix) stop = end;
        else if (stop > end)
          throw new ProtobufShapeError(`a length of ${length} runs past the end at byte ${reader.pos}`);
        if (nested === budget.record && ++records > budget.maxRecords)
          throw tooManyRecords(budget.maxRecords);
        if (++messages > budget.maxMessages) {
          throw new ProtobufShapeError(
            `more than ${budget.maxMessages} messages (records, attributes, values) in one request`,
          );
        }
        walk(nested, stop, depth + 1);
        reader.pos = stop;
      } else {
        reader.skipType(wireType);
      }
    }
    if (reader.pos > end && !prefix)
      throw new ProtobufShapeError(`a field runs past the end of its message at byte ${end}`);
  };
  try {
    walk(type, bytes.length, 0);
  } catch (error) {
    // Past the record cap: the 413 as it is. Anything the reader throws is the body's
    // fault: a truncated varint or field is a RangeError ("index out of range"), a wire
    // type no field can have (6, 7, a group's end where none began) a plain Error; only
    // RangeError was mapped, and bytes that are not protobuf answered 500 (issue 54).
    if (error instanceof AppError || error instanceof ProtobufShapeError) throw error;
    // A prefix ends where the bytes so far end, often inside a field.
    if (prefix && error instanceof RangeError) return;
    throw new ProtobufShapeError(error instanceof Error ? error.message : String(error));
  }
}
