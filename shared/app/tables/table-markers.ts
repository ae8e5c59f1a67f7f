/**
 * The ledger's evidence that a BigQuery table existed (ADR-1515, ADR-1516): a marker per table the pipeline
 * ensured, under `<pipeline>/ensured/<replica|history>/<destination>`, and — for tables ensured by a version
 * that wrote no markers — the last status's table list. A missing table with evidence was deleted and is
 * refused, one without is new and created. An operator who removed a table on purpose forgets it: the marker
 * is kept but says `forgotten`, which outweighs the status list, until the table is ensured again.
 */
import { SluiceError } from '../../domain/errors';
import type { ObjectStore } from '../../ports/object-store';
import type { TableStatus } from './table-state';

/** A replica or a history table. */
export type TableKind = 'replica' | 'history';

/**
 * What the ledger says of one BigQuery table: `marked` (ensured by the pipeline), `listed` (no marker, but
 * the last status lists it as replicated: ensured before markers existed), `forgotten` (the operator said it
 * is to start anew), `none` (never ensured: a new table).
 */
export type TableEvidence = 'marked' | 'listed' | 'forgotten' | 'none';

/** Where the markers live and how a call is retried (the ledger's own policy). */
export interface MarkerScope {
  store: ObjectStore;
  /** The marker's object name. */
  name: (kind: TableKind, destination: string) => string;
  /** Reads the status object as JSON (undefined before the first tick). */
  readStatus: () => Promise<unknown>;
  call: <T>(what: string, op: () => Promise<T>) => Promise<T>;
}

const JSON_TYPE = 'application/json';

/** The previous status's tables, read leniently (an older status object has none). */
export function previousTables(status: unknown): TableStatus[] {
  const tables = (status as { tables?: unknown } | undefined)?.tables;
  if (!Array.isArray(tables)) return [];
  return tables.filter(
    (t): t is TableStatus =>
      typeof t === 'object' && t !== null && typeof (t as TableStatus).source === 'string',
  );
}

/** Table states in a status list that say the table was created (a `failing` one may never have been). */
const CREATED_STATES = new Set(['replicating', 'dropped']);

interface MarkerRead {
  forgotten: boolean;
  generation: string;
}

async function readMarker(s: MarkerScope, name: string): Promise<MarkerRead | undefined> {
  const obj = await s.call(`read ${name}`, () => s.store.read(name));
  if (!obj) return undefined;
  // Anything but a readable `forgotten` marker counts as evidence: refusing is safer than recreating empty.
  let forgotten = false;
  try {
    forgotten = (JSON.parse(obj.data.toString('utf8')) as { forgotten?: unknown }).forgotten === true;
  } catch {
    forgotten = false;
  }
  return { forgotten, generation: obj.generation };
}

/** Whether the last status lists `destination` as a created table of that kind. */
async function listed(s: MarkerScope, kind: TableKind, destination: string): Promise<boolean> {
  const tables = previousTables(await s.readStatus());
  return tables.some((t) => t[kind] === destination && CREATED_STATES.has(t.state));
}

/** The ledger's evidence for one table: its marker, else the last status's table list. */
export async function tableEvidence(
  s: MarkerScope,
  kind: TableKind,
  destination: string,
): Promise<TableEvidence> {
  const marker = await readMarker(s, s.name(kind, destination));
  if (marker) return marker.forgotten ? 'forgotten' : 'marked';
  return (await listed(s, kind, destination)) ? 'listed' : 'none';
}

function body(kind: TableKind, destination: string, forgotten?: string): Buffer {
  return Buffer.from(
    JSON.stringify({ kind, destination, ...(forgotten ? { forgotten: true, at: forgotten } : {}) }),
  );
}

/**
 * Records that the table exists (written only after it was ensured). A live marker already there is kept; a
 * `forgotten` one is replaced (a lost race means another instance replaced it first).
 */
