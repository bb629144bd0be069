import { useEffect, useId, useRef, useState } from 'react';
import { isAbort, type TimeRange } from '../../api';
import { BUILTIN_COLUMNS, columnLabel, isBuiltin, moveColumn, toggleColumn } from './columns';
import { fetchFields } from './FieldList';

/**
 * The "Columns" button: a list of checkboxes for the built-in columns and the fields of
 * the current results (fetched when it opens), and the shown ones in order, each with
 * Move left and Move right (what dragging a header does, from the keyboard).
 */
export function ColumnPicker(props: {
  columns: readonly string[];
  onChange: (cols: string[]) => void;
  query: string;
  timeRange: TimeRange | null;
}) {
  const { columns, onChange, query, timeRange } = props;
  const [open, setOpen] = useState(false);
  const [fields, setFields] = useState<string[]>([]);
  const wrap = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const panelId = useId();
  /** The move button pressed last: it keeps the focus as its column moves. */
  const moved = useRef<{ name: string; by: number } | null>(null);
  useEffect(() => {
    const m = moved.current;
    if (!m || !wrap.current) return;
    moved.current = null;
    const at = columns.indexOf(m.name);
    // At an end, the other button (this one is disabled there).
    const by = (m.by < 0 && at === 0) || (m.by > 0 && at === columns.length - 1) ? -m.by : m.by;
    wrap.current.querySelector<HTMLButtonElement>(`button[data-move="${CSS.escape(m.name)}:${by}"]`)?.focus();
  }, [columns]);
  const move = (name: string, by: number) => {
    moved.current = { name, by };
    onChange(moveColumn(columns, name, by));
  };

  useEffect(() => {
    if (!open || !timeRange) return;
    const ctl = new AbortController();
    fetchFields(query, timeRange, ctl.signal)
      .then((r) => setFields(r.fields.map((f) => f.name).filter((n) => n !== 'ts' && !isBuiltin(n))))
      .catch((err) => {
        if (!isAbort(err)) setFields([]);
      });
    return () => ctl.abort();
  }, [open, query, timeRange]);

  // Escape or a click elsewhere closes it.
  useEffect(() => {
    if (!open) return;
    const onDown = (e: PointerEvent) => {
      if (wrap.current && !wrap.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setOpen(false);
        button.current?.focus();
      }
    };
    document.addEventListener('pointerdown', onDown);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('pointerdown', onDown);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);

  // Chosen fields stay listed even when the current results lack them.
  const extra = [...new Set([...columns.filter((c) => !isBuiltin(c)), ...fields])].sort((a, b) =>
    a.localeCompare(b),
  );
  const box = (name: string) => {
    const checked = columns.includes(name);
    return (
      <li key={name}>
        <label>
          <input
            type="checkbox"
            checked={checked}
            disabled={checked && columns.length === 1}
            onChange={(e) => onChange(toggleColumn(columns, name, e.target.checked))}
          />
          {columnLabel(name)}
        </label>
      </li>
    );
  };

  return (
    <div className="column-picker" ref={wrap}>
      <button
        ref={button}
        type="button"
        className="secondary small"
        aria-expanded={open}
        aria-controls={panelId}
        onClick={() => setOpen((o) => !o)}
      >
        Columns
      </button>
      <fieldset id={panelId} className="column-panel" hidden={!open}>
        <legend className="visually-hidden">Columns</legend>
        <ul>{BUILTIN_COLUMNS.map(box)}</ul>
        {extra.length > 0 && (
          <>
            <p className="muted small-text">Fields</p>
            <ul>{extra.map(box)}</ul>
          </>
        )}
        {columns.length > 1 && (
          <>
            <p className="muted small-text">Order</p>
            <ol className="column-order">
              {columns.map((name, i) => (
                <li key={name}>
                  <span>{columnLabel(name)}</span>
                  <button
                    type="button"
                    className="icon-button"
                    data-move={`${name}:-1`}
                    aria-label={`Move ${columnLabel(name)} left`}
                    title={`Move ${columnLabel(name)} left`}
                    disabled={i === 0}
                    onClick={() => move(name, -1)}
                  >
                    ←
                  </button>
                  <button
                    type="button"
                    className="icon-button"
                    data-move={`${name}:1`}
                    aria-label={`Move ${columnLabel(name)} right`}
                    title={`Move ${columnLabel(name)} right`}
                    disabled={i === columns.length - 1}
                    onClick={() => move(name, 1)}
                  >
                    →
                  </button>
                </li>
              ))}
            </ol>
          </>
        )}
      </fieldset>
    </div>
  );
}
