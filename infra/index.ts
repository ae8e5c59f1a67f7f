/** The Pulumi program: `pulumi up` in this folder deploys sluice (build first: `npm run build`). */
import { resolve } from 'node:path';
import * as pulumi from '@pulumi/pulumi';
import { StackConfigError } from './config-error';
import { deploy } from './program';
import { buildSettings, type InfraSettings } from './settings';
import { sourceArchiveEntries } from './source-archive';
import { readStackConfig } from './stack-config';

/** The settings; a bad stack configuration is reported as a `RunError`, which Pulumi prints without a stack. */
function settingsOrExplain(): InfraSettings {
  try {
    return buildSettings(readStackConfig());
  } catch (err) {
    if (err instanceof StackConfigError) throw new pulumi.RunError(err.message);
    throw err;
  }
}

const settings = settingsOrExplain();
const { outputs } = deploy(settings, sourceArchiveEntries(resolve(__dirname, '..')));

export const schedulerUrl = outputs.schedulerUrl;
export const readerUrl = outputs.readerUrl;
export const backfillUrl = outputs.backfillUrl;
export const backfillEndpoint = outputs.backfillEndpoint;
export const statusUrl = outputs.statusUrl;
export const ledgerBucket = outputs.ledgerBucket;
export const readerQueue = outputs.readerQueue;
export const readerQueues = outputs.readerQueues;
export const backfillQueue = outputs.backfillQueue;
export const writerUrl = outputs.writerUrl;
export const writerEndpoint = outputs.writerEndpoint;
export const writerSubscription = outputs.writerSubscription;
export const dataset = outputs.dataset;
export const dashboard = outputs.dashboard;
