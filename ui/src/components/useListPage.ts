import type { Paginated } from '../api';
import { useApi } from '../useApi';
import { useAction, useConfirmDelete } from './useAction';

/**
 * A list page's state: the list (`GET path`), the actions on it (busy, error, notice),
 * confirm-and-delete, and `created(text)` for a "new" form: shows the notice and reloads.
 */
export function useListPage<T>(path: string) {
  const list = useApi<Paginated<T>>(path);
  const act = useAction();
  const remove = useConfirmDelete(act, list.reload);
  const created =
    <X>(text: (x: X) => string) =>
    (x: X) => {
      act.setNotice(text(x));
      list.reload();
    };
  return { list, act, remove, created };
}
