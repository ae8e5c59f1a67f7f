/** The Data Lineage API, enabled when lineage events go to it (`sluice:lineage.target: api`). */
import * as gcp from '@pulumi/gcp';
import type { InfraSettings } from '../settings';

/** Enables `datalineage.googleapis.com`; left enabled on destroy (other tools of the project may use it). */
export function enableLineageApi(s: InfraSettings): gcp.projects.Service | undefined {
  if (s.lineage.target !== 'api') return undefined;
  return new gcp.projects.Service('datalineage-api', {
    project: s.project,
    service: 'datalineage.googleapis.com',
    disableOnDestroy: false,
    disableDependentServices: false,
  });
}
