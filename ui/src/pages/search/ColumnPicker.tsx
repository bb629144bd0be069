import { useEffect, useId, useRef, useState } from 'react';
import { isAbort, type TimeRange } from '../../api';
import { BUILTIN_COLUMNS, columnLabel, isBuiltin, toggleColumn } from './columns';
import { fetchFields } from './FieldList';

/**
 * The "Columns" button: a list of checkboxes for the built-in columns and the fields of
 * the current results (fetched when it opens).
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
      </fieldset>
    </div>
  );
}
