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
} from './signing-key.js';
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
} from './token.js';
export { hostileTokens, type HostileToken } from './hostile-tokens.js';
export {
  KeyServer,
  startKeyServer,
  type KeyServerOptions,
  type KeyServerMode,
} from './key-server.js';

// Where things are, processes, HTTPS.
export { ROOT, CERTS, DEV_KEYS, serviceEntry, type DevKid } from './paths.js';
export {
  spawnNode,
  startProcess,
  runToExit,
  stopAll,
  type StartOptions,
  type ChildHandle,
  type RunningProcess,
} from './processes.js';
export { freePort } from './free-port.js';
export { startRedis, type Redis } from './redis.js';
export {
  httpsOutcome,
  httpsRequest,
  postForm,
  type Answer,
  type Outcome,
  type RequestOptions,
} from './https-request.js';
export { rawRequest, type RawAnswer } from './raw-http.js';
export {
  httpsStub,
  json,
  serveHttps,
  tokenEndpointStub,
  type HttpsServer,
  type Stub,
} from './https-stub.js';
export { deferred } from './signals.js';
export { GiveUp, waitFor } from './wait-for.js';

// The services and their config.
export { configDir } from './config-dir.js';
export {
  startService,
  startExpectingFailure,
  type ServiceProcess,
  type ServiceOptions,
} from './service-process.js';
export { serverYml } from './server-yml.js';
export { jwtSecurityYml, SECURITY_ON, type JwtSecurityOptions } from './security-yml.js';
export {
  tokenServerYml,
  startTokenServer,
  startTokenServerAtIssuer,
  clientCredentialsToken,
  tokenRequestCounts,
  type TokenServerProcess,
} from './local-token-server.js';
export {
  LETTERS,
  EIGHT,
  ONE_CALL_TOKENS,
  PET_1,
  OWN_SCOPES,
  CLIENT_CERTS,
  clientDn,
  clientCertificate,
  twoWayTlsServerYml,
  startChain,
  jsonLines,
  at,
  type Letter,
  type ChainOptions,
  type RunningChain,
  type LogLine,
} from './chain-processes.js';

// Servers the tests talk to.
export { metricsYml, pointLine, startInfluxd, type Influxd, type InfluxSeries } from './influxd.js';
export {
  requireProgram,
  promtoolCheckMetrics,
  startPrometheus,
  type PromtoolResult,
  type Sample,
  type Target,
  type PrometheusServer,
} from './prometheus.js';
export {
  startOtlpCollector,
  type ReceivedSpan,
  type CollectorMode,
  type OtlpCollector,
} from './otlp-collector.js';

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
} from './compose-file.js';
export {
  COMPOSE_SPEC_SCHEMA_FILE,
  composeSpecSchema,
  composeSpecErrors,
  composeV1Config,
  composeV1ConfigOf,
  type ComposeSpecSchema,
  type ComposeV1Result,
} from './compose-spec.js';
export { readDockerfile, args, type Dockerfile } from './dockerfile.js';
export {
  docker,
  composeCommand,
  compose,
  inspect,
  projectContainers,
  waitHealthy,
  type ContainerState,
} from './docker.js';
export { saveImages, layerIds, type SavedLayer, type SavedImage } from './docker-images.js';

// Kubernetes.
export {
  KUBERNETES_DIR,
  OVERLAYS,
  kubectl,
  parseYaml,
  parseObjects,
  render,
  scriptSecrets,
} from './kubernetes/render.js';
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
} from './kubernetes/objects.js';
export {
  selects,
  volumeFiles,
  containerEnv,
  containerMounts,
  configFiles,
  writeVolume,
  type VolumeFile,
} from './kubernetes/pods.js';
export { schemaProblems, unknownFieldProblems } from './kubernetes/api-schemas.js';
export {
  portProblems,
  expand,
  referenceProblems,
  selectorProblems,
} from './kubernetes/wiring-checks.js';
export { OUTSIDE, reachability } from './kubernetes/network-policies.js';
export { secretInConfigMapProblems } from './kubernetes/secret-checks.js';
export { shutdownProblems, podSecurityProblems } from './kubernetes/pod-checks.js';
export { allProblems } from './kubernetes/all-problems.js';
export {
  SIM_LABEL,
  ClusterSimulation,
  type ProbeResult,
  type SimPod,
} from './kubernetes/cluster-simulation.js';
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
} from './bound-tokens.js';