export async function markTable(s: MarkerScope, kind: TableKind, destination: string): Promise<void> {
  const name = s.name(kind, destination);
  const write = (ifGeneration: string | 0) =>
    s.call(`write ${name}`, () =>
      s.store.write(name, body(kind, destination), { ifGeneration, contentType: JSON_TYPE }),
    );
  if ((await write(0)).ok) return;
  const marker = await readMarker(s, name);
  if (marker?.forgotten) await write(marker.generation);
}

/**
 * Marks the table `forgotten` (a marker, or a listing in an old status, alike: the status no longer counts
 * either) and answers what the evidence was before; with none, nothing is written. `at` is when, as RFC 3339, kept for the operator.
 * @throws SluiceError (`retryable`) after lost races in a row (other operators forgetting it at once).
 */
export async function forgetTable(
  s: MarkerScope,
  kind: TableKind,
  destination: string,
  at: string,
): Promise<TableEvidence> {
  const name = s.name(kind, destination);
  for (let attempt = 0; attempt < 4; attempt++) {
    const marker = await readMarker(s, name);
    if (marker?.forgotten) return 'forgotten';
    const before: TableEvidence = marker
      ? 'marked'
      : (await listed(s, kind, destination))
        ? 'listed'
        : 'none';
    // Nothing known of it: a missing table is created anyway, no marker needed.
    if (before === 'none') return before;
    const out = await s.call(`write ${name}`, () =>
      s.store.write(name, body(kind, destination, at), {
        ifGeneration: marker?.generation ?? 0,
        contentType: JSON_TYPE,
      }),
    );
    if (out.ok) return before;
  }
  throw new SluiceError('retryable', `${name}: changed by another writer on every attempt to forget it`);
}

/** The ledger's side of the evidence, as an instance uses it (the ledger store implements it). */
export interface EnsuredMarkers {
  wasEnsured(kind: TableKind, destination: string): Promise<TableEvidence>;
  markEnsured(kind: TableKind, destination: string): Promise<void>;
}

/** One instance's knowledge of which tables are marked: the ledger is read once per table. */
export class MarkedTables {
  private readonly marked = new Set<string>();

  /** Without a ledger a missing table is always created (only a sink that met it missing refuses it). */
  constructor(private readonly ledger?: EnsuredMarkers) {}

  /**
   * Ensures a table with the ledger's evidence that it existed: a table with a marker (or, ensured before
   * markers existed, listed by the last status) that is missing was deleted and is refused, not created
   * empty (ADR-1515, ADR-1516). The marker is written only once the table was ensured, so a marker always
   * means the table existed; a crash before it is mended by the next ensure. A failed ensure drops what this
   * instance knew, so the next attempt reads the ledger again (an operator may have forgotten the table).
   * Evidence from the status list is made a marker before the ensure, whatever its outcome: it is evidence
   * the table existed, and the status that follows a refusal lists the table as `failing`, which is not.
   */
  async ensure(
    kind: TableKind,
    destination: string,
    ensure: (existed: boolean) => Promise<void>,
  ): Promise<void> {
    const key = `${kind}/${destination}`;
    const ledger = this.ledger;
    const evidence = this.marked.has(key)
      ? 'marked'
      : ((await ledger?.wasEnsured(kind, destination)) ?? 'none');
    // The status list is turned into a marker at once: the next status may list the table `failing`.
    if (evidence === 'listed') await ledger?.markEnsured(kind, destination);
    try {
      await ensure(evidence === 'marked' || evidence === 'listed');
    } catch (err) {
      this.marked.delete(key);
      throw err;
    }
    if (evidence === 'none' || evidence === 'forgotten') await ledger?.markEnsured(kind, destination);
    if (ledger) this.marked.add(key);
  }

  /** Forgets that the table is marked: the next ensure reads the ledger again. */
  forget(kind: TableKind, destination: string): void {
    this.marked.delete(`${kind}/${destination}`);
  }
}
