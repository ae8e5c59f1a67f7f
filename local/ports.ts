/**
 * Ports of the local stack: free ones picked at random below the ephemeral range, and a check that the fixed ones a user asked for
 * are free before anything starts, so a busy port is reported by name instead of as a process that died.
 */
import { createServer } from 'node:net';

/** A requested port is taken by another process. */
export class PortInUseError extends Error {
  constructor(
    readonly port: number,
    /** What the port was for (an emulator or function name, as in the `ports` option). */
    readonly role: string,
    /** The file of the data directory that kept this port from an earlier start, when it came from there. */
    readonly keptIn?: string,
  ) {
    super(`port ${port} (${role}${keptIn ? `, kept in ${keptIn}` : ''}) is already in use`);
    this.name = 'PortInUseError';
  }
}

/** Listens on `port` on loopback and closes again; resolves the port actually bound (0: a free one). */
function probe(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * Below Linux's default ephemeral range (32768–60999): a port picked there is not handed out as the source
 * port of an outgoing connection between the pick and the function process binding it — with the OS's own
 * pick (port 0) a busy machine's gRPC clients took it in that gap now and then.
 */
const PICK_RANGE = { from: 20_000, to: 32_767 } as const;

/**
 * Ports this process handed out: a port is free until its function binds it, seconds later, so a second
 * pick in that gap (another stack of the same process) must not get it again.
 */
const handedOut = new Set<number>();

/**
 * A port no one listens on right now, outside the ephemeral range when one is free there. Another process
 * can still take it before it is bound: the stack starts its functions again on new ports when one finds
 * its port taken (`PortInUseError`).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = PICK_RANGE.from + Math.floor(Math.random() * (PICK_RANGE.to - PICK_RANGE.from + 1));
    if (handedOut.has(port)) continue;
    try {
      handedOut.add(await probe(port));
      return port;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
  const port = await probe(0);
  handedOut.add(port);
  return port;
}

/** @throws PortInUseError for the first requested (non-zero) port that is taken. */
export async function assertPortsFree(ports: Record<string, number | undefined>): Promise<void> {
  for (const [role, port] of Object.entries(ports)) {
    if (!port) continue;
    try {
      await probe(port);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new PortInUseError(port, role);
      throw err;
    }
  }
}
