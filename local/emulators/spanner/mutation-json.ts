/** The mutations of a commit or a batch write as the gRPC layer hands them over (plain objects). */
import type { KeySetJson } from './keys';
import type { ProtoValue } from './values';

/** Plain-object `google.spanner.v1.Mutation.Write`. */
export interface WriteJson {
  table: string;
  columns?: string[];
  values?: Array<{ values?: ProtoValue[] }>;
}

/** Plain-object `google.spanner.v1.Mutation`. */
export interface MutationJson {
  insert?: WriteJson;
  update?: WriteJson;
  insertOrUpdate?: WriteJson;
  replace?: WriteJson;
  delete?: { table: string; keySet?: KeySetJson };
}
