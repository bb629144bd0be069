import { sql } from 'kysely';
import { buildApp } from './app.js';
import type { Config } from './config/config.js';
import { type SyslogListener, startSyslogListener } from './ingest/syslog-listener.js';
import { bootstrapAdmin, openRuntime } from './runtime.js';

/** Opens the stores, serves the API until SIGINT/SIGTERM, then closes everything. */
export async function serve(config: Config): Promise<void> {
  // Whatever the engines create later (DuckDB's WAL, report files) is private too;
  // what exists is chmod'ed by openRuntime whatever the umask.
  process.umask(0o077);
  const rt = await openRuntime(config);
  const adminToken = await bootstrapAdmin(rt);
  const app = await buildApp({
    config,
    services: rt.services,
    checks: [
      { name: 'metadata', check: async () => void (await sql`select 1`.execute(rt.meta.db)) },
      { name: 'events', check: () => rt.events.ping() },
    ],
    logger: { level: config.logLevel },
  });
  for (const warning of rt.warnings) app.log.warn(warning);
  rt.services.problems.connect((err, context) => app.log.error({ err, ...context }, 'internal error'));
  let syslog: SyslogListener | undefined;
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => process.exit(1), 10_000).unref();
    try {
      await syslog?.close();
      await app.close();
      await rt.close();
    } finally {
      clearTimeout(timer);
    }
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  await app.listen({ port: config.port, host: config.host });
  if (config.syslogPort > 0) {
    syslog = await startSyslogListener(rt.services.ingest, {
      host: config.syslogHost,
      port: config.syslogPort,
      udpReceiveBuffer: config.syslogUdpReceiveBuffer,
      log: app.log,
    });
    app.watchSyslog(syslog);
    app.log.info({ port: syslog.port }, 'syslog listening on UDP and TCP');
  }
  if (adminToken) {
    console.log(
      `\nFirst start: created user "admin". Its API token (shown once, also in ${config.dataDir}/admin-token):\n\n  ${adminToken}\n\n` +
        `Try: curl -H "Authorization: token ${adminToken}" http://localhost:${config.port}/api/authtokens\n`,
    );
  }
}
