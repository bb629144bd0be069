import { useEffect, useState } from 'react';
import { api, errorText, type Schemas } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Check, Field, Form, FormActions } from '../../components/Field';
import { ErrorBanner } from '../../components/feedback';
import { Menu, type MenuEntry } from '../../components/Menu';
import { useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { useMe } from '../../useMe';
import { Pick } from '../settings/Pick';
import { type SearchView, shareLink } from './search-url';
import type { RangeSel } from './time-range';

/** A saved search as `/api/saved-searches` answers it. */
export type SavedSearch = Schemas['SavedSearch'];

type Team = Schemas['Team'];

const rangeOf = (r: SavedSearch['time_range']): RangeSel =>
  'preset' in r ? { kind: 'preset', preset: r.preset } : { kind: 'absolute', from: r.ts_from, to: r.ts_to };
const timeRangeOf = (r: RangeSel): SavedSearch['time_range'] =>
  r.kind === 'preset' ? { preset: r.preset } : { ts_from: r.from, ts_to: r.to };

/** The page's view as a saved search's fields. */
const fieldsOf = (v: SearchView, columns: readonly string[]) => ({
  query: v.query,
  time_range: timeRangeOf(v.range),
  columns: [...columns],
  sort: v.sort,
});

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Whether the page shows the saved search as it was saved: its query, range, sort and
 * columns (a saved search without columns shows the default ones: the view names none).
 */
function showsSaved(s: SavedSearch, v: SearchView, columns: readonly string[]): boolean {
  const range = rangeOf(s.time_range);
  const sameRange =
    range.kind === 'preset'
      ? v.range.kind === 'preset' && v.range.preset === range.preset
      : v.range.kind === 'absolute' && v.range.from === range.from && v.range.to === range.to;
  return (
    s.query === v.query &&
    sameRange &&
    sameList(s.sort.length ? s.sort : ['-ts'], v.sort) &&
    (s.columns.length ? sameList(s.columns, columns) : v.columns === null)
  );
}

/** A saved search as the page shows it. */
export const viewOf = (s: SavedSearch): SearchView => ({
  query: s.query,
  range: rangeOf(s.time_range),
  columns: s.columns.length ? s.columns : null,
  sort: s.sort.length ? s.sort : ['-ts'],
  tab: 'events',
  event: null,
  context: false,
  saved: s.id,
});

/**
 * The search page's Saved menu (docs/web-ui.md): save the search shown (again, or as a new one),
 * open one of yours or one shared with you, share it with teams or everyone, delete it;
 * and Copy link, with the time range as it is (relative) or frozen to the second.
 */
export function SavedMenu(props: {
  view: SearchView;
  /** The columns shown (the view leaves the default ones out). */
  columns: readonly string[];
  onOpen: (view: SearchView) => void;
  onSaved: (id: number | null) => void;
}) {
  const { view } = props;
  const me = useMe();
  const [current, setCurrent] = useState<SavedSearch | null>(null);
  const [dialog, setDialog] = useState<'save-as' | 'share' | 'open' | null>(null);
  const [link, setLink] = useState<string | null>(null);
  const act = useAction();

  // The saved search the page came from, read again when it changes.
  useEffect(() => {
    if (view.saved === null) return setCurrent(null);
    if (current?.id === view.saved) return;
    let gone = false;
    api<SavedSearch>(`/api/saved-searches/${view.saved}`)
      .then((s) => !gone && setCurrent(s))
      .catch(() => !gone && setCurrent(null));
    return () => {
      gone = true;
    };
  }, [view.saved, current?.id]);

  const mine = current !== null && me !== null && (current.owner === me.id || me.is_admin);
  /** The view was edited since the saved search was opened or saved: Save updates it. */
  const modified = current !== null && !showsSaved(current, view, props.columns);

  const save = () =>
    act.run(
      async () => {
        if (!current) return;
        setCurrent(
          await api<SavedSearch>(`/api/saved-searches/${current.id}`, {
            method: 'PATCH',
            body: fieldsOf(view, props.columns),
          }),
        );
      },
      { done: `Saved “${current?.title ?? ''}”.` },
    );
  const remove = () =>
    act.run(
      async () => {
        if (!current) return;
        await api(`/api/saved-searches/${current.id}`, { method: 'DELETE' });
        setCurrent(null);
        props.onSaved(null);
      },
      { confirm: `Delete the saved search “${current?.title ?? ''}”?`, done: 'Deleted the saved search.' },
    );
  const copy = (frozen: boolean) => {
    const href = shareLink(view, window.location.origin, frozen, Date.now());
    act.run(
      async () => {
        try {
          await navigator.clipboard.writeText(href);
        } catch {
          // No clipboard (an insecure origin, a refused permission): the link is shown to copy.
          setLink(href);
          return 'shown';
        }
        return 'copied';
      },
      { done: (how) => (how === 'copied' ? 'Link copied.' : '') },
    );
  };

  const items: MenuEntry[] = [
    {
      label: modified && mine ? `Update “${current.title}”` : 'Save',
      disabled: !mine,
      onSelect: () => void save(),
    },
    { label: 'Save as…', onSelect: () => setDialog('save-as') },
    { label: 'Open…', onSelect: () => setDialog('open') },
    'separator',
    { label: 'Share…', disabled: !mine, onSelect: () => setDialog('share') },
    { label: 'Delete', disabled: !mine, onSelect: () => void remove() },
  ];
  const links: MenuEntry[] = [
    { label: 'With this time range (relative)', onSelect: () => copy(false) },
    { label: 'With this exact time (frozen)', onSelect: () => copy(true) },
  ];

  return (
    <div className="saved-menu">
      {act.error && (
        <span role="alert" className="error small-text">
          {act.error}
        </span>
      )}
      <span role="status" className="muted small-text">
        {act.notice}
      </span>
      <Menu
        label={current ? `Saved: ${current.title}${modified ? ' — modified' : ''}` : 'Saved'}
        items={items}
      />
      <Menu label="Copy link" items={links} />
      {dialog === 'save-as' && (
        <SaveDialog
          initial={current}
          onClose={() => setDialog(null)}
          onDone={async (fields) => {
            const s = await api<SavedSearch>('/api/saved-searches', {
              body: { ...fields, ...fieldsOf(view, props.columns) },
            });
            setCurrent(s);
            props.onSaved(s.id);
            act.setNotice(`Saved as “${s.title}”.`);
            setDialog(null);
          }}
        />
      )}
      {dialog === 'share' && current && (
        <SaveDialog
          initial={current}
          share
          onClose={() => setDialog(null)}
          onDone={async (fields) => {
            const s = await api<SavedSearch>(`/api/saved-searches/${current.id}`, {
              method: 'PATCH',
              body: { shared_with: fields.shared_with },
            });
            setCurrent(s);
            act.setNotice(`Sharing of “${s.title}” saved.`);
            setDialog(null);
          }}
        />
      )}
      {dialog === 'open' && (
        <OpenDialog
          myId={me?.id ?? null}
          onClose={() => setDialog(null)}
          onOpen={(s) => {
            setCurrent(s);
            setDialog(null);
            props.onOpen(viewOf(s));
          }}
        />
      )}
      {link && (
        <Dialog label="Copy link" onClose={() => setLink(null)}>
          <Form className="" onSubmit={() => setLink(null)}>
            <h2>Copy link</h2>
            <Field label="Link" hint="Select it and copy it: this browser would not let the page do it.">
              <input readOnly value={link} onFocus={(e) => e.target.select()} />
            </Field>
            <FormActions submit="Done" />
          </Form>
        </Dialog>
      )}
    </div>
  );
}

interface SaveFields {
  title: string;
  description: string;
  shared_with: { teams: number[]; everyone: boolean };
}

/** Save as (title, description, sharing), or Share (the sharing alone). */
function SaveDialog(props: {
  initial: SavedSearch | null;
  share?: boolean;
  onClose: () => void;
  onDone: (fields: SaveFields) => Promise<void>;
}) {
  const form = useForm(() => ({
    title: props.share ? (props.initial?.title ?? '') : props.initial ? `${props.initial.title} (copy)` : '',
    description: props.initial?.description ?? '',
    everyone: props.initial?.shared_with.everyone ?? false,
  }));
  const [teams, setTeams] = useState<number[]>(props.initial?.shared_with.teams ?? []);
  const [options, setOptions] = useState<Team[]>([]);
  const act = useAction();
  useEffect(() => {
    api<{ results: Team[] }>('/api/teams?page_size=1000&ordering=name')
      .then((r) => setOptions(r.results.filter((t) => t.name !== 'everyone')))
      .catch(() => setOptions([]));
  }, []);
  const submit = () =>
    act.run(() =>
      props.onDone({
        title: form.values.title.trim(),
        description: form.values.description,
        shared_with: { teams, everyone: form.values.everyone },
      }),
    );
  const title = props.share ? 'Share saved search' : 'Save search as';
  return (
    <Dialog label={title} onClose={props.onClose}>
      <Form className="" onSubmit={submit}>
        <h2>{title}</h2>
        {!props.share && (
          <>
            <Field label="Title" error={act.fieldError('title')}>
              <input required maxLength={200} {...form.text('title')} />
            </Field>
            <Field label="Description" error={act.fieldError('description')}>
              <textarea rows={2} maxLength={10_000} {...form.text('description')} />
            </Field>
          </>
        )}
        <Check label="Share with everyone" {...form.check('everyone')} />
        <Pick
          legend="Share with teams"
          options={options}
          chosen={teams}
          onChange={setTeams}
          empty="No teams yet."
        />
        <p className="muted small-text">Others can open it and save their own copy; only you change it.</p>
        <ErrorBanner error={act.error} />
        <FormActions
          submit={props.share ? 'Save sharing' : 'Save'}
          busy={act.busy}
          onCancel={props.onClose}
        />
      </Form>
    </Dialog>
  );
}

/** Your saved searches and those shared with you, filtered by title. */
function OpenDialog(props: { myId: number | null; onClose: () => void; onOpen: (s: SavedSearch) => void }) {
  const [title, setTitle] = useState('');
  const [list, setList] = useState<SavedSearch[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let gone = false;
    const qs = new URLSearchParams({ page_size: '200', ordering: 'title' });
    if (title.trim()) qs.set('title', title.trim());
    const t = setTimeout(() => {
      api<{ results: SavedSearch[] }>(`/api/saved-searches?${qs}`)
        .then((r) => !gone && setList(r.results))
        .catch((err) => !gone && setError(errorText(err)));
    }, 150);
    return () => {
      gone = true;
      clearTimeout(t);
    };
  }, [title]);
  return (
    <Dialog label="Open a saved search" onClose={props.onClose}>
      <div className="saved-open">
        <h2>Open a saved search</h2>
        <Field label="Title contains">
          <input type="search" value={title} onChange={(e) => setTitle(e.target.value)} />
        </Field>
        <ErrorBanner error={error} />
        {list && list.length === 0 && (
          <p className="muted">No saved searches{title ? ' with that title' : ''}.</p>
        )}
        {list && list.length > 0 && (
          <ul className="saved-list">
            {list.map((s) => (
              <li key={s.id}>
                <button type="button" className="secondary" onClick={() => props.onOpen(s)}>
                  {s.title}
                </button>
                <span className="muted small-text">
                  {s.owner === props.myId ? 'yours' : 'shared with you'}
                  {s.query ? ` · ${s.query.slice(0, 80)}` : ''}
                </span>
              </li>
            ))}
          </ul>
        )}
        <FormActions onCancel={props.onClose} cancel="Close" />
      </div>
    </Dialog>
  );
}
