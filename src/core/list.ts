/** One ordering term of a list: a field name (already validated) and a direction. */
export interface OrderTerm {
  field: string;
  desc: boolean;
}

/** What a repository needs to read one page of a list. */
export interface PageRequest {
  ordering: OrderTerm[];
  limit: number;
  offset: number;
}

export interface Page<T> {
  count: number;
  rows: T[];
}
