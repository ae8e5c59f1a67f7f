/** The Pulumi program: `pulumi up` in this folder deploys sluice (build first: `npm run build`). */
import { resolve } from 'node:path';
import { deploy } from './program';
import { buildSettings } from './settings';
import { sourceArchiveEntries } from './source-archive';
import { readStackConfig } from './stack-config';

const settings = buildSettings(readStackConfig());
const { outputs } = deploy(settings, sourceArchiveEntries(resolve(__dirname, '..')));

export const schedulerUrl = outputs.schedulerUrl;
export const readerUrl = outputs.readerUrl;
export const backfillUrl = outputs.backfillUrl;
export const backfillEndpoint = outputs.backfillEndpoint;
export const statusUrl = outputs.statusUrl;
export const ledgerBucket = outputs.ledgerBucket;
export const readerQueue = outputs.readerQueue;
export const backfillQueue = outputs.backfillQueue;
export const writerUrl = outputs.writerUrl;
export const writerEndpoint = outputs.writerEndpoint;
export const writerSubscription = outputs.writerSubscription;
export const dataset = outputs.dataset;
export const dashboard = outputs.dashboard;
