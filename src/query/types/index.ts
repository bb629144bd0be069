import { Explain } from './explain.js';
import { Metric } from './metric.js';
import { Patterns } from './patterns.js';
import type { QueryTypeDef, QueryTypeName } from './query-type.js';
import { Search } from './search.js';
import { Summary } from './summary.js';
import { Table } from './table.js';
import { Timeline } from './timeline.js';
import { LastN, TopN } from './topn.js';

/**
 * Every query type by name; adding one is adding an entry. Each def is typed by its own
 * params and results; the registry erases them (the runner only passes a def's own
 * values back to it), hence the casts.
 */
export const QUERY_TYPE_DEFS: Record<QueryTypeName, QueryTypeDef> = {
  Search: Search as unknown as QueryTypeDef,
  TopN: TopN as unknown as QueryTypeDef,
  LastN: LastN as unknown as QueryTypeDef,
  Summary: Summary as unknown as QueryTypeDef,
  Timeline: Timeline as unknown as QueryTypeDef,
  Patterns: Patterns as unknown as QueryTypeDef,
  Table: Table as unknown as QueryTypeDef,
  Explain: Explain as unknown as QueryTypeDef,
  Metric: Metric as unknown as QueryTypeDef,
};
