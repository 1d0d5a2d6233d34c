// oidc-provider ships no types: what this server uses of it is typed in provider.ts.
declare module 'oidc-provider';
