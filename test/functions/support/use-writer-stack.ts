/**
 * One writer stack for a test file: started before its tests, reset after each test, stopped after them.
 * Every writer test file registered the same three hooks, and read a dialect's database and names the same
 * way.
 */
import type { Database } from '@google-cloud/spanner';
import { type Dialect, names, WriterStack } from './writer-stack';

/** Registers the stack's start, reset and stop in the enclosing block, and returns it. */
export function useWriterStack(): WriterStack {
  const stack = new WriterStack();
  beforeAll(() => stack.start());
  afterEach(() => stack.reset());
  afterAll(() => stack.stop());
  return stack;
}

/** One dialect of the stack: its database (once the stack has started) and its names of tables and rows. */
export function dialectOf(stack: WriterStack, d: Dialect): ReturnType<typeof names> & { db: () => Database } {
  return { db: () => stack.database(d), ...names(d) };
}
