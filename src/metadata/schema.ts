/**
 * Kysely's view of the metadata store. This file declares only the store's own tables (the
 * cluster's leases and query jobs); each feature adds its tables to `Database` from its
 * `<x>-table.ts` (`declare module '../../metadata/schema.js' { interface Database {…} }`),
 * beside the migrations that make them. Every table keeps timestamps as ISO 8601 UTC text
 * (sortable, identical on SQLite and PostgreSQL) and booleans as 0/1 integers.
 */
export interface Database {
  query_jobs: QueryJobsTable;
  leases: LeasesTable;
}

/** A named piece of work one node does for the cluster, and the node holding it. */
export interface LeasesTable {
  name: string;
  owner: string;
  /** Epoch ms until which `owner` holds it. */
  lease_until: number;
}

/** The shared state of a query job (cluster mode) and the lease of the node computing it. */
export interface QueryJobsTable {
  query_id: string;
  version: number;
  /** The node that computes it or last did. */
  owner: string;
  /** Epoch ms until which `owner` holds the lease (0: nobody computes it). */
  lease_until: number;
  stop_requested: number;
  status: string;
  /** JSON: progress, error, baseMs, window, updatedAt, stopped. */
  state: string | null;
  /** JSON of the type's raw results. */
  results: string | null;
}
