import { useEffect, useState } from 'react';
import { api, type User } from './api';

/** The signed-in user (`GET /api/users/me`), null until it is known. */
export function useMe(): User | null {
  const [me, setMe] = useState<User | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    api<User>('/api/users/me', { signal: ctl.signal })
      .then(setMe)
      .catch(() => {});
    return () => ctl.abort();
  }, []);
  return me;
}

/**
 * Usernames by id, for showing assignees: only admins may list users, so for others the
 * map holds just the caller.
 */
export function useUserNames(me: User | null): ReadonlyMap<number, string> {
  const [names, setNames] = useState<ReadonlyMap<number, string>>(new Map());
  useEffect(() => {
    if (!me) return;
    setNames(new Map([[me.id, me.username]]));
    if (!me.is_admin) return;
    const ctl = new AbortController();
    api<{ results: User[] }>('/api/users?page_size=1000', { signal: ctl.signal })
      .then((r) => setNames(new Map(r.results.map((u) => [u.id, u.username]))))
      .catch(() => {});
    return () => ctl.abort();
  }, [me]);
  return names;
}
