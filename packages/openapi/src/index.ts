export { OpenApiSpec, type Operation, type PathParam, type ParamType } from './spec';
export { coerceParams } from './params';
export { openapiMiddleware, matchedOperation, type MatchedOperation } from './openapi-middleware';
