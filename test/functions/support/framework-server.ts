/**
 * The four functions served by the functions framework's own server (its Express app and body parsers, as
 * the platform runs them) on a free loopback port, and a way to close every server a file started.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { AddressInfo } from 'node:net';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { type ExpressApp, installOn } from '../../../shared/http/edge';

require('../../../functions/backfill');
require('../../../functions/reader');
require('../../../functions/scheduler');
require('../../../functions/writer');

type Server = ReturnType<typeof getTestServer>;
const servers: Server[] = [];

/**
 * Serves the function registered as `name`; its base URL. With `eager` the edge is installed on the app
 * before the first request (as the local stack does); without it the app is the framework's alone, as the
 * platform starts it.
 */
export async function serve(name: string, eager = true): Promise<string> {
  const server = getTestServer(name);
  if (eager) installOn(server.listeners('request')[0] as unknown as ExpressApp);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes every server {@link serve} started. */
export async function closeServers(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
}
