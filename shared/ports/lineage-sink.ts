/**
 * Lineage sink port: where OpenLineage run events go (Google's Data Lineage API, or memory in tests). One
 * operation; a failure throws a classified {@link SluiceError}, and the caller (the lineage reporter) decides
 * to retry later, because lineage must never stop replication.
 */
import type { RunEvent } from '../domain/lineage/open-lineage';

/** What the lineage service made of an event: the resources it recorded it under. */
export interface LineageReceipt {
  /** `projects/…/locations/…/processes/…` (the job). */
  process: string;
  /** `…/runs/…` (the run). */
  run: string;
  /** One `…/lineageEvents/…` per event that carried links; none for an event without inputs and outputs. */
  lineageEvents: string[];
}

/** Receives OpenLineage run events. Implementations: in-memory, and the Data Lineage API. */
export interface LineageSink {
  /** Records one event. @throws SluiceError (kind decides whether sending it again later may succeed). */
  send(event: RunEvent): Promise<LineageReceipt>;
}
