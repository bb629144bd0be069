import { Type } from 'typebox';
import { IsoDateTime, OneOf } from '../../core/resource-schema.js';

export const VISUALIZATION_KINDS = ['table', 'bar', 'line', 'area', 'pie', 'number', 'map', 'list'] as const;

export const MAX_TITLE_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 10_000;
/** A dashboard holds at most this many widgets. */
export const MAX_WIDGETS = 200;
export const MAX_TEMPLATE_PATH_LENGTH = 200;

/** Ids are 32-bit integers in both stores; larger ones are refused before they reach SQL. */
export const MAX_ID = 2_147_483_647;
export const Id = (description?: string) =>
  Type.Integer({ minimum: 1, maximum: MAX_ID, ...(description ? { description } : {}) });

const Title = Type.String({ minLength: 1, maxLength: MAX_TITLE_LENGTH });
const Description = Type.String({ maxLength: MAX_DESCRIPTION_LENGTH });
const Coordinate = (minimum: number, description: string) =>
  Type.Integer({ minimum, maximum: 10_000, description });
const FreeObject = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const WidgetQuerySchema = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 64, description: 'A query type (GET /api/query/types).' }),
    params: Type.Optional(FreeObject('Parameters of the type; stored with defaults filled in.')),
  },
  { additionalProperties: false, description: 'The query the widget shows, as POST /api/query takes it.' },
);

export const VisualizationSchema = Type.Object(
  {
    kind: OneOf(VISUALIZATION_KINDS, {
      description: 'How the results are drawn (a Metric query: line, area, bar, number or table).',
    }),
    options: Type.Optional(
      FreeObject(
        'Options of the visualization, kept as given. A Metric query\'s `y` picks the figure: value (default), events, count, sum, min, max, avg or a quantile\'s key ("0.99").',
      ),
    ),
  },
  { additionalProperties: false },
);

export const PositionSchema = Type.Object(
  {
    x: Coordinate(0, 'Column of the left edge.'),
    y: Coordinate(0, 'Row of the top edge.'),
    w: Coordinate(1, 'Width in columns.'),
    h: Coordinate(1, 'Height in rows.'),
  },
  { additionalProperties: false },
);

const RefreshInterval = Type.Union([Type.Integer({ minimum: 1, maximum: 86_400 }), Type.Null()], {
  description: 'Seconds between refreshes; null follows live updates.',
});

const widgetFields = {
  title: Title,
  description: Type.Optional(Description),
  query: WidgetQuerySchema,
  visualization: Type.Optional(VisualizationSchema),
  position: Type.Optional(PositionSchema),
  refresh_interval: Type.Optional(RefreshInterval),
};

/** A widget in a body (PUT, POST on a dashboard, inline in a dashboard): the portable form. */
export const WidgetBodySchema = Type.Object(widgetFields, { additionalProperties: false });
export const WidgetPatchSchema = Type.Partial(WidgetBodySchema, { additionalProperties: false });

const portableWidget = {
  title: Type.String(),
  description: Type.String(),
  query: Type.Object({ type: Type.String(), params: FreeObject('With defaults filled in.') }),
  visualization: Type.Object({
    kind: OneOf(VISUALIZATION_KINDS),
    options: FreeObject('Visualization options.'),
  }),
  position: Type.Object({ x: Type.Integer(), y: Type.Integer(), w: Type.Integer(), h: Type.Integer() }),
  refresh_interval: Type.Union([Type.Integer(), Type.Null()]),
};

export const WidgetSchema = Type.Object(
  {
    id: Type.Integer(),
    ...portableWidget,
    owner: Type.Integer({ description: 'Id of the owning user.' }),
    read_only: Type.Boolean({ description: 'True when the caller does not own the widget.' }),
    dashboards: Type.Array(Type.Integer(), {
      description: 'Ids of the dashboards it is on (those the caller can see).',
    }),
    created_at: IsoDateTime(),
    updated_at: IsoDateTime(),
  },
  { $id: 'Widget' },
);

export const WidgetExportSchema = Type.Object(portableWidget, {
  $id: 'WidgetExport',
  description: 'The portable widget (export=true): POST it to a dashboard to make an equal one.',
});

export const DashboardSchema = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    description: Type.String(),
    owner: Type.Integer({ description: 'Id of the owning user.' }),
    widgets: Type.Array(Type.Ref('Widget'), { description: 'In layout order.' }),
    created_at: IsoDateTime(),
    updated_at: IsoDateTime(),
  },
  { $id: 'Dashboard' },
);

export const DashboardExportSchema = Type.Object(
  {
    title: Type.String(),
    description: Type.String(),
    widgets: Type.Array(Type.Ref('WidgetExport')),
  },
  {
    $id: 'DashboardExport',
    description: 'The portable dashboard (export=true): POST it to make an equal one.',
  },
);

const Layout = Type.Array(Type.Union([Id('Id of an existing widget you can see.'), WidgetBodySchema]), {
  maxItems: MAX_WIDGETS,
  description:
    'The layout in order: an inline widget creates a widget owned by you; an id attaches an existing widget.',
});

export const TemplatePath = Type.String({
  minLength: 1,
  maxLength: MAX_TEMPLATE_PATH_LENGTH,
  description: 'Letters, digits and _-./ in segments; no "..", no leading "/".',
});

export const DashboardCreateSchema = Type.Object(
  {
    title: Type.Optional(Title),
    description: Type.Optional(Description),
    widgets: Type.Optional(Layout),
    template: Type.Optional(TemplatePath),
  },
  {
    additionalProperties: false,
    description: 'A dashboard (title required), {"template": path}, or title overrides when cloning.',
  },
);

export const DashboardPutSchema = Type.Object(
  { title: Title, description: Type.Optional(Description), widgets: Type.Optional(Layout) },
  { additionalProperties: false },
);
export const DashboardPatchSchema = Type.Partial(DashboardPutSchema, { additionalProperties: false });

export const TemplatePathSchema = Type.Object(
  { path: TemplatePath },
  { additionalProperties: false, title: 'DashboardTemplatePath' },
);

export const TemplateInfoSchema = Type.Object({
  path: Type.String(),
  title: Type.String(),
  builtin: Type.Boolean(),
});
