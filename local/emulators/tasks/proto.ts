/** The Cloud Tasks v2 service definition, from the protos shipped in `@google-cloud/tasks`. */
import type { ServiceDefinition } from '@grpc/grpc-js';
import { googleService } from '../common/proto-service';

/** `google.cloud.tasks.v2.CloudTasks` as a grpc-js service definition. */
export function cloudTasksService(): ServiceDefinition {
  return googleService(
    '@google-cloud/tasks',
    'google/cloud/tasks/v2/cloudtasks.proto',
    'google.cloud.tasks.v2.CloudTasks',
  );
}
