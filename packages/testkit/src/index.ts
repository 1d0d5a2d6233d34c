// The public face of @chain/testkit: every fixture and helper of the tests and the scripts,
// one name each (the README says what each module is for).

// Keys, certificates and tokens.
export {
  createSigningKey,
  devSigningKey,
  loadSigningKey,
  writeCertificate,
  writeKeyPair,
  type KeyType,
  type SigningAlgorithm,
  type SigningKey,
} from './signing-key';
export {
  b64url,
  LOCAL_ISSUER,
  LOCAL_AUDIENCE,
  standardClaims,
  signToken,
  signWith,
  mintToken,
  claimsOf,
  type Claims,
  type ClaimOptions,
} from './token';
export { hostileTokens, type HostileToken } from './hostile-tokens';
export { KeyServer, startKeyServer, type KeyServerOptions, type KeyServerMode } from './key-server';

// Where things are, processes, HTTPS.
export { ROOT, CERTS, DEV_KEYS, serviceEntry, type DevKid } from './paths';
export {
  spawnNode,
  startProcess,
  runToExit,
  stopAll,
  type StartOptions,
  type ChildHandle,
  type RunningProcess,
} from './processes';
export { freePort } from './free-port';
export {
  httpsOutcome,
  httpsRequest,
  postForm,
  type Answer,
  type Outcome,
  type RequestOptions,
} from './https-request';
export { rawRequest, type RawAnswer } from './raw-http';
export {
  httpsStub,
  json,
  serveHttps,
  tokenEndpointStub,
  type HttpsServer,
  type Stub,
} from './https-stub';
export { deferred } from './signals';
export { GiveUp, waitFor } from './wait-for';

// The services and their config.
export { configDir } from './config-dir';
export {
  startService,
  startExpectingFailure,
  type ServiceProcess,
  type ServiceOptions,
} from './service-process';
export { serverYml } from './server-yml';
export { jwtSecurityYml, SECURITY_ON, type JwtSecurityOptions } from './security-yml';
export {
  tokenServerYml,
  startTokenServer,
  startTokenServerAtIssuer,
  clientCredentialsToken,
  tokenRequestCounts,
  type TokenServerProcess,
} from './local-token-server';
export {
  LETTERS,
  EIGHT,
  ONE_CALL_TOKENS,
  PET_1,
  startChain,
  jsonLines,
  at,
  type Letter,
  type ChainOptions,
  type RunningChain,
  type LogLine,
} from './chain-processes';

// Servers the tests talk to.
export { metricsYml, pointLine, startInfluxd, type Influxd, type InfluxSeries } from './influxd';
export {
  requireProgram,
  promtoolCheckMetrics,
  startPrometheus,
  type PromtoolResult,
  type Sample,
  type Target,
  type PrometheusServer,
} from './prometheus';
export {
  startOtlpCollector,
  type ReceivedSpan,
  type CollectorMode,
  type OtlpCollector,
} from './otlp-collector';

// Compose, Docker and Dockerfiles.
export {
  COMPOSE_FILES,
  parseCompose,
  readCompose,
  dockerComposeConfig,
  configFolder,
  composeCerts,
  YAML,
  type ComposeService,
  type ComposeFile,
} from './compose-file';
export {
  COMPOSE_SPEC_SCHEMA_FILE,
  composeSpecSchema,
  composeSpecErrors,
  composeV1Config,
  composeV1ConfigOf,
  type ComposeSpecSchema,
  type ComposeV1Result,
} from './compose-spec';
export { readDockerfile, args, type Dockerfile } from './dockerfile';
export {
  docker,
  composeCommand,
  compose,
  inspect,
  projectContainers,
  waitHealthy,
  type ContainerState,
} from './docker';
export { saveImages, layerIds, type SavedLayer, type SavedImage } from './docker-images';

// Kubernetes.
export {
  KUBERNETES_DIR,
  OVERLAYS,
  kubectl,
  parseYaml,
  parseObjects,
  render,
  scriptSecrets,
} from './kubernetes/render';
export {
  idOf,
  workloads,
  services,
  type Metadata,
  type K8sObject,
  type LabelSelector,
  type HttpGet,
  type Probe,
  type EnvVar,
  type Container,
  type SecurityContext,
  type KeyToPath,
  type ProjectionSource,
  type Volume,
  type PodSpec,
  type Workload,
  type ServiceObject,
} from './kubernetes/objects';
export {
  selects,
  volumeFiles,
  containerEnv,
  containerMounts,
  configFiles,
  writeVolume,
  type VolumeFile,
} from './kubernetes/pods';
export { schemaProblems, unknownFieldProblems } from './kubernetes/api-schemas';
export {
  portProblems,
  expand,
  referenceProblems,
  selectorProblems,
} from './kubernetes/wiring-checks';
export { OUTSIDE, reachability } from './kubernetes/network-policies';
export { secretInConfigMapProblems } from './kubernetes/secret-checks';
export { shutdownProblems, podSecurityProblems } from './kubernetes/pod-checks';
export { allProblems } from './kubernetes/all-problems';
export {
  SIM_LABEL,
  ClusterSimulation,
  type ProbeResult,
  type SimPod,
} from './kubernetes/cluster-simulation';
export {
  accessTokenHash,
  certificateBound,
  certificateThumbprint,
  createDpopKey,
  dpopBound,
  dpopProof,
  jwkThumbprint,
  type DpopKey,
  type ProofOptions,
} from './bound-tokens';
