/**
 * `sluice:pipeline.logValues` reaches every function as SLUICE_LOG_VALUES, the writer too (ADR-2307); a bad
 * value is refused at preview, naming the key.
 */
import { FUNCTION_NAMES } from '../../infra/deployment-schema';
import { functionEnvironment } from '../../infra/resources/functions';
import { buildSettings } from '../../infra/settings';
import { PROJECT_NUMBER, stackConfig } from './harness';

const base = stackConfig().pipeline as Record<string, unknown>;

test('every function reads the same setting: none by default, the stack value when set', () => {
  const env = (logValues?: string) =>
    buildSettings(stackConfig({ pipeline: { ...base, ...(logValues ? { logValues } : {}) } }));
  for (const name of FUNCTION_NAMES) {
    expect(functionEnvironment(env(), name, PROJECT_NUMBER).SLUICE_LOG_VALUES).toBe('none');
    expect(functionEnvironment(env('keys'), name, PROJECT_NUMBER).SLUICE_LOG_VALUES).toBe('keys');
  }
  expect(() => env('everything')).toThrow(/logValues.*must be none, keys or all/);
});
