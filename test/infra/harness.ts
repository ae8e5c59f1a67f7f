/** Pulumi unit-test harness: mocks that record every resource, and a valid stack configuration. */
import * as pulumi from '@pulumi/pulumi';
import { type Deployment, deploy } from '../../infra/program';
import { buildSettings, type InfraSettings, type StackConfigInput } from '../../infra/settings';
import type { ArchiveEntry } from '../../infra/source-archive';

/** One resource as the engine received it. */
export interface Recorded {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
}

/** Project number the mocked `organizations.getProject` returns. */
export const PROJECT_NUMBER = '123456789012';

/** Installs mocks (once per test file) and returns the list they fill. */
export function installMocks(): Recorded[] {
  const recorded: Recorded[] = [];
  pulumi.runtime.setMocks(
    {
      newResource: (a) => {
        const inputs = a.inputs as Record<string, unknown>;
        recorded.push({ type: a.type, name: a.name, inputs });
        return { id: `${a.name}-id`, state: { ...inputs, ...computed(a.type, a.name, inputs) } };
      },
      call: (a) =>
        a.token === 'gcp:organizations/getProject:getProject'
          ? { ...a.inputs, number: PROJECT_NUMBER }
          : a.inputs,
    },
    'sluice',
    'test',
    false,
  );
  return recorded;
}

/** Outputs the real provider computes and the program reads. */
function computed(type: string, name: string, inputs: Record<string, unknown>): Record<string, unknown> {
  switch (type) {
    case 'gcp:serviceaccount/account:Account':
      return {
        email: `${String(inputs.accountId)}@${String(inputs.project)}.iam.gserviceaccount.com`,
        name: `projects/${String(inputs.project)}/serviceAccounts/${String(inputs.accountId)}`,
      };
    case 'gcp:cloudfunctionsv2/function:Function': {
      const svc = String(inputs.name ?? name);
      const config = (inputs.serviceConfig ?? {}) as Record<string, unknown>;
      return {
        url: `https://${String(inputs.location)}-p.cloudfunctions.net/${svc}`,
        serviceConfig: {
          ...config,
          uri: `https://${svc}-${PROJECT_NUMBER}.${String(inputs.location)}.run.app`,
        },
      };
    }
    case 'gcp:secretmanager/secretVersion:SecretVersion':
      // A secret's first version is number 1 (Secret Manager numbers versions from 1).
      return { version: '1' };
    default:
      return { name: inputs.name ?? name };
  }
}

/** A minimal valid stack configuration; `patch` overrides parts of it. */
export function stackConfig(patch: Partial<StackConfigInput> = {}): StackConfigInput {
  return {
    project: 'acme-prod',
    region: 'europe-west1',
    pipeline: {
      spanner: { instance: 'main', database: 'orders', stream: 'OrdersStream' },
      bigquery: { dataset: 'orders_replica' },
      tables: { Orders: { replica: 'orders', history: 'orders_history' } },
    },
    deployment: {},
    ...patch,
  };
}

/** A tiny stand-in for the built source (the artifact test uses the real one). */
export const FAKE_SOURCE: ArchiveEntry[] = [
  { path: 'package.json', content: Buffer.from('{"main":"dist/functions/index.js"}') },
  { path: 'dist/functions/index.js', content: Buffer.from('module.exports = {};') },
];

const promiseOf = <T>(o: pulumi.Output<T>): Promise<T> => new Promise((r) => o.apply(r));

/** Deploys under the mocks and waits until every resource is registered. */
export async function deployed(settings: InfraSettings): Promise<Deployment> {
  const d = deploy(settings, FAKE_SOURCE);
  await Promise.all(d.resources.map((r) => promiseOf(r.urn)));
  return d;
}

/** Resolves an output. */
export function resolved<T>(o: pulumi.Output<T>): Promise<T> {
  return promiseOf(o);
}

/** Settings from a stack configuration. */
export function settingsOf(patch: Partial<StackConfigInput> = {}): InfraSettings {
  return buildSettings(stackConfig(patch));
}
