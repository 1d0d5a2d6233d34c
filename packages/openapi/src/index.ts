export { OpenApiSpec, type Operation } from './spec.js';
export { coerceParams, type ParamValue } from './params.js';
