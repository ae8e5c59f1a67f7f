/**
 * Programmatic start of the GCS emulator for tests: `startGcsEmulator({port: 0})` gives the endpoint, a
 * ready-wired official `Storage` client, an admin handle (faults, state, write-rate limit) and `stop()`.
 */
import { Storage, type StorageOptions } from '@google-cloud/storage';
import { startAdminServerIfAsked } from '../common/admin-http';
import { type ActiveFault, FaultInjector, type FaultRule } from '../common/faults';
import { objectResource } from './objects';
import { GcsPersistence } from './persist';
import { startGcsHttp } from './server';
import { GcsStore } from './store';

/** Start options. */
export interface GcsEmulatorOptions {
  /** JSON API port; 0 (default) picks a free one. */
  port?: number;
  /** Admin HTTP endpoint port (0 picks one); `false` (default) starts none. */
  adminPort?: number | false;
  /** Buckets created at start. */
  buckets?: string[];
  /** Enforce at most one mutation per object per this many ms (429 `rateLimitExceeded`); 0 = off. */
  minWriteIntervalMs?: number;
  /** Keep buckets and objects in this directory across restarts (default: in memory only). */
  dataDir?: string;
}

/** Inspection and fault injection, in-process. */
export interface GcsAdmin {
  /** Adds a fault rule; `method` is an API method key such as `objects.insert` or `objects.download`. */
  fail(rule: FaultRule): number;
  clearFaults(id?: number): void;
  faults(): ActiveFault[];
  createBucket(name: string): void;
  /** Object resources of a bucket (as the JSON API shows them), name order. */
  objects(bucket: string): Array<Record<string, unknown>>;
  /** Raw bytes of a live object, or undefined. */
  read(bucket: string, name: string): Buffer | undefined;
  /** Changes the per-object write interval (0 disables the limit). */
  setMinWriteIntervalMs(ms: number): void;
  /** Requests served since start (or the last reset), by API method key (`objects.get`, `objects.list`). */
  requests(): Record<string, number>;
  /** Starts the request counts again from zero. */
  resetRequests(): void;
}

/** A running emulator. */
export interface GcsEmulator {
  /** Base URL to use as `apiEndpoint`. */
  url: string;
  /** Admin endpoint URL when started with `adminPort`. */
  adminUrl?: string;
  /** A new official client pointed at the emulator (no auth, project `test`). */
  storage(options?: StorageOptions): Storage;
  admin: GcsAdmin;
  stop(): Promise<void>;
}

function adminHandle(store: GcsStore, faults: FaultInjector, url: string): GcsAdmin {
  return {
    fail: (rule) => faults.add(rule),
    clearFaults: (id) => faults.clear(id),
    faults: () => faults.list(),
    createBucket: (name) => void store.createBucket(name),
    objects: (bucket) => store.listObjects(bucket).map((o) => objectResource(o, url)),
    read: (bucket, name) => store.bucket(bucket).objects.get(name)?.data,
    setMinWriteIntervalMs: (ms) => {
      store.options.minWriteIntervalMs = ms;
    },
    requests: () => Object.fromEntries(store.requests),
    resetRequests: () => store.requests.clear(),
  };
}

/** Starts the emulator on loopback. */
export async function startGcsEmulator(options: GcsEmulatorOptions = {}): Promise<GcsEmulator> {
  const store = new GcsStore({ minWriteIntervalMs: options.minWriteIntervalMs ?? 0 });
  let persistence: GcsPersistence | undefined;
  if (options.dataDir) {
    persistence = new GcsPersistence(options.dataDir, store);
    persistence.load();
    const p = persistence;
    store.options.onChange = (change) => p.record(change);
  }
  for (const name of options.buckets ?? []) if (!store.buckets.has(name)) store.createBucket(name);
  const faults = new FaultInjector();
  const http = await startGcsHttp(store, faults, options.port ?? 0);
  const admin = adminHandle(store, faults, http.url);
  const adminServer = await startAdminServerIfAsked(options.adminPort, faults, {
    'GET /buckets': () => store.listBuckets().map((b) => b.name),
    'GET /objects': (_body, url) => admin.objects(url.searchParams.get('bucket') ?? ''),
    'GET /requests': () => admin.requests(),
    'POST /requests/reset': () => {
      admin.resetRequests();
      return {};
    },
    'POST /write-rate': (body) => {
      const ms =
        typeof body === 'object' && body !== null && 'minWriteIntervalMs' in body
          ? body.minWriteIntervalMs
          : 0;
      admin.setMinWriteIntervalMs(typeof ms === 'number' ? ms : 0);
      return {};
    },
  });
  return {
    url: http.url,
    adminUrl: adminServer?.url,
    storage: (extra) => new Storage({ projectId: 'test', ...extra, apiEndpoint: http.url }),
    admin,
    stop: async () => {
      await Promise.all([http.stop(), adminServer?.stop()]);
      persistence?.close();
    },
  };
}
