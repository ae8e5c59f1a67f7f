/**
 * SLUICE_LOG_VALUES (ADR-2307): parsed by the pipeline's and the writer's configuration with an error naming
 * the variable, and applied by the log formatter to every value and key a message or a field marks.
 */
import { ConfigError, parseConfig } from '../../../shared/domain/config';
import { SluiceError } from '../../../shared/domain/errors';
import { createLogger } from '../../../shared/domain/log';
import {
  keyHash,
  keyValue,
  type LogValues,
  REDACTED_VALUE,
  redact,
  rowValue,
} from '../../../shared/domain/log-values';
import { parseWriterConfig } from '../../../shared/domain/writer/config';
import { PIPELINE_ENV } from './support/pipeline-env';

const PIPELINE = {
  ...PIPELINE_ENV,
  SLUICE_TABLES: '{"Orders":{"replica":"orders"}}',
};
const WRITER = {
  SLUICE_PROJECT: 'acme-prod',
  SLUICE_SPANNER_INSTANCE: 'main',
  SLUICE_SPANNER_DATABASE: 'orders',
  SLUICE_LEDGER_BUCKET: 'acme-ledger',
};

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('the setting', () => {
  it('defaults to none in both configurations and takes keys and all', () => {
    expect(parseConfig(PIPELINE).logValues).toBe('none');
    expect(parseWriterConfig(WRITER).logValues).toBe('none');
    expect(parseConfig({ ...PIPELINE, SLUICE_LOG_VALUES: 'keys' }).logValues).toBe('keys');
    expect(parseWriterConfig({ ...WRITER, SLUICE_LOG_VALUES: 'all' }).logValues).toBe('all');
  });

  it('a bad value is an error naming the variable and the values it takes', () => {
    const pipeline = configError(() => parseConfig({ ...PIPELINE, SLUICE_LOG_VALUES: 'some' }));
    expect(pipeline.issues).toEqual([
      { path: 'logValues', variable: 'SLUICE_LOG_VALUES', rule: 'must be none, keys or all' },
    ]);
    expect(pipeline.message).toContain('logValues (SLUICE_LOG_VALUES): must be none, keys or all');
    const writer = configError(() => parseWriterConfig({ ...WRITER, SLUICE_LOG_VALUES: 'ALL' }));
    expect(writer.message).toContain('SLUICE_LOG_VALUES: must be none, keys or all');
  });
});

describe('redaction', () => {
  const text = `Orders key ${keyValue('{"Id":"7"}')}: got a string ${rowValue('"123-45-6789"')}`;

  it('none: neither keys nor values, a key as its stable hash; keys: keys only; all: everything', () => {
    expect(redact(text, 'none')).toBe(`Orders key ${keyHash('{"Id":"7"}')}: got a string ${REDACTED_VALUE}`);
    expect(keyHash('{"Id":"7"}')).toBe(keyHash('{"Id":"7"}'));
    expect(keyHash('{"Id":"7"}')).not.toBe(keyHash('{"Id":"8"}'));
    expect(redact(text, 'keys')).toBe(`Orders key {"Id":"7"}: got a string ${REDACTED_VALUE}`);
    expect(redact(text, 'all')).toBe('Orders key {"Id":"7"}: got a string "123-45-6789"');
  });

  it('an error keeps a plain message; only its log line is redacted, stack included', () => {
    const err = new SluiceError('permanent', text);
    expect(err.message).toBe('Orders key {"Id":"7"}: got a string "123-45-6789"');
    const wrapped = SluiceError.from(new Error('not a SluiceError'), 'partition p');
    expect(wrapped.message).toBe('partition p: not a SluiceError');
    const logged = (values: LogValues) => {
      const lines: string[] = [];
      createLogger((l) => lines.push(l), {}, 'INFO', values).error('task.failed', err, {
        problems: [text],
        nested: { key: keyValue('{"Id":"7"}') },
      });
      return lines[0]!;
    };
    expect(logged('none')).not.toContain('123-45-6789');
    expect(logged('none')).not.toContain('"Id');
    expect(logged('none')).toContain(keyHash('{"Id":"7"}'));
    expect(logged('keys')).not.toContain('123-45-6789');
    expect(logged('keys')).toContain('{\\"Id\\":\\"7\\"}');
    expect(logged('all')).toContain('123-45-6789');
    expect(logged('all')).not.toMatch(/[\uE000-\uE003]/);
  });
});
