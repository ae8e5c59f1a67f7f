/**
 * One writer stack for a test file: started before its tests, reset after each test, stopped after them.
 * Every writer test file registered the same three hooks.
 */
import { WriterStack } from './writer-stack';

/** Registers the stack's start, reset and stop in the enclosing block, and returns it. */
export function useWriterStack(): WriterStack {
  const stack = new WriterStack();
  beforeAll(() => stack.start());
  afterEach(() => stack.reset());
  afterAll(() => stack.stop());
  return stack;
}
