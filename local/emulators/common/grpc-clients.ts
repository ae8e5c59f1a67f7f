/** Official gRPC clients an emulator hands out, each on an insecure loopback channel, closed at its stop. */
import { type ChannelCredentials, credentials } from '@grpc/grpc-js';

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
