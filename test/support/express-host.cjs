// Jest setup file of the "(express)" projects (jest.config.js): the service suites run again with
// every service on the Express host (server.yml `framework: express`), see service-config.ts.
process.env.TEST_FRAMEWORK = 'express';
