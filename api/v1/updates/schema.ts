// v1 takes the same paging and transaction parameters as v2, with the same caps.
export { updatesFromPathSchema, updatesQuerySchema } from '../../v2/updates/schema.ts';
