/**
 * Value coercions shared by every backend: what a value means for each column kind
 * (`parseNumeric`, `toTimeMs`, `parseCidr`, `scalarToString`). Every backend must use
 * them instead of its own rules so that all of them match the same events.
 */
import { isIP } from 'node:net';
import { parseIsoMs } from '../core/time.js';
import type { Scalar } from './ast.js';

const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * A finite number from a number or a decimal numeric string (no hex, no Infinity, no
 * surrounding spaces); `undefined` otherwise, booleans included.
 */
export function parseNumeric(v: Scalar): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string' || !NUMERIC.test(v)) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * A time value as Unix milliseconds: a number or numeric string is Unix seconds (the
 * API's unit; fractions keep millisecond precision), any other string must be ISO 8601
 * (`2024-05-01`, `2024-05-01T10:00:00.123+02:00`; no offset means UTC), read as ingest
 * reads event times (core/time.ts).
 */
export function toTimeMs(v: Scalar): number | undefined {
  const seconds = parseNumeric(v);
  if (seconds !== undefined) return Math.round(seconds * 1000);
  if (typeof v !== 'string') return undefined;
  return parseIsoMs(v) ?? undefined;
}

export interface Cidr {
  readonly address: string;
  readonly prefix: number;
  readonly family: 4 | 6;
}

/** `10.0.0.0/8` or `2001:db8::/32`; the prefix is required and within the family's width. */
export function parseCidr(s: string): Cidr | undefined {
  const slash = s.lastIndexOf('/');
  if (slash <= 0) return undefined;
  const address = s.slice(0, slash);
  const prefixText = s.slice(slash + 1);
  const family = isIP(address);
  if ((family !== 4 && family !== 6) || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > (family === 4 ? 32 : 128)) return undefined;
  return { address, prefix, family };
}

/** The text a scalar stands for when compared with a string field (`true`, `42`, `1.5`). */
export const scalarToString = (v: Scalar): string => String(v);
