/**
 * Online backups of the embedded stores (`/api/admin/backups`, docs/api/backups.md, ADR
 * 0036): one instant of the metadata and the events written as a folder that verify and
 * restore read without a server (the CLI's `backup verify` and `restore`).
 */
import { component } from '../component.js';
import { BackupsRepository } from './backups-repository.js';
import { backupsRoutes } from './backups-routes.js';
import { BackupJobSchema } from './backups-schema.js';
import { BackupsService } from './backups-service.js';
import { backupsMigration } from './backups-table.js';
import { recordStoreFormat } from './store-format.js';

// What leaves the feature besides the component: the offline side the command line runs on
// a backup folder alone (verify, restore).
export { RestoreError, type RestoreSummary, restoreBackup } from './restore.js';
export { recordStoreFormat } from './store-format.js';
export { type UpgradeDone, upgradeDataDir } from './upgrade.js';
export { NotABackupFolder, type VerifyReport, verifyBackup } from './verify.js';

declare module '../component.js' {
  interface Services {
    backups: BackupsService;
  }
}

export const backups = component({
  name: 'backups',
  migrations: { '0030-backups': backupsMigration },
  build({ meta, events, config, log }, { audit }) {
    const foreignStore = config.databaseUrl
      ? 'its metadata in PostgreSQL'
      : config.eventStoreUrl
        ? 'its events in ClickHouse'
        : null;
    const service = new BackupsService(new BackupsRepository(meta.db), events, audit, {
      dataDir: config.dataDir,
      coldDir: config.coldDir,
      backupRoot: config.backupRoot,
      foreignStore,
      log,
    });
    return {
      provides: { backups: service },
      schemas: [BackupJobSchema],
      metrics: [service],
      async start() {
        // The data dir's store format and instance id (the embedded stores' data dir).
        if (!foreignStore) await recordStoreFormat(config.dataDir);
        await service.recover();
      },
      async stop() {
        await service.stop();
      },
      routes: async (app) => {
        await app.register(backupsRoutes, { backups: service });
      },
    };
  },
});
