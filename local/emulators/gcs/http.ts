/**
 * The request context the GCS route handlers receive and the reply they return, kept apart from the
 * server so handlers are plain functions of (store, request).
 */
import type { IncomingMessage } from 'node:http';
import { invalid } from './errors';
import type { GcsStore } from './store';

/** What a handler sees. */
export interface RouteContext {
  store: GcsStore;
  req: IncomingMessage;
  url: URL;
  /** Decoded path parameters (bucket, object name, ...). */
  params: string[];
  body: Buffer;
  /** Scheme, host and port the client used, for `Location`, `selfLink` and `mediaLink`. */
  base: string;
}

/** What a handler answers. */
export interface Reply {
  status: number;
  json?: unknown;
  body?: Buffer;
  headers?: Record<string, string>;
}

/** A JSON reply. */
export function json(value: unknown, status = 200): Reply {
  return { status, json: value };
}

/** Parses a JSON request body (empty body is `undefined`). */
export function jsonBody(ctx: RouteContext): unknown {
  if (ctx.body.length === 0) return undefined;
  try {
    return JSON.parse(ctx.body.toString('utf8'));
  } catch {
    throw invalid('Request body is not valid JSON.');
  }
}

/** Reads a whole request body (the client streams uploads chunked, without Content-Length). */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A path parameter that must be present. */
export function param(ctx: RouteContext, index: number): string {
  const value = ctx.params[index];
  if (value === undefined) throw invalid('missing path parameter');
  return value;
}

/** An optional `generation` query parameter as a bigint. */
export function generationParam(url: URL): bigint | undefined {
  const raw = url.searchParams.get('generation');
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw)) throw invalid(`Invalid argument for generation: ${raw}`);
  return BigInt(raw);
}
