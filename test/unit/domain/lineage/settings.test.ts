/** Lineage settings: defaults, the API target's location, and errors naming the variable. */
import { ConfigError } from '../../../../shared/domain/config';
import { parseLineageSettings } from '../../../../shared/domain/lineage/settings';

describe('parseLineageSettings', () => {
  it('defaults to the log only, a five-minute heartbeat', () => {
    expect(parseLineageSettings({})).toEqual({
      target: 'log',
      location: undefined,
      heartbeatMs: 300_000,
      endpoint: undefined,
    });
  });

  it('sends to the API in the given location, or the functions region', () => {
    expect(parseLineageSettings({ SLUICE_LINEAGE: 'api', SLUICE_LINEAGE_LOCATION: 'us' }).location).toBe(
      'us',
    );
    expect(parseLineageSettings({ SLUICE_LINEAGE: 'api', SLUICE_REGION: 'europe-west1' }).location).toBe(
      'europe-west1',
    );
  });

  it.each([
    [{ SLUICE_LINEAGE: 'api' }, 'SLUICE_LINEAGE_LOCATION'],
    [{ SLUICE_LINEAGE: 'datahub' }, 'SLUICE_LINEAGE'],
    [{ SLUICE_LINEAGE_HEARTBEAT_MS: '5' }, 'SLUICE_LINEAGE_HEARTBEAT_MS'],
    [{ SLUICE_LINEAGE_LOCATION: 'US East' }, 'SLUICE_LINEAGE_LOCATION'],
    [{ SLUICE_LINEAGE_ENDPOINT: 'http://x' }, 'SLUICE_LINEAGE_ENDPOINT'],
  ])('refuses %j naming %s', (env, variable) => {
    let error: unknown;
    try {
      parseLineageSettings(env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((i) => i.path)).toEqual([variable]);
  });
});
