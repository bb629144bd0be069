import type { CSSProperties, KeyboardEvent, PointerEvent } from 'react';
import { type QueryData, Visualization } from './charts';
import { ARROWS, type Direction, GRID_COLUMNS, KEY_DIRECTION, moved, type Widget } from './grid';

/** One widget on the grid: its chart, and buttons and handles to move and resize it. */
export function WidgetCard(props: {
  widget: Widget;
  data: QueryData | undefined;
  dragging: boolean;
  onMove: (w: Widget, d: Direction, buttonId: string) => void;
  onResize: (w: Widget, d: Direction, handleId: string) => void;
  drag: {
    start: (mode: 'move' | 'resize', e: PointerEvent<HTMLElement>) => void;
    move: (e: PointerEvent<HTMLElement>) => void;
    end: (e: PointerEvent<HTMLElement>, cancelled: boolean) => void;
  };
}) {
  const { widget: w, data, drag } = props;
  const p = w.position;
  const wCols = Math.max(1, Math.min(p.w, GRID_COLUMNS));
  const style = {
    '--x': Math.min(p.x, GRID_COLUMNS - wCols) + 1,
    '--y': p.y + 1,
    '--w': wCols,
    '--h': Math.max(1, p.h),
  } as CSSProperties;
  const headingId = `widget-${w.id}-title`;
  const resizeId = `widget-${w.id}-resize`;
  const pointer = (mode: 'move' | 'resize') => ({
    onPointerDown: (e: PointerEvent<HTMLElement>) => drag.start(mode, e),
    onPointerMove: drag.move,
    onPointerUp: (e: PointerEvent<HTMLElement>) => drag.end(e, false),
    onPointerCancel: (e: PointerEvent<HTMLElement>) => drag.end(e, true),
  });
  const onResizeKey = (e: KeyboardEvent<HTMLButtonElement>) => {
    const d = KEY_DIRECTION[e.key];
    if (!d || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    props.onResize(w, d, resizeId);
  };
  const classes = ['dash-widget', w.read_only ? '' : 'dash-movable', props.dragging ? 'dash-dragging' : '']
    .filter(Boolean)
    .join(' ');
  return (
    <section
      aria-labelledby={headingId}
      className={classes}
      style={style}
      data-widget-id={w.id}
      data-position={`${p.x},${p.y},${p.w},${p.h}`}
    >
      <header
        className="dash-widget-head"
        title={w.read_only ? undefined : 'Drag to move'}
        {...(w.read_only ? {} : pointer('move'))}
      >
        {!w.read_only && (
          <span className="dash-grip" aria-hidden="true">
            ⠿
          </span>
        )}
        <h2 id={headingId}>{w.title}</h2>
        {w.read_only && <span className="badge dash-readonly">read-only</span>}
        {!w.read_only && (
          // biome-ignore lint/a11y/useSemanticElements: a group of buttons, not a form's fieldset
          <div className="dash-move" role="group" aria-label={`Move ${w.title}`}>
            {(['left', 'right', 'up', 'down'] as const).map((d) => {
              const id = `widget-${w.id}-move-${d}`;
              const can = moved(p, d) !== null;
              return (
                <button
                  key={d}
                  id={id}
                  type="button"
                  className="secondary small"
                  aria-label={`Move ${w.title} ${d}`}
                  title={`Move ${d}`}
                  aria-disabled={!can}
                  onClick={() => can && props.onMove(w, d, id)}
                >
                  <span aria-hidden="true">{ARROWS[d]}</span>
                </button>
              );
            })}
          </div>
        )}
      </header>
      {/* Scrolls when its content is taller than the widget: focusable, so keys scroll it. */}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll container must take the focus */}
      <div className="dash-widget-body" tabIndex={0}>
        {!data && <p className="muted">Loading…</p>}
        {data?.status === 'ERROR' && (
          <p role="alert" className="error">
            {data.error ?? 'The query failed.'}
          </p>
        )}
        {data && data.status !== 'ERROR' && (
          <Visualization
            kind={w.visualization.kind}
            options={w.visualization.options ?? {}}
            data={data}
            title={w.title}
            fields={w.query.params.fields}
          />
        )}
      </div>
      {!w.read_only && (
        <button
          id={resizeId}
          type="button"
          className="dash-resize"
          aria-label={`Resize ${w.title}`}
          title="Drag to resize (or use the arrow keys)"
          onKeyDown={onResizeKey}
          {...pointer('resize')}
        />
      )}
    </section>
  );
}
