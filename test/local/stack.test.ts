import { startLocalStack } from '../../local/stack';
