export { OpenApiSpec, type Operation } from './spec';
export { coerceParams, type ParamValue } from './params';
