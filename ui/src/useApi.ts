import { useCallback, useEffect, useState } from 'react';
import { api, errorText, isAbort } from './api';

/** GET a path; `reload` fetches it again. */
export function useApi<T>(path: string): {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => void;
} {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);

  useEffect(() => {
    const ctl = new AbortController();
    setLoading(true);
    // `round` is read so that reload() fetches again.
    void round;
    api<T>(path, { signal: ctl.signal })
      .then((d) => {
        setData(d);
        setError(null);
      })
      .catch((err) => {
        if (!isAbort(err)) setError(errorText(err));
      })
      .finally(() => {
        if (!ctl.signal.aborted) setLoading(false);
      });
    return () => ctl.abort();
  }, [path, round]);

  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { data, error, loading, reload };
}
