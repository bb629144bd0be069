import { type ReactNode, useEffect, useRef } from 'react';
import './components.css';

/**
 * A modal dialog, open while it is rendered: Esc or `onClose` closes it and the focus
 * goes back to where it was.
 */
export function Dialog(props: { label: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog ref={ref} aria-label={props.label} className="work-dialog" onClose={props.onClose}>
      {props.children}
    </dialog>
  );
}
