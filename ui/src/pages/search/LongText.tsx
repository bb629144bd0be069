import { useState } from 'react';
import { formatCount } from '../../format';
import './long-text.css';

/**
 * A text shown up to `max` characters, the whole when asked: a 64 KB message drawn whole,
 * three times over in the event panel (message, fields, raw record), held the page's main
 * thread for half a second as it opened on a busy machine. The button stays (Show less):
 * the focus is not lost with it.
 */
export function LongText({ text, max }: { text: string; max: number }) {
  const [whole, setWhole] = useState(false);
  if (text.length <= max) return text;
  return (
    <>
      {whole ? text : `${text.slice(0, max)}…`}{' '}
      <button type="button" className="long-text-more" aria-expanded={whole} onClick={() => setWhole(!whole)}>
        {whole ? 'Show less' : `Show all ${formatCount(text.length)} characters`}
      </button>
    </>
  );
}
