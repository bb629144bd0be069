import { useCallback, useEffect, useRef, useState } from 'react';
import { formatCount } from '../../format';
import type { LiveState } from '../../live';
import './live-new-bar.css';

/** Scrolled further than this from the top, the reader is reading: the tail holds its rows. */
const AWAY_PX = 4;
/** The count is said to screen readers at most this often (it changes with every update). */
const ANNOUNCE_MS = 5_000;

const STATE_TEXT = {
  connecting: 'Connecting…',
  open: 'Live',
  reconnecting: 'Reconnecting…',
  closed: 'Disconnected',
} as const;

/**
 * Why the live tail holds its rows by itself, if it does: the results list (the `.results`
 * scroller of ResultsTable, inside the element `bodyRef` is put on) is scrolled away from
 * its top (heard in the capture phase: scroll events do not bubble), or `event` is open.
 * `jump` scrolls the list back to its top and lets the open event hold no longer.
 */
export function useLiveHold(on: boolean, event: string | null) {
  const bodyRef = useRef<HTMLDivElement>(null);
  const [away, setAway] = useState(false);
  /** The open event the reader jumped past: it holds the rows no more. */
  const [released, setReleased] = useState<string | null>(null);
  useEffect(() => {
    setAway(false);
    const body = bodyRef.current;
    if (!on || !body) return;
    const onScroll = (e: Event) => {
      const list = e.target;
      // The field list scrolls too: only the results' scroller counts.
      if (list instanceof HTMLElement && list.classList.contains('results'))
        setAway(list.scrollTop > AWAY_PX);
    };
    body.addEventListener('scroll', onScroll, { capture: true, passive: true });
    return () => body.removeEventListener('scroll', onScroll, { capture: true });
  }, [on]);
  const jump = useCallback(() => {
    bodyRef.current?.querySelector('.results')?.scrollTo({ top: 0 });
    setAway(false);
    setReleased(event);
  }, [event]);
  const held = away ? 'scrolled' : event !== null && event !== released ? 'event' : null;
  return { bodyRef, held, jump } as const;
}

/**
 * The tail's state beside the count: Live (or the connection's trouble), Paused by the
 * reader's button with what came meanwhile, or paused by itself while the reader reads
 * (the count is then on LiveNewBar); the Pause / Resume button; the rows' cap.
 */
export function LiveControls(props: {
  connection: LiveState | null;
  paused: boolean;
  /** Why the tail holds its rows by itself, if it does. */
  held: 'scrolled' | 'event' | null;
  waiting: string;
  max: number;
  onPause: () => void;
}) {
  const { connection, paused, held, waiting } = props;
  const kind = paused || held ? 'paused' : (connection ?? 'connecting');
  const text = paused
    ? `Paused${waiting ? `: ${waiting} new` : ''}`
    : held === 'scrolled'
      ? 'Paused while scrolled'
      : held === 'event'
        ? 'Paused while an event is open'
        : STATE_TEXT[connection ?? 'connecting'];
  return (
    <>
      <span role="status" className={`live-state live-${kind}`}>
        {text}
      </span>
      <button type="button" className="secondary small" onClick={props.onPause}>
        {paused ? 'Resume' : 'Pause'}
      </button>
      <span className="muted wide-only">newest first, at most {formatCount(props.max)}</span>
    </>
  );
}

/** "1,204" or, when that many at least came, "1,204+". */
export const waitingText = (count: number, more: boolean) =>
  count ? `${formatCount(count)}${more ? '+' : ''}` : '';

/**
 * "N new — jump to newest" over the top of the results while the tail holds its rows by
 * itself: the rows do not move under the reader, and the button shows the newest again.
 * The count is announced politely, at most every few seconds.
 */
export function LiveNewBar({ waiting, onJump }: { waiting: string; onJump: () => void }) {
  const [said, setSaid] = useState('');
  const last = useRef(0);
  const region = useRef<HTMLDivElement>(null);
  /** The bar's button had the focus when it jumped: the button goes, the focus must not. */
  const jumped = useRef(false);
  useEffect(() => {
    if (waiting || !jumped.current) return;
    jumped.current = false;
    // The newest row, drawn in the same render that took the bar away.
    region.current?.parentElement?.querySelector<HTMLElement>('.results tr.event-row .row-open')?.focus();
  }, [waiting]);
  useEffect(() => {
    const text = waiting ? `${waiting} new events held while you read` : '';
    const wait = last.current + ANNOUNCE_MS - Date.now();
    if (!text || wait <= 0) {
      if (text) last.current = Date.now();
      setSaid(text);
      return;
    }
    const timer = setTimeout(() => {
      last.current = Date.now();
      setSaid(text);
    }, wait);
    return () => clearTimeout(timer);
  }, [waiting]);
  return (
    <>
      {waiting && (
        <button
          type="button"
          className="live-new"
          onClick={(e) => {
            jumped.current = e.currentTarget === document.activeElement;
            onJump();
          }}
        >
          {waiting} new — jump to newest
        </button>
      )}
      <div ref={region} className="visually-hidden live-new-said" aria-live="polite">
        {said}
      </div>
    </>
  );
}
