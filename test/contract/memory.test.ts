import { MemoryObjectStore } from '../../shared/adapters/memory/object-store';
import { MemoryTaskQueue } from '../../shared/adapters/memory/task-queue';
import { objectStoreContract } from './object-store.contract';
import { taskQueueContract } from './task-queue.contract';

objectStoreContract('in-memory', async () => new MemoryObjectStore());
taskQueueContract('in-memory', async () => new MemoryTaskQueue());
