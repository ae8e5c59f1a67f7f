/** `google.cloud.datacatalog.lineage.v1.Lineage`, from the protos shipped in `@google-cloud/lineage`. */
import type { ServiceDefinition } from '@grpc/grpc-js';
import { googleService } from '../common/proto-service';

/** The Lineage service as a grpc-js service definition. */
export function lineageService(): ServiceDefinition {
  return googleService(
    '@google-cloud/lineage',
    'google/cloud/datacatalog/lineage/v1/lineage.proto',
    'google.cloud.datacatalog.lineage.v1.Lineage',
  );
}
