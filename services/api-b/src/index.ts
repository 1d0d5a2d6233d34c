import path from 'node:path';
import { startService } from '@chain/runtime';
import { createApp } from './app.js';

void startService({ bundledDir: path.join(import.meta.dirname, '..', 'config'), createApp });
