// Types of the module scripts/build-validators.js generates into dist/ at build
// time: one precompiled Ajv validator per schema in schemas/, keyed by name.
import type {ErrorObject} from 'ajv/dist/2020.js';

export interface CompiledValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

declare const validators: Record<string, CompiledValidator>;
export default validators;
