import pino from 'pino';
import { createApp } from '../src/app.js';
import { serviceConfig } from '../../../test/support/service-config.js';
import { CERTS, PET_1 } from '@chain/testkit';
import { describeVerificationRules } from '../../../test/support/verification-rules.js';

describeVerificationRules({
  name: 'petstore',
  path: '/v2/pet/1',
  required: ['read:pets'],
  okBody: PET_1,
  keyClient: { id: 'petstore-client', secret: 'petstore-secret' },
  clientYml: (keyServerUrl, keyExtra = '') => `tls:
  trustStore: ${CERTS}/ca.crt
request:
  timeout: 1000
oauth:
  key:
    server_url: ${keyServerUrl}
    uri: /oauth2/key
    client_id: petstore-client
${keyExtra}`,
  createApp: (files, lines = []) =>
    createApp(
      serviceConfig('petstore', files),
      pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
    ).listener,
});
