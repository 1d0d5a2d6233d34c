import path from 'node:path';
import { startService } from '@chain/runtime';
import { createApp } from './app';

void startService({ bundledDir: path.join(__dirname, '..', 'config'), createApp });
