// The UI's components on a page of their own, for test/browser/components.test.ts: built with
// Vite like the app, opened in Chromium. `?component=picker|query&props=<JSON>` chooses
// what is shown; what the component reports (onChange, onSubmit, the completion's field
// requests) is appended to `window.calls`; `window.harness` changes props from outside
// (as the search page does when zooming, going Back or adding a filter).
// Plain JavaScript (no JSX): the test tsconfig reads Node code, the UI's its own sources.
import { createElement as h, StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryBox } from '../../../ui/src/pages/search/QueryBox';
import { TimePicker, useTimePicker } from '../../../ui/src/pages/search/TimePicker';
import '../../../ui/src/styles.css';

const params = new URLSearchParams(window.location.search);
const props = JSON.parse(params.get('props') ?? '{}');
const calls = [];
window.calls = calls;
window.harness = {};

function Picker() {
  const [range, setRange] = useState(props.range ?? { kind: 'preset', preset: 'last_hour' });
  const [live, setLive] = useState(props.live ?? false);
  window.harness.setRange = setRange;
  window.harness.setLive = setLive;
  const picker = useTimePicker({
    range,
    shown: props.shown ?? null,
    live,
    onChange: (r) => {
      calls.push(['change', r]);
      setRange(r);
    },
  });
  return h(
    'div',
    { className: 'search-page' },
    h('form', { className: 'search-form', 'aria-label': 'Search' }, h(TimePicker, { picker })),
    h('output', { id: 'applied' }, JSON.stringify(range)),
  );
}

function Query() {
  const [value, setValue] = useState(props.value ?? '');
  const [errorAt, setErrorAt] = useState(props.errorAt ?? null);
  window.harness.setValue = setValue;
  window.harness.setErrorAt = setErrorAt;
  const submit = (v) => calls.push(['submit', v]);
  return h(
    'div',
    { className: 'search-page' },
    h(
      'form',
      {
        className: 'search-form',
        'aria-label': 'Search',
        onSubmit: (e) => {
          e.preventDefault();
          submit(value);
        },
      },
      h(QueryBox, {
        value,
        onChange: (v) => {
          calls.push(['change', v]);
          setValue(v);
        },
        onSubmit: submit,
        fields: async () => {
          calls.push(['fields']);
          return props.fields ?? [];
        },
        errorAt,
        errorId: errorAt === null ? undefined : 'query-error',
      }),
      h('button', { type: 'submit' }, 'Search'),
    ),
    errorAt === null
      ? null
      : h('p', { id: 'query-error', role: 'alert', className: 'error' }, 'Syntax error'),
  );
}

const root = document.getElementById('root');
if (!root) throw new Error('no #root');
createRoot(root).render(h(StrictMode, null, h(params.get('component') === 'picker' ? Picker : Query)));
