/**
 * Spanner RPCs for sessions and transactions: CreateSession (multiplexed too), BatchCreateSessions,
 * GetSession, ListSessions, DeleteSession, BeginTransaction, Commit, Rollback and BatchWrite.
 */
import type * as grpc from '@grpc/grpc-js';
import { serveBatchWrite } from './batch-write';
import { streaming, toTimestamp, unary } from './grpc-util';
import { Code, SpannerError } from './hooks';
import { beginFrom, type TxnOptionsJson, txnMessage } from './selector';
import type { EmulatorState, SessionState } from './state';
import type { MutationJson } from './writes';

interface SessionJson {
  labels?: Record<string, string>;
  multiplexed?: boolean;
}

function sessionMessage(s: SessionState) {
  return {
    name: s.name,
    labels: s.labels,
    createTime: toTimestamp(s.createNs),
    approximateLastUseTime: toTimestamp(s.createNs),
    multiplexed: s.multiplexed,
  };
}

interface CommitRequest {
  session: string;
  transaction?: string;
  transactionId?: Buffer;
  singleUseTransaction?: TxnOptionsJson;
  mutations?: MutationJson[];
  returnCommitStats?: boolean;
  requestOptions?: { transactionTag?: string };
}

/** Handlers of the session and transaction RPCs. */
export function sessionHandlers(state: EmulatorState): grpc.UntypedServiceImplementation {
  const f = state.faults;
  return {
    CreateSession: unary(f, 'CreateSession', (req: { database: string; session?: SessionJson }) =>
      sessionMessage(state.createSession(req.database, !!req.session?.multiplexed, req.session?.labels)),
    ),
    BatchCreateSessions: unary(
      f,
      'BatchCreateSessions',
      (req: { database: string; sessionTemplate?: SessionJson; sessionCount?: number }) => ({
        session: Array.from({ length: Math.max(1, Math.min(req.sessionCount ?? 1, 100)) }, () =>
          sessionMessage(state.createSession(req.database, false, req.sessionTemplate?.labels)),
        ),
      }),
    ),
    GetSession: unary(f, 'GetSession', (req: { name: string }) => {
      const s = state.sessions.get(req.name);
      if (!s) throw new SpannerError(Code.NOT_FOUND, `Session not found: ${req.name}`);
      return sessionMessage(s);
    }),
    ListSessions: unary(f, 'ListSessions', (req: { database: string }) => ({
      sessions: [...state.sessions.values()].filter((s) => s.database === req.database).map(sessionMessage),
    })),
    DeleteSession: unary(f, 'DeleteSession', (req: { name: string }) => {
      state.deleteSession(req.name);
      return {};
    }),
    BeginTransaction: unary(
      f,
      'BeginTransaction',
      async (req: {
        session: string;
        options?: TxnOptionsJson;
        requestOptions?: { transactionTag?: string };
      }) => {
        const db = state.sessionDb(req.session);
        const txn = await beginFrom(db, req.options, req.requestOptions?.transactionTag);
        return txnMessage(txn, true);
      },
    ),
    Commit: unary(f, 'Commit', async (req: CommitRequest) => {
      const db = state.sessionDb(req.session);
      const single =
        req.transaction === 'singleUseTransaction' || (!req.transaction && req.singleUseTransaction);
      const txn = single
        ? await beginFrom(
            db,
            req.singleUseTransaction ?? { mode: 'readWrite' },
            req.requestOptions?.transactionTag,
          )
        : db.txn(Buffer.from(req.transactionId ?? []).toString('base64'));
      if (req.requestOptions?.transactionTag) txn.tag = req.requestOptions.transactionTag;
      const ns = db.commit(txn, req.mutations ?? []);
      return {
        commitTimestamp: toTimestamp(ns),
        ...(req.returnCommitStats
          ? { commitStats: { mutationCount: String((req.mutations ?? []).length) } }
          : {}),
      };
    }),
    Rollback: unary(f, 'Rollback', (req: { session: string; transactionId?: Buffer }) => {
      const db = state.sessionDb(req.session);
      db.rollback(db.txn(Buffer.from(req.transactionId ?? []).toString('base64')));
      return {};
    }),
    BatchWrite: streaming(f, 'BatchWrite', async (req: Parameters<typeof serveBatchWrite>[1], call, fault) =>
      serveBatchWrite(state.sessionDb(req.session), req, call, state.batchWrites, fault),
    ),
  };
}
