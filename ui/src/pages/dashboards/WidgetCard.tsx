import type { CSSProperties, KeyboardEvent, PointerEvent } from 'react';
import { type QueryData, Visualization } from './charts';
import type { Drill } from './dashboard-address';
import { ARROWS, type Direction, GRID_COLUMNS, KEY_DIRECTION, moved, type Widget } from './grid';
import type { DragHandlers } from './useGridLayout';

/** What edit mode offers on a widget: set only in edit mode, on a dashboard the reader may change. */
export interface WidgetEditing {
  onMove: (w: Widget, d: Direction, buttonId: string) => void;
  onResize: (w: Widget, d: Direction, handleId: string) => void;
  drag: DragHandlers;
  /** Its title, query and chart (a widget the reader owns). */
  onEdit: (w: Widget) => void;
  onDuplicate: (w: Widget) => void;
  onRemove: (w: Widget) => void;
}

/**
 * One widget on the grid: its chart, whose values lead to Search. In edit mode also its
 * tools (Edit…, Duplicate, Remove…), buttons to move it, and handles to drag and resize
 * it; a widget another user owns can be duplicated and removed from the dashboard, not
 * changed. Outside edit mode nothing on it writes.
 */
export function WidgetCard(props: {
  widget: Widget;
  data: QueryData | undefined;
  dragging: boolean;
  drill: Drill;
  editing: WidgetEditing | null;
}) {
  const { widget: w, data, editing } = props;
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
  const movable = editing && !w.read_only ? editing : null;
  const pointer = (mode: 'move' | 'resize', drag: DragHandlers) => ({
    onPointerDown: (e: PointerEvent<HTMLElement>) => drag.start(mode, e),
    onPointerMove: drag.move,
    onPointerUp: (e: PointerEvent<HTMLElement>) => drag.end(e, false),
    onPointerCancel: (e: PointerEvent<HTMLElement>) => drag.end(e, true),
  });
  const onResizeKey = (e: KeyboardEvent<HTMLButtonElement>) => {
    const d = KEY_DIRECTION[e.key];
    if (!d || !movable || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    movable.onResize(w, d, resizeId);
  };
  const classes = ['dash-widget', movable ? 'dash-movable' : '', props.dragging ? 'dash-dragging' : '']
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
        title={movable ? 'Drag to move' : undefined}
        {...(movable ? pointer('move', movable.drag) : {})}
      >
        {movable && (
          <span className="dash-grip" aria-hidden="true">
            ⠿
          </span>
        )}
        <h2 id={headingId}>{w.title}</h2>
        {w.read_only && <span className="badge dash-readonly">read-only</span>}
      </header>
      {editing && (
        // biome-ignore lint/a11y/useSemanticElements: a toolbar of buttons, not a form's fieldset
        <div className="dash-tools" role="group" aria-label={`Edit ${w.title}`}>
          {!w.read_only && (
            <button
              id={`widget-${w.id}-edit`}
              type="button"
              className="secondary small"
              aria-label={`Edit ${w.title}`}
              onClick={() => editing.onEdit(w)}
            >
              Edit…
            </button>
          )}
          <button
            id={`widget-${w.id}-duplicate`}
            type="button"
            className="secondary small"
            aria-label={`Duplicate ${w.title}`}
            onClick={() => editing.onDuplicate(w)}
          >
            Duplicate
          </button>
          <button
            type="button"
            className="secondary small"
            aria-label={`Remove ${w.title}`}
            onClick={() => editing.onRemove(w)}
          >
            Remove…
          </button>
          {movable && (
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
                    onClick={() => can && movable.onMove(w, d, id)}
                  >
                    <span aria-hidden="true">{ARROWS[d]}</span>
                  </button>
                );
              })}
            </div>
          )}
        </div>
      )}
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
            field={typeof w.query.params.field === 'string' ? w.query.params.field : undefined}
            drill={props.drill}
          />
        )}
      </div>
      {movable && (
        <button
          id={resizeId}
          type="button"
          className="dash-resize"
          aria-label={`Resize ${w.title}`}
          title="Drag to resize (or use the arrow keys)"
          onKeyDown={onResizeKey}
          {...pointer('resize', movable.drag)}
        />
      )}
    </section>
  );
}
