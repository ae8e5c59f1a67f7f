/** Official gRPC clients an emulator hands out, each on an insecure loopback channel, closed at its stop. */
import { type ChannelCredentials, credentials } from '@grpc/grpc-js';
import type { AdminServer } from './admin-http';
import type { GrpcServer } from './grpc-unary';

/** What a Google gRPC client's constructor needs to reach an emulator. */
export interface LoopbackClientOptions {
  apiEndpoint: string;
  port: number;
  sslCreds: ChannelCredentials;
  /** Client options are an open record in google-gax. */
  [option: string]: string | number | object | undefined;
}

/** A factory of clients on `port`, and `closeAll()` for the emulator's stop (close failures are ignored). */
export function loopbackClients<C extends { close(): Promise<void> }>(
  port: number,
  create: (options: LoopbackClientOptions) => C,
): { make(): C; closeAll(): Promise<void> } {
  const clients: C[] = [];
  return {
    make: () => {
      const c = create({ apiEndpoint: '127.0.0.1', port, sslCreds: credentials.createInsecure() });
      clients.push(c);
      return c;
    },
    closeAll: async () => {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    },
  };
}

/**
 * The fields a gRPC emulator's handle shares: the address and port of `grpc`, the admin endpoint's URL (when
 * one was started), a factory of official clients on it, and `stop()`, which closes those clients and then
 * both servers; the emulator wraps `stop` around its own state.
 */
export function servedOnLoopback<C extends { close(): Promise<void> }>(
  grpc: GrpcServer,
  adminServer: AdminServer | undefined,
  create: (options: LoopbackClientOptions) => C,
): { address: string; port: number; adminUrl: string | undefined; client(): C; stop(): Promise<void> } {
  const clients = loopbackClients(grpc.port, create);
  return {
    address: grpc.address,
    port: grpc.port,
    adminUrl: adminServer?.url,
    client: clients.make,
    stop: async () => {
      await clients.closeAll();
      await Promise.all([grpc.stop(), adminServer?.stop()]);
    },
  };
}
