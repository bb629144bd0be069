import { type FormEvent, useEffect, useRef, useState } from 'react';
import { api, errorText } from '../../api';

/** A template path from a title: `saved/` and the title's letters and digits. */
const templatePathFor = (title: string) =>
  `saved/${
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 100) || 'dashboard'
  }`;

/** Saves the dashboard as a template at a path (POST /api/dashboards/:id/templates). */
export function SaveTemplate(props: {
  id: number;
  title: string;
  onSaved: (path: string) => void;
  onCancel: () => void;
}) {
  const [path, setPath] = useState(() => templatePathFor(props.title));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  useEffect(() => inputRef.current?.focus(), []);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const saved = await api<{ path: string }>(`/api/dashboards/${props.id}/templates`, { body: { path } });
      props.onSaved(saved.path);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      id="dash-template-form"
      className="dash-template"
      aria-label="Save as template"
      onSubmit={(e) => void submit(e)}
    >
      <div className="field">
        <label htmlFor="dash-template-path">Template path</label>
        <input
          id="dash-template-path"
          ref={inputRef}
          value={path}
          onChange={(e) => setPath(e.target.value)}
          required
          maxLength={200}
          pattern="[A-Za-z0-9_.\/\-]+"
          aria-describedby="dash-template-hint"
          aria-invalid={error ? true : undefined}
        />
        <span id="dash-template-hint" className="muted">
          Letters, digits and _-./, e.g. team/overview. Every user can create dashboards from it.
        </span>
      </div>
      <button type="submit" disabled={busy}>
        Save template
      </button>
      <button type="button" className="secondary" onClick={props.onCancel}>
        Cancel
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}
