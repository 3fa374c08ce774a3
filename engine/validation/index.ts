// XSD validation of the service's XML: change batches on the way in, and any
// document of either dialect (exports, results) where tests need to check one.

export { checkBatchXml } from './batch-report.ts';
export { ValidationPool, ValidationThreadLost, type BatchValidation, type BatchValidators } from './pool.ts';
export { detectVersion } from './root.ts';
export { BatchValidator, validateBatchXml, validateDocument, type ValidatedBatch, type ValidateOptions } from './validate.ts';
export type { SchemaVersion } from './versions.ts';
