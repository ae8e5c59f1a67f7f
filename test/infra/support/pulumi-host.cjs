/**
 * Runs a Pulumi program the way the Node.js language host does: `node <@pulumi/pulumi>/cmd/run <flags>
 * <entry>` — the same run entry point, the same TypeScript loader (its ts-node registration with the
 * program folder's tsconfig), the same config from PULUMI_CONFIG — with the engine's resource monitor
 * replaced by Pulumi's mocks. Plain JavaScript on purpose: no other TypeScript loader may be in the process.
 *
 * usage: node pulumi-host.cjs <program dir> <entry> <result file>
 * The result file receives {resources: [{type, name, inputs}], errors: [message]} when the process exits.
 */
const { writeFileSync } = require('node:fs');

const [programDir, entry, resultFile] = process.argv.slice(2);
const resolveFrom = (m) => require.resolve(m, { paths: [programDir] });
const pulumi = require(resolveFrom('@pulumi/pulumi'));

const resources = [];
const errors = [];
pulumi.runtime.setMocks(
  {
    newResource: (a) => {
      resources.push({ type: a.type, name: a.name, inputs: a.inputs });
      return { id: `${a.name}-id`, state: a.inputs };
    },
    call: (a) =>
      a.token === 'gcp:organizations/getProject:getProject'
        ? { ...a.inputs, number: '123456789012' }
        : a.inputs,
  },
  'sluice',
  'test',
  true,
);

// Pulumi's mock monitor has no shutdown call; the run entry makes one when the program ends.
const { getStore } = require(resolveFrom('@pulumi/pulumi/runtime/state'));
getStore().settings.monitor.signalAndWaitForShutdown = (_req, done) => done(null, {});

// The run entry logs a program's failure through Pulumi's log module, then exits non-zero.
const log = require(resolveFrom('@pulumi/pulumi/log'));
const logError = log.error;
log.error = (message, ...rest) => {
  errors.push(String(message));
  return logError.call(log, message, ...rest);
};
process.on('exit', () => writeFileSync(resultFile, JSON.stringify({ resources, errors })));

const runEntry = resolveFrom('@pulumi/pulumi/cmd/run');
process.argv = [
  process.argv[0],
  runEntry,
  '--monitor=mock',
  '--project=sluice',
  '--stack=test',
  '--dry-run',
  `--pwd=${programDir}`,
  entry,
];
require(runEntry);
