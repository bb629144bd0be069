import { useCallback, useState } from 'react';
import { ApiError, api, errorText } from '../api';

export interface RunOptions<T> {
  /** Asked first (window.confirm): nothing happens unless it is confirmed. */
  confirm?: string;
  /** The notice once it succeeded. */
  done?: string | ((result: T) => string);
  /** Put before the error's text ("Export failed"). */
  failure?: string;
}

export interface Action {
  /** A run is under way. */
  busy: boolean;
  /** The last run's error as text (the API's detail and its field messages), null when none. */
  error: string | null;
  /** The messages of a 400 for one field of the request body, null when none. */
  fieldError: (name: string) => string | null;
  /** What the last successful run did (for a role="status" line). */
  notice: string;
  setNotice: (text: string) => void;
  /** Runs `fn`: busy meanwhile, the error and notice cleared before, the error kept after a failure. */
  run: <T>(fn: () => Promise<T>, opts?: RunOptions<T>) => Promise<T | undefined>;
}

interface Problem {
  text: string;
  fields: Readonly<Record<string, string[]>>;
}

/**
 * The state of a form's or a page's actions on the API: busy, the error (with the field
 * messages of a 400 `{detail, errors: {field: [message]}}`), and a notice of what was done.
 */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [notice, setNotice] = useState('');

  const run = useCallback(async <T>(fn: () => Promise<T>, opts: RunOptions<T> = {}) => {
    if (opts.confirm && !window.confirm(opts.confirm)) return undefined;
    setBusy(true);
    setProblem(null);
    setNotice('');
    try {
      const result = await fn();
      if (opts.done) setNotice(typeof opts.done === 'string' ? opts.done : opts.done(result));
      return result;
    } catch (err) {
      const text = errorText(err);
      setProblem({
        text: opts.failure ? `${opts.failure}: ${text}` : text,
        fields: err instanceof ApiError && err.status === 400 ? (err.errors ?? {}) : {},
      });
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);

  const fieldError = (name: string) => problem?.fields[name]?.join(' ') || null;
  return { busy, error: problem?.text ?? null, fieldError, notice, setNotice, run };
}

/**
 * Confirm-and-delete for list pages: asks `question`, DELETEs `path`, then calls `then`
 * (a reload) and shows `done`. Resolves true when it was deleted.
 */
export function useConfirmDelete(action: Action, then: () => void) {
  const { run } = action;
  return useCallback(
    (question: string, path: string, done: string) =>
      run(
        async () => {
          await api(path, { method: 'DELETE' });
          then();
          return true;
        },
        { confirm: question, done },
      ),
    [run, then],
  );
}
