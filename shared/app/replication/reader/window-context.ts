/** What one window of the reader works with: the ports, the configuration and the request's deadline. */
import type { PipelineConfig } from '../../../domain/config';
import type { Timestamp } from '../../../domain/timestamp';
import type { ChangeSource } from '../../../ports/change-source';
import type { Runtime } from '../../common';
import type { DeadLetterStore, LedgerStore } from '../../ledger';
import type { SinkPorts } from '../../sinks';

/** What a window needs. */
export interface WindowContext {
  ledger: LedgerStore;
  source: ChangeSource;
  sinks: SinkPorts;
  deadLetters: DeadLetterStore;
  config: PipelineConfig;
  runtime: Runtime;
  holder: string;
  /**
   * The request's own deadline (ADR-1505): past it the window stops at the last boundary it flushed, before
   * Cloud Tasks gives up on the request and another reader takes the partition. Absent: no deadline.
   */
  deadline?: Timestamp | undefined;
}
