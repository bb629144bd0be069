import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from '../../helpers/eventually.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/**
 * The CLI from source, transpiled once with esbuild (the transform tsx applies on every
 * start) into a temp dir beside a copy of package.json and a link to node_modules, and run
 * by plain node from any working directory: each start takes a third of what `--import
 * tsx` takes (tsx hooks every module the CLI loads), which keeps these tests fast.
 */
let built: string | undefined;
export async function buildCli(): Promise<void> {
  const out = mkdtempSync(path.join(tmpdir(), 'logscope-cli-build-'));
  // esbuild is tsx's own dependency.
  const esbuild = createRequire(createRequire(import.meta.url).resolve('tsx'))('esbuild') as {
    build(o: object): Promise<unknown>;
  };
  const sources = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    // `.js` too: the query language's parser is generated JavaScript (scripts/query-parser.ts).
    .filter((f) => (f.endsWith('.ts') && !f.endsWith('.d.ts')) || f.endsWith('.js'))
    .map((f) => path.join(ROOT, 'src', f));
  await esbuild.build({
    entryPoints: sources,
    outdir: path.join(out, 'src'),
    outbase: path.join(ROOT, 'src'),
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
  });
  copyFileSync(path.join(ROOT, 'package.json'), path.join(out, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(out, 'node_modules'), 'dir');
  built = out;
}

export function removeCli(): void {
  if (built) rmSync(built, { recursive: true, force: true });
  built = undefined;
}

const cliArgs = () => {
  if (!built) throw new Error('call buildCli() first (beforeAll)');
  return [path.join(built, 'src/cli/index.js')];
};

/** The child's environment: this one without LOGSCOPE_* settings, UTC times, plus `env`. */
export function cliEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LOGSCOPE_')));
  return { ...clean, TZ: 'UTC', LOGSCOPE_DATABASE_URL: '', ...env };
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export type StartedCli = ChildProcessWithoutNullStreams & {
  out: { stdout: string; stderr: string };
  /** Settles when the process has exited and its output streams are closed. */
  done: Promise<CliRun>;
};

/** Starts the CLI; its output so far is in `out`. */
export function startCli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): StartedCli {
  const child = spawn(process.execPath, [...cliArgs(), ...args], {
    cwd: opts.cwd ?? ROOT,
    env: cliEnv(opts.env),
  }) as StartedCli;
  child.out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => {
    child.out.stdout += String(d);
  });
  child.stderr.on('data', (d) => {
    child.out.stderr += String(d);
  });
  child.done = new Promise((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, ...child.out })),
  );
  return child;
}

/** Waits for a started CLI to end; killed and failed after `ms`. */
export function exited(child: StartedCli, ms = 15_000): Promise<CliRun> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`CLI did not exit within ${ms} ms; stderr: ${child.out.stderr}`));
    }, ms);
  });
  return Promise.race([child.done, timeout]).finally(() => clearTimeout(timer));
}

/** Runs the CLI to its end. */
export function runCli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliRun> {
  return exited(startCli(args, opts), opts.timeoutMs);
}

/** Polls `cond` every 50 ms until it holds; throws after `ms` with `what`. */
export async function until(cond: () => boolean, what: () => string, ms = 10_000): Promise<void> {
  await eventually(what, cond, { withinMs: ms });
}
