/** The deployment settings read the writer's dead-letter prefix for the status and the operator routes. */
import { parseDeploymentSettings } from '../../shared/wiring/settings';

const base = {
  SLUICE_READER_URL: 'https://reader.example',
  SLUICE_READER_QUEUE: 'projects/p/locations/l/queues/q',
};

it("reads SLUICE_WRITER_DEAD_LETTER_PREFIX when set, and leaves the writer's default otherwise", () => {
  const set = { ...base, SLUICE_WRITER_DEAD_LETTER_PREFIX: 'producers/dead-letters/' };
  expect(parseDeploymentSettings(set).writerDeadLetterPrefix).toBe('producers/dead-letters/');
  expect(parseDeploymentSettings(base).writerDeadLetterPrefix).toBeUndefined();
});
