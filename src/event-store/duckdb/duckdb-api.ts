import { createRequire } from 'node:module';
import type * as DuckDB from '@duckdb/node-api';

/**
 * The values this engine takes from `@duckdb/node-api`, required as the CommonJS package it
 * is. Imported as ESM, Node first parses every file of it for its exports: 0.1-0.25 s of
 * each start of the store's worker. Types are imported from the package as usual.
 */
const api = createRequire(import.meta.url)('@duckdb/node-api') as typeof DuckDB;

export const { BLOB, BOOLEAN, blobValue, listValue } = api;
export const DuckDBBlobVector = api.DuckDBBlobVector;
export type DuckDBBlobVector = DuckDB.DuckDBBlobVector;
export const DuckDBDataChunk = api.DuckDBDataChunk;
export type DuckDBDataChunk = DuckDB.DuckDBDataChunk;
export const DuckDBInstance = api.DuckDBInstance;
export type DuckDBInstance = DuckDB.DuckDBInstance;
export const DuckDBMapValue = api.DuckDBMapValue;
export type DuckDBMapValue = DuckDB.DuckDBMapValue;
export const DuckDBResultReader = api.DuckDBResultReader;
export type DuckDBResultReader = DuckDB.DuckDBResultReader;
export const DuckDBScalarFunction = api.DuckDBScalarFunction;
export type DuckDBScalarFunction = DuckDB.DuckDBScalarFunction;
export const DuckDBTimestampValue = api.DuckDBTimestampValue;
export type DuckDBTimestampValue = DuckDB.DuckDBTimestampValue;
