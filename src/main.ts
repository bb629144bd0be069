import type { buildApp } from './app.js';
import type { Config } from './config/config.js';
import { installProcessNet } from './errors/process-net.js';
import type { EventStore } from './event-store/event-store.js';
import { createServerLogger } from './http/request-log.js';
import { bootstrapAdmin, healthChecks, openRuntime } from './runtime.js';

/** How long a clean stop may take before the process exits anyway. */
const STOP_TIMEOUT_MS = 10_000;

/**
 * Opens the stores and serves the API until SIGINT or SIGTERM, then stops cleanly: no new
 * connections, websockets closed with 1001, requests in flight answered, events waiting
 * for a commit committed, stores closed; exit code 0. Signals during the stop are ignored
 * (it is bounded by STOP_TIMEOUT_MS).
 * Start-up failures are thrown for the CLI to report in one line.
 */
export async function serve(config: Config, events?: Promise<EventStore>): Promise<void> {
  // Whatever the engines create later (DuckDB's WAL, report files) is private too;
  // what exists is chmod'ed by openRuntime whatever the umask.
  process.umask(0o077);
  let busLog: ((connected: boolean, where: string) => void) | undefined;
  // The HTTP side loads while the event store's worker starts its engine (a restart
  // answers sooner); a failed start reports the runtime's error, not this one's.
  const appModule = import('./app.js');
  appModule.catch(() => undefined);
  // One logger for the services and the HTTP layer, made before either.
  const log = createServerLogger(config.logLevel);
  const rt = await openRuntime(config, {
    log,
    ...(events ? { events } : {}),
    onWait: (message) => console.error(`logscope: ${message}`),
    onBusState: (connected, where) => busLog?.(connected, where),
  });
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  let stopping: Promise<void> | undefined;
  let offNet = () => {};
  const stop = (signal?: NodeJS.Signals) => {
    stopping ??= (async () => {
      if (signal) app?.log.info({ signal }, 'stopping: closing connections and stores');
      const timer = setTimeout(() => {
        console.error(`logscope: could not stop within ${STOP_TIMEOUT_MS / 1000} s; exiting`);
        process.exit(1);
      }, STOP_TIMEOUT_MS).unref();
      try {
        await app?.close();
        await rt.close();
        if (signal) app?.log.info('stopped');
      } finally {
        clearTimeout(timer);
      }
    })();
    return stopping;
  };
  let repeated = false;
  const onSignal = (signal: NodeJS.Signals) => {
    // A signal while stopping (a supervisor signals the process group and npm forwards it
    // again) changes nothing: exiting there, with the event store's worker closing DuckDB,
    // cut the native engine off mid-call (`terminate called after throwing an instance of
    // 'Napi::Error'`). The stop goes on, bounded by STOP_TIMEOUT_MS.
    if (stopping) {
      if (!repeated)
        console.error(`logscope: ${signal} again: already stopping (within ${STOP_TIMEOUT_MS / 1000} s)`);
      repeated = true;
      return;
    }
    stop(signal).catch((err: unknown) => {
      console.error(`logscope: stopping failed: ${(err as Error).message}`);
      process.exitCode = 1;
    });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const admin = await bootstrapAdmin(rt);
    const { buildApp } = await appModule;
    app = await buildApp({ root: rt.root, checks: healthChecks(rt), loggerInstance: log });
    for (const warning of rt.warnings) log.warn(warning);
    let busDown = false;
    busLog = (connected, where) => {
      if (connected === !busDown) return;
      busDown = !connected;
      if (connected) log.info({ redis: where }, 'bus to the other nodes is back');
      else
        log.warn(
          { redis: where },
          'bus to the other nodes is down: live updates from other nodes fall back to polling the shared store',
        );
    };
    offNet = installProcessNet(log);
    await app.listen({ port: config.port, host: config.host });
    if (admin) {
      // On stderr, with the logs: stdout stays free for what a command prints.
      const url = config.publicUrl || `http://localhost:${config.port}`;
      console.error(
        `\nFirst start: created user "admin" (shown once, also in ${config.dataDir}/admin-password and admin-token):\n\n` +
          `  Web UI:    ${url}/  user admin, password ${admin.password}\n` +
          `  API token: ${admin.token}\n\n` +
          `Try: curl -H "Authorization: token ${admin.token}" ${url}/api/authtokens\n`,
      );
    }
  } catch (err) {
    // Nothing half-open is left behind: the CLI prints the reason and exits 1.
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    offNet();
    await stop().catch(() => undefined);
    throw err;
  }
}
