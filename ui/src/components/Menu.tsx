import { type KeyboardEvent, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { cls } from './util';
import './components.css';

export interface MenuItem {
  label: string;
  onSelect: () => void;
  /** Listed and focusable, but does nothing. */
  disabled?: boolean;
}

/** An item, or a line between groups of items. */
export type MenuEntry = MenuItem | 'separator';

const isItem = (e: MenuEntry): e is MenuItem => e !== 'separator';

/**
 * A menu button (the WAI-ARIA menu button pattern): the button opens a menu of actions.
 * Enter, Space or ArrowDown open it on the first item, ArrowUp on the last; in it
 * ArrowDown/ArrowUp move (wrapping), Home/End go to the first/last item, a letter to the
 * next item starting with it, Enter/Space choose, Esc closes it and focuses the button,
 * Tab closes it and moves on. A click elsewhere closes it.
 */
export function Menu(props: {
  /** The button's content; its text names the button and the menu. */
  label: ReactNode;
  items: readonly MenuEntry[];
  disabled?: boolean;
  buttonClassName?: string;
  className?: string;
}) {
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const wrap = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const itemRefs = useRef<(HTMLButtonElement | null)[]>([]);
  const id = useId();
  const items = props.items.filter(isItem);

  // While it is open, the active item has the focus.
  useEffect(() => {
    if (open) itemRefs.current[active]?.focus();
  }, [open, active]);

  useEffect(() => {
    if (!open) return;
    const onDown = (e: PointerEvent) => {
      if (!wrap.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', onDown);
    return () => document.removeEventListener('pointerdown', onDown);
  }, [open]);

  const openAt = (i: number) => {
    setActive(Math.max(0, i));
    setOpen(true);
  };
  const close = () => {
    button.current?.focus();
    setOpen(false);
  };
  const choose = (item: MenuItem) => {
    if (item.disabled) return;
    close();
    item.onSelect();
  };

  const onButtonKey = (e: KeyboardEvent) => {
    // Enter and Space click the button, which opens the menu on its first item.
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      openAt(e.key === 'ArrowDown' ? 0 : items.length - 1);
    }
  };

  const onMenuKey = (e: KeyboardEvent) => {
    const n = items.length;
    const go = (i: number) => {
      e.preventDefault();
      setActive(((i % n) + n) % n);
    };
    if (e.key === 'ArrowDown') go(active + 1);
    else if (e.key === 'ArrowUp') go(active - 1);
    else if (e.key === 'Home' || e.key === 'PageUp') go(0);
    else if (e.key === 'End' || e.key === 'PageDown') go(n - 1);
    else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      close();
    } else if (e.key === 'Tab') {
      // From the button the Tab goes on to what follows the menu button (or before it).
      close();
    } else if (e.key.length === 1 && /\S/.test(e.key) && !e.ctrlKey && !e.metaKey && !e.altKey) {
      const k = e.key.toLowerCase();
      for (let step = 1; step <= n; step++) {
        const i = (active + step) % n;
        if (items[i]?.label.toLowerCase().startsWith(k)) return go(i);
      }
    }
  };

  const buttonId = `${id}-button`;
  const menuId = `${id}-menu`;
  let index = 0;
  return (
    <div className={cls('menu-wrap', props.className)} ref={wrap}>
      <button
        ref={button}
        id={buttonId}
        type="button"
        className={props.buttonClassName ?? 'secondary small'}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        disabled={props.disabled}
        onClick={() => (open ? setOpen(false) : openAt(0))}
        onKeyDown={onButtonKey}
      >
        {props.label}
      </button>
      {open && (
        <div role="menu" id={menuId} aria-labelledby={buttonId} className="menu" onKeyDown={onMenuKey}>
          {props.items.map((entry) => {
            if (!isItem(entry)) return <hr key={`separator-${index}`} />;
            const i = index++;
            return (
              <button
                key={entry.label}
                ref={(el) => {
                  itemRefs.current[i] = el;
                }}
                type="button"
                role="menuitem"
                tabIndex={i === active ? 0 : -1}
                aria-disabled={entry.disabled || undefined}
                onClick={() => choose(entry)}
                onPointerMove={() => i !== active && setActive(i)}
              >
                {entry.label}
              </button>
            );
          })}
        </div>
      )}
    </div>
  );
}
