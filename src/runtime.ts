import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './config/config.js';
import { createServices, type Services } from './domain/services.js';
import { type MetadataDb, openMetadataDb } from './metadata/database.js';

/** The opened stores and wired services of one process (server or CLI command). */
export interface Runtime {
  config: Config;
  meta: MetadataDb;
  services: Services;
  close(): Promise<void>;
}

export async function openRuntime(config: Config, opts: { pgSchema?: string } = {}): Promise<Runtime> {
  mkdirSync(config.dataDir, { recursive: true });
  const meta = await openMetadataDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    ...(opts.pgSchema ? { pgSchema: opts.pgSchema } : {}),
  });
  const services = createServices(meta, config);
  return { config, meta, services, close: () => meta.close() };
}

/**
 * On an empty store, creates `admin` with a USER token, writes it to
 * `<data_dir>/admin-token` (0600) and returns it so the caller can print it once.
 */
export async function bootstrapAdmin(rt: Runtime): Promise<string | null> {
  const token = await rt.services.users.bootstrapAdmin();
  if (!token) return null;
  const file = path.join(rt.config.dataDir, 'admin-token');
  writeFileSync(file, `${token.secret_key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return token.secret_key;
}
