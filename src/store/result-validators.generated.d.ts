// Types of the module scripts/build-validators.js generates into dist/ at build
// time: one precompiled Ajv validator per schemas/result-*.schema.json.
import type {CompiledValidator} from './validators.generated.js';

declare const validators: Record<string, CompiledValidator>;
export default validators;
